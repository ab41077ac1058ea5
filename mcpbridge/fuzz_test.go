package mcpbridge

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/registry"
)

// FuzzStdoutGuard feeds arbitrary upstream output to the guard: it must
// never panic, pass only JSON-RPC messages, and, when it stops early, have
// recorded why.
func FuzzStdoutGuard(f *testing.F) {
	for _, s := range []string{
		"",
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
		"Welcome!\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",
		`[{"jsonrpc":"2.0","id":1,"result":{}}]` + "\n",
		"\n\r\n" + `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		g := newStdoutGuard(io.NopCloser(bytes.NewReader(out)), new(atomic.Int64))
		passed, err := io.ReadAll(g)
		cause, ended := g.hasEnded()
		require.True(t, ended)
		if err != nil {
			require.ErrorIs(t, err, errBroken)
			require.NotEmpty(t, cause)
		} else {
			require.Empty(t, cause)
		}
		if len(passed) == 0 {
			return
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(passed, []byte("\n")), []byte("\n")) {
			_, err := jsonrpc.DecodeMessage(line)
			require.NoError(t, err, "passed %q", line)
		}
	})
}

// FuzzAssignNames checks that any upstream names get valid, distinct
// registry names.
func FuzzAssignNames(f *testing.F) {
	f.Add("p", "read\x00a b\x00a_b\x00größe\x00\x00dup\x00dup")
	f.Add("up", strings.Repeat("x", 100)+"\x00"+strings.Repeat("x", 101))
	f.Fuzz(func(t *testing.T, prefix, joined string) {
		if !validPrefix.MatchString(prefix) {
			return
		}
		n := assignNames("upstream", prefix, strings.Split(joined, "\x00"))
		seen := map[string]bool{}
		for up, name := range n.names {
			require.True(t, registry.ValidName(name), "%q → %q", up, name)
			require.True(t, strings.HasPrefix(name, prefix+"."), "%q → %q", up, name)
			require.False(t, seen[name], "%q given twice", name)
			seen[name] = true
		}
	})
}

// FuzzDerivePrefix checks that any command gets a valid prefix that is
// never a launcher's name nor a generic one.
func FuzzDerivePrefix(f *testing.F) {
	f.Add("npx\x00-y\x00@modelcontextprotocol/server-filesystem\x00/tmp")
	f.Add("node\x00/opt/x/dist/index.js")
	f.Add("docker\x00run\x00-i\x00--rm\x00-e\x00A=b\x00mcp/github")
	f.Add("/\x00..\x00.")
	f.Add("uv\x00run\x00@\x00-")
	f.Fuzz(func(t *testing.T, joined string) {
		argv := strings.Split(joined, "\x00")
		p := derivePrefix(argv)
		require.True(t, validPrefix.MatchString(p), "%q → %q", argv, p)
		require.True(t, registry.ValidName(p+".tool"), "%q → %q", argv, p)
		require.False(t, launchers[p], "%q → the launcher %q", argv, p)
		require.False(t, generic[strings.ToLower(p)] && p != "mcp", "%q → the generic %q", argv, p)
	})
}
