package executor_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// approvalWorld is a ptc registry with send (asked about by a listener:
// Ask), send_flow (asks when an untrusted result flowed into its "to"),
// read_inbox (untrusted), add and run_code, on an executor whose approver
// parks (ParkApprovals).
type approvalWorld struct {
	ex      *executor.Executor
	reg     *registry.Registry
	cfg     executor.Config
	mu      sync.Mutex
	ran     map[string]int
	asked   map[string]int // the listener's verdicts on send, by tool
	notes   []string
	elapsed time.Duration
}

const elsewhere = "use a route that can wait"

func newApprovalWorld(t testing.TB, limits *api.Limits) *approvalWorld {
	t.Helper()
	w := &approvalWorld{ran: map[string]int{}, asked: map[string]int{}}
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	body := func(name string) registry.Body {
		return func(_ context.Context, in api.Input) (api.Output, error) {
			w.mu.Lock()
			w.ran[name]++
			w.mu.Unlock()
			return api.ValueOutput(map[string]any{"tool": name, "args": json.RawMessage(in.Args)})
		}
	}
	untrusted := api.Label{Integrity: api.Untrusted}
	for _, tl := range []registry.Tool{
		{Name: "send", ConcurrencySafe: true, Body: body("send")},
		{Name: "send_flow", Body: body("send_flow"), Policy: policy.Declaration{CallsPerRun: 1,
			Accepts: &policy.Accepts{Args: map[string]api.Label{"to": {}}, OnViolation: policy.Ask}}},
		{Name: "read_inbox", Body: body("read_inbox"), Policy: policy.Declaration{Labels: &untrusted}},
		{Name: "add", ConcurrencySafe: true, Body: body("add")},
		{Name: "block", ConcurrencySafe: true, Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
			<-ctx.Done() // until the run ends
			return api.Output{}, ctx.Err()
		}},
	} {
		require.NoError(t, reg.Register(registry.Deployment, tl))
	}
	cfg := executor.NewConfig().WithRuntime(realRuntime(t)).WithApprover(executor.ParkApprovals(elsewhere)).
		WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
			if req.Tool == "send" {
				w.mu.Lock()
				w.asked[req.Tool]++
				w.mu.Unlock()
				return executor.Decision{Verdict: executor.Ask, Reason: "send leaves the house"}, nil
			}
			return executor.Decision{}, nil
		}).
		WithOnResult(func(n executor.Notification) {
			s := n.Request.Tool
			if n.Request.Nested {
				s = "nested " + s
			}
			if n.Result.Err != nil {
				s += " " + string(n.Result.Err.Code)
			}
			w.mu.Lock()
			w.notes = append(w.notes, s)
			if n.Run != nil {
				w.elapsed = n.Run.Stats.Wall
			}
			w.mu.Unlock()
		})
	if limits != nil {
		cfg = cfg.WithLimits(*limits)
	}
	ex, err := executor.New(reg, cfg)
	require.NoError(t, err)
	w.ex, w.reg, w.cfg = ex, reg, cfg
	return w
}

func (w *approvalWorld) notified() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.notes...)
}

func (w *approvalWorld) ranOf(tool string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ran[tool]
}

func approved(reason string) executor.Answer {
	return executor.Answer{Decision: &executor.ApprovalDecision{Approve: true, Reason: reason}}
}

func declined(reason string) executor.Answer {
	return executor.Answer{Decision: &executor.ApprovalDecision{Reason: reason}}
}

func approvalResult(t *testing.T, r api.Result) string {
	t.Helper()
	require.True(t, r.OK(), "%+v", r.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	return string(v.Result)
}

func TestParkApprovals_approved_callRunsAndProgramContinues(t *testing.T) {
	w := newApprovalWorld(t, nil)
	ctx := context.Background()
	res, p := w.ex.ExecuteParkable(ctx, runCodeCall(`
		const a = await tools.add({n: 1});
		const s = await tools.send({to: "boss"});
		const b = await tools.add({n: 2});
		return [a.args.n, s.tool, s.args.to, b.args.n];`), nil)
	require.NotNil(t, p, "not parked: %+v", res)
	calls := p.Calls()
	require.Len(t, calls, 1)
	require.Equal(t, executor.ParkedCall{ID: 2, Tool: "send", Args: json.RawMessage(`{"to":"boss"}`), Kind: executor.ParkedApproval,
		Reason: "send leaves the house"}, calls[0])
	require.Zero(t, w.ranOf("send"), "nothing ran before the decision")
	require.Equal(t, []string{"nested add"}, w.notified(), "the held call has no notification: it is dispatched again on resume")
	id := p.CallID(2)
	require.NotEmpty(t, id)

	res, again := p.Resume(ctx, map[int32]executor.Answer{2: approved("fine")})
	require.Nil(t, again)
	require.JSONEq(t, `[1, "send", "boss", 2]`, approvalResult(t, res))
	require.Equal(t, 1, w.ranOf("send"))
	require.Equal(t, 2, w.ranOf("add"), "no replay: the call before the park ran once")
	require.Equal(t, []string{"nested add", "nested send", "nested add", "run_code"}, w.notified())
	require.Equal(t, 2, w.asked["send"], "the listeners see the call again on resume; the decision stands for the approver")
	require.Len(t, res.Ledger.Calls, 3)
}

func TestParkApprovals_declined_programSeesDenied(t *testing.T) {
	w := newApprovalWorld(t, nil)
	ctx := context.Background()
	_, p := w.ex.ExecuteParkable(ctx, runCodeCall(`
		try { await tools.send({to: "x"}); return "sent"; }
		catch (e) { return e.code + " | " + e.message; }`), nil)
	require.NotNil(t, p)
	res, again := p.Resume(ctx, map[int32]executor.Answer{1: declined("not on a Sunday")})
	require.Nil(t, again)
	require.JSONEq(t, `"DENIED | rejected by the approver: not on a Sunday"`, approvalResult(t, res))
	require.Zero(t, w.ranOf("send"))
	require.Equal(t, []string{"nested send DENIED", "run_code"}, w.notified())
}

func TestParkApprovals_flowAsk_carriesItsLabelAndChargesOnce(t *testing.T) {
	w := newApprovalWorld(t, nil)
	ctx := context.Background()
	_, p := w.ex.ExecuteParkable(ctx, runCodeCall(`
		const m = await tools.read_inbox({});
		return (await tools.send_flow({to: m.tool})).args.to;`), nil)
	require.NotNil(t, p)
	c := p.Calls()[0]
	require.Equal(t, executor.ParkedApproval, c.Kind)
	require.Contains(t, c.Reason, `send_flow may not receive untrusted data in argument "to"`)
	require.Equal(t, api.Untrusted, c.Label.Integrity)
	// calls_per_run 1: the held call's charge was given back, or its
	// dispatch on resume would be refused as a second call.
	res, _ := p.Resume(ctx, map[int32]executor.Answer{c.ID: approved("")})
	require.JSONEq(t, `"read_inbox"`, approvalResult(t, res))
	require.Equal(t, 1, w.ranOf("send_flow"))
}

// A call that asks beside another in flight: the run parks once the other
// answered, on the held call alone.
func TestParkApprovals_besideACallInFlight(t *testing.T) {
	w := newApprovalWorld(t, nil)
	ctx := context.Background()
	_, p := w.ex.ExecuteParkable(ctx, runCodeCall(`
		const [s, a, s2] = await Promise.all([tools.send({to: 1}), tools.add({}), tools.send({to: 2})]);
		return [s.args.to, a.tool, s2.args.to];`), nil)
	require.NotNil(t, p)
	calls := p.Calls()
	require.Len(t, calls, 2)
	for _, c := range calls {
		require.Equal(t, executor.ParkedApproval, c.Kind)
	}
	require.Equal(t, 1, w.ranOf("add"))
	res, again := p.Resume(ctx, map[int32]executor.Answer{calls[0].ID: approved(""), calls[1].ID: approved("")})
	require.Nil(t, again)
	require.JSONEq(t, `[1, "add", 2]`, approvalResult(t, res))
	require.Equal(t, 2, w.ranOf("send"))
}

func TestParkApprovals_resumeRefusesTheWrongKindOfAnswer(t *testing.T) {
	w := newApprovalWorld(t, nil)
	ctx := context.Background()
	_, p := w.ex.ExecuteParkable(ctx, runCodeCall(`return await tools.send({})`), nil)
	require.NotNil(t, p)
	res, _ := p.Resume(ctx, map[int32]executor.Answer{1: {Output: api.Output{Value: json.RawMessage(`1`)}}})
	require.Equal(t, api.CodeInternal, res.Err.Code)
	require.Contains(t, res.Err.Message, "without a decision")
	require.Zero(t, w.ranOf("send"))

	// A decision for a tool's call.
	_, p = w.ex.ExecuteParkable(ctx, runCodeCall(`return await tools.add({})`), func(tool string) bool { return tool == "add" })
	require.NotNil(t, p)
	require.Equal(t, executor.ParkedTool, p.Calls()[0].Kind)
	res, _ = p.Resume(ctx, map[int32]executor.Answer{1: approved("")})
	require.Equal(t, api.CodeInternal, res.Err.Code)
	require.Contains(t, res.Err.Message, "it is a tool's call")

	// Left unanswered, the approval is asked again: parked again.
	_, p = w.ex.ExecuteParkable(ctx, runCodeCall(`return (await tools.send({})).tool`), nil)
	require.NotNil(t, p)
	_, again := p.Resume(ctx, nil)
	require.NotNil(t, again)
	require.Equal(t, executor.ParkedApproval, again.Calls()[0].Kind)
	res, _ = again.Resume(ctx, map[int32]executor.Answer{again.Calls()[0].ID: approved("")})
	require.JSONEq(t, `"send"`, approvalResult(t, res))
}

// Where the run cannot park (Execute, a call made directly), the call is
// DENIED, saying where it could wait.
func TestParkApprovals_cannotParkThere_denied(t *testing.T) {
	w := newApprovalWorld(t, nil)
	ctx := context.Background()
	r := w.ex.Execute(ctx, runCodeCall(`try { await tools.send({}) } catch (e) { return e.code + " | " + e.message }`))
	got := approvalResult(t, r)
	require.Contains(t, got, "DENIED | approval required, and this call cannot wait for one here (send leaves the house): "+elsewhere)
	require.Zero(t, w.ranOf("send"))
}

// Moved to another executor as bytes, the approval and its question go
// with it (format version 2); a park on tools alone stays version 1.
func TestParkApprovals_marshalRestore(t *testing.T) {
	w := newApprovalWorld(t, nil)
	ctx := context.Background()
	_, p := w.ex.ExecuteParkable(ctx, runCodeCall(`
		const m = await tools.read_inbox({});
		return (await tools.send_flow({to: m.tool})).args.to;`), nil)
	require.NotNil(t, p)
	want := p.Calls()
	b, err := p.Marshal()
	require.NoError(t, err)
	require.Equal(t, uint32(2), binary.BigEndian.Uint32(b[8:]))
	require.True(t, p.Release())

	other, err := executor.New(w.reg, w.cfg)
	require.NoError(t, err)
	q, err := other.RestoreParked(b)
	require.NoError(t, err)
	require.Equal(t, want, q.Calls())
	res, _ := q.Resume(ctx, map[int32]executor.Answer{want[0].ID: approved("")})
	require.JSONEq(t, `"read_inbox"`, approvalResult(t, res))

	_, p = w.ex.ExecuteParkable(ctx, runCodeCall(`return await tools.add({})`), func(tool string) bool { return tool == "add" })
	require.NotNil(t, p)
	b, err = p.Marshal()
	require.NoError(t, err)
	require.Equal(t, uint32(1), binary.BigEndian.Uint32(b[8:]), "no approval: readable by executors that read version 1 only")
	p.Discard(ctx)
}

// Time parked does not count against the run's wall limit: a program
// parked on an approval for longer than its wall time still finishes.
func TestParkApprovals_parkedTimeIsNotWallTime(t *testing.T) {
	limits := api.DefaultLimits()
	limits.WallTime = time.Second
	w := newApprovalWorld(t, &limits)
	ctx := context.Background()
	_, p := w.ex.ExecuteParkable(ctx, runCodeCall(`return (await tools.send({})).tool`), nil)
	require.NotNil(t, p)
	time.Sleep(limits.WallTime + 200*time.Millisecond) // a person deciding: longer than the wall limit, on purpose
	res, _ := p.Resume(ctx, map[int32]executor.Answer{1: approved("")})
	require.JSONEq(t, `"send"`, approvalResult(t, res))
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Less(t, w.elapsed, limits.WallTime, "the run's wall time leaves out the time parked")
}

// A run that ends while a call is held for an approval (here at its wall
// limit, another call in flight) settles the held call too, with its one
// notification.
func TestParkApprovals_runEndsWhileHeld_abandoned(t *testing.T) {
	limits := api.DefaultLimits()
	limits.WallTime = 500 * time.Millisecond
	w := newApprovalWorld(t, &limits)
	ctx := context.Background()
	res, p := w.ex.ExecuteParkable(ctx, runCodeCall(`tools.send({}); await tools.block({});`), nil)
	require.Nil(t, p, "a call in flight that is not held keeps it from parking")
	require.False(t, res.OK())
	require.ElementsMatch(t, []string{"nested send ABORTED_BEFORE_DISPATCH", "nested block ABORTED", "run_code CODE_RUN_FAILED"}, w.notified())
	require.Equal(t, 1, w.asked["send"])
}

// reframe splits parked bytes into their header (decoded) and snapshot,
// lets edit change the header, and frames them again as version.
func reframe(t *testing.T, data []byte, version uint32, edit func(h map[string]any)) []byte {
	t.Helper()
	hlen := int(binary.BigEndian.Uint32(data[12:]))
	var h map[string]any
	require.NoError(t, json.Unmarshal(data[16:16+hlen], &h))
	edit(h)
	hb, err := json.Marshal(h)
	require.NoError(t, err)
	rest := data[16+hlen:]
	slen := binary.BigEndian.Uint64(rest)
	return executor.AssembleParkedVersion(version, hb, rest[8:8+slen])
}

// Bytes whose header says a call waits for an approval are read only as
// version 2, and only for a call that was dispatched: anything else is
// refused before anything runs.
func TestParkApprovals_bytesRefused(t *testing.T) {
	w := newApprovalWorld(t, nil)
	ctx := context.Background()
	_, p := w.ex.ExecuteParkable(ctx, runCodeCall(`return (await tools.send({})).tool`), nil)
	require.NotNil(t, p)
	data, err := p.Marshal()
	require.NoError(t, err)
	defer p.Discard(ctx)
	calls := func(h map[string]any) map[string]any { return h["calls"].([]any)[0].(map[string]any) }
	for _, tt := range []struct {
		name    string
		version uint32
		edit    func(h map[string]any)
		want    string
	}{
		{"as version 1", 1, func(map[string]any) {}, "format version 1 cannot say"},
		{"not dispatched", 2, func(h map[string]any) { delete(calls(h), "dispatched") }, "was not dispatched"},
		{"a bad label", 2, func(h map[string]any) {
			calls(h)["approval"].(map[string]any)["label"] = map[string]any{"integrity": "sorta"}
		}, "its header is not valid"},
		{"an unknown member", 2, func(h map[string]any) { calls(h)["approval"].(map[string]any)["extra"] = 1 }, "unknown field"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := executor.DecodeParked(reframe(t, data, tt.version, tt.edit), 1<<30)
			require.ErrorIs(t, err, executor.ErrParkedFormat)
			require.ErrorContains(t, err, tt.want)
		})
	}
	// The same bytes, reframed unchanged, are read.
	require.NoError(t, executor.DecodeParked(reframe(t, data, 2, func(map[string]any) {}), 1<<30))
	header, _, err := executor.DecodeParkedCalls(data, 1<<30)
	require.NoError(t, err)
	require.Equal(t, executor.ParkedApproval, header[0].Kind)
	require.Equal(t, "send leaves the house", header[0].Reason)
}

// With idle parking on, a call held for an approval beside a call in
// flight: the run idle-parks while that call runs, and parks for its
// caller on the approval once it answered.
func TestParkApprovals_withIdleParking(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	release := make(chan struct{})
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "slow", ConcurrencySafe: true,
		Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return api.ValueOutput("slow")
		}}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "send", ConcurrencySafe: true,
		Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("sent") }}))
	ex, err := executor.New(reg, executor.NewConfig().WithRuntime(realRuntime(t)).WithParkIdle(5*time.Millisecond).
		WithApprover(executor.ParkApprovals(elsewhere)).
		WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
			if req.Tool == "send" {
				return executor.Decision{Verdict: executor.Ask, Reason: "ask"}, nil
			}
			return executor.Decision{}, nil
		}))
	require.NoError(t, err)
	ctx := context.Background()
	type out struct {
		res api.Result
		p   *executor.Parked
	}
	done := make(chan out, 1)
	go func() {
		r, p := ex.ExecuteParkable(ctx, runCodeCall(`return await Promise.all([tools.send({}), tools.slow({})])`), nil)
		done <- out{r, p}
	}()
	require.Eventually(t, func() bool { return ex.IdleParkStats().Parks > 0 }, 10*time.Second, time.Millisecond)
	close(release)
	o := <-done
	require.NotNil(t, o.p, "not parked: %+v", o.res)
	require.Equal(t, executor.ParkedApproval, o.p.Calls()[0].Kind)
	res, _ := o.p.Resume(ctx, map[int32]executor.Answer{o.p.Calls()[0].ID: approved("")})
	require.JSONEq(t, `["sent", "slow"]`, approvalResult(t, res))
}

// Many calls that ask at once, among calls that do not, from several
// executions at a time: each parks on all of its asking calls, and its
// decisions reach the right calls.
func TestParkApprovals_hammer(t *testing.T) {
	w := newApprovalWorld(t, nil)
	ctx := context.Background()
	const n, runs = 16, 4
	code := `const out = await Promise.all(Array.from({length: ` + "16" + `}, (_, i) =>
		Promise.all([tools.send({i}).then(r => r.args.i, e => "no " + i), tools.add({i})])));
		return out.map(([s]) => s);`
	var wg sync.WaitGroup
	for r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, p := w.ex.ExecuteParkable(ctx, runCodeCall(code), nil)
			if !assertParked(t, p) {
				return
			}
			answers := map[int32]executor.Answer{}
			var want []any
			calls := p.Calls()
			if len(calls) != n {
				t.Errorf("run %d parked on %d calls, want %d", r, len(calls), n)
				return
			}
			byArg := map[float64]int32{}
			for _, c := range calls {
				var a struct{ I float64 }
				_ = json.Unmarshal(c.Args, &a)
				byArg[a.I] = c.ID
			}
			for i := range n {
				if i%3 == 0 {
					answers[byArg[float64(i)]] = declined("")
					want = append(want, "no "+strconv.Itoa(i))
				} else {
					answers[byArg[float64(i)]] = approved("")
					want = append(want, float64(i))
				}
			}
			res, again := p.Resume(ctx, answers)
			if again != nil || !res.OK() {
				t.Errorf("run %d: %+v", r, res.Err)
				return
			}
			var v executor.RunCodeValue
			_ = json.Unmarshal(res.Value, &v)
			var got []any
			_ = json.Unmarshal(v.Result, &got)
			if !reflect.DeepEqual(want, got) {
				t.Errorf("run %d: got %v, want %v", r, got, want)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, runs*(n-(n+2)/3), w.ranOf("send"))
}

func assertParked(t *testing.T, p *executor.Parked) bool {
	t.Helper()
	if p == nil {
		t.Error("not parked")
		return false
	}
	return true
}

// A call made without arguments parks as one with them.
func TestParkApprovals_noArguments(t *testing.T) {
	w := newApprovalWorld(t, nil)
	ctx := context.Background()
	for _, call := range []string{`tools.send()`, `tools.send(undefined)`, `tools.send({})`} {
		_, p := w.ex.ExecuteParkable(ctx, runCodeCall(`return (await `+call+`).tool`), nil)
		require.NotNil(t, p, call)
		res, _ := p.Resume(ctx, map[int32]executor.Answer{p.Calls()[0].ID: approved("")})
		require.JSONEq(t, `"send"`, approvalResult(t, res), call)
	}
}
