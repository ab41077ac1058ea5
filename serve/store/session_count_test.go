package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStore_CountSessions_perPrefixLiveOnly(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			n, err := s.CountSessions(ctx, "aa.")
			require.NoError(t, err)
			require.Zero(t, n, "an empty store")

			for _, k := range []string{"aa.1", "aa.2", "aa.3", "ab.1", "a.1"} {
				_, err := s.CreateSession(ctx, sessionRecord(k, time.Minute))
				require.NoError(t, err)
			}
			expired := sessionRecord("aa.old", time.Minute)
			expired.ExpiresAt = time.Now().Add(-time.Second)
			_, err = s.CreateSession(ctx, expired)
			require.NoError(t, err)

			for prefix, want := range map[string]int{"aa.": 3, "ab.": 1, "a.": 1, "zz.": 0} {
				n, err := s.CountSessions(ctx, prefix)
				require.NoError(t, err)
				require.Equal(t, want, n, "prefix %s", prefix)
			}

			require.NoError(t, s.DeleteSession(ctx, "aa.2"))
			n, err = s.CountSessions(ctx, "aa.")
			require.NoError(t, err)
			require.Equal(t, 2, n, "a deleted record is not counted")
		})
	}
}

func TestStore_CountSessions_badPrefixFails(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			for _, prefix := range []string{"", "aa", "../x.", "a*.", "a>."} {
				_, err := s.CountSessions(context.Background(), prefix)
				require.Error(t, err, "prefix %q", prefix)
			}
		})
	}
}
