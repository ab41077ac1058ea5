package store

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"sync"
	"time"
)

// Memory is a Store in this process's memory: for tests, and for nodes
// that share nothing.
type Memory struct {
	mu      sync.Mutex
	rev     uint64
	records map[string]Record
	leases  map[string]Lease
	snaps   map[string][]byte
	sess    map[string]SessionRecord
	rsv     map[string]Reservation
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{records: map[string]Record{}, leases: map[string]Lease{}, snaps: map[string][]byte{}, sess: map[string]SessionRecord{},
		rsv: map[string]Reservation{}}
}

func (m *Memory) next() uint64 { m.rev++; return m.rev }

// Create implements Store.
func (m *Memory) Create(_ context.Context, r Record) (uint64, error) {
	if err := checkName("record id", r.ID); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.records[r.ID]; ok && live(old, time.Now()) {
		return 0, ErrExists
	}
	r.Revision = m.next()
	m.records[r.ID] = r
	return r.Revision, nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, id string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[id]
	if !ok || !live(r, time.Now()) {
		return Record{}, ErrNotFound
	}
	return r, nil
}

// Update implements Store.
func (m *Memory) Update(_ context.Context, r Record) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.records[r.ID]
	if !ok || !live(old, time.Now()) {
		return 0, ErrNotFound
	}
	if old.Revision != r.Revision {
		return 0, ErrConflict
	}
	r.Revision = m.next()
	m.records[r.ID] = r
	return r.Revision, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.records, id)
	return nil
}

// List implements Store.
func (m *Memory) List(_ context.Context) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	var out []Record
	for id, r := range m.records {
		if live(r, now) {
			out = append(out, r)
		} else {
			delete(m.records, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// RenewLease implements Store.
func (m *Memory) RenewLease(_ context.Context, node string, until time.Time) error {
	if err := checkName("node", node); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.leases[node] = Lease{Node: node, Until: until, Revision: m.next()}
	return nil
}

// Leases implements Store.
func (m *Memory) Leases(_ context.Context) ([]Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Lease, 0, len(m.leases))
	for _, l := range m.leases {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out, nil
}

// DropLease implements Store.
func (m *Memory) DropLease(_ context.Context, l Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.leases[l.Node]
	if !ok || cur.Revision != l.Revision {
		return ErrConflict
	}
	delete(m.leases, l.Node)
	return nil
}

// Check implements Store: memory is always usable.
func (m *Memory) Check(context.Context) error { return nil }

// Close implements Store.
func (m *Memory) Close() error { return nil }

// PutSnapshot implements Store.
func (m *Memory) PutSnapshot(_ context.Context, name string, data []byte) error {
	if err := checkName("snapshot", name); err != nil {
		return err
	}
	if err := checkSnapshot(name, int64(len(data))); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.snaps[name] = bytes.Clone(data)
	return nil
}

// GetSnapshot implements Store.
func (m *Memory) GetSnapshot(_ context.Context, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.snaps[name]
	if !ok {
		return nil, ErrNotFound
	}
	return bytes.Clone(b), nil
}

// DeleteSnapshot implements Store.
func (m *Memory) DeleteSnapshot(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.snaps, name)
	return nil
}

// CreateSession implements Store.
func (m *Memory) CreateSession(_ context.Context, r SessionRecord) (uint64, error) {
	if err := checkName("session key", r.Key); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.sess[r.Key]; ok && liveSession(old, time.Now()) {
		return 0, ErrExists
	}
	r.Revision = m.next()
	m.sess[r.Key] = r
	return r.Revision, nil
}

// GetSession implements Store.
func (m *Memory) GetSession(_ context.Context, key string) (SessionRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.sess[key]
	if !ok || !liveSession(r, time.Now()) {
		return SessionRecord{}, ErrNotFound
	}
	return r, nil
}

// UpdateSession implements Store.
func (m *Memory) UpdateSession(_ context.Context, r SessionRecord) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.sess[r.Key]
	if !ok || !liveSession(old, time.Now()) {
		return 0, ErrNotFound
	}
	if old.Revision != r.Revision {
		return 0, ErrConflict
	}
	r.Revision = m.next()
	m.sess[r.Key] = r
	return r.Revision, nil
}

// DeleteSession implements Store.
func (m *Memory) DeleteSession(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sess, key)
	return nil
}

// CountSessions implements Store.
func (m *Memory) CountSessions(_ context.Context, prefix string) (int, error) {
	if err := checkSessionPrefix(prefix); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now, n := time.Now(), 0
	for k, r := range m.sess {
		if strings.HasPrefix(k, prefix) && liveSession(r, now) {
			n++
		}
	}
	return n, nil
}
