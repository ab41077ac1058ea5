package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// ptcx's sessions: run_code calls naming one session of the scope
// sessionScope (the deployment) through the executor (ptcx.WithSessions), each feed a call,
// the session closed by Host.CloseSession.

// sessionScope is the scope of the bench's sessions: the deployment's.
const sessionScope = ""

// ptcxSession is one session of b's.
type ptcxSession struct {
	b    *PTCX
	name string
}

var sessionSeq atomic.Int64

func (b *PTCX) openSession(context.Context) (FeedSession, error) {
	return &ptcxSession{b: b, name: "s" + strconv.FormatInt(sessionSeq.Add(1), 10)}, nil
}

// Feed is one run_code call in the session.
func (s *ptcxSession) Feed(ctx context.Context, f SessionFeed) error {
	args, err := runCodeArgs(f.Program())
	if err != nil {
		return err
	}
	r := s.b.exec.Execute(ctx, executor.Call{Scope: sessionScope, Session: s.name, Name: registry.RunCode, Args: args})
	if !r.OK() {
		return fmt.Errorf("run_code in session %s failed: %s", s.name, r.Text)
	}
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(r.Value, &out); err != nil {
		return fmt.Errorf("run_code's value %s: %w", r.Value, err)
	}
	return CheckAnswer(f.Program(), out.Result)
}

// Close closes the session; one that was not there is an error.
func (s *ptcxSession) Close(ctx context.Context) error {
	had, err := s.b.host.CloseSession(ctx, sessionScope, s.name)
	if err == nil && !had {
		err = fmt.Errorf("bench: session %s was not there to close", s.name)
	}
	return err
}
