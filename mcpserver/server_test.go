package mcpserver_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/registry"
)

func TestNew_badInput(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	_, err := mcpserver.New(nil, "", mcpserver.Options{})
	require.ErrorContains(t, err, "nil executor")
	_, err = mcpserver.New(f.exec, "nope", mcpserver.Options{})
	require.ErrorIs(t, err, api.ErrInvalidDefinition)
	require.ErrorContains(t, err, `unknown scope "nope"`)
}

func TestServer_initialize_implementation(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	tests := []struct {
		opts                mcpserver.Options
		name, version, inst string
	}{
		{mcpserver.Options{}, "ptcx", "devel", ""},
		{mcpserver.Options{Name: "acme", Version: "v1.2.3", Instructions: "use run_code"}, "acme", "v1.2.3", "use run_code"},
	}
	for _, tt := range tests {
		for _, proto := range protocols {
			t.Run(tt.name+"/"+proto, func(t *testing.T) {
				srv, err := mcpserver.New(f.exec, "ptc", tt.opts)
				require.NoError(t, err)
				st, ct := mcp.NewInMemoryTransports()
				ss, err := srv.Connect(context.Background(), st, nil)
				require.NoError(t, err)
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).
					Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: proto})
				require.NoError(t, err)
				defer func() { require.NoError(t, cs.Close()); _ = ss.Wait() }()
				init := cs.InitializeResult()
				require.Equal(t, tt.name, init.ServerInfo.Name)
				require.Equal(t, tt.version, init.ServerInfo.Version)
				require.Equal(t, tt.inst, init.Instructions)
				require.NotNil(t, init.Capabilities.Tools)
			})
		}
	}
}

func TestServer_listTools_eachMode(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	tests := []struct {
		scope string
		want  []string
	}{
		{"ptc", []string{"run_code"}},
		{"both", []string{"add", "greet", "run_code", "write"}},
		{"native", []string{"add", "greet", "write"}},
		{registry.Deployment, []string{"add", "greet", "write"}}, // undeclared: native
	}
	for _, tt := range tests {
		for _, proto := range protocols {
			t.Run(tt.scope+"/"+proto, func(t *testing.T) {
				cs := connect(t, f.exec, tt.scope, proto)
				res, err := cs.ListTools(context.Background(), nil)
				require.NoError(t, err)
				require.Empty(t, res.NextCursor)
				var names []string
				for _, tool := range res.Tools {
					names = append(names, tool.Name)
				}
				require.Equal(t, tt.want, names)

				wire, err := f.reg.WireSchemas(tt.scope)
				require.NoError(t, err)
				for i, tool := range res.Tools {
					require.Equal(t, wire[i].Description, tool.Description)
					got, err := json.Marshal(tool.InputSchema)
					require.NoError(t, err)
					require.JSONEq(t, string(wire[i].InputSchema), string(got))
				}
			})
		}
	}
}

func TestServer_listTools_outputSchemaOnlyWhenObject(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	cs := connect(t, f.exec, "both", "")
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	tests := []struct {
		tool string
		want string // "" → no outputSchema
	}{
		{"add", sumSchema},
		{"run_code", registry.RunCodeOutputSchema},
		{"greet", ""}, // {"type":"string"}: MCP allows only object output schemas
		{"write", ""}, // none declared
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			got := byName[tt.tool]
			require.NotNil(t, got)
			if tt.want == "" {
				require.Nil(t, got.OutputSchema)
				return
			}
			b, err := json.Marshal(got.OutputSchema)
			require.NoError(t, err)
			require.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestServer_listTools_seesLaterChanges(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	cs := connect(t, f.exec, "both", "")
	f.reg.SetRunCodeDescriber(func(scope, _ string, bindable []api.Schema) string {
		return "SDK for " + scope
	})
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Equal(t, "run_code", res.Tools[2].Name)
	require.Equal(t, "SDK for both", res.Tools[2].Description)
}

func TestServer_listTools_unknownCursor(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	cs := connect(t, f.exec, "both", "2025-11-25")
	_, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: "page2"})
	require.ErrorContains(t, err, "invalid cursor")
}

func TestServer_callTool_collapse(t *testing.T) {
	tests := []struct {
		scope, tool, args string
		wantCode          api.Code
		wantText          string
		wantWrites        int64
	}{
		// ptc: write is visible but only callable from a program.
		{"ptc", "write", `{"path":"a","content":"b"}`, api.CodeUnknownTool,
			`UNKNOWN_TOOL: unknown tool "write": only run_code is callable directly — call write from inside a run_code program instead`, 0},
		// Even arguments that do not validate are refused by the collapse
		// first: no validation message leaks what the tool accepts.
		{"ptc", "write", `{"path":5}`, api.CodeUnknownTool, `UNKNOWN_TOOL: unknown tool "write": only run_code`, 0},
		// A name not visible at all is simply unknown, in every mode.
		{"ptc", "nope", `{}`, api.CodeUnknownTool, `UNKNOWN_TOOL: unknown tool "nope"`, 0},
		{"both", "nope", `{}`, api.CodeUnknownTool, `UNKNOWN_TOOL: unknown tool "nope"`, 0},
		// native has no run_code.
		{"native", "run_code", `{"code":"return 1","description":"d"}`, api.CodeUnknownTool, `UNKNOWN_TOOL: unknown tool "run_code"`, 0},
		// Arguments that are not an object: INVALID_ARGS, even collapsed.
		{"ptc", "write", `[1]`, api.CodeInvalidArgs, "INVALID_ARGS: arguments must be a JSON object, got an array", 0},
	}
	for _, tt := range tests {
		for _, proto := range protocols {
			t.Run(tt.scope+"/"+tt.tool+"/"+tt.args+"/"+proto, func(t *testing.T) {
				f := newFixture(t, executor.NewConfig())
				cs := connect(t, f.exec, tt.scope, proto)
				res := callTool(t, cs, tt.tool, tt.args)
				require.True(t, res.IsError)
				require.Contains(t, text(t, res), tt.wantText)
				require.Equal(t, tt.wantCode, errorMeta(t, res).Code)
				require.Nil(t, res.StructuredContent)
				require.Equal(t, tt.wantWrites, f.writes.Load())
			})
		}
	}
}

// The collapse happens in the executor, so its notification hook sees the
// refused call exactly once, and no pre-execute listener sees it at all.
func TestServer_callTool_collapseGoesThroughExecutor(t *testing.T) {
	var mu sync.Mutex
	var results []executor.Notification
	var listened int
	cfg := executor.NewConfig().
		WithOnResult(func(n executor.Notification) {
			mu.Lock()
			defer mu.Unlock()
			results = append(results, n)
		}).
		WithPreExecute(func(context.Context, executor.Request) (executor.Decision, error) {
			mu.Lock()
			defer mu.Unlock()
			listened++
			return executor.Decision{Verdict: executor.Allow}, nil
		})
	f := newFixture(t, cfg)
	cs := connect(t, f.exec, "ptc", "")
	res := callTool(t, cs, "write", `{"path":"a","content":"b"}`)
	require.True(t, res.IsError)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, results, 1)
	require.Equal(t, "write", results[0].Request.Tool)
	require.Equal(t, "ptc", results[0].Request.Scope)
	require.Equal(t, api.CodeUnknownTool, results[0].Result.Err.Code)
	require.Zero(t, listened)
	require.Zero(t, f.writes.Load())
}

func TestServer_callTool_direct(t *testing.T) {
	tests := []struct {
		scope, tool, args string
		wantText          string
		wantStructured    string // "" → none
	}{
		{"native", "add", `{"x":1,"y":2}`, "{\n  \"sum\": 3\n}", `{"sum":3}`},
		{"both", "add", `{"x":1,"y":2}`, "{\n  \"sum\": 3\n}", `{"sum":3}`},
		// A string value has no structured content: MCP wants an object.
		{"native", "greet", `{"name":"Ada"}`, "hello, Ada", ""},
		{"both", "write", `{"path":"a","content":"b"}`, "{\n  \"ok\": true\n}", `{"ok":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.scope+"/"+tt.tool, func(t *testing.T) {
			f := newFixture(t, executor.NewConfig())
			cs := connect(t, f.exec, tt.scope, "")
			res := callTool(t, cs, tt.tool, tt.args)
			require.False(t, res.IsError, text(t, res))
			require.Equal(t, tt.wantText, text(t, res))
			if tt.wantStructured == "" {
				require.Nil(t, res.StructuredContent)
				return
			}
			b, err := json.Marshal(res.StructuredContent)
			require.NoError(t, err)
			require.JSONEq(t, tt.wantStructured, string(b))
		})
	}
}

func TestServer_callTool_invalidArgsListsEveryViolation(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	for _, scope := range []string{"native", "both"} {
		t.Run(scope, func(t *testing.T) {
			cs := connect(t, f.exec, scope, "")
			// x has the wrong type, y is missing, z is not allowed.
			res := callTool(t, cs, "add", `{"x":"one","z":true}`)
			require.True(t, res.IsError)
			m := errorMeta(t, res)
			require.Equal(t, api.CodeInvalidArgs, m.Code)
			require.Len(t, m.Violations, 3, m.Violations)
			got := text(t, res)
			require.Contains(t, got, "INVALID_ARGS: invalid arguments for add: ")
			for _, v := range m.Violations {
				require.Contains(t, got, v)
			}
			require.Contains(t, got, "at /x")
			require.Contains(t, got, "y")
			require.Contains(t, got, "z")
		})
	}
}

// The SDK would coerce or reject arguments before a typed handler saw them;
// here the executor sees them exactly as sent, so an unusual but valid
// payload passes and the rest fails with the executor's message.
func TestServer_callTool_rawArguments(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	var seen []json.RawMessage
	require.NoError(t, f.reg.Register(registry.Deployment, registry.Tool{
		Name: "raw", InputSchema: json.RawMessage(`{"type":"object"}`),
		Body: func(_ context.Context, in api.Input) (api.Output, error) {
			seen = append(seen, in.Args)
			return api.Output{Value: json.RawMessage(`{}`)}, nil
		},
	}))
	cs := connect(t, f.exec, "native", "")
	res := callTool(t, cs, "raw", `{"big":12345678901234567890123,"deep":{"a":[1,2,{"b":null}]}}`)
	require.False(t, res.IsError, text(t, res))
	require.Len(t, seen, 1)
	require.JSONEq(t, `{"big":12345678901234567890123,"deep":{"a":[1,2,{"b":null}]}}`, string(seen[0]))
	require.Contains(t, string(seen[0]), "12345678901234567890123")

	res = callTool(t, cs, "raw", `"not an object"`)
	require.True(t, res.IsError)
	require.Equal(t, "INVALID_ARGS: arguments must be a JSON object, got a string", text(t, res))
}

func TestServer_callTool_toolFailure(t *testing.T) {
	f := newFixture(t, executor.NewConfig())
	require.NoError(t, f.reg.Register(registry.Deployment, registry.Tool{
		Name: "fail",
		Body: func(context.Context, api.Input) (api.Output, error) {
			return api.Output{}, api.Errorf(api.CodeDenied, "the disk is read-only")
		},
	}))
	cs := connect(t, f.exec, "native", "")
	res := callTool(t, cs, "fail", `{}`)
	require.True(t, res.IsError)
	require.Equal(t, "DENIED: the disk is read-only", text(t, res))
	require.Equal(t, mcpserver.ErrorMeta{Code: api.CodeDenied}, errorMeta(t, res))
}
