package executor_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// labelWorld is an executor whose tools declare labels, accepts and costs,
// and which records the label every nested call carried.
type labelWorld struct {
	ex    *executor.Executor
	mu    sync.Mutex
	calls []executor.Request
	// raise, when set, is the label the inbox's body raises its result to.
	raise api.Label
	asked []string
}

func newLabelWorld(t *testing.T) *labelWorld {
	t.Helper()
	w := &labelWorld{}
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	value := func(string) registry.Body {
		return func(context.Context, api.Input) (api.Output, error) {
			w.mu.Lock()
			raise := w.raise
			w.mu.Unlock()
			return api.Output{Value: json.RawMessage(`{"email": "e@example.com", "name": "n"}`), Labels: raise}, nil
		}
	}
	untrusted := api.Label{Integrity: api.Untrusted}
	secret := api.Label{Confidentiality: api.Secret}
	trusted := api.Label{Integrity: api.Trusted, Confidentiality: api.Secret}
	for _, tool := range []registry.Tool{
		{Name: "inbox", Policy: policy.Declaration{Labels: &untrusted}},
		{Name: "secrets", Policy: policy.Declaration{Labels: &secret}},
		{Name: "send", Policy: policy.Declaration{Accepts: &policy.Accepts{Call: &trusted, OnViolation: policy.Ask}}},
		{Name: "cheap", Policy: policy.Declaration{Cost: 3}},
		{Name: "pricey", Policy: policy.Declaration{Cost: 5}},
		{Name: "plain"},
	} {
		tool.Description = tool.Name + "."
		tool.ConcurrencySafe = true
		tool.Body = value(tool.Name)
		require.NoError(t, reg.Register(registry.Deployment, tool))
	}
	cfg := executor.NewConfig().WithRuntime(realRuntime(t)).
		WithOnResult(func(n executor.Notification) {
			if n.Nested {
				w.mu.Lock()
				w.calls = append(w.calls, n.Request)
				w.mu.Unlock()
			}
		}).
		WithApprover(executor.ApproverFunc(func(_ context.Context, req executor.Request, _ string) (executor.Approval, string, error) {
			w.mu.Lock()
			w.asked = append(w.asked, req.Tool)
			w.mu.Unlock()
			return executor.ApproveOnce, "", nil
		}))
	ex, err := executor.New(reg, cfg)
	require.NoError(t, err)
	w.ex = ex
	return w
}

func (w *labelWorld) take() (calls []executor.Request, asked []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	calls, asked, w.calls, w.asked = w.calls, w.asked, nil, nil
	return calls, asked
}

// labelPrograms are programs whose calls carry labels, in every shape the
// bound's rule must hold for: an argument's call before the callee's, a
// destructuring default after its right-hand side, loops, callbacks,
// parallel calls, a dynamic plan.
var labelPrograms = []struct{ name, code string }{
	{"read then send", "const m = await tools.inbox({})\nawait tools.send({to: m.email})"},
	{"argument before callee", "await tools.send({to: (await tools.inbox({})).email})"},
	{"default after the right-hand side", "const {x = await tools.send({to: 'a'})} = (await tools.secrets({})) as any\nreturn x"},
	{"send first", "await tools.send({to: 'a'})\nawait tools.inbox({})"},
	{"loop", "for (let i = 0; i < 2; i++) {\n  await tools.send({to: 'a'})\n  await tools.inbox({})\n}"},
	{"callbacks", "await Promise.all([1, 2].map(async () => { await tools.secrets({}); await tools.send({to: 'b'}) }))"},
	{"parallel", "const [a, b] = await Promise.all([tools.inbox({}), tools.secrets({})])\nawait tools.send({to: a.email + b.name})"},
	{"then", "await tools.inbox({}).then(() => tools.send({to: 'c'}))"},
	{"dynamic", "const t = tools\nconst s = await t.secrets({})\nawait t.send({to: s.name})\nawait t.inbox({})"},
	{"no labels", "await tools.cheap({})\nawait tools.pricey({})\nawait tools.send({to: 'd'})"},
}

// covers reports whether a call of tool with args carrying l is within
// the label bound of a site of p it fits (its literal arguments), or of
// the plan when it is dynamic.
func covers(p *plan.Plan, req executor.Request) bool {
	if p.Dynamic {
		return req.Labels.Within(*p.Labels)
	}
	var got map[string]any
	_ = json.Unmarshal(req.Args, &got)
	for _, c := range p.Calls {
		if c.Tool != req.Tool {
			continue
		}
		fits := true
		for k, lit := range c.Args {
			var want any
			_ = json.Unmarshal(lit, &want)
			b1, _ := json.Marshal(want)
			b2, _ := json.Marshal(got[k])
			fits = fits && string(b1) == string(b2)
		}
		if fits && req.Labels.Within(*c.Labels) {
			return true
		}
	}
	return false
}

// TestExecutor_Plan_labelBoundCoversEveryCall runs each program, bound to
// its own plan and not, and checks that every nested call carried no more
// than the label bound of a site of the plan it fits: the bound is never
// lower than what a run carries. A call the bound says may ask, asks when
// the run is not bound to the plan, and none asks when it is.
func TestExecutor_Plan_labelBoundCoversEveryCall(t *testing.T) {
	w := newLabelWorld(t)
	var checked, raised int
	for _, c := range labelPrograms {
		t.Run(c.name, func(t *testing.T) {
			p, err := w.ex.Plan("", c.code)
			require.NoError(t, err)
			for _, bound := range []bool{false, true} {
				call := runCodeCall(c.code)
				if bound {
					call.Plan = p
				}
				r := w.ex.Execute(context.Background(), call)
				require.True(t, r.OK(), "%s", r.Text)
				calls, asked := w.take()
				require.NotEmpty(t, calls)
				for _, req := range calls {
					require.True(t, covers(p, req), "bound %v: %s carried %s, past its plan's bound\nplan: %+v", bound, req.Tool, req.Labels, p.Calls)
					if !req.Labels.IsZero() {
						raised++
					}
					checked++
				}
				if bound {
					require.Empty(t, asked, "a call the approved plan covers is not asked")
				} else if len(asked) > 0 {
					mayAsk := false
					for _, s := range p.Calls {
						mayAsk = mayAsk || (s.Tool == "send" && s.MayAsk)
					}
					require.True(t, mayAsk, "send asked, but the plan said it could not: %+v", p.Calls)
				}
			}
		})
	}
	require.Greater(t, checked, 30)
	require.Greater(t, raised, 10, "the programs' calls do carry labels")
}

// TestExecutor_Execute_planBoundCallPastItsLabelBoundIsAsked: a body that
// raises its result's label past its tool's declaration (api.Output.Labels)
// makes a later call carry more than the plan showed; the plan does not
// cover that call's ask, so the approver is asked as if there were no plan.
func TestExecutor_Execute_planBoundCallPastItsLabelBoundIsAsked(t *testing.T) {
	w := newLabelWorld(t)
	code := "await tools.plain({})\nawait tools.send({to: 'a'})"
	p, err := w.ex.Plan("", code)
	require.NoError(t, err)
	require.False(t, p.Calls[1].MayAsk, "declared labels alone cannot make send ask")

	r := w.ex.Execute(context.Background(), planCall(code, p))
	require.True(t, r.OK(), r.Text)
	_, asked := w.take()
	require.Empty(t, asked)

	w.mu.Lock()
	w.raise = api.Label{Integrity: api.Untrusted} // plain's body raises its result
	w.mu.Unlock()
	r = w.ex.Execute(context.Background(), planCall(code, p))
	require.True(t, r.OK(), r.Text)
	calls, asked := w.take()
	require.Equal(t, []string{"send"}, asked, "the approver is asked about what the plan did not show")
	require.Equal(t, api.Untrusted, calls[1].Labels.Integrity)
}

func TestExecutor_Plan_rulesAndCost(t *testing.T) {
	w := newLabelWorld(t)
	p, err := w.ex.Plan("", "const m = await tools.inbox({})\nawait tools.cheap({})\nawait tools.send({to: m.email})")
	require.NoError(t, err)
	require.Equal(t, int64(3), *p.Cost)
	require.Equal(t, "ask", p.Rules["send"].OnViolation)
	require.Equal(t, api.Untrusted, p.Rules["inbox"].Labels.Integrity)
	require.True(t, p.Calls[2].MayAsk)
	require.False(t, p.Calls[2].MayDeny)
	require.Equal(t, api.Label{Integrity: api.Untrusted}, *p.Labels)

	p, err = w.ex.Plan("", "for (const x of [1, 2]) await tools.cheap({})")
	require.NoError(t, err)
	require.Nil(t, p.Cost, "a call with a cost repeats: no bound")

	// A run's extra tools (ptcx serve's client tools) bring their
	// declarations.
	d := policy.Declaration{Cost: 7, Labels: &api.Label{Confidentiality: api.Private}}
	p, err = w.ex.Plan("", "await tools.client({})\nawait tools.cheap({})", executor.PlanTool{Name: "client", Policy: d})
	require.NoError(t, err)
	require.Equal(t, int64(10), *p.Cost)
	require.Equal(t, api.Private, p.Calls[1].Labels.Confidentiality)

	// The plan's rules are copies: changing them changes no declaration.
	p, err = w.ex.Plan("", "await tools.inbox({})")
	require.NoError(t, err)
	p.Rules["inbox"].Labels.Integrity = api.Trusted
	again, err := w.ex.Plan("", "await tools.inbox({})")
	require.NoError(t, err)
	require.Equal(t, api.Untrusted, again.Rules["inbox"].Labels.Integrity)
}
