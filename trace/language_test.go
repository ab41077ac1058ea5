package trace_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/trace"
	"github.com/ptcx/ptcx/wasmhost"
)

// languageRuntime records the language of each program it is given.
type languageRuntime struct {
	mu    sync.Mutex
	langs []api.Language
}

func (l *languageRuntime) Run(_ context.Context, p wasmhost.Program, _ wasmhost.Dispatcher) (wasmhost.Outcome, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.langs = append(l.langs, p.Language)
	return wasmhost.Outcome{Result: json.RawMessage("2")}, nil
}

// A record keeps a Python program's language (a TypeScript one's none),
// and its replay runs the program in it.
func TestTrace_language(t *testing.T) {
	ctx := context.Background()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	var recs []trace.Record
	rec := trace.NewRecorder(reg, func(r trace.Record) { recs = append(recs, r) })
	rt := &languageRuntime{}
	ex, err := executor.New(reg, rec.Install(executor.NewConfig().WithRuntime(rt).WithLanguages(api.LanguageTypeScript, api.LanguagePython)))
	require.NoError(t, err)
	for _, args := range []string{`{"code":"1 + 1","language":"python"}`, `{"code":"return 2","language":"typescript"}`, `{"code":"return 2"}`} {
		r := ex.Execute(ctx, executor.Call{Name: registry.RunCode, Args: json.RawMessage(args)})
		require.Nil(t, r.Err)
	}
	require.Len(t, recs, 3)
	require.Equal(t, api.LanguagePython, recs[0].Program.Language)
	require.Empty(t, recs[1].Program.Language, "TypeScript is recorded as no language")
	require.Empty(t, recs[2].Program.Language)

	replayed := &languageRuntime{}
	rep, err := trace.Replay(ctx, recs[0], trace.ReplayConfig{Runtime: replayed})
	require.NoError(t, err)
	require.Nil(t, rep.Result.Err)
	require.Nil(t, rep.Divergence)
	require.Equal(t, []api.Language{api.LanguagePython}, replayed.langs)
}
