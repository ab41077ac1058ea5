package api_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestLabel_Join_takesTheHigherOfEach(t *testing.T) {
	all := []api.Label{}
	for i := api.Trusted; i <= api.Untrusted; i++ {
		for c := api.Public; c <= api.Secret; c++ {
			all = append(all, api.Label{Integrity: i, Confidentiality: c})
		}
	}
	for _, a := range all {
		for _, b := range all {
			j := a.Join(b)
			require.Equal(t, j, b.Join(a), "commutative")
			require.True(t, a.Within(j) && b.Within(j), "%v ⊔ %v = %v is an upper bound", a, b, j)
			for _, c := range all { // the least one
				if a.Within(c) && b.Within(c) {
					require.True(t, j.Within(c), "%v ⊔ %v = %v is below every upper bound (%v)", a, b, j, c)
				}
			}
			require.Equal(t, a, a.Join(api.Label{}), "the zero label is the bottom")
			require.Equal(t, api.Top, a.Join(api.Top), "Top is the top")
		}
	}
	require.Equal(t, api.Label{Integrity: api.Untrusted, Confidentiality: api.Secret},
		api.Label{Integrity: api.Untrusted}.Join(api.Label{Confidentiality: api.Secret}))
}

func TestLabel_Within(t *testing.T) {
	private := api.Label{Confidentiality: api.Private}
	untrusted := api.Label{Integrity: api.Untrusted}
	require.True(t, api.Label{}.Within(private))
	require.True(t, private.Within(private))
	require.False(t, api.Label{Confidentiality: api.Secret}.Within(private))
	require.False(t, untrusted.Within(private), "the orders are independent")
	require.False(t, private.Within(untrusted))
	require.True(t, api.Top.Within(api.Top))
}

func TestLabel_JSON_roundTrips(t *testing.T) {
	for _, l := range []api.Label{{}, api.Top, {Integrity: api.Untrusted}, {Confidentiality: api.Private}} {
		b, err := json.Marshal(l)
		require.NoError(t, err)
		var got api.Label
		require.NoError(t, json.Unmarshal(b, &got))
		require.Equal(t, l, got, string(b))
	}
	b, err := json.Marshal(api.Label{})
	require.NoError(t, err)
	require.JSONEq(t, `{"integrity":"trusted","confidentiality":"public"}`, string(b))
	_, err = json.Marshal(api.Label{Integrity: 7})
	require.Error(t, err, "an invalid label is not written")
}

func TestParseLabel_refusesBadInput(t *testing.T) {
	for in, want := range map[string]string{
		`{"integrity":"trusted"}`:                "",
		`{}`:                                     "",
		`{"confidentiality":"secret"}`:           "",
		`{"integrity":"Trusted"}`:                `integrity "Trusted" is not one of trusted, untrusted`,
		`{"confidentiality":"top"}`:              `confidentiality "top" is not one of public, private, secret`,
		`{"integrity":"trusted","colour":"red"}`: `not "colour"`,
		`null`:                                   "not null",
		`"trusted"`:                              "a label is an object",
		`{"integrity":1}`:                        "a label is an object",
		`{"integrity":"trusted"} {}`:             "more follows",
		`{"integrity":"untrusted","integrity":"trusted"}`: "", // encoding/json keeps the last; callers that need strictness check keys first
	} {
		_, err := api.ParseLabel([]byte(in))
		if want == "" {
			require.NoError(t, err, in)
			continue
		}
		require.ErrorContains(t, err, want, in)
	}
}

func TestLevels_String_andParse(t *testing.T) {
	for _, s := range []string{"trusted", "untrusted"} {
		i, err := api.ParseIntegrity(s)
		require.NoError(t, err)
		require.Equal(t, s, i.String())
	}
	for _, s := range []string{"public", "private", "secret"} {
		c, err := api.ParseConfidentiality(s)
		require.NoError(t, err)
		require.Equal(t, s, c.String())
	}
	require.Equal(t, "integrity(9)", api.Integrity(9).String())
	require.Equal(t, "confidentiality(9)", api.Confidentiality(9).String())
	require.Equal(t, "untrusted, secret", api.Top.String())
}

// FuzzParseLabel: whatever the bytes, parsing never panics, and a label it
// accepts is valid and writes back to a form that reads the same.
func FuzzParseLabel(f *testing.F) {
	for _, s := range []string{`{}`, `{"integrity":"untrusted","confidentiality":"secret"}`, `null`, `{"x":1}`, `[]`, `{"integrity":"trusted"}{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := api.ParseLabel(b)
		if err != nil {
			return
		}
		require.True(t, l.Valid())
		out, err := json.Marshal(l)
		require.NoError(t, err)
		back, err := api.ParseLabel(out)
		require.NoError(t, err)
		require.Equal(t, l, back)
	})
}
