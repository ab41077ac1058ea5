package trace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/trace"
	"github.com/ptcx/ptcx/wasmhost"
)

// limitsForFailures make the failure cases fail fast, with room for the
// cases that must not time out (a 5 MiB argument under -race).
var limitsForFailures = api.Limits{ComputeTime: time.Second, MemoryBytes: 32 << 20, OutputBytes: 1 << 20}

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.Close()
	os.Exit(code)
}

// shopTools stand in for the shop example's command tools: search, quote
// (of a random latency up to jitter) and order, deterministic in their
// values.
func shopTools(jitter time.Duration) []registry.Tool {
	sleep := func(ctx context.Context) {
		if jitter > 0 {
			select {
			case <-time.After(rand.N(jitter)):
			case <-ctx.Done():
			}
		}
	}
	return []registry.Tool{
		{Name: "search", Description: "Find products by tag.", ConcurrencySafe: true,
			Body: func(ctx context.Context, in api.Input) (api.Output, error) {
				sleep(ctx)
				return api.ValueOutput([]map[string]string{{"sku": "K1", "name": "Split keyboard"}, {"sku": "M2", "name": "Vertical mouse"}, {"sku": "C3", "name": "Chair"}})
			}},
		{Name: "quote", Description: "Price and stock of one product.", ConcurrencySafe: true,
			Body: func(ctx context.Context, in api.Input) (api.Output, error) {
				sleep(ctx)
				var a struct{ SKU string }
				if err := json.Unmarshal(in.Args, &a); err != nil {
					return api.Output{}, err
				}
				price := map[string]int{"K1": 12900, "M2": 5900, "C3": 39900}[a.SKU]
				return api.ValueOutput(map[string]any{"sku": a.SKU, "price_cents": price, "in_stock": len(a.SKU) % 3, "supplier": "acme"})
			}},
		{Name: "order", Description: "Place an order.",
			Body: func(ctx context.Context, in api.Input) (api.Output, error) {
				var a struct{ SKU string }
				if err := json.Unmarshal(in.Args, &a); err != nil {
					return api.Output{}, err
				}
				if a.SKU == "C3" {
					return api.Output{}, fmt.Errorf("out of stock: %s", a.SKU)
				}
				return api.ValueOutput(map[string]any{"order_id": "o-" + a.SKU, "sku": a.SKU, "status": "placed"})
			}},
	}
}

// harness is an executor whose run_code executions are recorded.
type harness struct {
	reg  *registry.Registry
	exec *executor.Executor

	mu      sync.Mutex
	records []trace.Record
}

func newHarness(t testing.TB, tools []registry.Tool, cfg executor.Config) *harness {
	t.Helper()
	return newRedactingHarness(t, tools, cfg, nil)
}

func newRedactingHarness(t testing.TB, tools []registry.Tool, cfg executor.Config, redact func(*trace.Record)) *harness {
	t.Helper()
	h := &harness{reg: registry.New()}
	require.NoError(t, h.reg.DeclareMode(registry.Deployment, api.ModePTC))
	for _, tool := range tools {
		require.NoError(t, h.reg.Register(registry.Deployment, tool))
	}
	rec := trace.NewRecorder(h.reg, func(r trace.Record) {
		h.mu.Lock()
		h.records = append(h.records, r)
		h.mu.Unlock()
	})
	if redact != nil {
		rec.WithRedact(redact)
	}
	ex, err := executor.New(h.reg, rec.Install(cfg.WithRuntime(testkit.Sandbox(t))))
	require.NoError(t, err)
	h.exec = ex
	return h
}

// run executes code as run_code with id and seed and returns the result
// and its record.
func (h *harness) run(t testing.TB, id, code string, seed uint64) (api.Result, trace.Record) {
	t.Helper()
	args, err := json.Marshal(map[string]string{"code": code, "description": "test " + id})
	require.NoError(t, err)
	r := h.exec.Execute(context.Background(), executor.Call{ID: id, Name: registry.RunCode, Args: args, World: &wasmhost.World{Seed: seed}})
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, rec := range h.records {
		if rec.ID == id {
			return r, rec
		}
	}
	t.Fatalf("no record of %s", id)
	return r, trace.Record{}
}

// replay replays rec against no tools.
func replay(t testing.TB, rec trace.Record) trace.Report {
	t.Helper()
	rep, err := trace.Replay(context.Background(), rec, trace.ReplayConfig{Runtime: testkit.Sandbox(t)})
	require.NoError(t, err)
	return rep
}
