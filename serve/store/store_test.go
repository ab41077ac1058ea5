package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve/store"
	"github.com/ptcx/ptcx/serve/store/storetest"
)

// stores opens one of each kind, fresh.
func stores(t *testing.T) map[string]store.Store {
	t.Helper()
	dir, err := store.OpenDir(t.TempDir())
	require.NoError(t, err)
	unsynced, err := store.OpenDirUnsynced(t.TempDir())
	require.NoError(t, err)
	ns := storetest.NATS(t, nil)
	n, err := store.OpenNATS(context.Background(), store.NATSConfig{
		URL: ns.ClientURL(), RecordsBucket: "ptcx_test", SnapshotsBucket: "ptcx_test_snapshots", Name: "test",
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Close() })
	return map[string]store.Store{"memory": store.NewMemory(), "dir": dir, "dir-unsynced": unsynced, "nats": n}
}

func record(id string, ttl time.Duration) store.Record {
	return store.Record{ID: id, Tenant: "a", Owner: "n1", Status: "running", ExpiresAt: time.Now().Add(ttl),
		State: json.RawMessage(`{"id":"` + id + `","status":"running"}`)}
}

func TestStore_Update_revisionChecked(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			rev, err := s.Create(ctx, record("ex_1", time.Minute))
			require.NoError(t, err)
			_, err = s.Create(ctx, record("ex_1", time.Minute))
			require.ErrorIs(t, err, store.ErrExists)

			got, err := s.Get(ctx, "ex_1")
			require.NoError(t, err)
			require.Equal(t, rev, got.Revision)
			require.Equal(t, "n1", got.Owner)
			require.JSONEq(t, `{"id":"ex_1","status":"running"}`, string(got.State))

			got.Status = "pending"
			rev2, err := s.Update(ctx, got)
			require.NoError(t, err)
			require.NotEqual(t, rev, rev2)

			stale := got // still at rev
			stale.Owner = "n2"
			_, err = s.Update(ctx, stale)
			require.ErrorIs(t, err, store.ErrConflict)

			now, err := s.Get(ctx, "ex_1")
			require.NoError(t, err)
			require.Equal(t, "pending", now.Status)
			require.Equal(t, "n1", now.Owner)

			_, err = s.Get(ctx, "ex_missing")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = s.Get(ctx, "../etc/passwd")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = s.Create(ctx, record("../x", time.Minute))
			require.ErrorContains(t, err, "must match")

			list, err := s.List(ctx)
			require.NoError(t, err)
			require.Len(t, list, 1)
			require.Equal(t, "ex_1", list[0].ID)
			require.NoError(t, s.Check(ctx))
		})
	}
}

func TestStore_Update_racingClaimsOneWins(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			r := record("ex_race", time.Minute)
			r.Owner = ""
			_, err := s.Create(ctx, r)
			require.NoError(t, err)
			base, err := s.Get(ctx, "ex_race")
			require.NoError(t, err)
			const claimants = 8
			var wg sync.WaitGroup
			wins := make(chan string, claimants)
			for i := range claimants {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := base
					c.Owner = string(rune('a' + i))
					if _, err := s.Update(ctx, c); err == nil {
						wins <- c.Owner
					} else {
						require.ErrorIs(t, err, store.ErrConflict)
					}
				}()
			}
			wg.Wait()
			close(wins)
			var won []string
			for w := range wins {
				won = append(won, w)
			}
			require.Len(t, won, 1, "exactly one claim wins")
			got, err := s.Get(ctx, "ex_race")
			require.NoError(t, err)
			require.Equal(t, won[0], got.Owner)
		})
	}
}

func TestStore_Get_expiredRecordIsGone(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			_, err := s.Create(ctx, record("ex_short", time.Second))
			require.NoError(t, err)
			_, err = s.Create(ctx, record("ex_long", time.Hour))
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				_, err := s.Get(ctx, "ex_short")
				return err != nil
			}, 10*time.Second, 100*time.Millisecond)
			_, err = s.Get(ctx, "ex_short")
			require.ErrorIs(t, err, store.ErrNotFound)
			list, err := s.List(ctx)
			require.NoError(t, err)
			require.Len(t, list, 1)
			require.Equal(t, "ex_long", list[0].ID)
			// An expired id can be created anew.
			_, err = s.Create(ctx, record("ex_short", time.Minute))
			require.NoError(t, err)
		})
	}
}

func TestStore_DropLease_revisionChecked(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			until := time.Now().Add(-time.Second).UTC().Truncate(time.Millisecond)
			require.NoError(t, s.RenewLease(ctx, "node-1", until))
			require.NoError(t, s.RenewLease(ctx, "node-2", time.Now().Add(time.Hour)))
			ls, err := s.Leases(ctx)
			require.NoError(t, err)
			require.Len(t, ls, 2)
			var dead store.Lease
			for _, l := range ls {
				if l.Node == "node-1" {
					dead = l
				}
			}
			require.True(t, dead.Lost(time.Now(), 0))
			require.False(t, dead.Lost(time.Now(), time.Hour), "not within the margin")
			require.True(t, dead.Until.Equal(until))

			// node-1 renews before the reaper drops it: the drop conflicts.
			require.NoError(t, s.RenewLease(ctx, "node-1", time.Now().Add(time.Hour)))
			require.ErrorIs(t, s.DropLease(ctx, dead), store.ErrConflict)

			ls, err = s.Leases(ctx)
			require.NoError(t, err)
			for _, l := range ls {
				require.NoError(t, s.DropLease(ctx, l))
			}
			ls, err = s.Leases(ctx)
			require.NoError(t, err)
			require.Empty(t, ls)
			require.ErrorContains(t, s.RenewLease(ctx, "bad name", time.Now()), "must match")
		})
	}
}
