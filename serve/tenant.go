package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
	"github.com/ptcx/ptcx/serve/internal/compute"
	"github.com/ptcx/ptcx/serve/internal/quota"
	"github.com/ptcx/ptcx/toolsfile"
	"github.com/ptcx/ptcx/workspace"
)

// tenant is one configured tenant, ready to serve.
type tenant struct {
	name            string
	keySum          [32]byte
	mode            api.Mode
	languages       []api.Language // its languages (nil: TypeScript only)
	limits          api.Limits
	pendingTimeout  time.Duration
	approvalTimeout time.Duration // quotas.approval_timeout_ms (approval.go)
	asks            sync.Map      // scope → whether its programs may ask (mayAsk, approval.go)

	file *toolsfile.File      // the tools file, its policy overlaid, applied to every registry built
	over overlay              // the tenant's policy overlay, laid over the workspace's tools (policy.go)
	ws   *workspace.Workspace // nil without a workspace root; the state of executions that name no workspace state
	sess *workspaceStates     // named workspace states (workspace_state.go); nil without a workspace root
	host []ptcx.Option        // how every executor of the tenant is assembled (ptcx.New), but its registry
	exec *executor.Executor   // for executions without client tools, and /v1/calls
	mcp  http.Handler

	state    sessionTenant   // keep_state sessions (session_state.go)
	compute  *compute.Bucket // nil: no compute quota
	quota    *quota.Quota    // what it may hold of what tenants share, and holds (admission.go)
	retained *quota.Retained // its results' and events' bytes on this node (retained.go)

	clients      clientExecutors // executors by client tools declared (clienttool_cache.go)
	liveWaits    atomic.Int64    // executions waiting live for their client now (livewait.go)
	maxLiveWaits int64           // quotas.max_live_waits
}

func (s *Server) newTenant(ctx context.Context, tc TenantConfig, file *toolsfile.File) (*tenant, error) {
	sum, _ := hex.DecodeString(tc.KeySHA256) // validated by Config.validate
	t := &tenant{
		name: tc.Name, mode: tc.Mode, limits: tc.Limits.Limits(), file: file,
		pendingTimeout:  ms(tc.Quotas.PendingTimeoutMS, DefaultPendingTimeout),
		approvalTimeout: ms(tc.Quotas.ApprovalTimeoutMS, DefaultApprovalTimeout),
	}
	t.compute, t.quota, t.retained = s.quotasOf(tc, t.limits)
	t.maxLiveWaits = int64(tc.Quotas.MaxLiveWaits)
	if t.maxLiveWaits == 0 {
		t.maxLiveWaits = int64(max(1, t.quota.Limits().MaxConcurrent/2))
	}
	copy(t.keySum[:], sum)
	if t.mode == "" && (file == nil || file.Mode == "") {
		t.mode = api.ModePTC
	}
	if s.cfg.Workspace != "" {
		dir := filepath.Join(s.cfg.resolve(s.cfg.Workspace), tc.Name)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("tenant %s: workspace: %w", tc.Name, err)
		}
		ws, err := workspace.New(dir, workspace.Options{})
		if err != nil {
			return nil, fmt.Errorf("tenant %s: workspace: %w", tc.Name, err)
		}
		t.ws = ws
		t.sess = &workspaceStates{root: dir, max: DefaultMaxSessions, open: map[string]*workspaceStateEntry{}}
	}
	var wsTools []registry.Tool
	if t.ws != nil {
		wsTools = t.ws.Tools()
	}
	over, err := newOverlay(tc.Policy, wsTools, file)
	if err != nil {
		t.close()
		return nil, fmt.Errorf("tenant %s: %w", tc.Name, err)
	}
	t.over, t.file = over, over.file(file)
	rt := &meteredRuntime{inner: s.runtime, bucket: t.compute, counter: s.metrics.compute.WithLabelValues(tc.Name)}
	cfg := executor.NewConfig().
		WithOnStart(s.onStart).WithOnResult(func(n executor.Notification) { s.onResult(t, n) }).WithTenant(tc.Name).
		WithApprover(executor.ParkApprovals(approvalsElsewhere)) // approval.go
	if s.canResume() {
		// A program that only waits gives its instance and committed
		// memory back to the sandbox after the grace (docs/security.md,
		// "Tenant isolation"); its tenant's quotas it keeps.
		cfg = cfg.WithParkIdle(executor.ParkIdleGrace)
	}
	cfg = withProgramSessions(t, tc, s.withFence(cfg)).WithHandleOverBytes(s.cfg.Server.HandleOverBytes)
	// The sandbox is the Server's, shared by every tenant and metered
	// per tenant; the tenant's limits are its executors' defaults and
	// ceiling (the sandbox's ceiling is every tenant's highest).
	t.host = []ptcx.Option{ptcx.WithCodeRuntime(rt), ptcx.WithExecutor(cfg), ptcx.WithLimits(t.limits)}
	if tc.Languages != nil {
		if err := s.prepareLanguages(ctx, tc.Languages); err != nil {
			t.close()
			return nil, fmt.Errorf("tenant %s: languages: %w", tc.Name, err)
		}
		t.languages = tc.Languages
		t.host = append(t.host, ptcx.WithLanguages(tc.Languages...))
	}
	reg, err := t.registry(t.ws)
	if err != nil {
		t.close()
		return nil, fmt.Errorf("tenant %s: %w", tc.Name, err)
	}
	if t.exec, err = t.executor(ctx, reg); err != nil {
		t.close()
		return nil, fmt.Errorf("tenant %s: %w", tc.Name, err)
	}
	srv, err := mcpserver.New(t.exec, registry.Deployment, mcpserver.Options{Name: "ptcx serve", Version: s.version, Instructions: t.instructions(reg)})
	if err != nil {
		t.close()
		return nil, fmt.Errorf("tenant %s: %w", tc.Name, err)
	}
	// One handler per tenant and stateless, so no MCP session can be
	// reached from another tenant's key.
	// GuardHTTP answers a batch's request that reuses an id, which the SDK drops.
	t.mcp = mcpserver.GuardHTTP(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: s.cfg.maxBodyBytes(),
			// A client speaking the protocol of 2026-07-28 or later that goes
			// away cancels its call; one of an earlier protocol does not
			// (the SDK's handler runs it to its end).
			PropagateRequestCancellation: true}), s.cfg.maxBodyBytes())
	return t, nil
}

// registry builds a registry of the tenant's server-side tools: the
// built-in workspace tools (when a workspace is configured), then the
// tools file, in the tenant's mode.
func (t *tenant) registry(ws *workspace.Workspace) (*registry.Registry, error) {
	reg := registry.New()
	if ws != nil {
		for _, tool := range t.over.tools(ws.Tools()) {
			if err := reg.Register(registry.Deployment, tool); err != nil {
				return nil, err
			}
		}
	}
	if t.file != nil {
		if err := t.file.Apply(reg, t.mode); err != nil {
			return nil, err
		}
	} else if err := reg.DeclareMode(registry.Deployment, t.mode); err != nil {
		return nil, err
	}
	return reg, nil
}

// executorWith returns an executor over ws's workspace tools (a
// session's) whose registry also holds tools (an execution's client tools,
// in the deployment scope).
func (t *tenant) executorWith(ctx context.Context, ws *workspace.Workspace, tools []registry.Tool) (*executor.Executor, error) {
	reg, err := t.registry(ws)
	if err != nil {
		return nil, err
	}
	for _, tool := range tools {
		if err := reg.Register(registry.Deployment, tool); err != nil {
			return nil, err
		}
	}
	return t.executor(ctx, reg)
}

// executor assembles one of the tenant's executors over reg with ptcx.New,
// as every host is: it installs run_code's describer (the SDK) on reg.
func (t *tenant) executor(ctx context.Context, reg *registry.Registry) (*executor.Executor, error) {
	h, err := ptcx.New(ctx, append(slices.Clip(t.host), ptcx.WithRegistry(reg))...)
	if err != nil {
		return nil, err
	}
	return h.Executor(), nil
}

func (t *tenant) instructions(reg *registry.Registry) string {
	sections, err := prompt(reg, registry.Deployment, t.languages, "")
	if err != nil {
		return ""
	}
	parts := make([]string, len(sections))
	for i, sec := range sections {
		parts[i] = sec.Text
	}
	return strings.Join(parts, "\n")
}

func (t *tenant) close() {
	if t.ws != nil {
		_ = t.ws.Close()
		t.sess.close()
	}
}

// prompt is a scope's prompt sections for a tenant that runs languages,
// the tools declared in lang ("": the tenant's default language), with the
// languages' section when there is a choice (sdkgen.PromptSections).
func prompt(reg *registry.Registry, scope string, languages []api.Language, lang api.Language) ([]sdkgen.Section, error) {
	mode, err := reg.Mode(scope)
	if err != nil {
		return nil, err
	}
	bindable, err := reg.Bindable(scope)
	if err != nil {
		return nil, err
	}
	return sdkgen.PromptSections(mode, bindable, languages, lang)
}

// prepareLanguages readies the sandbox's guests of languages: the Python
// guest is compiled and its image made now, so that a server that cannot
// run it (a build without it, wasmtime) refuses to start, saying why.
func (s *Server) prepareLanguages(ctx context.Context, languages []api.Language) error {
	preparer, ok := s.runtime.(interface {
		Prepare(context.Context, api.Language) error
	})
	if !ok {
		return nil // a runtime the host gave: its runs say
	}
	for _, l := range languages {
		if err := preparer.Prepare(ctx, l); err != nil {
			return err
		}
	}
	return nil
}

// authenticate finds the tenant whose key hashes to the bearer token's
// SHA-256, comparing in constant time against every tenant.
func (s *Server) authenticate(r *http.Request) (*tenant, *httpError) {
	h := r.Header.Get("Authorization")
	key, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || key == "" {
		return nil, errorf(CodeUnauthorized, "missing API key: send Authorization: Bearer <key>")
	}
	sum := sha256.Sum256([]byte(key))
	var found *tenant
	for _, t := range s.tenants {
		if subtle.ConstantTimeCompare(sum[:], t.keySum[:]) == 1 {
			found = t
		}
	}
	if found == nil {
		e := errorf(CodeUnauthorized, "the API key is not valid")
		e.InvalidToken = true
		return nil, e
	}
	return found, nil
}
