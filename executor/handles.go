package executor

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// Handles (docs/security.md, "Handles"): the result of a tool declared
// "handle": true (policy.Compiled.Handle), or of any tool when it is over
// Config.WithHandleOverBytes, stays here, in its run's handle table, and
// reaches the program as a Handle object (wasmhost.CallResult.Handle; the
// prelude makes it, docs/abi.md). The program holds only the handle's ref,
// a random name the prelude keeps from program code. The pipeline reaches
// this file at four points, each behind a test of one pointer (the run's
// table) or of the tool's declaration, so a run without handles pays
// nothing more:
//
//   - commit (scheduler.go) makes a handle of a handle tool's successful
//     result (handleAnswer) instead of answering with the value; its label
//     joins nothing;
//   - Dispatch (scheduler.go) answers the prelude's reserved call that
//     reads a handle (text(), json()), joining the handle's label into the
//     context, and replaces each handle's marker in a call's arguments
//     with its value (substitute), the handle's label on that argument
//     only (flow.go);
//   - runProgram (runcode.go) shows a handle in the program's result to
//     the model as a placeholder and gives the host its value
//     (api.Result.Handles).
//
// A session's handles (session_run.go) are one table that each of its
// programs' tokens holds in turn: a handle one program received is there
// for the next, within the same bounds, until the session ends or its
// state is reset; a session store's bytes carry them (session_frame.go).

// handleMark is the key of the marker a program's handle is sent as, in a
// call's arguments and in its result: {"$ptcx.handle": ref} (prelude.js).
const handleMark = "$ptcx.handle"

var handleMarkBytes = []byte(`"` + handleMark + `"`)

// Bounds of the handles one execution, or one session, holds. Variables
// so tests can lower them (export_test.go); nothing else writes them.
var (
	maxHandles     = 1000     // handles one execution or session may hold
	maxHandleBytes = 64 << 20 // bytes of value its handles may hold in all
)

// WithHandleOverBytes makes every successful result of a nested call over
// n bytes (its JSON) a handle, whatever its tool declares: a program that
// reads a large document passes it on without holding it, and without its
// label joining the program's context. 0, the default, makes handles only
// of tools declared "handle": true. Negative counts as 0.
func (c Config) WithHandleOverBytes(n int) Config {
	c.handleOver = max(n, 0)
	return c
}

// handleTable is one execution's handles, or one session's, by the ref
// its programs hold. Safe for concurrent use: handles are made as calls
// commit and read as calls are dispatched.
type handleTable struct {
	holder string // "execution" or "session": who holds them, for messages
	mu     sync.Mutex
	byRef  map[string]*heldHandle
	bytes  int
}

// newHandleTable returns an empty table of what holds it: a session's
// program's token, or an execution's.
func (t *token) newHandleTable() *handleTable {
	holder := "execution"
	if t.session {
		holder = "session"
	}
	return &handleTable{holder: holder, byRef: make(map[string]*heldHandle)}
}

type heldHandle struct {
	ref string // the program's name for it: never leaves the sandbox and the host
	api.Handle
}

// random returns a fresh 128-bit random name, as hex.
func random() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// handleEnvelope is what the guest is told of a handle (docs/abi.md).
type handleEnvelope struct {
	Ref    string    `json:"ref"`
	Size   int       `json:"size"`
	Labels api.Label `json:"labels"`
	Tool   string    `json:"tool"`
}

// handleAnswer answers the program with a handle to r's value, which stays
// here, or with why it cannot hold one more.
func (s *scheduler) handleAnswer(r api.Result) wasmhost.CallResult {
	if s.tok.session && s.isSettled() {
		// A session's program that ended abandoned this call: its answer
		// reaches nobody, and a handle would only take room in the
		// session's table, which outlives the program.
		return wasmhost.CallResult{Code: api.CodeAborted, Message: r.Tool + ": the program ended before its result arrived"}
	}
	t := s.tok.handles.Load()
	if t == nil {
		s.tok.handles.CompareAndSwap(nil, s.tok.newHandleTable())
		t = s.tok.handles.Load()
	}
	h := &heldHandle{ref: random(), Handle: api.Handle{ID: "h_" + random(), Tool: r.Tool, Size: len(r.Value), Labels: r.Labels, Value: r.Value}}
	t.mu.Lock()
	switch {
	case len(t.byRef) >= maxHandles:
		t.mu.Unlock()
		return wasmhost.CallResult{Code: api.CodeDenied, Message: fmt.Sprintf(
			"%s returned a handle, and this %s already holds %d handles, the most it may: %s", r.Tool, t.holder, maxHandles, t.fewer())}
	case t.bytes+h.Size > maxHandleBytes:
		t.mu.Unlock()
		return wasmhost.CallResult{Code: api.CodeDenied, Message: fmt.Sprintf(
			"%s returned a handle of %d bytes, and this %s's handles already hold %d bytes: together over the %d bytes they may hold", r.Tool, h.Size, t.holder, t.bytes, maxHandleBytes)}
	}
	t.byRef[h.ref] = h
	t.bytes += h.Size
	t.mu.Unlock()
	s.notifyHandleMade(r, h) // handlenotify.go
	env, _ := json.Marshal(handleEnvelope{Ref: h.ref, Size: h.Size, Labels: h.Labels, Tool: h.Tool})
	return wasmhost.CallResult{OK: true, Handle: true, Value: env}
}

// fewer says how a program past the bound on handles gets on.
func (t *handleTable) fewer() string {
	if t.holder == "session" {
		return "a session keeps every handle its programs received until it is closed, so pass fewer results by handle, or use a new session"
	}
	return "pass fewer results by handle in one program"
}

func (t *handleTable) get(ref string) *heldHandle {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byRef[ref]
}

// read answers the prelude's reserved call reading a handle: {"ref", "as":
// "text" | "json"}. It returns the handle read, nil when the answer is a
// refusal.
func (t *handleTable) read(args json.RawMessage) (*heldHandle, wasmhost.CallResult) {
	var a struct {
		Ref string `json:"ref"`
		As  string `json:"as"`
	}
	if err := json.Unmarshal(args, &a); err != nil || (a.As != "text" && a.As != "json") {
		return nil, wasmhost.CallResult{Code: api.CodeInvalidArgs, Message: "a handle is read with text() or json()"}
	}
	h := t.get(a.Ref)
	if h == nil {
		return nil, wasmhost.CallResult{Code: api.CodeDenied, Message: "this handle is not held by this " + t.holder + ": it has no value here"}
	}
	v := h.Value
	if a.As == "text" && (len(v) == 0 || v[0] != '"') {
		v, _ = json.Marshal(string(v)) // not a JSON string: its JSON text
	}
	return h, wasmhost.CallResult{OK: true, Value: v}
}

// handleDispatch is Dispatch's part for a run that holds handles: it
// answers a handle read (done), or replaces the handles' markers in args
// with their values. A marker of no handle this run holds refuses the call
// (done).
func (s *scheduler) handleDispatch(t *handleTable, name string, args json.RawMessage, reply func(wasmhost.CallResult)) (json.RawMessage, *handleArgs, bool) {
	if name == wasmhost.HandleCall {
		h, answer := t.read(args)
		if h != nil {
			s.tok.flow.deliver(h.Tool, h.Labels) // the program has read it (flow.go)
			s.notifyHandleRead(h, args)          // handlenotify.go
		}
		reply(answer)
		return nil, nil, true
	}
	if !bytes.Contains(args, handleMarkBytes) {
		return args, nil, false
	}
	real, in, err := t.substitute(args)
	if err != "" {
		reply(wasmhost.CallResult{Code: api.CodeDenied, Message: name + ": " + err})
		return nil, nil, true
	}
	return real, in, false
}

// handleArgs are the handles a call's arguments held.
type handleArgs struct {
	shown   json.RawMessage      // the arguments with placeholders, for the ledger (shown to the model)
	label   api.Label            // the join of every handle's label
	args    map[string]api.Label // per top-level argument, the join of its handles' labels
	sources []string             // the tools the handles came from
	ids     []string             // the handles' IDs, sorted (Notification.Handles)
}

// argLabel returns the label argument name carries from its handles.
func (in *handleArgs) argLabel(name string) api.Label {
	if in == nil {
		return api.Label{}
	}
	return in.args[name]
}

// substitute returns args with every handle's marker replaced by its
// value, anywhere in them, and what the handles carry; or why not: a
// marker that is not exactly {"$ptcx.handle": ref} of a handle this run
// holds gets no value.
func (t *handleTable) substitute(args json.RawMessage) (json.RawMessage, *handleArgs, string) {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return nil, nil, "the arguments are not JSON"
	}
	in := &handleArgs{args: map[string]api.Label{}}
	var failure string
	var walk func(v any, path, top string) (real, shown any)
	walk = func(v any, path, top string) (any, any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, isMark := x[handleMark]; isMark {
				s, _ := ref.(string)
				h := t.get(s)
				if len(x) != 1 || h == nil {
					if failure == "" {
						failure = fmt.Sprintf("args%s is handle-shaped but not a handle this %s holds: a handle cannot be written, only passed", path, t.holder)
					}
					return v, v
				}
				in.label = in.label.Join(h.Labels)
				if top != "" {
					in.args[top] = in.args[top].Join(h.Labels)
				}
				if !containsString(in.sources, h.Tool) {
					in.sources = append(in.sources, h.Tool)
				}
				if !containsString(in.ids, h.ID) {
					in.ids = append(in.ids, h.ID)
				}
				return json.RawMessage(h.Value), fmt.Sprintf("<handle %s from %s, %d bytes>", h.ID, h.Tool, h.Size)
			}
			real, shown := make(map[string]any, len(x)), make(map[string]any, len(x))
			for k, e := range x {
				at := top
				if path == "" {
					at = k
				}
				real[k], shown[k] = walk(e, path+accessor(k), at)
			}
			return real, shown
		case []any:
			real, shown := make([]any, len(x)), make([]any, len(x))
			for i, e := range x {
				real[i], shown[i] = walk(e, fmt.Sprintf("%s[%d]", path, i), top)
			}
			return real, shown
		}
		return v, v
	}
	real, shown := walk(v, "", "")
	if failure != "" {
		return nil, nil, failure
	}
	sort.Strings(in.sources)
	sort.Strings(in.ids)
	in.shown = marshal(shown)
	return marshal(real), in, ""
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// accessor is how a key reads in a path: .name or ["odd name"].
func accessor(k string) string {
	ident := k != "" && !strings.ContainsFunc(k, func(r rune) bool {
		return !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) && !(k[0] >= '0' && k[0] <= '9')
	if ident {
		return "." + k
	}
	b, _ := json.Marshal(k)
	return "[" + string(b) + "]"
}

// marshal is json.Marshal without HTML escaping; the trees it is given
// (decoded JSON, raw values) always marshal.
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(v)
	return json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// placeholders returns a program's result with each handle it holds shown
// as a placeholder, {"$handle": {"id", "tool", "size", "labels"}}, and the
// handles (each once, in the order met). A marker of no handle the run
// holds is left as the data it is.
func (t *handleTable) placeholders(result json.RawMessage) (json.RawMessage, []api.Handle) {
	if !bytes.Contains(result, handleMarkBytes) {
		return result, nil
	}
	d := json.NewDecoder(bytes.NewReader(result))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return result, nil
	}
	var held []api.Handle
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			if ref, isMark := x[handleMark].(string); isMark && len(x) == 1 {
				if h := t.get(ref); h != nil {
					seen := false
					for _, e := range held {
						seen = seen || e.ID == h.ID
					}
					if !seen {
						held = append(held, h.Handle)
					}
					return map[string]any{"$handle": map[string]any{"id": h.ID, "tool": h.Tool, "size": h.Size, "labels": h.Labels}}
				}
			}
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	v = walk(v)
	if len(held) == 0 {
		return result, nil
	}
	return marshal(v), held
}

// describeFlow is flowMessage for a call whose arguments may hold handles:
// the data a handle carries was passed, not read, and the message says so.
func (x *execution) describeFlow(v *api.PolicyViolation, f *flow) string {
	if x.handleIn == nil || x.handleIn.label.Within(*v.Accepts) {
		return flowMessage(v)
	}
	var b strings.Builder
	what := "the call"
	if v.Argument != "" {
		what = fmt.Sprintf("argument %q", v.Argument)
	}
	fmt.Fprintf(&b, "%s may not receive %s data in %s: it accepts %s at most; the data is %s because", v.Tool, past(*v.Label, *v.Accepts), what, v.Accepts, v.Label)
	if read := f.sourcesPast(*v.Accepts); len(read) > 0 && !x.ctxLabel.Within(*v.Accepts) {
		fmt.Fprintf(&b, " this program read the results of %s and", strings.Join(read, ", "))
	}
	fmt.Fprintf(&b, " the arguments hold handles to results of %s (a handle's label goes with it into every argument it is passed in, however deep)",
		strings.Join(x.handleIn.sources, ", "))
	return b.String()
}

// parkedHandle is a handle as a parked execution's bytes carry it
// (parkbytes.go), and a session store's (session_frame.go).
type parkedHandle struct {
	Ref    string          `json:"ref"`
	ID     string          `json:"id"`
	Tool   string          `json:"tool"`
	Labels api.Label       `json:"labels"`
	Value  json.RawMessage `json:"value"`
}

// parked returns the handles t holds, for bytes that carry them, sorted by
// id; nil for none. A nil t holds none.
func (t *handleTable) parked() []parkedHandle {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.byRef) == 0 {
		return nil
	}
	out := make([]parkedHandle, 0, len(t.byRef))
	for _, h := range t.byRef {
		out = append(out, parkedHandle{Ref: h.ref, ID: h.ID, Tool: h.Tool, Labels: h.Labels, Value: h.Value})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// valueBytes returns the bytes of value the handles of t hold; 0 for a
// nil t.
func (t *handleTable) valueBytes() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bytes
}

// parkedHandles returns the handles t holds, for its parked bytes; nil for
// none.
func (t *token) parkedHandles() []parkedHandle { return t.handles.Load().parked() }

// checkParkedHandles refuses handles no execution or session (holder)
// could have held: past the bounds, without a name, a label or a JSON
// value, or named twice.
func checkParkedHandles(hs []parkedHandle, holder string) error {
	a := "an " + holder
	if holder == "session" {
		a = "a session"
	}
	if len(hs) > maxHandles {
		return fmt.Errorf("it holds %d handles, over the %d %s may", len(hs), maxHandles, a)
	}
	total, seen := 0, make(map[string]bool, 2*len(hs))
	for _, h := range hs {
		total += len(h.Value)
		switch {
		case len(h.Ref) != 32 || len(h.ID) != 34 || h.Tool == "" || !h.Labels.Valid() || !json.Valid(h.Value):
			return errors.New("one of its handles is malformed")
		case seen[h.Ref] || seen[h.ID]:
			return errors.New("two of its handles have one name")
		}
		seen[h.Ref], seen[h.ID] = true, true
	}
	if total > maxHandleBytes {
		return fmt.Errorf("its handles hold %d bytes, over the %d %s's may", total, maxHandleBytes, a)
	}
	return nil
}

// heldTable returns the table of checked handles hs (checkParkedHandles)
// held by holder; nil for none.
func heldTable(holder string, hs []parkedHandle) *handleTable {
	if len(hs) == 0 {
		return nil
	}
	ht := &handleTable{holder: holder, byRef: make(map[string]*heldHandle, len(hs))}
	for _, h := range hs {
		ht.byRef[h.Ref] = &heldHandle{ref: h.Ref, Handle: api.Handle{ID: h.ID, Tool: h.Tool, Size: len(h.Value), Labels: h.Labels, Value: h.Value}}
		ht.bytes += len(h.Value)
	}
	return ht
}

// restoreHandles gives a restored parked execution's token its handles.
func (t *token) restoreHandles(hs []parkedHandle) {
	if ht := heldTable("execution", hs); ht != nil {
		t.handles.Store(ht)
	}
}
