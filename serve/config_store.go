package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ptcx/ptcx/serve/internal/cluster"
	"github.com/ptcx/ptcx/serve/store"
)

// The store kinds, the lease bounds and the cluster's default names.
const (
	storeDir              = "dir"
	storeNATS             = "nats"
	DefaultLease          = 10 * time.Second
	MinLease              = 1 * time.Second
	MaxLease              = 5 * time.Minute
	DefaultRecordsBucket  = "ptcx_executions"
	DefaultSnapshotBucket = "ptcx_snapshots"
	DefaultEventsStream   = "PTCX_EVENTS"
	DefaultWorkStream     = "PTCX_WORK"
	DefaultSubject        = "ptcx"
)

// StoreConfig names where execution records live. In a config file it is
// either a string — "memory", "dir:PATH" or "nats://HOST:PORT" (a
// comma-separated list for a NATS cluster) — or an object with kind and
// the fields below. memory (the default) keeps everything in this
// process, shared with no one; dir keeps records in a local directory
// (one node; they survive a restart); nats shares them between every node
// of a cluster (docs/cluster.md).
type StoreConfig struct {
	Kind string `json:"kind" yaml:"kind"`
	// Path is the dir store's directory (relative to the config file).
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
	// URL is the NATS server(s), nats://HOST:PORT[,nats://HOST:PORT...].
	URL string `json:"url,omitempty" yaml:"url,omitempty"`
	// Credentials is a NATS .creds file; User and Password, or Token,
	// are the other ways to authenticate. All optional.
	Credentials string `json:"credentials,omitempty" yaml:"credentials,omitempty"`
	User        string `json:"user,omitempty" yaml:"user,omitempty"`
	Password    string `json:"password,omitempty" yaml:"password,omitempty"`
	Token       string `json:"token,omitempty" yaml:"token,omitempty"`
	// RecordsBucket is the KV bucket of records and leases (default
	// ptcx_executions); SnapshotsBucket the Object Store bucket reserved
	// for snapshots (default ptcx_snapshots).
	RecordsBucket   string `json:"records_bucket,omitempty" yaml:"records_bucket,omitempty"`
	SnapshotsBucket string `json:"snapshots_bucket,omitempty" yaml:"snapshots_bucket,omitempty"`
	// EventsStream is the stream of execution events (default
	// PTCX_EVENTS); WorkStream the overflow work queue (default PTCX_WORK).
	EventsStream string `json:"events_stream,omitempty" yaml:"events_stream,omitempty"`
	WorkStream   string `json:"work_stream,omitempty" yaml:"work_stream,omitempty"`
	// Subject prefixes every subject the cluster uses (default ptcx).
	Subject string `json:"subject,omitempty" yaml:"subject,omitempty"`
	// BindOnly uses existing buckets and streams, failing when one is
	// missing, instead of creating them.
	BindOnly bool `json:"bind_only,omitempty" yaml:"bind_only,omitempty"`
}

type storeFields StoreConfig // without the methods, for decoding

// UnmarshalJSON accepts the string form or the object (unknown fields are
// errors).
func (sc *StoreConfig) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		return sc.parse(s)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f storeFields
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("field store: %w", err)
	}
	*sc = StoreConfig(f)
	return nil
}

// UnmarshalYAML accepts the string form or the mapping (unknown fields
// are errors).
func (sc *StoreConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return sc.parse(n.Value)
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f storeFields
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("field store: %w", err)
	}
	*sc = StoreConfig(f)
	return nil
}

func (sc *StoreConfig) parse(s string) error {
	switch {
	case s == storeMemory:
		*sc = StoreConfig{Kind: storeMemory}
	case strings.HasPrefix(s, "dir:"):
		*sc = StoreConfig{Kind: storeDir, Path: strings.TrimPrefix(s, "dir:")}
	case strings.HasPrefix(s, "nats://") || strings.HasPrefix(s, "tls://"):
		*sc = StoreConfig{Kind: storeNATS, URL: s}
	default:
		return fmt.Errorf("field store: %q: want \"memory\", \"dir:PATH\" or \"nats://HOST:PORT\"", s)
	}
	return nil
}

func (sc *StoreConfig) validate() error {
	switch sc.Kind {
	case storeMemory:
	case storeDir:
		if sc.Path == "" {
			return errors.New(`field store.path: required for the dir store (e.g. "dir:/var/lib/ptcx")`)
		}
	case storeNATS:
		if sc.URL == "" {
			return errors.New(`field store.url: required for the nats store (e.g. "nats://127.0.0.1:4222")`)
		}
		if sc.Token != "" && (sc.User != "" || sc.Credentials != "") {
			return errors.New("field store.token: give one of token, user/password or credentials")
		}
	default:
		return fmt.Errorf("field store.kind: %q: want memory, dir or nats", sc.Kind)
	}
	return nil
}

func (sc *StoreConfig) names() (records, snapshots, events, work, subject string) {
	return orName(sc.RecordsBucket, DefaultRecordsBucket), orName(sc.SnapshotsBucket, DefaultSnapshotBucket),
		orName(sc.EventsStream, DefaultEventsStream), orName(sc.WorkStream, DefaultWorkStream), orName(sc.Subject, DefaultSubject)
}

func orName(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// clusterSettings is what a cluster of this config reads of it (a store
// of kind dir or nats): its paths resolved, its names defaulted.
func (c *Config) clusterSettings() cluster.Settings {
	sc := c.Store
	records, snapshots, events, work, subject := sc.names()
	cs := cluster.Settings{Kind: sc.Kind, Events: events, Work: work, Subject: subject, BindOnly: sc.BindOnly,
		Node: c.node(), Lease: c.lease(), MaxWait: c.maxWait(), Retention: c.retention(), Overflow: c.Overflow,
		KeepAlive: sseKeepAlive}
	cs.LiveTTL = ceiling(c.Tenants).WallTime + cs.Retention
	switch sc.Kind {
	case storeDir:
		cs.Dir = c.resolve(sc.Path)
	case storeNATS:
		cs.NATS = &store.NATSConfig{URL: sc.URL, Credentials: c.resolve(sc.Credentials),
			User: sc.User, Password: sc.Password, Token: sc.Token, Name: "ptcx-" + cs.Node,
			RecordsBucket: records, SnapshotsBucket: snapshots, BindOnly: sc.BindOnly}
	}
	return cs
}

// validateCluster checks node, lease and overflow.
func (c *Config) validateCluster() error {
	if c.Lease != "" {
		d, err := time.ParseDuration(c.Lease)
		if err != nil {
			return fmt.Errorf("field lease: %q is not a Go duration such as \"10s\"", c.Lease)
		}
		if d < MinLease || d > MaxLease {
			return fmt.Errorf("field lease: %s is outside [%s, %s]", d, MinLease, MaxLease)
		}
	}
	if c.Node != "" && !nodeName.MatchString(c.Node) {
		return fmt.Errorf("field node: %q must match %s", c.Node, nodeName)
	}
	if c.Overflow && (c.Store == nil || c.Store.Kind != storeNATS) {
		return errors.New("field overflow: needs a nats store (store: \"nats://HOST:PORT\"): the queue is a JetStream stream")
	}
	return nil
}

func (c *Config) lease() time.Duration {
	d, err := time.ParseDuration(c.Lease)
	if err != nil || c.Lease == "" {
		return DefaultLease
	}
	return d
}

// node is the node's name: Config.Node, else the host name and the pid.
func (c *Config) node() string {
	if c.Node != "" {
		return c.Node
	}
	h, err := os.Hostname()
	h, _, _ = strings.Cut(h, ".")
	if err != nil || !nodeName.MatchString(h) {
		h = "node"
	}
	return fmt.Sprintf("%s-%d", h, os.Getpid())
}
