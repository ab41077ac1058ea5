package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSConfig is how to reach a NATS server with JetStream and which
// buckets to use.
type NATSConfig struct {
	// URL is nats://HOST:PORT (a comma-separated list for a cluster).
	URL string
	// Credentials is a .creds file (JWT and NKey), optional.
	Credentials string
	// User and Password, or Token, optional.
	User, Password, Token string
	// Name names the connection in the server's monitoring (the node).
	Name string
	// RecordsBucket is the KV bucket of records and leases.
	RecordsBucket string
	// SnapshotsBucket is the Object Store bucket of parked executions'
	// snapshots (they exceed KV's value size).
	SnapshotsBucket string
	// BindOnly uses existing buckets and fails when one is missing,
	// instead of creating it (for accounts without the right to).
	BindOnly bool
}

// The key prefixes of the records bucket.
const (
	recordKey  = "ex."
	leaseKey   = "node."
	sessionKey = "ss."
)

// NATS is a Store in a JetStream KV bucket shared by every node: records
// under ex.ID, session records under ss.KEY and leases under node.NAME. Each record write carries a
// per-message TTL, so the server drops it at its ExpiresAt.
type NATS struct {
	cfg NATSConfig
	nc  *nats.Conn
	js  jetstream.JetStream
	kv  jetstream.KeyValue
	obj jetstream.ObjectStore
}

const connectTimeout = 5 * time.Second

// OpenNATS connects and binds (or creates) the buckets. Its errors say
// which of unreachable, unauthorised or bucket missing it met.
func OpenNATS(ctx context.Context, cfg NATSConfig) (*NATS, error) {
	opts := []nats.Option{nats.Name(cfg.Name), nats.Timeout(connectTimeout), nats.MaxReconnects(-1)}
	if cfg.Credentials != "" {
		opts = append(opts, nats.UserCredentials(cfg.Credentials))
	}
	if cfg.User != "" {
		opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
	}
	if cfg.Token != "" {
		opts = append(opts, nats.Token(cfg.Token))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, connectError(cfg.URL, err)
	}
	n := &NATS{cfg: cfg, nc: nc}
	if err := n.bind(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return n, nil
}

func connectError(url string, err error) error {
	switch {
	case errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked):
		return fmt.Errorf("%w: the NATS server at %s refused the credentials (check store.credentials, store.user/password or store.token): %w", ErrUnavailable, url, err)
	case errors.Is(err, nats.ErrNoServers) || errors.Is(err, nats.ErrTimeout):
		return fmt.Errorf("%w: cannot reach the NATS server at %s (is it running, and is store.url right?): %w", ErrUnavailable, url, err)
	}
	return fmt.Errorf("%w: connecting to NATS at %s: %w", ErrUnavailable, url, err)
}

func (n *NATS) bind(ctx context.Context) error {
	js, err := jetstream.New(n.nc)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	n.js = js
	if n.cfg.BindOnly {
		if n.kv, err = js.KeyValue(ctx, n.cfg.RecordsBucket); err != nil {
			return bucketError("KV", n.cfg.RecordsBucket, err)
		}
		if n.obj, err = js.ObjectStore(ctx, n.cfg.SnapshotsBucket); err != nil {
			return bucketError("Object Store", n.cfg.SnapshotsBucket, err)
		}
		return nil
	}
	if n.kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: n.cfg.RecordsBucket, Description: "ptcx serve: execution records and node leases",
		History: 1, Storage: jetstream.FileStorage, LimitMarkerTTL: time.Second,
	}); err != nil {
		return bucketError("KV", n.cfg.RecordsBucket, err)
	}
	if n.obj, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: n.cfg.SnapshotsBucket, Description: "ptcx serve: parked execution snapshots",
		Storage: jetstream.FileStorage,
	}); err != nil {
		return bucketError("Object Store", n.cfg.SnapshotsBucket, err)
	}
	return nil
}

func bucketError(kind, bucket string, err error) error {
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound):
		return fmt.Errorf("%w: the JetStream %s bucket %q does not exist: create it, or drop store.bind_only to let ptcx create it: %w", ErrUnavailable, kind, bucket, err)
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return fmt.Errorf("%w: JetStream is not enabled on the NATS server (or for this account): start nats-server with -js: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("%w: the JetStream %s bucket %q: %w", ErrUnavailable, kind, bucket, err)
}

// Conn is the connection, for the subjects the cluster uses beside the
// store (events, requests to a node, the overflow queue).
func (n *NATS) Conn() *nats.Conn { return n.nc }

// JetStream is the connection's JetStream context.
func (n *NATS) JetStream() jetstream.JetStream { return n.js }

// ttl is how long until r expires, in whole seconds (JetStream's unit),
// at least one.
func ttl(r Record) time.Duration {
	if r.ExpiresAt.IsZero() {
		return 0
	}
	return max((time.Until(r.ExpiresAt) + time.Second - 1).Truncate(time.Second), time.Second)
}

// Create implements Store.
func (n *NATS) Create(ctx context.Context, r Record) (uint64, error) {
	if err := checkName("record id", r.ID); err != nil {
		return 0, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	var opts []jetstream.KVCreateOpt
	if d := ttl(r); d > 0 {
		opts = append(opts, jetstream.KeyTTL(d))
	}
	rev, err := n.kv.Create(ctx, recordKey+r.ID, b, opts...)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return n.replaceExpired(ctx, r)
	}
	return rev, n.wrap(err)
}

// replaceExpired writes r over a record past its ExpiresAt that the
// server has not dropped yet (its TTL is in whole seconds); a live one is
// ErrExists.
func (n *NATS) replaceExpired(ctx context.Context, r Record) (uint64, error) {
	e, err := n.kv.Get(ctx, recordKey+r.ID)
	if err != nil {
		return 0, n.wrap(err)
	}
	var old Record
	if json.Unmarshal(e.Value(), &old) == nil && live(old, time.Now()) {
		return 0, ErrExists
	}
	r.Revision = e.Revision()
	rev, err := n.Update(ctx, r)
	if errors.Is(err, ErrConflict) {
		return 0, ErrExists
	}
	return rev, err
}

// Get implements Store.
func (n *NATS) Get(ctx context.Context, id string) (Record, error) {
	if checkName("record id", id) != nil {
		return Record{}, ErrNotFound
	}
	e, err := n.kv.Get(ctx, recordKey+id)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, n.wrap(err)
	}
	var r Record
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return Record{}, fmt.Errorf("store: record %s is not JSON: %w", id, err)
	}
	if !live(r, time.Now()) {
		return Record{}, ErrNotFound
	}
	r.Revision = e.Revision()
	return r, nil
}

// Update implements Store: a publish on the key's subject expecting its
// last revision, carrying the record's TTL.
func (n *NATS) Update(ctx context.Context, r Record) (uint64, error) {
	if err := checkName("record id", r.ID); err != nil {
		return 0, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	opts := []jetstream.PublishOpt{jetstream.WithExpectLastSequencePerSubject(r.Revision)}
	if d := ttl(r); d > 0 {
		opts = append(opts, jetstream.WithMsgTTL(d))
	}
	ack, err := n.js.PublishMsg(ctx, &nats.Msg{Subject: "$KV." + n.cfg.RecordsBucket + "." + recordKey + r.ID, Data: b}, opts...)
	if err != nil {
		if isWrongLastSequence(err) {
			return 0, ErrConflict
		}
		return 0, n.wrap(err)
	}
	return ack.Sequence, nil
}

func isWrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == 10164)
}

// Delete implements Store (a purge: no history is kept).
func (n *NATS) Delete(ctx context.Context, id string) error {
	if checkName("record id", id) != nil {
		return nil
	}
	return n.wrap(n.kv.Purge(ctx, recordKey+id))
}

// List implements Store.
func (n *NATS) List(ctx context.Context) ([]Record, error) {
	keys, err := n.keys(ctx, recordKey)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, k := range keys {
		r, err := n.Get(ctx, k[len(recordKey):])
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (n *NATS) keys(ctx context.Context, prefix string) ([]string, error) {
	l, err := n.kv.ListKeysFiltered(ctx, prefix+">")
	if err != nil {
		return nil, n.wrap(err)
	}
	defer func() { _ = l.Stop() }()
	var out []string
	for k := range l.Keys() {
		out = append(out, k)
	}
	return out, nil
}

// RenewLease implements Store.
func (n *NATS) RenewLease(ctx context.Context, node string, until time.Time) error {
	if err := checkName("node", node); err != nil {
		return err
	}
	b, err := json.Marshal(Lease{Node: node, Until: until})
	if err != nil {
		return err
	}
	_, err = n.kv.Put(ctx, leaseKey+node, b)
	return n.wrap(err)
}

// Leases implements Store.
func (n *NATS) Leases(ctx context.Context) ([]Lease, error) {
	keys, err := n.keys(ctx, leaseKey)
	if err != nil {
		return nil, err
	}
	var out []Lease
	for _, k := range keys {
		e, err := n.kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			return nil, n.wrap(err)
		}
		var l Lease
		if err := json.Unmarshal(e.Value(), &l); err != nil {
			return nil, fmt.Errorf("store: lease %s is not JSON: %w", k, err)
		}
		l.Revision = e.Revision()
		out = append(out, l)
	}
	return out, nil
}

// DropLease implements Store.
func (n *NATS) DropLease(ctx context.Context, l Lease) error {
	if err := checkName("node", l.Node); err != nil {
		return err
	}
	err := n.kv.Delete(ctx, leaseKey+l.Node, jetstream.LastRevision(l.Revision))
	if isWrongLastSequence(err) {
		return ErrConflict
	}
	return n.wrap(err)
}

// Check implements Store: connected, and both buckets there.
func (n *NATS) Check(ctx context.Context) error {
	if st := n.nc.Status(); st != nats.CONNECTED {
		return fmt.Errorf("%w: not connected to the NATS server at %s (%s)", ErrUnavailable, n.cfg.URL, st)
	}
	if _, err := n.js.KeyValue(ctx, n.cfg.RecordsBucket); err != nil {
		return bucketError("KV", n.cfg.RecordsBucket, err)
	}
	if _, err := n.js.ObjectStore(ctx, n.cfg.SnapshotsBucket); err != nil {
		return bucketError("Object Store", n.cfg.SnapshotsBucket, err)
	}
	return nil
}

// Close implements Store.
func (n *NATS) Close() error {
	n.nc.Close()
	return nil
}

func (n *NATS) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: NATS at %s: %w", ErrUnavailable, n.cfg.URL, err)
}

// PutSnapshot implements Store: an object of the snapshots bucket (the
// Object Store writes it in chunks and makes it visible once whole).
func (n *NATS) PutSnapshot(ctx context.Context, name string, data []byte) error {
	if err := checkName("snapshot", name); err != nil {
		return err
	}
	if err := checkSnapshot(name, int64(len(data))); err != nil {
		return err
	}
	_, err := n.obj.PutBytes(ctx, name, data)
	return n.wrap(err)
}

// GetSnapshot implements Store.
func (n *NATS) GetSnapshot(ctx context.Context, name string) ([]byte, error) {
	if checkName("snapshot", name) != nil {
		return nil, ErrNotFound
	}
	info, err := n.obj.GetInfo(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, n.wrap(err)
	}
	if err := checkSnapshot(name, int64(info.Size)); err != nil {
		return nil, err
	}
	b, err := n.obj.GetBytes(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, ErrNotFound
	}
	return b, n.wrap(err)
}

// DeleteSnapshot implements Store.
func (n *NATS) DeleteSnapshot(ctx context.Context, name string) error {
	if checkName("snapshot", name) != nil {
		return nil
	}
	err := n.obj.Delete(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil
	}
	return n.wrap(err)
}

// sessionTTL is how long until r expires, as ttl.
func sessionTTL(r SessionRecord) time.Duration {
	if r.ExpiresAt.IsZero() {
		return 0
	}
	return max((time.Until(r.ExpiresAt) + time.Second - 1).Truncate(time.Second), time.Second)
}

// CreateSession implements Store: a KV create under ss.KEY, with the
// record's TTL.
func (n *NATS) CreateSession(ctx context.Context, r SessionRecord) (uint64, error) {
	if err := checkName("session key", r.Key); err != nil {
		return 0, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	var opts []jetstream.KVCreateOpt
	if d := sessionTTL(r); d > 0 {
		opts = append(opts, jetstream.KeyTTL(d))
	}
	// A record past its ExpiresAt that the server has not dropped yet is
	// replaced (it may drop it meanwhile: then the create is tried again);
	// a live one is ErrExists.
	for range 3 {
		rev, err := n.kv.Create(ctx, sessionKey+r.Key, b, opts...)
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return rev, n.wrap(err)
		}
		old, err := n.kv.Get(ctx, sessionKey+r.Key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			return 0, n.wrap(err)
		}
		var prev SessionRecord
		if json.Unmarshal(old.Value(), &prev) == nil && liveSession(prev, time.Now()) {
			return 0, ErrExists
		}
		r.Revision = old.Revision()
		rev, err = n.UpdateSession(ctx, r)
		if !errors.Is(err, ErrConflict) {
			return rev, err
		}
	}
	return 0, ErrExists
}

// GetSession implements Store.
func (n *NATS) GetSession(ctx context.Context, key string) (SessionRecord, error) {
	if checkName("session key", key) != nil {
		return SessionRecord{}, ErrNotFound
	}
	e, err := n.kv.Get(ctx, sessionKey+key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return SessionRecord{}, ErrNotFound
	}
	if err != nil {
		return SessionRecord{}, n.wrap(err)
	}
	var r SessionRecord
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return SessionRecord{}, fmt.Errorf("store: session record %s is not JSON: %w", key, err)
	}
	if !liveSession(r, time.Now()) {
		return SessionRecord{}, ErrNotFound
	}
	r.Revision = e.Revision()
	return r, nil
}

// UpdateSession implements Store: a publish expecting the key's last
// revision, carrying the record's TTL (as Update).
func (n *NATS) UpdateSession(ctx context.Context, r SessionRecord) (uint64, error) {
	if err := checkName("session key", r.Key); err != nil {
		return 0, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	opts := []jetstream.PublishOpt{jetstream.WithExpectLastSequencePerSubject(r.Revision)}
	if d := sessionTTL(r); d > 0 {
		opts = append(opts, jetstream.WithMsgTTL(d))
	}
	ack, err := n.js.PublishMsg(ctx, &nats.Msg{Subject: "$KV." + n.cfg.RecordsBucket + "." + sessionKey + r.Key, Data: b}, opts...)
	if err != nil {
		if isWrongLastSequence(err) {
			return 0, ErrConflict
		}
		return 0, n.wrap(err)
	}
	return ack.Sequence, nil
}

// DeleteSession implements Store (a purge).
func (n *NATS) DeleteSession(ctx context.Context, key string) error {
	if checkName("session key", key) != nil {
		return nil
	}
	return n.wrap(n.kv.Purge(ctx, sessionKey+key))
}

// CountSessions implements Store: the latest values under ss.PREFIX>
// (one watcher's initial values, deletes and purges left out), counting
// those not past their ExpiresAt (the server drops them within a second).
func (n *NATS) CountSessions(ctx context.Context, prefix string) (int, error) {
	if err := checkSessionPrefix(prefix); err != nil {
		return 0, err
	}
	w, err := n.kv.WatchFiltered(ctx, []string{sessionKey + prefix + ">"}, jetstream.IgnoreDeletes())
	if err != nil {
		return 0, n.wrap(err)
	}
	defer func() { _ = w.Stop() }()
	now, count := time.Now(), 0
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return 0, fmt.Errorf("%w: the watcher of session records stopped", ErrUnavailable)
			}
			if e == nil { // the initial values are all in
				return count, nil
			}
			var r SessionRecord
			if json.Unmarshal(e.Value(), &r) == nil && liveSession(r, now) {
				count++
			}
		case <-ctx.Done():
			return 0, n.wrap(ctx.Err())
		}
	}
}
