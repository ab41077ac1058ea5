// Package gojapeer is goja (github.com/dop251/goja, JavaScript interpreted
// in Go, in-process, no sandbox) as a peer of the benchmark: the fastest
// baseline a Go host could pick instead of a sandbox. Each run is a fresh
// goja.Runtime, as each ptcx run is a fresh instance. It is a package of
// its own so that nothing but the benchmark's drivers links goja.
package gojapeer

import (
	"context"
	"errors"
	"fmt"
	"time"

	js "github.com/dop251/goja"

	"github.com/ptcx/ptcx/bench"
)

// Peer is the goja implementation.
type Peer struct{ park bench.Parking }

// New returns the goja peer.
func New() *Peer { return &Peer{} }

// Name is bench.ImplGoja.
func (g *Peer) Name() string { return bench.ImplGoja }

// Measure runs j. goja is missing from suspend, resume and the warm pool,
// saying why.
func (g *Peer) Measure(ctx context.Context, j bench.Job) (bench.Raw, error) {
	switch j.Kind {
	case bench.Suspend, bench.Resume:
		return bench.Raw{}, fmt.Errorf("%w: goja cannot capture a run to bytes: a goja.Runtime's state has no snapshot, "+
			"a run lives only as long as its Go values", bench.ErrUnsupported)
	case bench.PoolMemory:
		return bench.Raw{}, fmt.Errorf("%w: goja has no pool of ready instances: each run makes its own goja.Runtime",
			bench.ErrUnsupported)
	case bench.Session, bench.AfterSession:
		return bench.MeasureSessions(ctx, j, openSession, g.run)
	}
	return bench.MeasureFunc(ctx, j, g.run, &g.park)
}

// run runs p as the body of an async function in a new runtime, with an
// event loop for the tools that answer later, and checks its answer.
func (g *Peer) run(ctx context.Context, p bench.Program) error {
	vm := js.New()
	stop := context.AfterFunc(ctx, func() { vm.Interrupt(ctx.Err()) })
	defer stop()
	later, done := make(chan func(), 128), make(chan struct{})
	defer close(done)
	settle := func(resolve func(any) error, v any) {
		select {
		case later <- func() { _ = resolve(v) }:
		case <-done:
		}
	}
	tools := vm.NewObject()
	set := func(name string, f func(call js.FunctionCall) js.Value) error { return tools.Set(name, f) }
	err := errors.Join(
		set("echo", func(call js.FunctionCall) js.Value {
			promise, resolve, _ := vm.NewPromise()
			_ = resolve(call.Argument(0))
			return vm.ToValue(promise)
		}),
		set("sleep20", func(js.FunctionCall) js.Value {
			promise, resolve, _ := vm.NewPromise()
			time.AfterFunc(20*time.Millisecond, func() { settle(resolve, true) })
			return vm.ToValue(promise)
		}),
		set("wait", func(js.FunctionCall) js.Value {
			promise, resolve, reject := vm.NewPromise()
			go func() {
				if err := g.park.Wait(ctx); err != nil {
					settle(reject, err.Error())
					return
				}
				settle(resolve, true)
			}()
			return vm.ToValue(promise)
		}),
		vm.Set("tools", tools),
	)
	if err != nil {
		return fmt.Errorf("goja: setting up the tools: %w", err)
	}
	v, err := vm.RunString("(async () => {\n" + p.JS + "\n})()")
	if err != nil {
		return fmt.Errorf("goja: %w", err)
	}
	promise, ok := v.Export().(*js.Promise)
	if !ok {
		return errors.New("goja: the program's async function returned no promise")
	}
	for promise.State() == js.PromiseStatePending {
		select {
		case f := <-later:
			f()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if promise.State() == js.PromiseStateRejected {
		return fmt.Errorf("goja: the program threw: %v", promise.Result())
	}
	stringify, _ := js.AssertFunction(vm.Get("JSON").ToObject(vm).Get("stringify"))
	out, err := stringify(js.Undefined(), promise.Result())
	if err != nil {
		return fmt.Errorf("goja: the result is not JSON: %w", err)
	}
	return bench.CheckAnswer(p, []byte(out.String()))
}

// session is goja keeping a session's state in one runtime: each feed's
// code runs as a script of it (its top-level declarations stay in the
// runtime's global scope for the next), then its result expression is
// evaluated and turned to JSON. console.log collects the lines printed.
type session struct {
	vm    *js.Runtime
	lines []string
}

func openSession(context.Context) (bench.FeedSession, error) {
	s := &session{vm: js.New()}
	console := s.vm.NewObject()
	err := errors.Join(
		console.Set("log", func(call js.FunctionCall) js.Value {
			s.lines = append(s.lines, call.Argument(0).String())
			return js.Undefined()
		}),
		s.vm.Set("console", console),
	)
	if err != nil {
		return nil, fmt.Errorf("goja: setting up console: %w", err)
	}
	return s, nil
}

// Feed runs f's code, then checks its result's JSON.
func (s *session) Feed(ctx context.Context, f bench.SessionFeed) error {
	stop := context.AfterFunc(ctx, func() { s.vm.Interrupt(ctx.Err()) })
	defer stop()
	if _, err := s.vm.RunString(f.JS); err != nil {
		return fmt.Errorf("goja: a feed: %w", err)
	}
	v, err := s.vm.RunString("JSON.stringify(" + f.Result + ")")
	if err != nil {
		return fmt.Errorf("goja: a feed's result: %w", err)
	}
	return bench.CheckAnswer(f.Program(), []byte(v.String()))
}

// Close drops the runtime.
func (s *session) Close(context.Context) error {
	s.vm = nil
	return nil
}
