package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// runInSession runs c's program in its call's session (Call.Session),
// waiting for the session's turn. Its output says when the session's
// state was lost: before this program (its state was over MaxBytes once
// suspended, or could not be kept), or by it (the host stopped it, so its
// heap may be half updated: the state is reset). A session's program is
// never parked.
func (e *Executor) runInSession(ctx context.Context, c *codeRun) (api.Output, error) {
	rt, ok := e.cfg.runtime.(sessionRuntime)
	if !ok {
		return api.Output{}, internal("run_code sessions need a code runtime that keeps sessions (a *wasmhost.Runtime)", nil)
	}
	s, err := e.sessions.acquire(ctx, rt, c.x.req.Scope, c.x.session, c.lang)
	if err != nil {
		return api.Output{}, err
	}
	defer e.sessions.release(s)
	// The sandbox session's language is its first program's (wasmhost
	// binds it as that program starts, and keeps it across a reset).
	if l := s.ws.Language(); l != "" && l != c.lang {
		return api.Output{}, otherLanguage(c.x.session, l, c.lang)
	}
	notice := e.sessions.takeNotice(s)
	c.park = nil
	c.tok.flow.inherit(&s.flow) // what earlier programs read, this one has read (flow.go)
	if s.ws.State() == wasmhost.SessionEmpty {
		s.handles = nil // the state was dropped (reset, or never made): no program holds a handle's ref
	}
	if s.handles != nil {
		c.tok.handles.Store(s.handles) // what earlier programs received, this one holds (handles.go)
	}
	reset := false
	out, err := e.runProgram(ctx, c, func(p wasmhost.Program, sch *scheduler) (wasmhost.Outcome, error) {
		p.JS = c.prog.JS
		p.Session = s.ws
		o, err := e.cfg.runtime.Run(ctx, p, sch)
		var re *wasmhost.RunError
		reset = errors.As(err, &re) && re.SessionReset
		return o, err
	})
	s.flow.raise(&c.tok.flow)
	s.handles = c.tok.handles.Load()
	if reset {
		s.handles = nil
		notice = join(notice, "the session's state was reset: the host stopped this program, so every global and "+
			"declaration of the session's programs so far is gone; the next program starts afresh")
	}
	notice = join(notice, e.sessions.save(ctx, s)) // session_store.go
	if notice == "" {
		return out, err
	}
	return withNotice(out, err, "[ptcx] "+notice)
}

func join(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// withNotice puts a session's notice in a run's output: first in a
// failure's message, or as the first log line of a result.
func withNotice(out api.Output, err error, notice string) (api.Output, error) {
	var ae *api.Error
	if errors.As(err, &ae) {
		ae.Message = notice + "\n" + ae.Message
		return out, ae
	}
	if err != nil {
		return out, err
	}
	var v RunCodeValue
	if json.Unmarshal(out.Value, &v) == nil {
		v.Logs = append([]string{notice}, v.Logs...)
		if b, mErr := json.Marshal(v); mErr == nil {
			out.Value = b
		}
	}
	if out.Text == noOutput {
		out.Text = notice
	} else {
		out.Text = notice + "\n" + out.Text
	}
	return out, nil
}

// otherLanguage refuses a program of lang in a session whose programs are
// of has.
func otherLanguage(session string, has, lang api.Language) *api.Error {
	problem := fmt.Sprintf("session %q runs %s programs, and this program is %s: a session's programs are all of one language; "+
		"run it in %s, or in another session", session, has.Title(), lang.Title(), has.Title())
	return invalidArgs("run_code", "/language", problem, "")
}
