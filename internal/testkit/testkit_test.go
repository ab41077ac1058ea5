package testkit

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// recorder is a testing.TB that records a skip or a failure instead of
// ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestRequireGuest_whenMissing(t *testing.T) {
	tests := []struct {
		name    string
		present bool
		env     map[string]string
		want    string // "", "skip" or "fail"
	}{
		{"present", true, map[string]string{"CI": "true", RequireGuestEnv: "1"}, ""},
		{"missing, locally", false, nil, "skip"},
		{"missing, CI=false", false, map[string]string{"CI": "false"}, "skip"},
		{"missing, PTCX_REQUIRE_GUEST=0", false, map[string]string{RequireGuestEnv: "0"}, "skip"},
		{"missing, in CI", false, map[string]string{"CI": "true"}, "fail"},
		{"missing, under make test", false, map[string]string{RequireGuestEnv: "1"}, "fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			requireGuest(r, tt.present, func(k string) string { return tt.env[k] })
			switch tt.want {
			case "":
				require.Empty(t, r.skipped)
				require.Empty(t, r.failed)
			case "skip":
				require.Contains(t, r.skipped, "the guest is not built")
				require.Contains(t, r.skipped, "make guest", "it says how to build the guest")
				require.Empty(t, r.failed)
			case "fail":
				require.Contains(t, r.failed, "the guest is required here")
				require.Empty(t, r.skipped)
			}
		})
	}
}
