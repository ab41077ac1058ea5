package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/registry"
)

const globInput = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Glob pattern relative to path, e.g. \"**/*.go\" or \"src/*.ts\": * ? and [a-z] match within one path segment, ** matches any number of directories."},
    "path": {"type": "string", "description": "Directory to search from, relative to the workspace root (default \".\", the root)."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

const globOutput = `{
  "type": "object",
  "properties": {
    "matches": {"type": "array", "items": {"type": "string"}, "description": "Matching files, relative to the workspace root, sorted."},
    "truncated": {"type": "boolean", "description": "True when more files matched than the cap."}
  },
  "required": ["matches", "truncated"],
  "additionalProperties": false
}`

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

type globResult struct {
	Matches   []string `json:"matches"`
	Truncated bool     `json:"truncated"`
}

func (w *Workspace) globTool() registry.Tool {
	return registry.Tool{
		Name: "glob",
		Description: fmt.Sprintf("Find files in the workspace by glob pattern, e.g. \"**/*.go\". Returns paths relative to the "+
			"workspace root, sorted, at most %d. Directories are not returned (use list); links to directories are not followed, links to files are returned when they stay inside the workspace. "+
			"A search reads at most %d directory entries and %d levels of directories; the pattern may be at most %s.", w.opts.MaxMatches, maxScanEntries, maxPathDepth, size(maxGlobBytes)),
		InputSchema:     json.RawMessage(globInput),
		OutputSchema:    json.RawMessage(globOutput),
		ConcurrencySafe: true,
		Body:            w.glob,
	}
}

// glob returns the files under a directory whose path relative to it
// matches a pattern.
func (w *Workspace) glob(ctx context.Context, in api.Input) (api.Output, error) {
	var a globArgs
	if err := decode(in, &a); err != nil {
		return api.Output{}, err
	}
	pat, err := w.compileGlob(a.Pattern)
	if err != nil {
		return api.Output{}, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	t, err := w.resolve(ctx, a.Path)
	if err != nil {
		return api.Output{}, err
	}
	res := globResult{Matches: []string{}}
	cut, err := w.walk(ctx, t, pat, func(name, _ string) bool {
		if len(res.Matches) == w.opts.MaxMatches {
			res.Truncated = true
			return false
		}
		res.Matches = append(res.Matches, name)
		return true
	})
	if err != nil {
		return api.Output{}, err
	}
	slices.Sort(res.Matches)
	res.Truncated = res.Truncated || cut != ""
	var b strings.Builder
	for _, name := range res.Matches {
		b.WriteString(shown(name))
		b.WriteByte('\n')
	}
	switch {
	case res.Truncated && len(res.Matches) == w.opts.MaxMatches:
		fmt.Fprintf(&b, "[truncated at %d matches: narrow the pattern or the path]", len(res.Matches))
	case cut != "":
		fmt.Fprintf(&b, "[%s: narrow the pattern or the path]", cut)
	case len(res.Matches) == 0:
		fmt.Fprintf(&b, "no files match %q", a.Pattern)
	}
	return output(res, strings.TrimSuffix(b.String(), "\n"))
}

// globPattern is a compiled glob: its "/"-separated segments. "**" matches
// any number of whole segments, zero included; any other segment is a
// path.Match pattern for exactly one segment.
type globPattern []string

// compileGlob checks and splits a pattern. A pattern is relative to the
// searched directory: it may be neither absolute nor contain "..".
func (w *Workspace) compileGlob(p string) (globPattern, error) {
	orig := p
	if len(p) > maxGlobBytes {
		return nil, failf(ErrLimit, "glob pattern %q is %s, more than the %s glob limit: give a shorter pattern", text.ShortenRunes(p, 80), size(int64(len(p))), size(maxGlobBytes))
	}
	if strings.HasPrefix(p, "/") {
		rel, ok := w.inside(path.Clean(p))
		if !ok {
			return nil, failf(ErrEscapes, "pattern %q escapes the workspace: patterns are relative to the searched directory", orig)
		}
		return nil, failf(nil, "pattern %q is absolute: patterns are relative to the searched directory (the workspace root by default), e.g. %q", orig, rel)
	}
	var pat globPattern
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "" || seg == ".":
			continue
		case seg == "..":
			return nil, failf(ErrEscapes, "pattern %q escapes the workspace: \"..\" is not allowed in patterns; give path instead", orig)
		case seg == "**" && len(pat) > 0 && pat[len(pat)-1] == "**":
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return nil, failf(nil, "invalid glob pattern %q: segment %q is malformed (use * ? [a-z] within a segment, ** for any number of directories, \\ to escape)", orig, seg)
		}
		pat = append(pat, seg)
	}
	if len(pat) == 0 {
		return nil, failf(nil, "glob pattern %q is empty: give a pattern such as \"**/*.go\"", orig)
	}
	return pat, nil
}

// start returns the pattern positions reachable before any segment: the
// state of the searched directory itself. A nil pattern matches
// everything and has no state.
func (p globPattern) start() []bool {
	if p == nil {
		return nil
	}
	states := make([]bool, len(p)+1)
	states[0] = true
	return p.closure(states)
}

// step returns the positions reachable from states after one more path
// segment, seg: the state of an entry named seg in the directory whose
// state is states. Walking a tree step by step costs one step per entry,
// linear in len(p).
func (p globPattern) step(states []bool, seg string) []bool {
	if p == nil {
		return nil
	}
	next := make([]bool, len(p)+1)
	for i, on := range states[:len(p)] {
		switch {
		case !on:
		case p[i] == "**":
			next[i] = true
		default:
			if ok, _ := path.Match(p[i], seg); ok {
				next[i+1] = true
			}
		}
	}
	return p.closure(next)
}

// result reports whether an entry in the given state matches completely
// (full), and whether a path below it could still match (deeper: a
// directory worth entering).
func (p globPattern) result(states []bool) (full, deeper bool) {
	if p == nil {
		return true, true
	}
	return states[len(p)], slices.Contains(states[:len(p)], true)
}

// closure adds the positions reachable by letting a "**" match nothing.
func (p globPattern) closure(states []bool) []bool {
	for i, seg := range p {
		if states[i] && seg == "**" {
			states[i+1] = true
		}
	}
	return states
}
