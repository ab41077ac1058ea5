// Package toolsfile loads a tools file: a JSON declaration of command tools,
// the deployment's mode and its scopes, for `ptcx --tools FILE`. It imports
// registry, internal/proc to run the commands, and internal/text.
//
// The format (unknown fields are errors):
//
//	{
//	  "mode": "ptc",                       // optional: the deployment's mode
//	  "tools": [{
//	    "name": "weather",
//	    "description": "Current weather for a city.",
//	    "input_schema": {"type": "object", ...},
//	    "output_schema": {...},            // optional
//	    "concurrency_safe": true,          // optional, default false
//	    "timeout_ms": 5000,                // optional, default 60000
//	    "command": ["./weather.sh"],       // argv; relative paths are relative to the file
//	    "env": {                           // optional: what the command's environment adds
//	      "pass": ["HOME", "WEATHER_KEY"], //   to the allowlist: these of ptcx's own, when set,
//	      "set": {"UNITS": "metric"}       //   and these values
//	    },
//	    "scope": "coder",                  // optional: register on this scope, default the deployment
//	    "reply": "envelope",               // optional: stdout is {"value": …, "labels": …} ("value", the default: the value)
//	    "labels": {...}, "accepts": {...}, // optional: data flow and capabilities (policy.Declaration,
//	    "constraints": [...], ...          //   docs/security.md, "Data flow")
//	    "needs_approval": true             // optional: every call is put to the approver first
//	  }],
//	  "scopes": [{                         // optional, parents before children
//	    "name": "coder", "parent": "deployment",
//	    "mode": "ptc", "allow": ["read"], "deny": ["bash"]
//	  }]
//	}
//
// A bare JSON array is read as the "tools" list.
//
// A command gets the call's arguments as a JSON object on stdin and prints
// one JSON value on stdout (nothing at all means null); a non-zero exit is a
// tool failure whose message is its stderr. Its environment is an allowlist,
// the same as the bash tool's: PATH, LANG, TERM=dumb, LC_ALL and TZ (see
// internal/proc's BaseEnv), plus what its "env" passes or sets; nothing
// else of ptcx's environment (tokens, keys) reaches it.
package toolsfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/proc"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// DefaultTimeout bounds a command tool that declares no timeout_ms: a hung
// command is killed then.
const DefaultTimeout = 60 * time.Second

// MaxTimeout is the longest timeout_ms a command tool may declare.
const MaxTimeout = 24 * time.Hour

// File is a parsed tools file.
type File struct {
	Path   string      `json:"-"`
	Mode   api.Mode    `json:"mode,omitempty"`
	Tools  []ToolSpec  `json:"tools"`
	Scopes []ScopeSpec `json:"scopes,omitempty"`
}

// ToolSpec declares one command tool.
type ToolSpec struct {
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	InputSchema     json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema    json.RawMessage `json:"output_schema,omitempty"`
	ConcurrencySafe bool            `json:"concurrency_safe,omitempty"`
	TimeoutMS       int64           `json:"timeout_ms,omitempty"`
	Command         []string        `json:"command"`
	Env             EnvSpec         `json:"env,omitzero"`
	Scope           string          `json:"scope,omitempty"`
	// Reply is "value" (the default: stdout is the value) or "envelope"
	// (stdout is {"value": …, "labels": …}: labels raise this result's).
	Reply string `json:"reply,omitempty"`
	// Policy holds the members labels, accepts, handle, constraints,
	// calls_per_run, cost, max_cost and needs_approval
	// (policy.Declaration).
	Policy policy.Declaration `json:"-"`
}

// toolMembers are the members of a tool besides its policy's.
var toolMembers = []string{"name", "description", "input_schema", "output_schema", "concurrency_safe", "timeout_ms", "command", "env", "scope", "reply"}

// MarshalJSON writes the tool as a tools file has it, its policy's members
// beside the others.
func (t ToolSpec) MarshalJSON() ([]byte, error) {
	type spec ToolSpec // without this method
	plain, err := json.Marshal(spec(t))
	if err != nil {
		return nil, err
	}
	if t.Policy.IsZero() {
		return plain, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(plain, &m); err != nil {
		return nil, err
	}
	pm, err := json.Marshal(t.Policy)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(pm, &m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads one tool strictly: an unknown member, or a policy
// member that is not well formed, is an error naming the member.
func (t *ToolSpec) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return errors.New("a tool is a JSON object")
	}
	plain := map[string]json.RawMessage{}
	for k, v := range m {
		switch {
		case slices.Contains(toolMembers, k):
			plain[k] = v
		case slices.Contains(policy.Members, k):
		default:
			return fmt.Errorf("unknown member %q", k)
		}
	}
	p, err := policy.DecodeMembers(m)
	if err != nil {
		return err
	}
	type spec ToolSpec // without this method
	var s spec
	raw, _ := json.Marshal(plain)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	*t = ToolSpec(s)
	t.Policy = p
	return nil
}

// EnvSpec is what a command tool's environment adds to the allowlist.
type EnvSpec struct {
	// Pass names variables of ptcx's own environment to pass, when set.
	Pass []string `json:"pass,omitempty"`
	// Set gives variables their values; it wins over Pass and the
	// allowlist.
	Set map[string]string `json:"set,omitempty"`
}

func (e EnvSpec) check() error {
	for i, name := range e.Pass {
		if !proc.ValidName(name) {
			return fmt.Errorf("env.pass[%d] %q is not a variable name (letters, digits and _, not starting with a digit)", i, name)
		}
	}
	for name, v := range e.Set {
		if !proc.ValidName(name) {
			return fmt.Errorf("env.set %q is not a variable name (letters, digits and _, not starting with a digit)", name)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("env.set %q: the value holds a NUL byte, which no environment can", name)
		}
	}
	return nil
}

// ScopeSpec declares one scope (a preset, an agent, a tenant).
type ScopeSpec struct {
	Name   string   `json:"name"`
	Parent string   `json:"parent,omitempty"`
	Mode   api.Mode `json:"mode,omitempty"`
	Allow  []string `json:"allow,omitempty"`
	Deny   []string `json:"deny,omitempty"`
}

// Load reads and parses a tools file. Problems that only registration can
// find (schemas, duplicates) surface in Apply.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tools file: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("tools file %s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// Parse parses a tools file's contents.
func Parse(data []byte) (*File, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("empty file: want a JSON object with a \"tools\" list")
	}
	var f File
	var tools []json.RawMessage
	if data[0] == '[' {
		if err := decodeStrict(data, &tools); err != nil {
			return nil, err
		}
	} else {
		var top struct {
			Mode   api.Mode          `json:"mode,omitempty"`
			Tools  []json.RawMessage `json:"tools"`
			Scopes []ScopeSpec       `json:"scopes,omitempty"`
		}
		if err := decodeStrict(data, &top); err != nil {
			return nil, err
		}
		f.Mode, f.Scopes, tools = top.Mode, top.Scopes, top.Tools
	}
	for i, raw := range tools {
		var t ToolSpec
		if err := t.UnmarshalJSON(raw); err != nil {
			var named struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(raw, &named)
			return nil, fmt.Errorf("tool %d (%q): %w", i+1, named.Name, err)
		}
		f.Tools = append(f.Tools, t)
	}
	if f.Mode != "" {
		if _, err := api.ParseMode(string(f.Mode)); err != nil {
			return nil, err
		}
	}
	for i, t := range f.Tools {
		if err := t.check(); err != nil {
			return nil, fmt.Errorf("tool %d (%q): %w", i+1, t.Name, err)
		}
	}
	return &f, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return fmt.Errorf("not valid JSON at line %d, column %d: %v", line, col, err)
		}
		return fmt.Errorf("not a valid tools file: %v", err)
	}
	if dec.More() {
		return errors.New("not valid JSON: unexpected data after the top-level value")
	}
	return nil
}

func position(data []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for _, b := range data[:max(0, min(int(offset)-1, len(data)))] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func (t ToolSpec) check() error {
	switch {
	case t.Name == "":
		return errors.New(`missing "name"`)
	case len(t.Command) == 0 || t.Command[0] == "":
		return errors.New(`missing "command": an argv array such as ["./tool.sh", "--flag"]`)
	case t.TimeoutMS < 0:
		return fmt.Errorf("timeout_ms %d is negative", t.TimeoutMS)
	case t.TimeoutMS > MaxTimeout.Milliseconds():
		return fmt.Errorf("timeout_ms %d is over the maximum of %d (one day)", t.TimeoutMS, MaxTimeout.Milliseconds())
	case t.Reply != "" && t.Reply != "value" && t.Reply != "envelope":
		return fmt.Errorf("reply %q is not \"value\" or \"envelope\"", t.Reply)
	}
	if _, err := policy.Compile(t.Policy); err != nil { // at load, as registration will
		return err
	}
	return t.Env.check()
}

// Apply registers f's scopes and tools into reg. mode, when not empty,
// overrides the file's deployment mode (the CLI's --mode). Every error names
// the file, the tool or scope, and the problem.
func (f *File) Apply(reg *registry.Registry, mode api.Mode) error {
	if mode == "" {
		mode = f.Mode
	}
	if mode != "" {
		if err := reg.DeclareMode(registry.Deployment, mode); err != nil {
			return f.errorf("%w", err)
		}
	}
	for _, s := range f.Scopes {
		if err := f.applyScope(reg, s); err != nil {
			return err
		}
	}
	dir, err := filepath.Abs(filepath.Dir(f.Path))
	if err != nil {
		return f.errorf("%w", err)
	}
	for _, t := range f.Tools {
		if err := reg.Register(t.Scope, t.tool(dir)); err != nil {
			return f.errorf("tool %q: %w", t.Name, err)
		}
	}
	for _, s := range f.Scopes {
		if s.Allow != nil || s.Deny != nil { // "allow": [] means nothing is inherited
			rs := registry.Restriction{Allow: s.Allow, Deny: s.Deny}
			if err := reg.Restrict(s.Name, rs); err != nil {
				return f.errorf("scope %q: %w", s.Name, err)
			}
		}
	}
	return nil
}

func (f *File) applyScope(reg *registry.Registry, s ScopeSpec) error {
	if err := reg.NewScope(s.Name, s.Parent); err != nil {
		return f.errorf("scope %q: %w", s.Name, err)
	}
	if s.Mode != "" {
		if err := reg.DeclareMode(s.Name, s.Mode); err != nil {
			return f.errorf("scope %q: %w", s.Name, err)
		}
	}
	return nil
}

func (f *File) errorf(format string, args ...any) error {
	name := f.Path
	if name == "" {
		name = "(inline)"
	}
	return fmt.Errorf("tools file %s: "+format, append([]any{name}, args...)...)
}

// tool turns a spec into a registry tool running its command.
func (t ToolSpec) tool(dir string) registry.Tool {
	timeout := DefaultTimeout
	if t.TimeoutMS > 0 {
		timeout = time.Duration(t.TimeoutMS) * time.Millisecond
	}
	argv := append([]string(nil), t.Command...)
	if !filepath.IsAbs(argv[0]) && filepath.Base(argv[0]) != argv[0] {
		// Not filepath.Join: ".." must be resolved by the kernel, as a
		// shell would, when the file's directory is reached through a link.
		argv[0] = dir + string(filepath.Separator) + argv[0]
	}
	return registry.Tool{
		Name:            t.Name,
		Description:     t.Description,
		InputSchema:     t.InputSchema,
		OutputSchema:    t.OutputSchema,
		ConcurrencySafe: t.ConcurrencySafe,
		Timeout:         timeout,
		Body:            command{argv: argv, dir: dir, env: t.Env, envelope: t.Reply == "envelope"}.run,
		Policy:          t.Policy,
	}
}
