package executor

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/registry"
)

func plainTool(name string) registry.Tool {
	return registry.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`),
		Body: func(context.Context, api.Input) (api.Output, error) { return api.Output{}, nil }}
}

// A run's kept resolutions give what the registry would, and follow every
// change to it: a tool registered after a miss, a scope's restriction, in
// the run's scope; names sharing a slot displace each other and still
// resolve right.
func TestResolveNested_followsTheRegistry(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	require.NoError(t, reg.NewScope("team", registry.Deployment))
	require.NoError(t, reg.Register(registry.Deployment, plainTool("a")))
	e, err := New(reg, NewConfig())
	require.NoError(t, err)
	tok := e.mintToken("call_1", "team")

	check := func(name string) {
		t.Helper()
		want := e.resolve("team", name, true)
		require.Equal(t, want, tok.resolveNested(e, name), name)
		require.Equal(t, want, tok.resolveNested(e, name), name+", kept")
	}
	check("a")
	require.Equal(t, resolve.NotVisible, tok.resolveNested(e, "b").Refusal)
	require.NoError(t, reg.Register(registry.Deployment, plainTool("b")))
	require.Equal(t, resolve.Resolved, tok.resolveNested(e, "b").Refusal, "registered after a miss")
	require.NoError(t, reg.Restrict("team", registry.Restriction{Deny: []string{"a"}}))
	require.Equal(t, resolve.NotVisible, tok.resolveNested(e, "a").Refusal, "denied to the scope after it was kept")
	check("run_code")
	check("")

	// Names of one slot, alternating.
	var same []string
	for _, n := range []string{"c", "d", "e", "f", "g", "h", "i", "j", "k"} {
		if resolvedSlot(n) == resolvedSlot("b") {
			same = append(same, n)
		}
	}
	require.NotEmpty(t, same)
	for _, n := range same {
		require.NoError(t, reg.Register(registry.Deployment, plainTool(n)))
	}
	for range 3 {
		check("b")
		for _, n := range same {
			check(n)
		}
	}
}

// Slots are in range for every name.
func TestResolvedSlot(t *testing.T) {
	for _, n := range []string{"", "a", "echo", string([]byte{0xff, 0xff}), string(make([]byte, 1<<16))} {
		s := resolvedSlot(n)
		require.True(t, s >= 0 && s < resolvedSlots, "%q: %d", n, s)
	}
}
