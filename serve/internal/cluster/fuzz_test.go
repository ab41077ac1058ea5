package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzClusterDecoders feeds one input to the decoders of what other
// nodes send (forwarded requests, work items, handles' chunks): each fails
// with an error or returns a checked value, never panics.
func FuzzClusterDecoders(f *testing.F) {
	for _, s := range []string{
		`{"op":"cancel","tenant":"a","id":"ex_1"}`,
		`{"op":"results","tenant":"a","id":"ex_1","results":[{"id":"c1","ok":true,"value":1}]}`,
		`{"id":"ex_1","tenant":"a","body":{"code":"return 1"}}`,
		`{"op":"handle","tenant":"a","id":"ex_1","handle":"h_1","offset":3}`,
		`{"id":"h_1","tool":"fetch","size":5,"labels":{},"total":5,"offset":0,"data":"ImFiYyI="}`,
		`{"id":"h_1","total":5,"offset":0,"data":""}`, `{"id":"h_1","total":-1}`,
		`{"op":"drop"}`, `{"id":""}`, `[]`, `null`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if req, err := decodeNodeRequest(data); err == nil {
			require.Contains(t, []string{OpCancel, OpResults, OpApprovals, OpHandle}, req.Op)
			require.NotEmpty(t, req.ID)
			require.NotEmpty(t, req.Tenant)
			if req.Op == OpHandle {
				require.NotEmpty(t, req.Handle)
				require.GreaterOrEqual(t, req.Offset, 0)
			}
		}
		for _, offset := range []int{0, 3} {
			if ch, err := decodeHandleChunk(data, "h_1", offset); err == nil {
				require.Equal(t, "h_1", ch.ID)
				require.Equal(t, offset, ch.Offset)
				require.LessOrEqual(t, ch.Total, maxHandleValueBytes)
				require.LessOrEqual(t, offset+len(ch.Data), ch.Total)
				require.True(t, len(ch.Data) > 0 || offset >= ch.Total, "a chunk moves on")
			}
		}
		if item, err := decodeWorkItem(data); err == nil {
			require.NotEmpty(t, item.ID)
			require.NotEmpty(t, item.Body)
		}
	})
}
