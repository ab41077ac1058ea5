//go:build !wasmtime

package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEngineFlag_wasmtimeNotBuilt(t *testing.T) {
	out, errOut, status := ptcx(t, "", "run", "--engine", "wasmtime", "x.ts")
	require.Equal(t, exitUsage, status)
	require.Empty(t, out)
	require.Contains(t, errOut, `invalid value "wasmtime" for flag -engine: wasmhost: this ptcx was built without the wasmtime engine: build with `+"`scripts/wasmtime.sh build`"+` in the ptcx checkout`)
}
