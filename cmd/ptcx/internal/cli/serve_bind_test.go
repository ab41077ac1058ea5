package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A node whose port is taken exits with an error naming the address, and
// has joined nothing: it never wrote a lease to its dir store, which the
// other nodes would see, and which a node that dies before leaving
// leaves behind.
func TestServe_portTaken_joinsNothing(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	dir := t.TempDir()
	sum := sha256.Sum256([]byte("key"))
	cfg := filepath.Join(t.TempDir(), "serve.json")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		`{"listen":%q,"store":"dir:%s","node":"n1","lease":"1s","tenants":[{"name":"t","key_sha256":%q,"mode":"ptc"}]}`,
		taken.Addr().String(), dir, hex.EncodeToString(sum[:]))), 0o600))

	out, errOut, status := ptcx(t, "", "serve", "--config", cfg)
	require.Equal(t, exitTool, status, errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, "listening on "+taken.Addr().String())
	require.Contains(t, errOut, "address already in use")
	require.NotContains(t, errOut, "joined the cluster")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the store is untouched: no lease, not even for a moment")
}
