package executor

import (
	"encoding/json"
	"slices"

	"github.com/ptcx/ptcx/api"
)

// Handle notifications: what a recorder (package trace) needs to know of a
// run's handles (handles.go) besides the nested calls' notifications. A
// handle made, and a handle read, are each one HandleEvent; the handles
// passed in a call's arguments are on its Notification (Handles).

// HandleEventKind says what happened to a handle.
type HandleEventKind int

const (
	// HandleMade: a nested call's successful result was made a handle
	// (its declaration says "handle": true, or it is over
	// Config.WithHandleOverBytes), and the program is answered with it.
	HandleMade HandleEventKind = iota + 1
	// HandleRead: the program read a handle it holds (text(), json()),
	// which joined the handle's label into its context.
	HandleRead
)

// HandleEvent is the notification that a run's program was answered with
// a handle, or read one.
type HandleEvent struct {
	Kind HandleEventKind
	// Parent is the ID of the run_code call whose program holds the handle.
	Parent string
	// Call is the ID of the nested call answered with the handle
	// (HandleMade); empty for a read.
	Call string
	// Handle is the handle, its value included. Its Labels are what a read
	// joins into the program's context. Shared: do not change it.
	Handle api.Handle
	// As is how a read read it: "text" or "json"; empty for HandleMade.
	As string
}

// WithOnHandle appends a function called when a nested call's result is
// made a handle, and when a program reads a handle, before the program
// sees either. It runs on the executing goroutine: keep it fast.
func (c Config) WithOnHandle(f func(HandleEvent)) Config {
	c.onHandle = append(slices.Clip(c.onHandle), f)
	return c
}

// notifyHandleMade tells the handle listeners that r's value is held as h.
func (s *scheduler) notifyHandleMade(r api.Result, h *heldHandle) {
	if len(s.e.cfg.onHandle) == 0 {
		return
	}
	s.e.notifyHandle(HandleEvent{Kind: HandleMade, Parent: s.tok.callID, Call: r.ID, Handle: h.Handle})
}

// notifyHandleRead tells the handle listeners that the program read h
// with args ({"ref", "as"}, which read has accepted).
func (s *scheduler) notifyHandleRead(h *heldHandle, args json.RawMessage) {
	if len(s.e.cfg.onHandle) == 0 {
		return
	}
	var a struct {
		As string `json:"as"`
	}
	_ = json.Unmarshal(args, &a) // read has decoded it already
	s.e.notifyHandle(HandleEvent{Kind: HandleRead, Parent: s.tok.callID, Handle: h.Handle, As: a.As})
}

func (e *Executor) notifyHandle(ev HandleEvent) {
	for _, f := range e.cfg.onHandle {
		_ = safely(func() error { f(ev); return nil })
	}
}

// raised is the label x's body (api.Output.Labels) and its tool's
// finalizer (fin, the finalized result's) said of its result, beyond its
// declaration and the call's: what Notification.Raised carries.
func (x *execution) raised(fin api.Label) api.Label {
	if x.err != nil || x.def == nil || x.def.Transport() {
		return fin
	}
	if !x.out.Labels.Valid() { // a body's label no level names: the highest (resultLabel)
		return api.Top
	}
	return fin.Join(x.out.Labels)
}

// handleIDs are the IDs of the handles in x's arguments, sorted; nil for
// none.
func (x *execution) handleIDs() []string {
	if x.handleIn == nil {
		return nil
	}
	return x.handleIn.ids
}
