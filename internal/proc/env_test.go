package proc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBaseEnv_allowlist(t *testing.T) {
	t.Setenv("PTCX_TEST_SECRET", "hunter2")
	t.Setenv("PATH", "/opt/bin:/usr/bin")
	t.Setenv("LANG", "")
	t.Setenv("TZ", "UTC")
	require.Equal(t, []string{"PATH=/opt/bin:/usr/bin", "LANG=C.UTF-8", "TERM=dumb", "TZ=UTC"}, BaseEnv().Environ())
}

func TestEnv_SetPass(t *testing.T) {
	t.Setenv("PTCX_TEST_PASSED", "yes")
	t.Setenv("PATH", "/usr/bin")
	e := BaseEnv()
	e.Pass("PTCX_TEST_PASSED", "PTCX_TEST_UNSET_VARIABLE")
	e.Set("TERM", "xterm")
	e.Set("K", "a=b")
	require.Equal(t, []string{"PATH=/usr/bin", "LANG=" + getenvOr("LANG", "C.UTF-8"), "PTCX_TEST_PASSED=yes", "TERM=xterm", "K=a=b"},
		without(e.Environ(), "LC_ALL", "TZ"))
	require.NotNil(t, Env{}.Environ(), "nil would pass ptcx's whole environment")
}

func without(env []string, names ...string) []string {
	var out []string
outer:
	for _, kv := range env {
		for _, n := range names {
			if len(kv) > len(n) && kv[:len(n)+1] == n+"=" {
				continue outer
			}
		}
		out = append(out, kv)
	}
	return out
}

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"HOME", true}, {"_X1", true}, {"a", true},
		{"", false}, {"1A", false}, {"A=B", false}, {"A B", false}, {"A\x00", false}, {"É", false},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.ok, ValidName(tc.name)) })
	}
}
