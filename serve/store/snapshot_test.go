package store_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve/store"
)

func TestStore_PutSnapshot_roundTrips(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			_, err := s.GetSnapshot(ctx, "ex_1.a")
			require.ErrorIs(t, err, store.ErrNotFound)
			big := bytes.Repeat([]byte("parked "), 300_000) // over one Object Store chunk
			require.NoError(t, s.PutSnapshot(ctx, "ex_1.a", big))
			got, err := s.GetSnapshot(ctx, "ex_1.a")
			require.NoError(t, err)
			require.Equal(t, big, got)

			require.NoError(t, s.PutSnapshot(ctx, "ex_1.a", []byte("newer")), "a rewrite replaces it whole")
			got, err = s.GetSnapshot(ctx, "ex_1.a")
			require.NoError(t, err)
			require.Equal(t, []byte("newer"), got)

			require.NoError(t, s.DeleteSnapshot(ctx, "ex_1.a"))
			require.NoError(t, s.DeleteSnapshot(ctx, "ex_1.a"), "deleting none is not an error")
			_, err = s.GetSnapshot(ctx, "ex_1.a")
			require.ErrorIs(t, err, store.ErrNotFound)

			require.ErrorContains(t, s.PutSnapshot(ctx, "../escape", []byte("x")), "must match")
			_, err = s.GetSnapshot(ctx, "../escape")
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	}
}
