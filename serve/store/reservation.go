package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reservation is an idempotency key held for one execution (ptcx serve's
// idempotency_key across nodes): the node that creates it runs the
// execution; a node that finds it answers with the execution it names.
// Like a Record, every update is checked against its revision, so of nodes
// reserving one key at once exactly one wins.
type Reservation struct {
	// Key is the reservation's key (as a record id: checkName), derived by
	// the caller from the tenant and the idempotency key, hashed: a store
	// key never reveals either.
	Key    string `json:"key"`
	Tenant string `json:"tenant"`
	// ID is the execution the key is held for.
	ID string `json:"id"`
	// Sum is the request body's SHA-256 (hex): the same key with another
	// body is told apart.
	Sum string `json:"sum"`
	// Node is the node that reserved it.
	Node string `json:"node"`
	// Created is when it was reserved (or taken over).
	Created time.Time `json:"created"`
	// ExpiresAt is when it goes (the store drops it then).
	ExpiresAt time.Time `json:"expires_at"`
	// Revision is the store's revision of this version (not stored).
	Revision uint64 `json:"-"`
}

// Reservations is the part of a Store that keeps idempotency keys'
// reservations, beside the execution records (List never returns them).
type Reservations interface {
	// Reserve writes a new reservation (ErrExists when a live one holds the
	// key) and returns its revision.
	Reserve(ctx context.Context, r Reservation) (uint64, error)
	// GetReservation returns the key's current reservation (ErrNotFound).
	GetReservation(ctx context.Context, key string) (Reservation, error)
	// UpdateReservation replaces the reservation if r.Revision is still its
	// current revision (ErrConflict otherwise, ErrNotFound if it is gone)
	// and returns the new revision.
	UpdateReservation(ctx context.Context, r Reservation) (uint64, error)
	// DeleteReservation removes the reservation if r.Revision is still its
	// current revision: ErrConflict when the key holds another one, or
	// none.
	DeleteReservation(ctx context.Context, r Reservation) error
}

func liveReservation(r Reservation, now time.Time) bool {
	return r.ExpiresAt.IsZero() || now.Before(r.ExpiresAt)
}

// Reserve implements Store.
func (m *Memory) Reserve(_ context.Context, r Reservation) (uint64, error) {
	if err := checkName("reservation key", r.Key); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.rsv[r.Key]; ok && liveReservation(old, time.Now()) {
		return 0, ErrExists
	}
	r.Revision = m.next()
	m.rsv[r.Key] = r
	return r.Revision, nil
}

// GetReservation implements Store.
func (m *Memory) GetReservation(_ context.Context, key string) (Reservation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rsv[key]
	if !ok || !liveReservation(r, time.Now()) {
		return Reservation{}, ErrNotFound
	}
	return r, nil
}

// UpdateReservation implements Store.
func (m *Memory) UpdateReservation(_ context.Context, r Reservation) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.rsv[r.Key]
	if !ok || !liveReservation(old, time.Now()) {
		return 0, ErrNotFound
	}
	if old.Revision != r.Revision {
		return 0, ErrConflict
	}
	r.Revision = m.next()
	m.rsv[r.Key] = r
	return r.Revision, nil
}

// DeleteReservation implements Store.
func (m *Memory) DeleteReservation(_ context.Context, r Reservation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.rsv[r.Key]
	if !ok || old.Revision != r.Revision {
		return ErrConflict
	}
	delete(m.rsv, r.Key)
	return nil
}

func (d *Dir) reservationPath(key string) string {
	return filepath.Join(d.root, "keys", key+".json")
}

// Reserve implements Store: one file per key under keys/.
func (d *Dir) Reserve(_ context.Context, r Reservation) (uint64, error) {
	if err := checkName("reservation key", r.Key); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old, err := readEntry[Reservation](d.reservationPath(r.Key))
	switch {
	case err == nil && liveReservation(old.Value, time.Now()):
		return 0, ErrExists
	case err != nil && !errors.Is(err, ErrNotFound):
		return 0, err
	}
	rev := old.Revision + 1
	return rev, writeEntry(d.reservationPath(r.Key), dirEntry[Reservation]{rev, r})
}

// GetReservation implements Store.
func (d *Dir) GetReservation(_ context.Context, key string) (Reservation, error) {
	if checkName("reservation key", key) != nil {
		return Reservation{}, ErrNotFound
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e, err := readEntry[Reservation](d.reservationPath(key))
	if err != nil {
		return Reservation{}, err
	}
	if !liveReservation(e.Value, time.Now()) {
		return Reservation{}, ErrNotFound
	}
	e.Value.Revision = e.Revision
	return e.Value, nil
}

// UpdateReservation implements Store.
func (d *Dir) UpdateReservation(_ context.Context, r Reservation) (uint64, error) {
	if err := checkName("reservation key", r.Key); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old, err := readEntry[Reservation](d.reservationPath(r.Key))
	if err != nil {
		return 0, err
	}
	if !liveReservation(old.Value, time.Now()) {
		return 0, ErrNotFound
	}
	if old.Revision != r.Revision {
		return 0, ErrConflict
	}
	rev := old.Revision + 1
	return rev, writeEntry(d.reservationPath(r.Key), dirEntry[Reservation]{rev, r})
}

// DeleteReservation implements Store: the file is overwritten with an
// expired reservation of the next revision (a tombstone), so that the
// key's revisions only grow and a reader holding a deleted one can never
// update the key's next reservation.
func (d *Dir) DeleteReservation(_ context.Context, r Reservation) error {
	if err := checkName("reservation key", r.Key); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cur, err := readEntry[Reservation](d.reservationPath(r.Key))
	if errors.Is(err, ErrNotFound) || (err == nil && (cur.Revision != r.Revision || !liveReservation(cur.Value, time.Now()))) {
		return ErrConflict
	}
	if err != nil {
		return err
	}
	return writeEntry(d.reservationPath(r.Key), dirEntry[Reservation]{cur.Revision + 1, Reservation{Key: r.Key, ExpiresAt: time.Unix(1, 0)}})
}

// reservationKey prefixes reservations in the NATS records bucket.
const reservationKey = "ik."

func reservationTTL(r Reservation) time.Duration {
	if r.ExpiresAt.IsZero() {
		return 0
	}
	return max((time.Until(r.ExpiresAt) + time.Second - 1).Truncate(time.Second), time.Second)
}

// Reserve implements Store: a KV create under ik.KEY with the
// reservation's TTL. One past its ExpiresAt that the server has not
// dropped yet is replaced; a live one is ErrExists.
func (n *NATS) Reserve(ctx context.Context, r Reservation) (uint64, error) {
	if err := checkName("reservation key", r.Key); err != nil {
		return 0, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	var opts []jetstream.KVCreateOpt
	if d := reservationTTL(r); d > 0 {
		opts = append(opts, jetstream.KeyTTL(d))
	}
	for range 3 { // the server may drop an expired one meanwhile: then the create is tried again
		rev, err := n.kv.Create(ctx, reservationKey+r.Key, b, opts...)
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return rev, n.wrap(err)
		}
		e, err := n.kv.Get(ctx, reservationKey+r.Key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			return 0, n.wrap(err)
		}
		var old Reservation
		if json.Unmarshal(e.Value(), &old) == nil && liveReservation(old, time.Now()) {
			return 0, ErrExists
		}
		r.Revision = e.Revision()
		rev, err = n.UpdateReservation(ctx, r)
		if !errors.Is(err, ErrConflict) {
			return rev, err
		}
	}
	return 0, ErrExists
}

// GetReservation implements Store.
func (n *NATS) GetReservation(ctx context.Context, key string) (Reservation, error) {
	if checkName("reservation key", key) != nil {
		return Reservation{}, ErrNotFound
	}
	e, err := n.kv.Get(ctx, reservationKey+key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Reservation{}, ErrNotFound
	}
	if err != nil {
		return Reservation{}, n.wrap(err)
	}
	var r Reservation
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return Reservation{}, fmt.Errorf("store: reservation %s is not JSON: %w", key, err)
	}
	if !liveReservation(r, time.Now()) {
		return Reservation{}, ErrNotFound
	}
	r.Revision = e.Revision()
	return r, nil
}

// UpdateReservation implements Store: a publish expecting the key's last
// revision, carrying the reservation's TTL (as Update).
func (n *NATS) UpdateReservation(ctx context.Context, r Reservation) (uint64, error) {
	if err := checkName("reservation key", r.Key); err != nil {
		return 0, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	opts := []jetstream.PublishOpt{jetstream.WithExpectLastSequencePerSubject(r.Revision)}
	if d := reservationTTL(r); d > 0 {
		opts = append(opts, jetstream.WithMsgTTL(d))
	}
	ack, err := n.js.PublishMsg(ctx, &nats.Msg{Subject: "$KV." + n.cfg.RecordsBucket + "." + reservationKey + r.Key, Data: b}, opts...)
	if err != nil {
		if isWrongLastSequence(err) {
			return 0, ErrConflict
		}
		return 0, n.wrap(err)
	}
	return ack.Sequence, nil
}

// DeleteReservation implements Store: a purge expecting the key's last
// revision, its marker dropped a second later.
func (n *NATS) DeleteReservation(ctx context.Context, r Reservation) error {
	if err := checkName("reservation key", r.Key); err != nil {
		return err
	}
	err := n.kv.Purge(ctx, reservationKey+r.Key, jetstream.LastRevision(r.Revision), jetstream.PurgeTTL(time.Second))
	if isWrongLastSequence(err) {
		return ErrConflict
	}
	return n.wrap(err)
}
