package plan_test

import (
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/plan"
)

func mustRead(t *testing.T, code string) *plan.Plan {
	t.Helper()
	p, err := plan.Read(code, bound)
	require.NoError(t, err)
	return p
}

func clone(t *testing.T, p *plan.Plan) *plan.Plan {
	t.Helper()
	b, err := json.Marshal(p)
	require.NoError(t, err)
	var c plan.Plan
	require.NoError(t, json.Unmarshal(b, &c))
	return &c
}

func TestBind_anotherProgram(t *testing.T) {
	a, b := mustRead(t, "return 1"), mustRead(t, "return 2")
	_, err := plan.Bind(a, b)
	var mm *plan.MismatchError
	require.True(t, errors.As(err, &mm))
	require.Equal(t, b.Hash, mm.Plan)
	require.Equal(t, a.Hash, mm.Program)
}

func TestBind_approverCannotAdd(t *testing.T) {
	read := mustRead(t, "await tools.lookup({q: 'x'})")
	approved := clone(t, read)
	approved.Tools = append(approved.Tools, "send_email")
	approved.Calls = append(approved.Calls, plan.Call{Tool: "send_email", Line: 1, Repeats: true, Computed: []string{plan.Opaque}})
	approved.Calls[0].Repeats = true
	approved.Dynamic = true
	b, err := plan.Bind(read, approved)
	require.NoError(t, err)
	require.ErrorContains(t, b.Admit("send_email", json.RawMessage(`{}`)), "does not allow send_email")
	require.NoError(t, b.Admit("lookup", json.RawMessage(`{"q":"x"}`)))
	require.ErrorContains(t, b.Admit("lookup", json.RawMessage(`{"q":"x"}`)), "once", "the approver cannot make a site repeat")
}

func TestBind_readDynamicStaysDynamic(t *testing.T) {
	read := mustRead(t, "const t = tools\nawait t.lookup({})")
	approved := clone(t, read)
	approved.Dynamic = false
	approved.Tools = []string{"lookup", "nope"}
	b, err := plan.Bind(read, approved)
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, b.Admit("lookup", json.RawMessage(`{"any":1}`)))
	}
	require.Error(t, b.Admit("send_email", json.RawMessage(`{}`)))
	require.Error(t, b.Admit("nope", json.RawMessage(`{}`)))
}

func TestBound_Admit_arguments(t *testing.T) {
	p := mustRead(t, "await tools.send_email({to: 'ada', subject: (await tools.lookup({})) as any})\nawait tools.send_email({to: 'bob', ...({} as any)})")
	cases := []struct {
		args string
		ok   bool
	}{
		{`{"to":"ada","subject":"s"}`, true},
		{`{"to":"ada"}`, true},                          // a computed member may be absent
		{`{"to":"ada","subject":"s","bcc":"m"}`, false}, // a member the site does not name
		{`{"to":"mallory"}`, false},
		{`{"to":"bob","bcc":"m"}`, true}, // the second site is opaque
		{`{"subject":"s"}`, false},
		{`[1]`, false},
		{`not json`, false},
	}
	for _, c := range cases {
		b, err := plan.Bind(p, p)
		require.NoError(t, err)
		err = b.Admit("send_email", json.RawMessage(c.args))
		require.Equal(t, c.ok, err == nil, "%s: %v", c.args, err)
	}
}

// Sites are shared out so that calls get one each whenever that is
// possible, whatever the order the calls come in.
func TestBound_Admit_matching(t *testing.T) {
	p := mustRead(t, "const v: any = Math.random()\nawait tools.send_email({to: v})\nawait tools.send_email({to: 'ada'})")
	b, err := plan.Bind(p, p)
	require.NoError(t, err)
	require.NoError(t, b.Admit("send_email", json.RawMessage(`{"to":"ada"}`))) // fits both sites
	require.NoError(t, b.Admit("send_email", json.RawMessage(`{"to":"bob"}`))) // fits only the first: the first call moves
	require.ErrorContains(t, b.Admit("send_email", json.RawMessage(`{"to":"ada"}`)), "2 times")
}

func TestBound_Admit_hammer(t *testing.T) {
	p := mustRead(t, "await Promise.all([tools.lookup({q: 1}), tools.lookup({q: 1}), tools.lookup({q: 1})])")
	b, err := plan.Bind(p, p)
	require.NoError(t, err)
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b.Admit("lookup", json.RawMessage(`{"q":1}`)) == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int64(3), ok.Load())
}

func TestRestoreBound(t *testing.T) {
	p := mustRead(t, "await tools.lookup({q: 1})\nawait tools.lookup({q: 2})")
	b, err := plan.Bind(p, p)
	require.NoError(t, err)
	require.NoError(t, b.Admit("lookup", json.RawMessage(`{"q":2}`)))
	data, err := json.Marshal(b)
	require.NoError(t, err)
	r, err := plan.RestoreBound(data)
	require.NoError(t, err)
	require.Equal(t, p.Hash, r.Hash())
	require.Error(t, r.Admit("lookup", json.RawMessage(`{"q":2}`)), "the admitted call is kept")
	require.NoError(t, r.Admit("lookup", json.RawMessage(`{"q":1}`)))
	for _, bad := range []string{`x`, `{"sites":{"lookup":[{}]},"assigned":{}}`, `{"sites":{"lookup":[{}]},"assigned":{"lookup":[5]}}`} {
		_, err := plan.RestoreBound([]byte(bad))
		require.Error(t, err, bad)
	}
}

// A clone admits calls on its own: the original's admissions are its
// starting point, and what the clone admits never reaches the original.
func TestBound_Clone_admitsWithoutChangingTheOriginal(t *testing.T) {
	read := mustRead(t, "await tools.lookup({q: 'a'}); await tools.lookup({q: 'b'})")
	b, err := plan.Bind(read, clone(t, read))
	require.NoError(t, err)
	require.NoError(t, b.Admit("lookup", json.RawMessage(`{"q":"a"}`)))

	c := b.Clone()
	require.ErrorContains(t, c.Admit("lookup", json.RawMessage(`{"q":"a"}`)), "made that many times", "the clone starts from the original's admissions")
	require.NoError(t, c.Admit("lookup", json.RawMessage(`{"q":"b"}`)))
	require.ErrorContains(t, c.Admit("lookup", json.RawMessage(`{"q":"b"}`)), "made that many times")

	require.NoError(t, b.Admit("lookup", json.RawMessage(`{"q":"b"}`)), "the clone's admission is not the original's")
}
