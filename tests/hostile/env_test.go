//go:build linux

package hostile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
	"github.com/ptcx/ptcx/toolsfile"
	"github.com/ptcx/ptcx/wasmhost"
	"github.com/ptcx/ptcx/workspace"
)

// env is what a case runs against, wired as the CLI wires it
// (cmd/ptcx/internal/cli/setup.go): the built-in workspace tools with bash, command tools
// from a tools file, and a few tools of the harness's own, in mode both, so
// that a case can call any tool directly as well as from a program.
type env struct {
	base string // a temporary directory: ws/, outside/, the tools file
	ws   string // the workspace root
	exec *executor.Executor
	rt   *wasmhost.Runtime
}

// The harness's own tools.
var ownTools = []registry.Tool{
	{
		// sink holds its arguments for 100 ms, as a slow tool would.
		Name: "sink", Description: "Hold the arguments for 100 ms, return their size.", ConcurrencySafe: true,
		Body: func(ctx context.Context, in api.Input) (api.Output, error) {
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
			}
			return api.ValueOutput(len(in.Args))
		},
	},
}

// commandTools are the tools file's tools: testdata scripts.
func commandTools(t testing.TB) []toolsfile.ToolSpec {
	dir, err := filepath.Abs("testdata")
	require.NoError(t, err)
	spec := func(name, script string) toolsfile.ToolSpec {
		return toolsfile.ToolSpec{Name: name, Description: "testdata/" + script, TimeoutMS: 5000,
			Command: []string{filepath.Join(dir, script)}}
	}
	return []toolsfile.ToolSpec{
		spec("escape_setsid", "setsid.sh"),
		spec("escape_double_fork", "doublefork.sh"),
		spec("env_probe", "envprobe.sh"),
	}
}

// committedCap is the sandbox's committed guest memory cap in the hostile
// host (wasmhost.Config.WithMaxCommittedMemory).
const committedCap = 1 << 30

func newEnv(t testing.TB, limits api.Limits) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{base: base, ws: filepath.Join(base, "ws")}
	require.NoError(t, os.Mkdir(e.ws, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(base, "outside"), 0o755))

	reg := registry.New()
	ws, err := workspace.New(e.ws, workspace.Options{AllowBash: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	for _, tool := range ws.Tools() {
		require.NoError(t, reg.Register(registry.Deployment, tool))
	}
	for _, tool := range ownTools {
		require.NoError(t, reg.Register(registry.Deployment, tool))
	}
	file, err := json.Marshal(toolsfile.File{Mode: api.ModeBoth, Tools: commandTools(t)})
	require.NoError(t, err)
	path := filepath.Join(base, "tools.json")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	f, err := toolsfile.Load(path)
	require.NoError(t, err)
	require.NoError(t, f.Apply(reg, ""))
	reg.SetRunCodeDescriber(sdkgen.DescribeRunCode)

	// The guests share 1 GiB, as a deployment sized for its machine would
	// (the default is half the machine's memory).
	e.rt, err = wasmhost.New(context.Background(), wasmhost.NewConfig().WithMaxCommittedMemory(committedCap))
	require.NoError(t, err, "the sandbox needs the guest (run `make guest`)")
	t.Cleanup(func() { _ = e.rt.Close(context.Background()) })
	cfg := executor.NewConfig().WithRuntime(e.rt).WithLimits(limits)
	if withPython {
		cfg = cfg.WithLanguages(api.LanguageTypeScript, api.LanguagePython)
	}
	e.exec, err = executor.New(reg, cfg)
	require.NoError(t, err)
	return e
}

// call makes a model-direct call.
func (e *env) call(ctx context.Context, name string, args any) api.Result {
	b, ok := args.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(args); err != nil {
			panic(err)
		}
	}
	return e.exec.Execute(ctx, executor.Call{Name: name, Args: b})
}

// run runs a program with the caller limits given (nil: none).
func (e *env) run(ctx context.Context, code string, limits map[string]any) api.Result {
	return e.runIn(ctx, api.LanguageTypeScript, code, limits)
}

// runIn runs a program in a language with the caller limits given.
func (e *env) runIn(ctx context.Context, lang api.Language, code string, limits map[string]any) api.Result {
	args := map[string]any{"code": code, "description": "a hostile case"}
	if lang != api.LanguageTypeScript {
		args["language"] = string(lang)
	}
	if limits != nil {
		args["limits"] = limits
	}
	return e.call(ctx, "run_code", args)
}

// file writes a file in the workspace.
func (e *env) file(name string, content []byte) error {
	return os.WriteFile(filepath.Join(e.ws, name), content, 0o644)
}

// cpu is the CPU time this process has used, user and system.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// outcome names a result: "OK", or its code and kind ("CODE_RUN_FAILED/syntax").
func outcome(r api.Result) string {
	if r.OK() {
		return "OK"
	}
	if r.Err.Kind != "" {
		return fmt.Sprintf("%s/%s", r.Err.Code, r.Err.Kind)
	}
	return string(r.Err.Code)
}

// result is the value a successful run_code returned, as JSON.
func result(r api.Result) string {
	if !r.OK() {
		return ""
	}
	var v executor.RunCodeValue
	if err := json.Unmarshal(r.Value, &v); err != nil {
		return string(r.Value)
	}
	return string(v.Result)
}
