package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ptcx/ptcx/serve/internal/fence"
	"github.com/ptcx/ptcx/serve/internal/httperr"
	"github.com/ptcx/ptcx/serve/protocol"
	"github.com/ptcx/ptcx/serve/store"
)

// Cluster is a Server's share in a store: it writes the records of the
// executions this node owns, renews this node's lease, fails the running
// executions of nodes whose lease expired, answers other nodes' requests
// for its executions and, with NATS, publishes events and serves the
// overflow queue. A Server without a store (memory) has none, and pays
// nothing for it.
type Cluster struct {
	Settings
	n     Node // the node it is part of: a *Server
	log   *slog.Logger
	Store store.Store
	nc    *nats.Conn          // nil for the dir store
	js    jetstream.JetStream // nil for the dir store

	// fence proves this node's lease to itself (serve/internal/fence); lapses counts
	// its lapses, reconciled those reconcile has settled.
	Fence      *fence.Fence
	lapses     atomic.Uint64
	reconciled atomic.Uint64

	mu      sync.Mutex
	owned   map[string]*owned
	healthy error // the last lease renewal's error

	evictions chan string // ids of settled executions to delete, bounded
	// evicting holds the ids queued in evictions until their record is
	// deleted: this node answers 404 for them meanwhile, as it does once
	// the record is gone. Its own lock: evicted runs under the table's.
	evictMu  sync.Mutex
	evicting map[string]struct{}
	// holdEvictions, held, keeps the deletions waiting (for tests).
	HoldEvictions sync.Mutex

	sub       *nats.Subscription
	answers   chan struct{} // bounds the owner-side answers in flight
	stop      chan struct{}
	stopOnce  sync.Once
	wg        sync.WaitGroup // the loops
	followers sync.WaitGroup // one per owned execution
}

// Node is what a cluster asks of the node it is part of (a *Server:
// node.go): its executions, and what it does with them as the cluster
// takes them over, gives them up or forwards requests for them. The
// cluster reaches the node through these only (its executions' own
// methods aside).
type Node interface {
	// Lookup returns any tenant's execution id the node holds, Get
	// tenant's only, and Local tenant's when the node answers for it from
	// its own copy (nil for none).
	Lookup(id string) Execution
	Get(tenant, id string) Execution
	Local(tenant, id string) Execution
	// Live returns the executions the node holds that have not settled.
	Live() []Execution
	// Serves reports whether the node serves tenant.
	Serves(tenant string) bool

	// Room reports whether the node may start a queued execution now, and
	// StartQueued starts one (x nil and no error: its idempotency key is
	// another node's execution's; err: the tenant or the body is not one
	// it can start).
	Room() bool
	StartQueued(id, tenant string, body []byte) (x Execution, herr *httperr.Error, err error)
	// Apply applies a request another node forwarded (or one for an
	// execution taken over here) to x, and returns its next state.
	Apply(ctx context.Context, x Execution, req NodeRequest) (protocol.ExecutionState, *httperr.Error)
	// Cancel cancels x: the node gives up an execution another node took.
	Cancel(x Execution)
	// Handle returns the value of handle name of x's result, or why not
	// (404: x has not completed, or its result holds no such handle).
	Handle(x Execution, name string) (protocol.HandleValue, *httperr.Error)

	// ReadSnapshot reads parked bytes; AdoptParked rebuilds the parked
	// execution they are (an error: not its own, or it cannot continue
	// here), and HoldAdopted holds it, taken over from node from.
	ReadSnapshot(ctx context.Context, name string) ([]byte, error)
	AdoptParked(ctx context.Context, id, tenant, snapshot string, data []byte, given map[int32]protocol.ToolResult,
		epoch uint64, feed EventsFeed) (x Execution, after int, err error)
	HoldAdopted(x Execution, from string)
	// Reclaimed continues a parked x reclaimed after a lapse; Unpark and
	// DropCopy drop a parked copy another node continued meanwhile.
	Reclaimed(x Execution)
	Unpark(x Execution) bool
	DropCopy(x Execution)
	// ReleaseParked gives up every parked execution the node holds (a
	// crash: their state is in the store).
	ReleaseParked() int
}

// maxAnswers bounds the other nodes' requests one node answers at once
// (each may wait up to server.max_wait_ms); past it they get 503.
const maxAnswers = 256

// maxEvictions bounds the record deletions waiting to be written; past
// it a record evicted over server.max_retained stays until its TTL.
const maxEvictions = 1024

// Settings is what a cluster reads of the server's config
// (Config.clusterSettings), read once.
type Settings struct {
	Kind string            // the store's kind, for the log
	Dir  string            // the dir store's directory; "" for NATS
	NATS *store.NATSConfig // the NATS store; nil for dir
	// events, work and subject are the events stream, the work-queue
	// stream and the subject prefix (NATS).
	Events, Work, Subject string
	BindOnly              bool   // store.bind_only
	Node                  string // this node's name
	Lease                 time.Duration
	LiveTTL               time.Duration // a live record's lifetime between writes
	MaxWait               time.Duration // server.max_wait_ms
	Retention             time.Duration // server.retention_ms: a settled record's lifetime
	Overflow              bool          // server.overflow: the work queue
	KeepAlive             time.Duration // an event stream's keep-alive comment interval (serve's)
}

// New joins the cluster cs names, as node n: it opens the store,
// fails what an earlier life of this node left running, takes the lease
// and starts the loops.
func New(ctx context.Context, cs Settings, n Node, log *slog.Logger) (*Cluster, error) {
	c := &Cluster{Settings: cs, n: n, log: log,
		owned: map[string]*owned{}, answers: make(chan struct{}, maxAnswers), stop: make(chan struct{}),
		evictions: make(chan string, maxEvictions), evicting: map[string]struct{}{}}
	c.Fence = fence.New(c.Node, c.Lease, time.Now, c.lapse)
	if cs.NATS == nil {
		d, err := store.OpenDir(cs.Dir)
		if err != nil {
			return nil, fmt.Errorf("field store.path: %w", err)
		}
		c.Store = d
	} else {
		ns, err := store.OpenNATS(ctx, *cs.NATS)
		if err != nil {
			return nil, fmt.Errorf("field store: %w", err)
		}
		c.Store, c.nc, c.js = ns, ns.Conn(), ns.JetStream()
		if err := c.streams(ctx, cs.BindOnly); err != nil {
			_ = ns.Close()
			return nil, fmt.Errorf("field store: %w", err)
		}
	}
	if err := c.join(ctx); err != nil {
		_ = c.Store.Close()
		return nil, fmt.Errorf("field store: %w", err)
	}
	return c, nil
}

// streams binds or creates the events stream and, with overflow, the
// work queue.
func (c *Cluster) streams(ctx context.Context, bindOnly bool) error {
	want := []jetstream.StreamConfig{{
		Name: c.Events, Description: "ptcx serve: execution events, one subject per execution",
		Subjects: []string{c.Subject + ".events.>"}, MaxAge: c.LiveTTL, Storage: jetstream.FileStorage,
		Duplicates: time.Minute,
	}}
	if c.Overflow {
		want = append(want, jetstream.StreamConfig{
			Name: c.Work, Description: "ptcx serve: executions waiting for a node with a free slot",
			Subjects: []string{c.Subject + ".work"}, Retention: jetstream.WorkQueuePolicy, MaxAge: c.LiveTTL,
			Storage: jetstream.FileStorage,
		})
	}
	for _, cfg := range want {
		var err error
		if bindOnly {
			_, err = c.js.Stream(ctx, cfg.Name)
		} else {
			_, err = c.js.CreateOrUpdateStream(ctx, cfg)
		}
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("%w: the JetStream stream %q does not exist: create it, or drop store.bind_only to let ptcx create it", store.ErrUnavailable, cfg.Name)
		}
		if err != nil {
			return fmt.Errorf("%w: the JetStream stream %q: %w", store.ErrUnavailable, cfg.Name, err)
		}
	}
	return nil
}

// join fails what an earlier life of this node left running, takes the
// lease, subscribes to requests for this node, and starts the loops.
func (c *Cluster) join(ctx context.Context) error {
	if err := c.reap(ctx, store.Lease{Node: c.Node}, "restarted"); err != nil {
		return err
	}
	start := time.Now()
	if err := c.Store.RenewLease(ctx, c.Node, start.Add(c.Lease)); err != nil {
		return err
	}
	c.Fence.Renewed(start)

	if c.nc != nil {
		sub, err := c.nc.Subscribe(c.nodeSubject(c.Node), c.onRequest)
		if err != nil {
			return fmt.Errorf("%w: subscribing to %s: %w", store.ErrUnavailable, c.nodeSubject(c.Node), err)
		}
		c.sub = sub
	}
	c.wg.Add(3)
	go c.leaseLoop()
	go c.reapLoop()
	go c.evictLoop()
	if c.Overflow {
		if err := c.startWorker(ctx); err != nil {
			return err
		}
	}
	c.log.Info("joined the cluster", "node", c.Node, "store", c.Kind, "lease_ms", c.Lease.Milliseconds(), "overflow", c.Overflow)
	return nil
}

func (c *Cluster) nodeSubject(node string) string { return c.Subject + ".node." + node }
func (c *Cluster) eventSubject(id string) string  { return c.Subject + ".events." + id }

// AdoptOrphans holds here, from now, the parked executions whose owner
// is gone: this node's earlier life, or a node whose lease lapsed or that
// left. It runs once the Server has its cluster (a taken-over execution
// may resume at once).
func (c *Cluster) AdoptOrphans(ctx context.Context) error {
	leases, err := c.Store.Leases(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	return c.adoptParked(ctx, func(owner string) bool { return owner == c.Node || c.ownerGone(leases, owner, now) })
}

// Evicted queues the deletion of an evicted execution's record.
func (c *Cluster) Evicted(id string) {
	c.evictMu.Lock()
	defer c.evictMu.Unlock()
	select {
	case c.evictions <- id:
		c.evicting[id] = struct{}{}
	default:
	}
}

// isEvicting reports whether id's record is queued for deletion.
func (c *Cluster) isEvicting(id string) bool {
	c.evictMu.Lock()
	defer c.evictMu.Unlock()
	_, ok := c.evicting[id]
	return ok
}

func (c *Cluster) evictLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		case id := <-c.evictions:
			c.HoldEvictions.Lock()
			c.HoldEvictions.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
			if err := c.deleteRecord(ctx, id); err != nil {
				c.log.Warn("deleting an evicted execution's record failed (it expires at its TTL)", "execution", id, "error", err.Error())
			}
			cancel()
			c.evictMu.Lock()
			delete(c.evicting, id)
			c.evictMu.Unlock()
		}
	}
}

// Ready is nil when the store is usable, the last renewal worked and
// the node can prove its lease (serve/internal/fence).
func (c *Cluster) Ready(ctx context.Context) error {
	if err := c.Store.Check(ctx); err != nil {
		return err
	}
	if !c.Fence.Live() {
		return fmt.Errorf("%w: %s", ErrFenced, c.Fence.Refusal())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.healthy
}

// Close stops the loops, waits for the records being written, leaves the
// cluster (dropping the lease, so no one reaps what settled) and closes
// the store.
func (c *Cluster) Close() {
	c.stopOnce.Do(func() {
		c.Fence.Stop()
		if c.sub != nil {
			_ = c.sub.Drain()
		}
		waitAtMost(&c.followers, 10*time.Second)
		close(c.stop)
		if c.sub != nil {
			_ = c.sub.Unsubscribe()
		}
		c.wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if ls, err := c.Store.Leases(ctx); err == nil {
			for _, l := range ls {
				if l.Node == c.Node {
					_ = c.Store.DropLease(ctx, l)
				}
			}
		}
		_ = c.Store.Close()
	})
}

// Crash stops the node's part in the cluster at once, as a killed
// process would: no more renewals, writes or answers, and the parked
// executions it held are given up (their state is in the store).
func (c *Cluster) Crash() {
	c.stopOnce.Do(func() {
		c.Fence.Stop()
		close(c.stop)
		if c.sub != nil {
			_ = c.sub.Unsubscribe()
		}
		c.n.ReleaseParked()
		_ = c.Store.Close()
	})
}

// waitAtMost waits for wg, or d.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
