package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve/store"
	"github.com/ptcx/ptcx/serve/store/storetest"
)

func TestOpenNATS_errors(t *testing.T) {
	ns := storetest.NATS(t, func(o *storetest.Options) { o.Username, o.Password = "ptcx", "secret" })
	down := storetest.NATS(t, nil)
	downURL := down.ClientURL()
	down.Shutdown()
	down.WaitForShutdown()
	cfg := func(edit func(*store.NATSConfig)) store.NATSConfig {
		c := store.NATSConfig{URL: ns.ClientURL(), User: "ptcx", Password: "secret", RecordsBucket: "recs", SnapshotsBucket: "snaps"}
		if edit != nil {
			edit(&c)
		}
		return c
	}
	tests := []struct {
		name string
		cfg  store.NATSConfig
		want string
	}{
		{"unreachable", cfg(func(c *store.NATSConfig) { c.URL = downURL }), "cannot reach the NATS server"},
		{"unauthorised", cfg(func(c *store.NATSConfig) { c.Password = "wrong" }), "refused the credentials"},
		{"bucket missing", cfg(func(c *store.NATSConfig) { c.BindOnly = true }), `bucket "recs" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := store.OpenNATS(ctx, tt.cfg)
			require.ErrorIs(t, err, store.ErrUnavailable)
			require.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("created, then bound", func(t *testing.T) {
		ctx := context.Background()
		n, err := store.OpenNATS(ctx, cfg(nil))
		require.NoError(t, err)
		require.NoError(t, n.Close())
		n, err = store.OpenNATS(ctx, cfg(func(c *store.NATSConfig) { c.BindOnly = true }))
		require.NoError(t, err)
		require.NoError(t, n.Check(ctx))
		require.NoError(t, n.Close())
	})
}

func TestNATS_Check_serverLost(t *testing.T) {
	ns := storetest.NATS(t, nil)
	ctx := context.Background()
	n, err := store.OpenNATS(ctx, store.NATSConfig{URL: ns.ClientURL(), RecordsBucket: "recs", SnapshotsBucket: "snaps"})
	require.NoError(t, err)
	defer n.Close()
	require.NoError(t, n.Check(ctx))
	ns.Shutdown()
	ns.WaitForShutdown()
	require.Eventually(t, func() bool { return n.Check(ctx) != nil }, 10*time.Second, 50*time.Millisecond)
	err = n.Check(ctx)
	require.ErrorIs(t, err, store.ErrUnavailable)
	require.ErrorContains(t, err, "not connected")
}
