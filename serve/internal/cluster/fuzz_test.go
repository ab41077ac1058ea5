package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzClusterDecoders feeds one input to the decoders of what other
// nodes send (forwarded requests, work items): each fails with an error
// or returns a checked value, never panics.
func FuzzClusterDecoders(f *testing.F) {
	for _, s := range []string{
		`{"op":"cancel","tenant":"a","id":"ex_1"}`,
		`{"op":"results","tenant":"a","id":"ex_1","results":[{"id":"c1","ok":true,"value":1}]}`,
		`{"id":"ex_1","tenant":"a","body":{"code":"return 1"}}`,
		`{"op":"drop"}`, `{"id":""}`, `[]`, `null`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if req, err := decodeNodeRequest(data); err == nil {
			require.Contains(t, []string{OpCancel, OpResults}, req.Op)
			require.NotEmpty(t, req.ID)
			require.NotEmpty(t, req.Tenant)
		}
		if item, err := decodeWorkItem(data); err == nil {
			require.NotEmpty(t, item.ID)
			require.NotEmpty(t, item.Body)
		}
	})
}
