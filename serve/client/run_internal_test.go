package client

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetryAfter_parsesWhatAServerMaySend(t *testing.T) {
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		in       string
		min, max time.Duration
	}{
		{"1", time.Second, time.Second},
		{" 7 ", 7 * time.Second, 7 * time.Second},
		{"0", 0, 0},
		{"-5", time.Second, time.Second},                      // not a wait: the default
		{"soon", time.Second, time.Second},                    // neither form: the default
		{"", time.Second, time.Second},                        // neither form: the default
		{"3600", time.Hour, time.Hour},                        // at the bound
		{"3601", time.Hour, time.Hour},                        // past it: the bound
		{"99999999999999999999", time.Second, time.Second},    // past int64: neither form
		{"9223372036854775807", maxRetryAfter, maxRetryAfter}, // the largest int64: the bound, no overflow
		{future, 80 * time.Second, 90 * time.Second},          // an HTTP date
		{past, 0, 0}, // a date gone by: at once
	} {
		got := retryAfter(tc.in)
		require.GreaterOrEqual(t, got, tc.min, "%q", tc.in)
		require.LessOrEqual(t, got, tc.max, "%q", tc.in)
	}
}
