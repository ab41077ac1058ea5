package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestShortDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "30s"},
		{10 * time.Minute, "10m"},
		{90 * time.Second, "1m30s"},
		{time.Hour, "1h"},
		{time.Hour + time.Minute, "1h1m"},
		{1500 * time.Millisecond, "1.5s"},
	} {
		require.Equal(t, tt.want, shortDuration(tt.d), tt.d)
	}
}
