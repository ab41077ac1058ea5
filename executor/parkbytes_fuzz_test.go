package executor_test

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// parkedSeed is a real parked execution's header and snapshot, for the
// fuzzer to mutate past the framing and the snapshot's own checks.
func parkedSeed(f *testing.F) (header, snap []byte) {
	reg := registry.New()
	require.NoError(f, reg.DeclareMode(registry.Deployment, api.ModePTC))
	body := func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput(1) }
	require.NoError(f, reg.Register(registry.Deployment, registry.Tool{Name: "approve", Description: "Ask a human.", Body: body}))
	ex, err := executor.New(reg, executor.NewConfig().WithRuntime(realRuntime(f)))
	require.NoError(f, err)
	_, p := ex.ExecuteParkable(context.Background(), runCodeCall(`return await Promise.all([tools.approve({what: "a"}), tools.approve({})])`), isApprove)
	require.NotNil(f, p)
	defer p.Discard(context.Background())
	data, err := p.Marshal()
	require.NoError(f, err)
	hlen := int(binary.BigEndian.Uint32(data[12:]))
	return data[16 : 16+hlen], data[16+hlen+8 : len(data)-4]
}

// FuzzDecodeParked feeds the parked-execution decoder arbitrary bytes: it
// must refuse or accept them without panicking, allocating beyond the
// input, or stalling.
func FuzzDecodeParked(f *testing.F) {
	header, snap := parkedSeed(f)
	f.Add([]byte("PTCXPARK"))
	f.Add(executor.AssembleParked([]byte(`{"id":"x","scope":"s","tool":"run_code","args":{},"mode":"ptc","nonce":"n","limits":{},"calls":[{"id":1,"name":"a"}],"ledger":{"calls":[],"args":[]}}`), []byte("snap")))
	f.Add(executor.AssembleParked(header, snap))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = executor.DecodeParked(data, 1<<30)
	})
}

// FuzzDecodeParkedHeader frames arbitrary headers and snapshots with a
// right checksum, so that the fuzzer reaches the header's decoder and
// checks, and its agreement with the snapshot: whatever is accepted names
// exactly the calls its snapshot holds.
func FuzzDecodeParkedHeader(f *testing.F) {
	header, snap := parkedSeed(f)
	f.Add(header, snap)
	f.Add([]byte(`{"id":"x","scope":"s","tool":"run_code","args":{},"mode":"ptc","nonce":"n","limits":{},"calls":[{"id":1,"name":"a"}],"ledger":{"calls":[],"args":[]}}`), snap)
	f.Add([]byte(`{"ledger":{"calls":[{"tool":"t"}],"args":[null]},"calls":[{"id":-1}]}`), []byte(nil))
	f.Fuzz(func(t *testing.T, header, snap []byte) {
		named, held, err := executor.DecodeParkedCalls(executor.AssembleParked(header, snap), 1<<30)
		if err != nil {
			require.ErrorIs(t, err, executor.ErrParkedFormat)
			return
		}
		require.Len(t, held, len(named))
		for i, c := range held {
			require.Equal(t, named[i].ID, c.ID)
			require.Equal(t, named[i].Tool, c.Name)
		}
	})
}
