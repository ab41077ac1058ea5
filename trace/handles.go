package trace

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// Handles in a replay (docs/trace.md, "Handles"). A record says which
// calls answered the program with a handle (Call.Handle), which handles the
// program read (Record.Reads) and which it passed in later calls'
// arguments (Call.Handles, with the values in Args). A replay without real
// tools answers through an executor, which makes a handle of a stand-in's
// answer as the run's did (the record's declarations, its handle size);
// the dispatcher learns each handle's ref from the answer the program gets
// and checks what the program does with it: a call answered otherwise
// (a value for a handle, or the reverse) is a divergence ("handle"), a read
// of another call's handle, or another way, or one the record lacks, or
// one missing, too ("read"), and a call passed other handles than the
// record's ("handles"). Its arguments are compared with the handles'
// values in their place, as the record has them. In a "what if" replay
// (real tools), the dispatcher holds the recorded calls' handles itself.
//
// A handle's ID is random in every run: a replay's record names each
// handle by the recorded ID of the call that made it, and its outcome
// (text, result) is compared after the same renaming.

// handleMark is the key of the marker a program's handle is sent as in a
// call's arguments (executor/handles.go; docs/abi.md).
const handleMark = "$ptcx.handle"

var handleMarkBytes = []byte(`"` + handleMark + `"`)

// envelope is what the guest is told of a handle (docs/abi.md, "Handles").
type envelope struct {
	Ref    string    `json:"ref"`
	Size   int       `json:"size"`
	Labels api.Label `json:"labels"`
	Tool   string    `json:"tool"`
}

// heldRef is a handle of a recorded call the replay's program holds.
type heldRef struct {
	call   int       // the index of the call answered with it
	labels api.Label // its label
	here   bool      // held by the dispatcher (a "what if" replay), not the executor
}

// newRef is a fresh name for a handle the dispatcher holds.
func newRef() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// holdAnswer is the answer to a recorded call c that answered the program
// with a handle, held by the dispatcher under a fresh ref. Call it with
// d.mu held.
func (d *replayDispatcher) holdAnswer(c Call) wasmhost.CallResult {
	ref := newRef()
	d.refs[ref] = heldRef{call: c.Index, labels: c.Handle.Labels, here: true}
	env, _ := json.Marshal(envelope{Ref: ref, Size: len(c.Value), Labels: c.Handle.Labels, Tool: c.Handle.Tool})
	return wasmhost.CallResult{OK: true, Handle: true, Value: env}
}

// readValue is what reading a handle whose value is v as as answers
// (executor/handles.go: text is a JSON string, the value itself when it is
// one).
func readValue(v json.RawMessage, as string) wasmhost.CallResult {
	if as == "text" && (len(v) == 0 || v[0] != '"') {
		v, _ = json.Marshal(string(v))
	}
	return wasmhost.CallResult{OK: true, Value: v}
}

// substitute returns args with the marker of every handle in d.refs
// replaced by its recorded value, as the executor replaces them, and the
// calls that made them (sorted, each once). Markers of other handles stay.
// Call it with d.mu held.
func (d *replayDispatcher) substitute(args json.RawMessage) (json.RawMessage, []int) {
	if len(d.refs) == 0 || !bytes.Contains(args, handleMarkBytes) {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return args, nil
	}
	var calls []int
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x[handleMark].(string); ok && len(x) == 1 {
				if h, ok := d.refs[ref]; ok {
					if !slices.Contains(calls, h.call) {
						calls = append(calls, h.call)
					}
					return json.RawMessage(d.calls[h.call-1].Value)
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
	if len(calls) == 0 {
		return args, nil
	}
	slices.Sort(calls)
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		return args, nil
	}
	return json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), calls
}

// passedCalls are the calls that made the handles c was passed, sorted.
func passedCalls(c Call) []int {
	var out []int
	for _, p := range c.Handles {
		if !slices.Contains(out, p.Call) {
			out = append(out, p.Call)
		}
	}
	slices.Sort(out)
	return out
}

// refOf is the ref in a handle's envelope.
func refOf(v json.RawMessage) string {
	var e envelope
	_ = json.Unmarshal(v, &e) // the executor made it
	return e.Ref
}

// readArgs are a handle read's arguments.
type readArgs struct {
	Ref string `json:"ref"`
	As  string `json:"as"`
}

// read checks a read of a handle against the record's reads, then has it
// answered: by the dispatcher for a handle it holds, else by the executor.
// A read of no handle the program was given by a recorded call (or one
// the executor refuses: another "as") is not counted; it goes on. In a
// "what if" replay, reads past the record's are not compared.
func (d *replayDispatcher) read(args json.RawMessage, done func(wasmhost.CallResult)) {
	var a readArgs
	_ = json.Unmarshal(args, &a) // the prelude writes it; anything else is the executor's to refuse
	d.mu.Lock()
	if d.div != nil {
		d.mu.Unlock()
		done(wasmhost.CallResult{Message: stopped})
		return
	}
	h, known := d.refs[a.Ref]
	if !known || (a.As != "text" && a.As != "json") {
		d.mu.Unlock()
		d.onward().Dispatch(wasmhost.HandleCall, args, done)
		return
	}
	k := len(d.readsMade)
	got := Read{Call: h.call, As: a.As, Labels: h.labels}
	if c := d.calls[h.call-1]; c.Handle != nil {
		got.Handle = c.Handle.ID
	}
	d.readsMade = append(d.readsMade, got)
	past := k >= len(d.reads) && d.fallback != nil // a "what if" replay's program may read more, as it may call more
	if !past && (k >= len(d.reads) || d.reads[k].Call != got.Call || d.reads[k].As != got.As) {
		div := &Divergence{Index: h.call, Reason: "read", Read: k + 1, GotRead: &got}
		if k < len(d.reads) {
			want := d.reads[k]
			div.ExpectedRead = &want
		}
		d.describeRead(div)
		d.diverge(div, done)
		return
	}
	if h.here {
		v := d.calls[h.call-1].Value
		d.mu.Unlock()
		done(readValue(v, a.As))
		return
	}
	d.mu.Unlock()
	d.through.Dispatch(wasmhost.HandleCall, args, done)
}

// onward is where calls the dispatcher does not answer go.
func (d *replayDispatcher) onward() wasmhost.Dispatcher {
	if d.through != nil {
		return d.through
	}
	return d.fallback
}

// describeRead fills in a read divergence's calls, for its message. Call it
// with d.mu held.
func (d *replayDispatcher) describeRead(div *Divergence) {
	if r := div.ExpectedRead; r != nil && r.Call >= 1 && r.Call <= len(d.calls) {
		div.ExpectedTool, div.ExpectedArgs = d.calls[r.Call-1].Tool, d.calls[r.Call-1].Args
	}
	if r := div.GotRead; r != nil {
		div.GotTool, div.GotArgs = d.calls[r.Call-1].Tool, d.calls[r.Call-1].Args
	}
}

// readText is how a divergence shows a read.
func readText(r *Read, tool string, args json.RawMessage) string {
	if r == nil {
		return "no read"
	}
	if r.Call == 0 {
		return fmt.Sprintf("%s() of handle %s, from before the record", r.As, r.Handle)
	}
	return fmt.Sprintf("%s() of the handle call %d answered, %s", r.As, r.Call, shownCall(tool, args))
}

// callsText is how a divergence shows the calls whose handles a call was
// passed.
func callsText(calls []int) string {
	if len(calls) == 0 {
		return "no handle"
	}
	s := make([]string, len(calls))
	for i, c := range calls {
		s[i] = fmt.Sprint(c)
	}
	return "the handles of calls " + strings.Join(s, ", ")
}

// renameHandles names got's handles (a replay's) by the recorded IDs of the
// calls that made them in want, in its calls, its reads, its text and its
// result: a handle's ID is random in every run.
func renameHandles(want Record, got *Record) {
	ids := map[string]string{}
	for i := range got.Calls {
		h := got.Calls[i].Handle
		if h == nil || i >= len(want.Calls) || want.Calls[i].Handle == nil {
			continue
		}
		ids[h.ID] = want.Calls[i].Handle.ID
		h.ID = want.Calls[i].Handle.ID
	}
	if len(ids) == 0 {
		return
	}
	for i := range got.Calls {
		for j := range got.Calls[i].Handles {
			if id, ok := ids[got.Calls[i].Handles[j].ID]; ok {
				got.Calls[i].Handles[j].ID = id
			}
		}
	}
	for i := range got.Reads {
		if id, ok := ids[got.Reads[i].Handle]; ok {
			got.Reads[i].Handle = id
		}
	}
	pairs := make([]string, 0, 2*len(ids))
	for from, to := range ids {
		pairs = append(pairs, from, to)
	}
	r := strings.NewReplacer(pairs...)
	got.Text = r.Replace(got.Text)
	if len(got.Result) > 0 {
		got.Result = json.RawMessage(r.Replace(string(got.Result)))
	}
}
