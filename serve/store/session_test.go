package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve/store"
)

func sessionRecord(key string, ttl time.Duration) store.SessionRecord {
	return store.SessionRecord{Key: key, Tenant: "a", Name: "chat", Running: "n1", ExpiresAt: time.Now().Add(ttl)}
}

func TestStore_UpdateSession_revisionChecked(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			rev, err := s.CreateSession(ctx, sessionRecord("aa.bb", time.Minute))
			require.NoError(t, err)
			_, err = s.CreateSession(ctx, sessionRecord("aa.bb", time.Minute))
			require.ErrorIs(t, err, store.ErrExists)

			got, err := s.GetSession(ctx, "aa.bb")
			require.NoError(t, err)
			require.Equal(t, rev, got.Revision)
			require.Equal(t, "n1", got.Running)
			require.Equal(t, "chat", got.Name)

			got.Running, got.LastNode, got.Snapshot = "", "n1", "ss-1"
			rev2, err := s.UpdateSession(ctx, got)
			require.NoError(t, err)
			require.NotEqual(t, rev, rev2)
			stale := got
			stale.Running = "n2"
			_, err = s.UpdateSession(ctx, stale)
			require.ErrorIs(t, err, store.ErrConflict)
			now, err := s.GetSession(ctx, "aa.bb")
			require.NoError(t, err)
			require.Equal(t, "", now.Running)
			require.Equal(t, "ss-1", now.Snapshot)

			// Session records are not execution records.
			list, err := s.List(ctx)
			require.NoError(t, err)
			require.Empty(t, list)
			_, err = s.Get(ctx, "aa.bb")
			require.ErrorIs(t, err, store.ErrNotFound)

			_, err = s.GetSession(ctx, "../etc/passwd")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = s.CreateSession(ctx, sessionRecord("../x", time.Minute))
			require.ErrorContains(t, err, "must match")

			require.NoError(t, s.DeleteSession(ctx, "aa.bb"))
			require.NoError(t, s.DeleteSession(ctx, "aa.bb"))
			_, err = s.GetSession(ctx, "aa.bb")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = s.CreateSession(ctx, sessionRecord("aa.bb", time.Minute))
			require.NoError(t, err, "a deleted key can be created anew")
		})
	}
}

func TestStore_UpdateSession_racingClaimsOneWins(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			r := sessionRecord("race.one", time.Minute)
			r.Running = ""
			_, err := s.CreateSession(ctx, r)
			require.NoError(t, err)
			base, err := s.GetSession(ctx, "race.one")
			require.NoError(t, err)
			const claimants = 8
			var wg sync.WaitGroup
			wins := make(chan string, claimants)
			for i := range claimants {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := base
					c.Running = string(rune('a' + i))
					if _, err := s.UpdateSession(ctx, c); err == nil {
						wins <- c.Running
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
			got, err := s.GetSession(ctx, "race.one")
			require.NoError(t, err)
			require.Equal(t, won[0], got.Running)
		})
	}
}

func TestStore_GetSession_expiredIsGone(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			_, err := s.CreateSession(ctx, sessionRecord("short.one", time.Second))
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				_, err := s.GetSession(ctx, "short.one")
				return err != nil
			}, 10*time.Second, 100*time.Millisecond)
			_, err = s.GetSession(ctx, "short.one")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = s.CreateSession(ctx, sessionRecord("short.one", time.Minute))
			require.NoError(t, err, "an expired key can be created anew")
		})
	}
}
