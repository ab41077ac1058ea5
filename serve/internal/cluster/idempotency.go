package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ptcx/ptcx/serve/internal/httperr"
	"github.com/ptcx/ptcx/serve/protocol"
	"github.com/ptcx/ptcx/serve/store"
)

// Idempotency keys across the cluster. Before an execution with an
// idempotency_key starts on a node of a cluster, the key is reserved in
// the store (store.Reservation: the tenant, the execution's id, the
// request body's hash; its store key is hashed from the tenant and the
// idempotency key, so it reveals neither): of nodes reserving one key at
// once exactly one wins (a create). A node that finds the key reserved
// answers with the execution it names, from its record, as GET does (the
// same body), or 409 (another body). A reservation names its execution
// before that execution's record exists; one still without a record past
// keyStartBound, or whose node is gone, was left by a start that failed
// or a node that died, and is taken over (revision-checked). The
// reservation lives as long as the execution is retained: it is made with
// twice a live record's lifetime, pushed on by the record's writes of an
// execution that outlives that, cut to the record's expiry when it
// settles, and deleted with the record when its node evicts it. Without a
// store (memory) keys are per node, in the table, as they always were.

// ReservationKeyOf is the store key of tenant's idempotency key: 16 hex
// digits of the tenant's SHA-256, a dot, and 32 of the tenant's and key's.
func ReservationKeyOf(tenant, key string) string {
	t := sha256.Sum256([]byte(tenant))
	k := sha256.Sum256([]byte(tenant + "\x00" + key))
	return hex.EncodeToString(t[:8]) + "." + hex.EncodeToString(k[:16])
}

// keyStartBound is how long a reservation may name an execution whose
// record does not exist yet: the start path's longest wait (a keep_state
// session's turn, tenants[].sessions.wait_ms) and its two store writes.
func keyStartBound(x Execution) time.Duration { return x.SessionWait() + 2*StoreTimeout }

// keyPoll is how often a request finds again a key whose execution is
// being started on another node.
const keyPoll = 100 * time.Millisecond

// KeyHold is the reservation of an execution's key this node made as the
// execution starts.
type KeyHold struct {
	c *Cluster
	x Execution
	r store.Reservation
	// queued: the reservation was made when the execution was queued
	// (enqueue); it stays whatever this start does.
	queued bool
}

// Enter admits x to start on a cluster node: the node must prove its
// lease (x runs under the current epoch, serve/internal/fence) and x's idempotency
// key, if any, is reserved for it. When another node's execution holds the
// key with the same body, first is its state as GET shows it: the answer
// to the request, x not started. herr answers the request instead: 503
// while the lease is not proven; 409 for another body. The hold, when x
// has a key, is given back unless x starts (release).
func (c *Cluster) Enter(x Execution, wait *bool) (hold *KeyHold, first json.RawMessage, herr *httperr.Error) {
	epoch, ok := c.Fence.Epoch()
	if !ok {
		return nil, nil, httperr.Unavailable(httperr.CodeStoreUnavailable, "%s: it starts no execution until it renews its lease; retry (on another node)", c.Fence.Refusal())
	}
	x.SetEpoch(epoch)
	if x.Key() == "" {
		return nil, nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.MaxWait+StoreTimeout)
	defer cancel()
	return c.reserve(ctx, x, wait == nil || *wait)
}

// reserve reserves x's key for x, or answers with the execution that
// holds it, first (as enter).
func (c *Cluster) reserve(ctx context.Context, x Execution, wait bool) (hold *KeyHold, first json.RawMessage, herr *httperr.Error) {
	sum := x.Sum()
	mine := store.Reservation{Key: ReservationKeyOf(x.Tenant(), x.Key()), Tenant: x.Tenant(), ID: x.ID(), Sum: hex.EncodeToString(sum[:]),
		Node: c.Node, Created: x.Created(), ExpiresAt: x.Created().Add(2 * c.LiveTTL)}
	deadline := time.Now().Add(c.MaxWait)
	for {
		rev, err := c.Store.Reserve(ctx, mine)
		if err == nil {
			mine.Revision = rev
			return &KeyHold{c: c, x: x, r: mine}, nil, nil
		}
		if !errors.Is(err, store.ErrExists) {
			return nil, nil, httperr.StoreUnavailable(err)
		}
		cur, err := c.Store.GetReservation(ctx, mine.Key)
		switch {
		case errors.Is(err, store.ErrNotFound): // given back meanwhile: reserve again
		case err != nil:
			return nil, nil, httperr.StoreUnavailable(err)
		case cur.ID == x.ID(): // reserved when it was queued
			return &KeyHold{c: c, x: x, r: cur, queued: true}, nil, nil
		default:
			h, first, herr, again := c.heldBy(ctx, x, mine, cur, wait)
			if !again {
				return h, first, herr
			}
		}
		if time.Now().After(deadline) {
			e := httperr.Errorf(httperr.CodeConflict, "idempotency_key %q is held by an execution another request is starting; retry", x.Key())
			e.RetryAfter = httperr.DefaultRetryAfter
			return nil, nil, e
		}
		select {
		case <-time.After(keyPoll):
		case <-ctx.Done():
			return nil, nil, httperr.StoreUnavailable(ctx.Err())
		}
	}
}

// heldBy answers for x's key, held by cur: the execution it names (its
// state, first, or 409), or takes it over when that execution never
// started; again when its record is still to come.
func (c *Cluster) heldBy(ctx context.Context, x Execution, mine, cur store.Reservation, wait bool) (h *KeyHold, first json.RawMessage, herr *httperr.Error, again bool) {
	rec, err := c.Store.Get(ctx, cur.ID)
	switch {
	case err == nil && rec.Tenant == x.Tenant():
		if cur.Sum != mine.Sum {
			return nil, nil, keyConflict(x, cur.ID), false
		}
		st, herr := c.RemoteState(ctx, x.Tenant(), cur.ID, wait)
		if herr != nil {
			return nil, nil, herr, false
		}
		return nil, st, nil, false
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, nil, httperr.StoreUnavailable(err), false
	}
	left, err := c.abandoned(ctx, x, cur)
	if err != nil {
		return nil, nil, httperr.StoreUnavailable(err), false
	}
	if left {
		mine.Revision = cur.Revision
		rev, err := c.Store.UpdateReservation(ctx, mine)
		if err == nil {
			mine.Revision = rev
			c.log.Info("took over an idempotency key's reservation its execution never used", "execution", x.ID(), "from", cur.ID, "node", cur.Node)
			return &KeyHold{c: c, x: x, r: mine}, nil, nil, false
		}
		if !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
			return nil, nil, httperr.StoreUnavailable(err), false
		}
		return nil, nil, nil, true // another request took it: look again
	}
	if cur.Sum != mine.Sum {
		return nil, nil, keyConflict(x, cur.ID), false
	}
	return nil, nil, nil, true
}

// abandoned reports whether cur, a reservation whose execution has no
// record, was left by a start that will not write one: it is older than
// keyStartBound, or its node is gone. x is the execution whose start
// found it.
func (c *Cluster) abandoned(ctx context.Context, x Execution, cur store.Reservation) (bool, error) {
	if time.Since(cur.Created) > keyStartBound(x) {
		return true, nil
	}
	leases, err := c.Store.Leases(ctx)
	if err != nil {
		return false, err
	}
	return c.ownerGone(leases, cur.Node, time.Now()), nil
}

func keyConflict(x Execution, first string) *httperr.Error {
	return httperr.Errorf(httperr.CodeConflict, "idempotency_key %q was used by execution %s with a different request body", x.Key(), first)
}

// Release gives the reservation back unless its execution started (it
// is in the table) or was queued.
func (h *KeyHold) Release() {
	if h == nil || h.queued || h.c.n.Lookup(h.x.ID()) == h.x {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	if err := h.c.Store.DeleteReservation(ctx, h.r); err != nil && !errors.Is(err, store.ErrConflict) {
		h.c.log.Warn("giving back an idempotency key's reservation failed: a retry takes it over after a while",
			"execution", h.x.ID(), "error", err.Error())
	}
}

// keepKey keeps x's reservation as long as its record, rec, just written:
// pushed on by a live record that outlives it, cut to a settled one's
// expiry. o.mu is held.
func (c *Cluster) keepKey(ctx context.Context, o *owned, rec store.Record) {
	until := rec.ExpiresAt
	if rec.Status != protocol.StatusCompleted && rec.Status != protocol.StatusFailed {
		if !rec.ExpiresAt.After(o.keyUntil) {
			return
		}
		until = rec.ExpiresAt.Add(c.LiveTTL)
	}
	if c.keyUntil(ctx, rec, until) {
		o.keyUntil = until
	}
}

// keyUntil makes the reservation rec names, if it is still rec's
// execution's, expire at until; it reports false when the store failed
// (logged: the next write of the record tries again).
func (c *Cluster) keyUntil(ctx context.Context, rec store.Record, until time.Time) bool {
	if rec.Reservation == "" {
		return true
	}
	r, err := c.Store.GetReservation(ctx, rec.Reservation)
	if err == nil && r.ID == rec.ID {
		r.ExpiresAt = until
		_, err = c.Store.UpdateReservation(ctx, r)
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
		c.log.Warn("keeping an idempotency key's reservation as long as its execution failed", "execution", rec.ID, "error", err.Error())
		return false
	}
	return true
}

// forgetKey gives back x's reservation when x will have no record here
// (adopt failed): a retry need not wait for it to be taken over.
func (c *Cluster) forgetKey(ctx context.Context, x Execution) {
	if x.Key() == "" {
		return
	}
	r, err := c.Store.GetReservation(ctx, ReservationKeyOf(x.Tenant(), x.Key()))
	if err == nil && r.ID == x.ID() {
		err = c.Store.DeleteReservation(ctx, r)
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
		c.log.Warn("giving back an idempotency key's reservation failed: a retry takes it over after a while", "execution", x.ID(), "error", err.Error())
	}
}

// deleteRecord deletes a settled execution's record this node evicted
// (and its key's reservation), unless the record is another node's now.
func (c *Cluster) deleteRecord(ctx context.Context, id string) error {
	r, err := c.Store.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.Owner != c.Node || (r.Status != protocol.StatusCompleted && r.Status != protocol.StatusFailed) {
		return nil // taken over, or continued, elsewhere
	}
	if r.Reservation != "" {
		k, err := c.Store.GetReservation(ctx, r.Reservation)
		if err == nil && k.ID == id {
			err = c.Store.DeleteReservation(ctx, k)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("deleting its idempotency key's reservation: %w", err)
		}
	}
	return c.Store.Delete(ctx, id)
}
