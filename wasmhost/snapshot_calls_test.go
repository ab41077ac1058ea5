package wasmhost_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

func TestSnapshotCalls_readsWhatTheSnapshotHolds(t *testing.T) {
	rt := sharedRuntime(t)
	s := suspendAt(t, rt, `return await Promise.all([tools.echo({a: 1}), tools.add({a: 1, b: 2})]);`,
		api.Limits{}, &recordingTools{}, always)
	compressed, err := wasmhost.CompressSnapshot(s.Snapshot)
	require.NoError(t, err)
	for name, b := range map[string][]byte{"stored": s.Snapshot, "compressed": compressed} {
		t.Run(name, func(t *testing.T) {
			tools, calls, err := wasmhost.SnapshotCalls(b)
			require.NoError(t, err)
			require.Equal(t, []string{"echo", "add", "fail", "slow"}, tools)
			require.Equal(t, s.Calls, calls)
		})
	}
}

func TestSnapshotCalls_refusesWhatIsNotASnapshot(t *testing.T) {
	rt := sharedRuntime(t)
	s := suspendAt(t, rt, `return await tools.echo({a: 1});`, api.Limits{}, &recordingTools{}, always)
	compressed, err := wasmhost.CompressSnapshot(s.Snapshot)
	require.NoError(t, err)
	flipped := append([]byte(nil), s.Snapshot...)
	flipped[len(flipped)-5] ^= 1
	bodyAt := snapshotBodyAt(s.Snapshot)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a ptcx snapshot"},
		{"stored, cut", s.Snapshot[:len(s.Snapshot)-1], "not the"},
		{"stored, a flipped byte of its index", flipped, "corrupt"},
		{"compressed, cut in its table", compressed[:bodyAt+20], "cannot be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := wasmhost.SnapshotCalls(tt.data)
			require.ErrorIs(t, err, wasmhost.ErrSnapshot)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// FuzzSnapshotCalls feeds the table reader arbitrary bytes and real
// snapshots, stored and compressed, for the fuzzer to mutate: it refuses
// (ErrSnapshot) or accepts, never panics, and what it accepts is the
// unanswered calls in the order of their ids.
func FuzzSnapshotCalls(f *testing.F) {
	rt := sharedRuntime(f)
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: `return await Promise.all([tools.echo({a: 1}), tools.add({})]);`,
		Tools: suspendTools, Suspend: always}, &recordingTools{})
	require.NoError(f, err)
	require.NotNil(f, out.Suspended)
	compressed, err := wasmhost.CompressSnapshot(out.Suspended.Snapshot)
	require.NoError(f, err)
	f.Add(out.Suspended.Snapshot)
	f.Add(compressed)
	f.Add([]byte("PTCXSNAP"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, calls, err := wasmhost.SnapshotCalls(b)
		if err != nil {
			require.ErrorIs(t, err, wasmhost.ErrSnapshot)
			return
		}
		for i, c := range calls {
			require.NotEqual(t, wasmhost.CallAnswered, c.State)
			if i > 0 {
				require.LessOrEqual(t, calls[i-1].ID, c.ID)
			}
		}
	})
}
