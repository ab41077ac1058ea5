package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/executor"
)

// Defaults for the zero fields of Options.
const (
	DefaultName    = "ptcx"
	DefaultVersion = "devel"
)

// The MCP methods the server answers itself.
const (
	methodListTools = "tools/list"
	methodCallTool  = "tools/call"
)

// Options configures the server. The zero value means the documented
// defaults.
type Options struct {
	// Name and Version are the server's implementation info, sent to the
	// client at initialisation (default "ptcx" and "devel").
	Name, Version string
	// Instructions, when set, are sent to the client at initialisation (a
	// host may put the prompt sections of sdkgen here). Send the SDK (the
	// declarations) once: either here, with run_code's describer left unset,
	// or in run_code's description (sdkgen.DescribeRunCode), with only the
	// rules here. ptcx mcp puts it in the description by default (--sdk-in).
	Instructions string
	// Annotations, when set, gives the MCP hints (readOnlyHint,
	// destructiveHint, ...) listed with each tool the scope advertises; it
	// is asked at every tools/list, so it may follow tools registered
	// later. A tool it gives nil for is listed without annotations, which
	// MCP reads as "may be destructive".
	Annotations func(tool string) *mcp.ToolAnnotations
	// MaxProgressLines bounds the console lines of one run_code call sent as
	// notifications/progress to a client that gave a progress token
	// (default DefaultMaxProgressLines; negative: none are sent).
	MaxProgressLines int
	// NoElicitation keeps the deployment's approver (executor.Config's)
	// deciding every call a listener asks about. By default a client that
	// declared the elicitation capability is asked instead (its user
	// approves or declines each call).
	NoElicitation bool
	// ElicitTimeout bounds the wait for the client's answer to one approval
	// (default DefaultElicitTimeout); no answer in time denies the call.
	ElicitTimeout time.Duration
	// Sessions gives each MCP connection one run_code session
	// (executor.Call.Session, session.go): the programs of one connection
	// share their state, as a REPL's do, and the session is closed when
	// the connection ends; two connections never share one. Tell the model
	// (executor.SessionPrompt): ptcx mcp --session appends it to run_code's
	// description. Off by default: every program starts afresh.
	Sessions bool
}

// New returns an MCP server exposing e's registry as seen from scope ("" is
// the deployment): tools/list advertises exactly WireSchemas(scope), and every
// tools/call, whatever the name, is sent through e.Execute with the raw
// arguments, so the collapse, validation and policy apply. The scope must
// exist.
//
// Do not add tools to the returned server: the middleware that routes calls
// to the executor answers tools/list and tools/call before the SDK would see
// them. The server may serve many sessions at once; all share e and scope.
func New(e *executor.Executor, scope string, opts Options) (*mcp.Server, error) {
	if e == nil {
		return nil, errors.New("mcpserver: nil executor")
	}
	if _, err := e.Registry().WireSchemas(scope); err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	s := mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, &mcp.ServerOptions{
		Instructions: opts.Instructions,
		// No tool is ever added to the SDK, so the tools capability is
		// declared, not inferred. The list is computed per request;
		// NotifyToolsChanged sends list_changed.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	if opts.ElicitTimeout <= 0 {
		opts.ElicitTimeout = DefaultElicitTimeout
	}
	if opts.MaxProgressLines == 0 {
		opts.MaxProgressLines = DefaultMaxProgressLines
	}
	r := &router{e: e, scope: scope, opts: opts}
	s.AddReceivingMiddleware(r.middleware)
	return s, nil
}

// router answers tools/list and tools/call from the executor.
type router struct {
	e     *executor.Executor
	scope string
	opts  Options
	conns connections // the run_code session of each connection (Options.Sessions)
}

// middleware intercepts the two tool methods before the SDK's own handlers,
// which know no tools and would answer every call with a generic "unknown
// tool" error. Everything else (initialize, ping, ...) goes to the SDK.
func (r *router) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case methodListTools:
			lr, ok := req.(*mcp.ListToolsRequest)
			if !ok {
				return nil, unexpectedRequest(method, req)
			}
			return r.list(lr)
		case methodCallTool:
			cr, ok := req.(*mcp.CallToolRequest)
			if !ok {
				return nil, unexpectedRequest(method, req)
			}
			return r.call(ctx, cr), nil
		}
		return next(ctx, method, req)
	}
}

// unexpectedRequest reports an SDK that handed a tool method a request type
// this package does not know: an internal error, never a fallback to the
// SDK's own tool handling.
func unexpectedRequest(method string, req mcp.Request) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("ptcx: %s arrived as %T", method, req)}
}
