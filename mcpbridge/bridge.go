package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// DefaultTimeout bounds one call to an upstream, and its start (initialise
// and list its tools), when Upstream leaves them zero.
const DefaultTimeout = 60 * time.Second

// Upstream is an MCP server to bridge: a command speaking MCP over stdio.
// The zero values of the optional fields mean the documented defaults.
type Upstream struct {
	// Command is the argv of the server (Command[0] is looked up in PATH).
	Command []string
	// Prefix names the upstream: its tools are registered as
	// "<prefix>.<tool>". "" derives it from the command (see Connect).
	Prefix string
	// Timeout bounds one call (default 60s). A call that overruns is
	// cancelled upstream and fails with TOOL_TIMEOUT.
	Timeout time.Duration
	// StartTimeout bounds starting the server: the MCP handshake and
	// listing its tools (default 60s).
	StartTimeout time.Duration
	// MaxTools bounds how many tools of the upstream are registered, over
	// its whole life: an upstream whose tool list keeps changing cannot grow
	// the registry without end (default DefaultMaxTools). Past it, tools are
	// skipped with a warning.
	MaxTools int
	// Trusted declares the upstream's results trusted. By default a tool
	// that may reach the open world (MCP's openWorldHint annotation: true,
	// or absent, which MCP defines as true) returns untrusted results
	// (docs/security.md, "Data flow"); with Trusted, the upstream is the
	// host's word for its data, and its tools declare no label.
	Trusted bool
	// OnToolsChanged, when set, is called after the bridge refreshed its
	// tools because the upstream sent notifications/tools/list_changed (see
	// ToolsChange). It runs on the bridge's refresh goroutine: a slow one
	// delays the next refresh, never a call.
	OnToolsChanged func(ToolsChange)
}

// DefaultMaxTools is the default of Upstream.MaxTools: far more tools than
// any real server offers, far fewer than would make a registry slow.
const DefaultMaxTools = 1000

// Bridge is a connected upstream whose tools are registered in a registry.
// It is safe for concurrent use: many calls may be in flight at once over
// the one upstream process.
type Bridge struct {
	label                 string // `upstream "fs"`, how messages name it
	prefix                string
	argv                  []string
	timeout, startTimeout time.Duration
	reg                   *registry.Registry
	scope                 string
	maxTools              int
	trusted               bool
	onChange              func(ToolsChange)
	now                   func() time.Time

	// mu guards the tool set, which a refresh (refresh.go) changes.
	mu       sync.Mutex
	tools    []string                        // registered names, sorted
	names    map[string]string               // upstream name → registered name
	gone     map[string]bool                 // upstream names registered and no longer listed
	skipped  map[string]bool                 // upstream names skipped with a warning: never tried again
	hints    map[string]*mcp.ToolAnnotations // registered name → the upstream's annotations
	warnings []string

	listChangedCh chan struct{} // one pending refresh; closing stops the refresher
	refresherDone chan struct{}

	closing   chan struct{} // closed when Close starts: a start in progress gives up
	closeOnce sync.Once

	// lock is a one-slot semaphore guarding the fields below; a caller
	// waiting for it (while another restarts the upstream) honours its
	// context.
	lock      chan struct{}
	sess      *session // nil, or the current session (possibly dead)
	closed    bool
	deaths    int       // sessions in a row that died before answering a call
	lastStart time.Time // when the last session was started
	lastCause string    // how the last session died

	dropped atomic.Int64 // unsolicited messages dropped over their budget
}

// Connect starts the upstream, lists its tools (all pages), and registers
// each into reg on scope as "<prefix>.<tool>", with its input schema, its
// output schema where it has one, and ConcurrencySafe set from the MCP
// annotation readOnlyHint. Each tool's body calls the upstream's tools/call
// with the arguments as the executor validated them.
//
// The prefix is u.Prefix, which must match ^[A-Za-z_][A-Za-z0-9_.-]{0,31}$,
// or else derived from the command: the base name of Command[0] without an
// extension or version, or for a launcher (npx, pnpx, bunx, uvx, node,
// python, python3) of its first argument that is not a flag, with
// characters a tool name cannot hold replaced by "_".
//
// A tool whose name cannot be used as is gets a sanitised name (see
// Warnings); a tool whose schema the registry cannot compile is skipped
// with a warning. A name already registered on scope's chain fails Connect
// before anything is registered. An upstream that cannot be started or does
// not complete the handshake fails Connect with the end of its stderr in the
// message, and nothing is left running.
//
// The tools stay registered after Close (a registry cannot forget a tool);
// calling them then fails with a clear message.
func Connect(ctx context.Context, reg *registry.Registry, scope string, u Upstream) (*Bridge, error) {
	if reg == nil {
		return nil, errors.New("mcpbridge: nil registry")
	}
	if len(u.Command) == 0 || u.Command[0] == "" {
		return nil, errors.New("mcpbridge: the upstream has no command")
	}
	if _, err := reg.Bindable(scope); err != nil {
		return nil, fmt.Errorf("mcpbridge: %w", err)
	}
	prefix := u.Name()
	if !validPrefix.MatchString(prefix) {
		return nil, fmt.Errorf("mcpbridge: invalid prefix %q: must match %s", prefix, validPrefix)
	}
	maxTools := u.MaxTools
	if maxTools <= 0 {
		maxTools = DefaultMaxTools
	}
	b := &Bridge{
		label:         fmt.Sprintf("upstream %q", prefix),
		prefix:        prefix,
		reg:           reg,
		scope:         scope,
		maxTools:      maxTools,
		trusted:       u.Trusted,
		onChange:      u.OnToolsChanged,
		names:         map[string]string{},
		gone:          map[string]bool{},
		skipped:       map[string]bool{},
		hints:         map[string]*mcp.ToolAnnotations{},
		listChangedCh: make(chan struct{}, 1),
		refresherDone: make(chan struct{}),
		argv:          slices.Clone(u.Command),
		timeout:       orDefault(u.Timeout),
		startTimeout:  orDefault(u.StartTimeout),
		now:           time.Now,
		closing:       make(chan struct{}),
		lock:          make(chan struct{}, 1),
	}
	fail := func(err error) (*Bridge, error) {
		close(b.refresherDone) // the refresher starts only once Connect succeeds
		_ = b.Close()
		return nil, fmt.Errorf("mcpbridge: %s (%s): %w", b.label, strings.Join(b.argv, " "), err)
	}

	b.lastStart = b.now()
	s, err := startSession(ctx, b.argv, b.startTimeout, &b.dropped, b.listChanged)
	if err != nil {
		return fail(fmt.Errorf("did not start: %w", err))
	}
	b.sess = s
	listed, err := listTools(ctx, s, b.startTimeout)
	if err != nil {
		return fail(err)
	}
	if err := b.registerFirst(listed); err != nil {
		return fail(err)
	}
	go b.refresher()
	return b, nil
}

// Name is the prefix u's tools are registered under: Prefix, or the one
// Connect derives from the command.
func (u Upstream) Name() string {
	if u.Prefix != "" {
		return u.Prefix
	}
	return derivePrefix(u.Command)
}

// registerFirst registers the tools listed at Connect: a name already taken
// on the scope's chain fails before anything is registered.
func (b *Bridge) registerFirst(listed []*mcp.Tool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	defs, err := b.definitions(listed)
	if err != nil {
		return err
	}
	for _, d := range defs {
		if _, taken := b.reg.Get(b.scope, d.tool.Name); taken {
			return fmt.Errorf("tool %q is already registered for scope %q: give this upstream another prefix", d.tool.Name, b.scope)
		}
	}
	for _, d := range defs {
		if err := b.register(d); err != nil {
			return fmt.Errorf("registering %q (tools registered before it stay, failing): %w", d.tool.Name, err)
		}
	}
	return nil
}

// definition is one upstream tool ready to register.
type definition struct {
	tool     registry.Tool
	upstream string               // its name upstream
	hints    *mcp.ToolAnnotations // the upstream's annotations, or nil
}

// register registers one tool (b.mu held). A schema the registry cannot
// compile, or a tool past MaxTools, is skipped with a warning; any other
// failure is returned.
func (b *Bridge) register(d definition) error {
	if len(b.names) >= b.maxTools {
		b.skip(d.upstream, fmt.Sprintf("%s: tool %q skipped: the bridge registers at most %d tools of an upstream (Upstream.MaxTools)", b.label, d.tool.Name, b.maxTools))
		return nil
	}
	err := b.reg.Register(b.scope, d.tool)
	switch {
	case api.CodeOf(err) == api.CodeUnsupportedSchema:
		b.skip(d.upstream, fmt.Sprintf("%s: tool %q skipped: %v", b.label, d.tool.Name, err))
		return nil
	case err != nil:
		return err
	}
	b.names[d.upstream] = d.tool.Name
	if d.hints != nil {
		b.hints[d.tool.Name] = d.hints
	}
	b.tools = append(b.tools, d.tool.Name)
	slices.Sort(b.tools)
	return nil
}

// listTools lists every tool of the upstream, following pages.
func listTools(ctx context.Context, s *session, timeout time.Duration) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out []*mcp.Tool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing its tools failed: %s", s.failure(ctx, err, "tools/list", timeout))
		}
		out = append(out, t)
	}
	return out, nil
}

// skip records a tool that is not registered, and why (b.mu held): a
// refresh does not try it again.
func (b *Bridge) skip(upstreamName, warning string) {
	b.skipped[upstreamName] = true
	b.warnings = append(b.warnings, warning)
}

// definitions turns the upstream's tools that are not registered yet into
// registry tools, named by assignNames, sorted by name, with the upstream
// name of each (b.mu held). A tool registered before keeps its name; one
// skipped before stays skipped.
func (b *Bridge) definitions(listed []*mcp.Tool) ([]definition, error) {
	var names []string
	for _, t := range listed {
		names = append(names, t.Name)
	}
	n := assignNames(b.label, b.prefix, names)
	var out []definition
	seen := map[string]bool{}
	for _, t := range listed {
		name, ok := n.names[t.Name]
		if _, known := b.names[t.Name]; !ok || seen[t.Name] || known || b.skipped[t.Name] {
			continue
		}
		seen[t.Name] = true
		in, err := inputSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("the input schema of %q: %w", t.Name, err)
		}
		// A tool without an output schema answers with content; its value
		// is that content's text (content.go), so it is typed a string.
		outSchema, hasOutputSchema := json.RawMessage(textOutputSchema), false
		if t.OutputSchema != nil {
			if outSchema, err = json.Marshal(t.OutputSchema); err != nil {
				return nil, fmt.Errorf("the output schema of %q: %w", t.Name, err)
			}
			hasOutputSchema = true
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		out = append(out, definition{tool: registry.Tool{
			Name:            name,
			Description:     desc,
			InputSchema:     in,
			OutputSchema:    outSchema,
			ConcurrencySafe: t.Annotations != nil && t.Annotations.ReadOnlyHint,
			Body:            b.body(t.Name, hasOutputSchema),
			Policy:          b.policy(t.Annotations),
		}, upstream: t.Name, hints: t.Annotations})
	}
	for _, w := range n.warnings {
		if !slices.Contains(b.warnings, w) { // a refresh names the renamed tools again
			b.warnings = append(b.warnings, w)
		}
	}
	slices.SortFunc(out, func(x, y definition) int { return strings.Compare(x.tool.Name, y.tool.Name) })
	return out, nil
}

// untrusted is the label of an open-world tool's results.
var untrusted = api.Label{Integrity: api.Untrusted}

// policy is what a tool of the upstream declares about its data: an
// open-world tool (openWorldHint true, or absent: MCP's default is true)
// of an upstream not declared Trusted returns untrusted results.
func (b *Bridge) policy(hints *mcp.ToolAnnotations) policy.Declaration {
	if b.trusted || hints != nil && hints.OpenWorldHint != nil && !*hints.OpenWorldHint {
		return policy.Declaration{}
	}
	l := untrusted
	return policy.Declaration{Labels: &l}
}

// textOutputSchema is the output schema of an upstream tool that declares
// none.
const textOutputSchema = `{"type":"string"}`

// inputSchema is the upstream's input schema as JSON. MCP requires
// "type": "object"; a schema that omits "type" altogether (as some servers
// do for tools without arguments) gets it, anything else is left for the
// registry to judge.
func inputSchema(s any) (json.RawMessage, error) {
	if s == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	if m, ok := s.(map[string]any); ok {
		if _, has := m["type"]; !has {
			withType := make(map[string]any, len(m)+1)
			for k, v := range m {
				withType[k] = v
			}
			withType["type"] = "object"
			s = withType
		}
	}
	return json.Marshal(s)
}

// Tools returns the registered tool names, sorted: those the upstream no
// longer lists (see ToolsChange) included, since a registry cannot forget a
// tool.
func (b *Bridge) Tools() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.tools)
}

// Annotations returns the upstream's MCP annotations of a registered tool
// (by its registered name), or nil: a server that lists bridged tools
// directly (mcpserver.Options.Annotations) passes them on.
func (b *Bridge) Annotations(tool string) *mcp.ToolAnnotations {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hints[tool]
}

// Prefix returns the prefix of the registered names, "<prefix>.<tool>".
func (b *Bridge) Prefix() string { return b.prefix }

// Dropped returns how many unsolicited messages (notifications, and
// requests to the bridge) the upstream sent past their budget, which the
// bridge dropped unread, over all its sessions: a number that grows says
// the upstream floods (see the package doc).
func (b *Bridge) Dropped() int64 { return b.dropped.Load() }

// Warnings returns what Connect had to change or skip: renamed tools, tools
// whose schemas the registry cannot compile.
func (b *Bridge) Warnings() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.warnings)
}

// Close stops the upstream (its stdin is closed, then it gets SIGTERM, then
// SIGKILL, with its whole process group) and waits until no process is
// left. Calls in flight fail; later calls fail saying the bridge is closed.
// Close may be called more than once.
func (b *Bridge) Close() error {
	b.closeOnce.Do(func() { close(b.closing) })
	<-b.refresherDone
	b.lock <- struct{}{}
	s := b.sess
	b.sess, b.closed = nil, true
	<-b.lock
	if s != nil {
		s.stop()
	}
	return nil
}

// isClosing reports whether Close was called.
func (b *Bridge) isClosing() bool {
	select {
	case <-b.closing:
		return true
	default:
		return false
	}
}

func orDefault(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultTimeout
	}
	return d
}

// seconds formats a duration for a message: "60s", "1.5s", "250ms".
func seconds(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}
