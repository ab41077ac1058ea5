package ptcx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
)

func TestNew_defaults(t *testing.T) {
	h := newHost(t)
	mode, err := h.Registry().Mode("")
	require.NoError(t, err)
	require.Equal(t, ptcx.ModeNative, mode)
	tools, err := h.OpenAITools("")
	require.NoError(t, err)
	require.Empty(t, tools)
	sections, err := h.Prompt("")
	require.NoError(t, err)
	require.Empty(t, sections)
}

func TestNew_invalidOptions(t *testing.T) {
	bad := ptcx.Func("bad", "A channel cannot be JSON.", func(context.Context, struct{ C chan int }) (int, error) { return 0, nil })
	for _, tc := range []struct {
		name string
		opts []ptcx.Option
		is   error
		want string
	}{
		{"unknown mode", []ptcx.Option{ptcx.WithMode("fast")}, api.ErrInvalidDefinition, `ptcx: WithMode: INVALID_DEFINITION: unknown mode "fast": want native, ptc or both`},
		{"nil option", []ptcx.Option{nil}, nil, "ptcx: New got a nil Option"},
		{"tool without schema", []ptcx.Option{ptcx.WithTools(bad)}, api.ErrUnsupportedSchema, `ptcx: WithTools: UNSUPPORTED_SCHEMA: tool "bad": input type struct { C chan int }`},
		{"duplicate tools", []ptcx.Option{ptcx.WithTools(addTool), ptcx.WithTools(addTool)}, api.ErrInvalidDefinition, `ptcx: WithTools: INVALID_DEFINITION: tool "add" is already registered`},
		{"negative limits", []ptcx.Option{ptcx.WithLimits(api.Limits{MaxCalls: -1})}, nil, "ptcx: starting the sandbox: wasmhost: invalid limits"},
		{"negative limits, shared runtime", []ptcx.Option{ptcx.WithCodeRuntime(noSandbox{}), ptcx.WithLimits(api.Limits{MaxCalls: -1})}, nil, "ptcx: executor: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ptcx.New(context.Background(), tc.opts...)
			require.Nil(t, h)
			require.ErrorContains(t, err, tc.want)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
}

func TestNew_ownSandbox(t *testing.T) {
	ctx := context.Background()
	h, err := ptcx.New(ctx, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool))
	require.NoError(t, err)
	r := h.Execute(ctx, runCode("c1", "return await tools.add({a: 2, b: 3})"))
	require.Nil(t, r.Err)
	require.Equal(t, "5", r.Text)

	require.NoError(t, h.Close(ctx))
	require.NoError(t, h.Close(ctx), "Close is idempotent")
	r = h.Execute(ctx, runCode("c2", "return 1"))
	require.ErrorIs(t, r.AsError(), api.ErrInternal)
	require.ErrorIs(t, r.AsError(), ptcx.ErrClosed)
	require.Equal(t, "c2", r.ID)
	require.ErrorIs(t, h.Register(ptcx.Func("sub", "Subtract.", plus)), ptcx.ErrClosed)
}

func TestHost_Close_sharedRuntimeStaysOpen(t *testing.T) {
	ctx := context.Background()
	first := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool))
	require.NoError(t, first.Close(ctx))
	second := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool))
	r := second.Execute(ctx, runCode("c", "return await tools.add({a: 1, b: 1})"))
	require.Nil(t, r.Err)
	require.Equal(t, "2", r.Text)
}

func TestNew_withLimits(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		maxCalls int
		calls    int
		ok       bool
	}{
		{"below the limit", 2, 1, true},
		{"at the limit", 2, 2, true},
		{"past the limit", 2, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool),
				ptcx.WithLimits(api.Limits{MaxCalls: tc.maxCalls}))
			code := fmt.Sprintf("let s = 0; for (let i = 0; i < %d; i++) s += await tools.add({a: i, b: 0}); return s", tc.calls)
			r := h.Execute(ctx, runCode("c", code))
			if tc.ok {
				require.Nil(t, r.Err)
				return
			}
			require.ErrorIs(t, r.AsError(), api.ErrCodeRunFailed)
			require.Contains(t, r.Text, "reached its limit of 2 nested calls")
		})
	}
}

func TestNew_withExecutor(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	cfg := executor.NewConfig().WithOnResult(func(n executor.Notification) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, n.Request.Tool)
	})
	h := newHost(t, ptcx.WithExecutor(cfg), ptcx.WithTools(addTool))
	r := h.Execute(context.Background(), ptcx.Call{Name: "add", Args: json.RawMessage(`{"a":1,"b":2}`)})
	require.Nil(t, r.Err)
	require.Equal(t, []string{"add"}, seen)
}

func TestHost_Register(t *testing.T) {
	sub := ptcx.Func("sub", "Subtract.", func(_ context.Context, in addArgs) (float64, error) { return in.A - in.B, nil })
	bad := ptcx.Tool{Name: "bad name", Body: func(context.Context, ptcx.Input) (ptcx.Output, error) { return ptcx.Output{}, nil }}
	for _, tc := range []struct {
		name  string
		tools []ptcx.Tool
		want  string   // error; "" for none
		added []string // the tools visible afterwards, beside add
	}{
		{"one", []ptcx.Tool{sub}, "", []string{"add", "sub"}},
		{"a bad one adds none", []ptcx.Tool{sub, bad}, `INVALID_DEFINITION: invalid tool name "bad name"`, []string{"add"}},
		{"twice in one call adds none", []ptcx.Tool{sub, sub}, `INVALID_DEFINITION: tool "sub" is already registered`, []string{"add"}},
		{"already on the host", []ptcx.Tool{addTool}, `INVALID_DEFINITION: tool "add" is already registered on scope "deployment"`, []string{"add"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, ptcx.WithTools(addTool))
			err := h.Register(tc.tools...)
			if tc.want == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.want)
			}
			schemas, err := h.Advertised("")
			require.NoError(t, err)
			var names []string
			for _, s := range schemas {
				names = append(names, s.Name)
			}
			require.Equal(t, tc.added, names)
		})
	}
}

func TestHost_Register_handWritten(t *testing.T) {
	h := newHost(t)
	require.NoError(t, h.Register(ptcx.Tool{
		Name:         "echo",
		Description:  "Echo the text.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		OutputSchema: json.RawMessage(`{"type":"string"}`),
		Body: func(_ context.Context, in ptcx.Input) (ptcx.Output, error) {
			var args struct{ Text string }
			if err := json.Unmarshal(in.Args, &args); err != nil {
				return ptcx.Output{}, err
			}
			return api.ValueOutput(args.Text)
		},
	}))
	r := h.Execute(context.Background(), ptcx.Call{Name: "echo", Args: json.RawMessage(`{"text":"hi"}`)})
	require.Nil(t, r.Err)
	require.Equal(t, "hi", r.Text)
	r = h.Execute(context.Background(), ptcx.Call{Name: "echo", Args: json.RawMessage(`{}`)})
	require.ErrorIs(t, r.AsError(), api.ErrInvalidArgs)
}

// The collapse, through the front door: allow/deny pairs for every mode.
func TestHost_Execute_modes(t *testing.T) {
	ctx := context.Background()
	direct := ptcx.Call{Name: "add", Args: json.RawMessage(`{"a":1,"b":2}`)}
	program := runCode("p", "return await tools.add({a: 1, b: 2})")
	for _, tc := range []struct {
		mode          ptcx.Mode
		directOK      bool
		programOK     bool
		advertisement []string
	}{
		{ptcx.ModeNative, true, false, []string{"add"}},
		{ptcx.ModePTC, false, true, []string{"run_code"}},
		{ptcx.ModeBoth, true, true, []string{"add", "run_code"}},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			h := newSandboxHost(t, ptcx.WithMode(tc.mode), ptcx.WithTools(addTool))
			for _, c := range []struct {
				call ptcx.Call
				ok   bool
			}{{direct, tc.directOK}, {program, tc.programOK}} {
				r := h.Execute(ctx, c.call)
				if c.ok {
					require.Nil(t, r.Err, c.call.Name)
					require.Equal(t, "3", r.Text)
				} else {
					require.ErrorIs(t, r.AsError(), api.ErrUnknownTool, c.call.Name)
				}
			}
			oa, err := h.OpenAITools("")
			require.NoError(t, err)
			ra, err := h.ResponsesTools("")
			require.NoError(t, err)
			an, err := h.AnthropicTools("")
			require.NoError(t, err)
			require.Len(t, oa, len(tc.advertisement))
			require.Len(t, ra, len(tc.advertisement))
			require.Len(t, an, len(tc.advertisement))
			for i, name := range tc.advertisement {
				require.Equal(t, "function", oa[i].Type)
				require.Equal(t, name, oa[i].Function.Name)
				require.Equal(t, ptcx.ResponsesTool{Type: "function", Name: name, Description: oa[i].Function.Description, Parameters: oa[i].Function.Parameters}, ra[i])
				require.Equal(t, name, an[i].Name)
				require.JSONEq(t, string(oa[i].Function.Parameters), string(an[i].InputSchema))
			}
		})
	}
}

func TestHost_ResponsesTools_wireShape(t *testing.T) {
	h := newHost(t, ptcx.WithTools(addTool))
	tools, err := h.ResponsesTools("")
	require.NoError(t, err)
	b, err := json.Marshal(tools)
	require.NoError(t, err)
	require.JSONEq(t, `[{"type":"function","name":"add","description":"Add two numbers.","strict":false,
		"parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}}]`, string(b))
}

func TestHost_RunCodeDescription(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []ptcx.Option
		typed bool
	}{
		{"default: the bindings' declarations", nil, true},
		{"plain", []ptcx.Option{ptcx.WithPlainRunCodeDescription()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, append(tc.opts, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool))...)
			tools, err := h.AnthropicTools("")
			require.NoError(t, err)
			require.Len(t, tools, 1)
			if tc.typed {
				require.Contains(t, tools[0].Description, "add(args: AddArgs): Promise<AddOutput>;")
			} else {
				require.Equal(t, registry.DefaultRunCodeDescription, tools[0].Description)
			}
		})
	}
}

func TestHost_Prompt(t *testing.T) {
	for _, tc := range []struct {
		mode ptcx.Mode
		want []string
	}{
		{ptcx.ModeNative, nil},
		{ptcx.ModePTC, []string{"tools:ptc-only", "tools:sdk"}},
		{ptcx.ModeBoth, []string{"tools:sdk"}},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			h := newHost(t, ptcx.WithMode(tc.mode), ptcx.WithTools(addTool))
			sections, err := h.Prompt("")
			require.NoError(t, err)
			var names []string
			for _, s := range sections {
				names = append(names, s.Name)
			}
			require.Equal(t, tc.want, names)
			if len(sections) > 0 {
				require.Contains(t, sections[len(sections)-1].Text, "type AddArgs = {\n  a: number;\n  b: number;\n};")
			}
		})
	}
	_, err := newHost(t).Prompt("nowhere")
	require.ErrorContains(t, err, `unknown scope "nowhere"`)
}

func TestHost_unknownScope(t *testing.T) {
	h := newHost(t)
	for name, f := range map[string]func() error{
		"OpenAITools":    func() error { _, err := h.OpenAITools("nowhere"); return err },
		"ResponsesTools": func() error { _, err := h.ResponsesTools("nowhere"); return err },
		"AnthropicTools": func() error { _, err := h.AnthropicTools("nowhere"); return err },
		"Advertised":     func() error { _, err := h.Advertised("nowhere"); return err },
	} {
		require.ErrorIs(t, f(), api.ErrInvalidDefinition, name)
	}
}

// Hammer: registrations, executions and programs at once, and a Close
// racing with them.
func TestHost_hammer(t *testing.T) {
	ctx := context.Background()
	h, err := ptcx.New(ctx, ptcx.WithCodeRuntime(testkit.Sandbox(t)), ptcx.WithMode(ptcx.ModeBoth), ptcx.WithTools(addTool))
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				var c ptcx.Call
				switch i % 3 {
				case 0:
					c = ptcx.Call{Name: "add", Args: json.RawMessage(`{"a":1,"b":2}`)}
				case 1:
					c = runCode("", "return await tools.add({a: 1, b: 2})")
				default:
					name := fmt.Sprintf("t%d_%d", g, i)
					if err := h.Register(ptcx.Func(name, "x", plus)); err != nil && !errors.Is(err, ptcx.ErrClosed) {
						errs <- err
					}
					continue
				}
				r := h.Execute(ctx, c)
				if r.Err != nil && !errors.Is(r.AsError(), ptcx.ErrClosed) {
					errs <- r.AsError()
				} else if r.Err == nil && r.Text != "3" {
					errs <- fmt.Errorf("got %q", r.Text)
				}
			}
		})
	}
	wg.Go(func() { _ = h.Close(ctx) })
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
