package executor

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// The arguments the ledger copies into its one buffer stay each call's
// own as the buffer grows and moves, and a caller's bytes changed after
// the call do not change them.
func TestLedger_add_copiesStayTheCallsAcrossGrowth(t *testing.T) {
	var l ledger
	const calls = api.MaxLedgerCalls - 1 // and one more without arguments
	for i := range calls {
		args := json.RawMessage(fmt.Sprintf(`{"path":"p%d.txt"}`, i))
		l.add("read", api.Result{}, 0, args, 0)
		copy(args, `{"path":"changed"}`)
	}
	l.add("read", api.Result{}, 0, nil, 0)
	r := l.report(wasmhost.Stats{}, 0)
	require.Len(t, r.Calls, calls+1)
	for i := range calls {
		require.Equal(t, fmt.Sprintf("p%d.txt", i), r.Calls[i].Args, "call %d", i)
	}
	require.Empty(t, r.Calls[calls].Args, "no arguments, no summary")
}
