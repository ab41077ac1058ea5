package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// BenchmarkBatch_vsExecutor compares ptcx batch with the executor's raw
// throughput, measured in the same run: N trivial run_code calls on as many
// goroutines as cores, then a batch of N items with --parallel at the core
// count. It reports both rates and their ratio (the target: at
// least 0.8).
func BenchmarkBatch_vsExecutor(b *testing.B) {
	const n = 400
	lines := make([]string, n)
	for i := range lines {
		lines[i] = item(fmt.Sprintf("b%d", i), fmt.Sprintf(`return %d + Math.random()`, i), `"seed":1`)
	}
	items := filepath.Join(b.TempDir(), "items.jsonl")
	if err := os.WriteFile(items, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	workers := runtime.NumCPU()
	var raw, batch time.Duration
	for b.Loop() {
		began := time.Now()
		rawRuns(b, n, workers)
		raw += time.Since(began)

		began = time.Now()
		var errb bytes.Buffer
		if status := run([]string{"batch", "--no-builtin", "--parallel", fmt.Sprint(workers), items}, strings.NewReader(""), io.Discard, &errb); status != 0 {
			b.Fatalf("batch: %d: %s", status, errb.String())
		}
		batch += time.Since(began)
	}
	rawRate := float64(n*b.N) / raw.Seconds()
	batchRate := float64(n*b.N) / batch.Seconds()
	b.ReportMetric(rawRate, "executor-runs/s")
	b.ReportMetric(batchRate, "batch-runs/s")
	b.ReportMetric(batchRate/rawRate, "batch/executor")
}

// rawRuns makes n run_code calls on an executor built as ptcx batch builds
// its own, from workers goroutines.
func rawRuns(b testing.TB, n, workers int) {
	st := setup{defaultMode: api.ModePTC, noBuiltin: true}
	e, err := st.build(context.Background(), executor.NewConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer e.close()
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				args, _ := json.Marshal(map[string]string{"code": fmt.Sprintf(`return %d + Math.random()`, i), "description": "raw"})
				if r := e.exec.Execute(context.Background(), executor.Call{Scope: e.scope, Name: registry.RunCode, Args: args}); !r.OK() {
					b.Error(r.Text)
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
