package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve/store"
)

func reservation(key, id string, ttl time.Duration) store.Reservation {
	return store.Reservation{Key: key, Tenant: "a", ID: id, Sum: "5e", Node: "n1", Created: time.Now(), ExpiresAt: time.Now().Add(ttl)}
}

func TestStore_UpdateReservation_revisionChecked(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			rev, err := s.Reserve(ctx, reservation("aa.bb", "ex_1", time.Minute))
			require.NoError(t, err)
			_, err = s.Reserve(ctx, reservation("aa.bb", "ex_2", time.Minute))
			require.ErrorIs(t, err, store.ErrExists)

			got, err := s.GetReservation(ctx, "aa.bb")
			require.NoError(t, err)
			require.Equal(t, rev, got.Revision)
			require.Equal(t, "ex_1", got.ID)
			require.Equal(t, "5e", got.Sum)

			got.ExpiresAt = time.Now().Add(2 * time.Minute)
			rev2, err := s.UpdateReservation(ctx, got)
			require.NoError(t, err)
			require.NotEqual(t, rev, rev2)
			stale := got // still at rev
			stale.ID = "ex_2"
			_, err = s.UpdateReservation(ctx, stale)
			require.ErrorIs(t, err, store.ErrConflict)
			require.ErrorIs(t, s.DeleteReservation(ctx, stale), store.ErrConflict, "a delete at a past revision")
			now, err := s.GetReservation(ctx, "aa.bb")
			require.NoError(t, err)
			require.Equal(t, "ex_1", now.ID)

			// Reservations are neither execution records nor sessions.
			list, err := s.List(ctx)
			require.NoError(t, err)
			require.Empty(t, list)
			_, err = s.Get(ctx, "aa.bb")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = s.GetSession(ctx, "aa.bb")
			require.ErrorIs(t, err, store.ErrNotFound)

			_, err = s.GetReservation(ctx, "../etc/passwd")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = s.Reserve(ctx, reservation("../x", "ex_1", time.Minute))
			require.ErrorContains(t, err, "must match")

			require.NoError(t, s.DeleteReservation(ctx, now))
			require.ErrorIs(t, s.DeleteReservation(ctx, now), store.ErrConflict, "deleted already")
			_, err = s.GetReservation(ctx, "aa.bb")
			require.ErrorIs(t, err, store.ErrNotFound)

			// A deleted key is reserved anew, at a revision its deleted
			// reservation's holder cannot update.
			rev3, err := s.Reserve(ctx, reservation("aa.bb", "ex_3", time.Minute))
			require.NoError(t, err, "a deleted key can be reserved anew")
			require.Greater(t, rev3, now.Revision)
			_, err = s.UpdateReservation(ctx, now)
			require.ErrorIs(t, err, store.ErrConflict)
			again, err := s.GetReservation(ctx, "aa.bb")
			require.NoError(t, err)
			require.Equal(t, "ex_3", again.ID)
		})
	}
}

func TestStore_Reserve_racingNodesOneWins(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			const nodes = 8
			var wg sync.WaitGroup
			wins := make(chan string, nodes)
			for i := range nodes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := "ex_" + string(rune('a'+i))
					if _, err := s.Reserve(ctx, reservation("race.key", id, time.Minute)); err == nil {
						wins <- id
					} else {
						require.ErrorIs(t, err, store.ErrExists)
					}
				}()
			}
			wg.Wait()
			close(wins)
			var won []string
			for w := range wins {
				won = append(won, w)
			}
			require.Len(t, won, 1, "exactly one reservation wins")
			got, err := s.GetReservation(ctx, "race.key")
			require.NoError(t, err)
			require.Equal(t, won[0], got.ID)

			// Taking it over (a reservation left without its execution) is
			// revision-checked the same way.
			var takers sync.WaitGroup
			taken := make(chan string, nodes)
			for i := range nodes {
				takers.Add(1)
				go func() {
					defer takers.Done()
					r := got
					r.ID = "ex_taker_" + string(rune('a'+i))
					if _, err := s.UpdateReservation(ctx, r); err == nil {
						taken <- r.ID
					} else {
						require.ErrorIs(t, err, store.ErrConflict)
					}
				}()
			}
			takers.Wait()
			close(taken)
			require.Len(t, taken, 1, "exactly one takeover wins")
		})
	}
}

func TestStore_GetReservation_expiredIsGone(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			_, err := s.Reserve(ctx, reservation("short.key", "ex_1", 50*time.Millisecond))
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				_, err := s.GetReservation(ctx, "short.key")
				return err != nil
			}, 10*time.Second, 20*time.Millisecond)
			_, err = s.GetReservation(ctx, "short.key")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = s.Reserve(ctx, reservation("short.key", "ex_2", time.Minute))
			require.NoError(t, err, "an expired key can be reserved anew (before the store drops it)")
			got, err := s.GetReservation(ctx, "short.key")
			require.NoError(t, err)
			require.Equal(t, "ex_2", got.ID)
		})
	}
}
