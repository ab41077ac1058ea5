package serve

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/serve/internal/cluster"
	"github.com/ptcx/ptcx/serve/protocol"
)

// The node's side of the cluster's wall: what a *Server does for the
// cluster it is part of (serve/internal/cluster, its Node interface),
// beside what it does for its own handlers (apply, local, readSnapshot,
// releaseParked, resumeOrRetry), and what an execution shows the cluster
// (its Execution interface). The cluster reaches the node through these
// only.

// clusterNode is a *Server as its cluster sees it (cluster.Node): the
// Server's own methods, with its executions as cluster.Executions (a nil
// *execution is a nil Execution).
type clusterNode struct{ s *Server }

var (
	_ cluster.Node      = clusterNode{}
	_ cluster.Execution = (*execution)(nil)
)

// asExecution is x as the cluster sees it: nil for none.
func asExecution(x *execution) cluster.Execution {
	if x == nil {
		return nil
	}
	return x
}

// ofExecution is the node's execution the cluster handed back.
func ofExecution(x cluster.Execution) *execution {
	if x == nil {
		return nil
	}
	return x.(*execution)
}

func (n clusterNode) Lookup(id string) cluster.Execution { return asExecution(n.s.lookup(id)) }
func (n clusterNode) Get(tenant, id string) cluster.Execution {
	return asExecution(n.s.get(tenant, id))
}
func (n clusterNode) Local(tenant, id string) cluster.Execution {
	return asExecution(n.s.local(tenant, id))
}
func (n clusterNode) Live() []cluster.Execution {
	xs := n.s.live()
	out := make([]cluster.Execution, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
func (n clusterNode) Serves(tenant string) bool { return n.s.serves(tenant) }
func (n clusterNode) Room() bool                { return n.s.room() }
func (n clusterNode) StartQueued(id, tenant string, body []byte) (cluster.Execution, *httpError, error) {
	x, herr, err := n.s.startQueued(id, tenant, body)
	return asExecution(x), herr, err
}
func (n clusterNode) Apply(ctx context.Context, x cluster.Execution, req cluster.NodeRequest) (ExecutionState, *httpError) {
	return n.s.apply(ctx, ofExecution(x), req)
}
func (n clusterNode) Cancel(x cluster.Execution) { n.s.cancel(ofExecution(x)) }
func (n clusterNode) Handle(x cluster.Execution, name string) (protocol.HandleValue, *httpError) {
	return ofExecution(x).handle(name)
}
func (n clusterNode) ReadSnapshot(ctx context.Context, name string) ([]byte, error) {
	return n.s.readSnapshot(ctx, name)
}
func (n clusterNode) AdoptParked(ctx context.Context, id, tenant, snapshot string, data []byte, given map[int32]ToolResult,
	epoch uint64, feed cluster.EventsFeed) (cluster.Execution, int, error) {
	x, after, err := n.s.adoptParked(ctx, id, tenant, snapshot, data, given, epoch, feed)
	return asExecution(x), after, err
}
func (n clusterNode) HoldAdopted(x cluster.Execution, from string) {
	n.s.holdAdopted(ofExecution(x), from)
}
func (n clusterNode) Reclaimed(x cluster.Execution)   { n.s.reclaimed(ofExecution(x)) }
func (n clusterNode) Unpark(x cluster.Execution) bool { return n.s.unpark(ofExecution(x)) }
func (n clusterNode) DropCopy(x cluster.Execution)    { n.s.dropCopy(ofExecution(x)) }
func (n clusterNode) ReleaseParked() int              { return n.s.releaseParked() }

// What an execution shows its cluster (cluster.Execution) beside ID,
// Tenant, Key, Created, Sum, Epoch, SetEpoch and SessionWait
// (execution.go): the node's own methods.

func (x *execution) State() ExecutionState { return x.state() }
func (x *execution) EventsAfter(id int) ([]Event, bool, <-chan struct{}) {
	return x.eventsAfter(id)
}
func (x *execution) IsParked() bool   { return x.isParked() }
func (x *execution) IsReleased() bool { return x.isReleased() }
func (x *execution) ParkedState() (snapshot string, answers json.RawMessage) {
	return x.parkedState()
}
func (x *execution) SnapshotName() string { return x.snapshotName() }
func (x *execution) CancelRun()           { x.cancelRun() }
func (x *execution) ReleaseProgram()      { x.releaseProgram() }

// lookup returns any tenant's execution id this node holds (nil for none):
// for the executor's hooks and the cluster, which know only the id.
func (s *Server) lookup(id string) *execution { return s.table.Lookup(id) }

// get returns tenant's execution id this node holds (nil for none, or
// another tenant's).
func (s *Server) get(tenant, id string) *execution { return s.table.Get(tenant, id) }

// live returns the executions this node holds that have not settled.
func (s *Server) live() []*execution { return s.table.Live() }

// tenantNamed returns the tenant of that name, nil for none.
func (s *Server) tenantNamed(name string) *tenant {
	for _, t := range s.tenants {
		if t.name == name {
			return t
		}
	}
	return nil
}

// serves reports whether this node serves tenant.
func (s *Server) serves(tenant string) bool { return s.tenantNamed(tenant) != nil }

// room reports whether this node may start a queued execution now: it is
// not draining and holds fewer than server.max_executions live ones.
func (s *Server) room() bool {
	return !s.draining.Load() && s.table.LiveCount() < s.cfg.maxExecutions()
}

// startQueued starts the queued execution id of tenant from the request
// body its client posted (internal/cluster/overflow.go): x is nil, with no error,
// when its idempotency key is another node's execution's; err when the
// tenant or the body is not one this node can start.
func (s *Server) startQueued(id, tenant string, body []byte) (*execution, *httpError, error) {
	t := s.tenantNamed(tenant)
	req, err := DecodeExecutionRequest(body)
	if t == nil || err != nil {
		return nil, nil, fmt.Errorf("tenant %q or its request is unknown to node %s", tenant, s.cfg.node())
	}
	res, herr := s.startID(context.Background(), id, t, req, body) // no request of this node's to log under
	return res.x, herr, nil
}

// cancel cancels x (DELETE, a drain, or the cluster giving it up): a
// parked one settles at once, a running one's run is cancelled.
func (s *Server) cancel(x *execution) {
	if !s.cancelParked(x) {
		x.cancelRun()
	}
}

// reclaimed continues a parked x this node reclaimed after its lease
// lapsed (internal/cluster/fence.go): its calls expire from their expires_at, as
// before the lapse, and it resumes if they were answered, or expired,
// meanwhile.
func (s *Server) reclaimed(x *execution) {
	x.mu.Lock()
	due := x.resumeDueLocked()
	x.armExpiryLocked(s)
	x.mu.Unlock()
	if due {
		go s.resumeOrRetry(x)
	}
}

// unpark stops this node holding a parked x another node continued while
// this node's lease had lapsed: its program is released and x runs under
// no epoch here. It reports false for an x that is not parked (then
// nothing is done); dropCopy settles it once the cluster forgot it.
func (s *Server) unpark(x *execution) bool {
	x.mu.Lock()
	if !x.parkedLocked() {
		x.mu.Unlock()
		return false
	}
	p := x.parked
	x.parked, x.resuming = nil, true
	if x.expiry != nil {
		x.expiry.Stop()
		x.expiry = nil
	}
	x.mu.Unlock()
	x.SetEpoch(0)
	if p != nil {
		p.Release()
	}
	return true
}

// dropCopy settles x, unparked, as this node's copy of it dropped: never
// written nor published (this node no longer owns its record).
func (s *Server) dropCopy(x *execution) {
	s.metrics.parked.WithLabelValues(x.tenant.name).Dec()
	s.log.Warn("dropped this node's copy of a parked execution another node continued while this node's lease had lapsed",
		"execution", x.id, "tenant", x.tenant.name, "node", s.cfg.node())
	s.settleRun(x, api.Result{ID: x.id, Tool: registry.RunCode, Err: &api.Error{Code: api.CodeNodeLost,
		Message: "this node's copy of the parked execution was dropped: another node took it over while this node's lease had lapsed"}})
}

// releaseProgram releases the program a parked x holds in memory, if it
// holds it, leaving x parked on its bytes in the store; its calls' expiry
// waits (reclaimed arms it again).
func (x *execution) releaseProgram() {
	x.mu.Lock()
	var p *executor.Parked
	if x.parkedLocked() {
		p, x.parked = x.parked, nil
		if x.expiry != nil {
			x.expiry.Stop()
			x.expiry = nil
		}
	}
	x.mu.Unlock()
	if p != nil {
		p.Release()
	}
}
