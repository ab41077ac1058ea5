package executor_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/executor"
)

const fuzzRef = "0123456789abcdef0123456789abcdef"

// FuzzHandles_markers feeds the decoding of handle markers (a program's
// arguments and result, untrusted bytes) anything: it never panics, what
// it gives a tool is JSON, a value is substituted only for an exact marker
// of the held ref, and a marker of any other ref is refused.
func FuzzHandles_markers(f *testing.F) {
	for _, s := range []string{
		`{"a": {"$ptcx.handle": "` + fuzzRef + `"}}`,
		`{"a": [{"$ptcx.handle": "` + fuzzRef + `"}, {"$ptcx.handle": "other"}]}`,
		`{"$ptcx.handle": "` + fuzzRef + `"}`,
		`{"a": {"$ptcx.handle": "` + fuzzRef + `", "b": 1}}`,
		`{"a": {"$ptcx.handle": 1e999}}`,
		`{"a": "{\"$ptcx.handle\": \"x\"}"}`,
		`[{"$ptcx.handle": null}]`, `{"$ptcx.handle"`, `"$ptcx.handle"`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		real, failure := executor.Substitute(fuzzRef, b)
		if failure == "" && real != nil {
			require.True(t, json.Valid(real), "substituted arguments are JSON: %s", real)
			require.NotContains(t, string(real), `"$ptcx.handle":"`+fuzzRef, "no marker of the held ref is left")
		}
		if failure != "" {
			require.Nil(t, real)
			require.True(t, strings.Contains(failure, "handle-shaped") || failure == "the arguments are not JSON", failure)
		}
		shown := executor.Placeholders(fuzzRef, b)
		if json.Valid(b) {
			require.True(t, json.Valid(shown), "placeholders keep JSON JSON: %s", shown)
		}
	})
}
