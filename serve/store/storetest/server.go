// Package storetest starts an embedded NATS server with JetStream for
// tests: in-process, on a loopback port, its JetStream files in a test
// temporary directory. Only test code imports it.
package storetest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
)

// Options change the embedded server (e.g. Username and Password).
type Options = server.Options

// NATS starts a server (edit, when not nil, changes its options first)
// and stops it at the end of the test. It returns the server, so that a
// test can stop it early (Shutdown) to show a lost store.
func NATS(t testing.TB, edit func(*Options)) *server.Server {
	t.Helper()
	opts := &server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, MaxPayload: 1 << 20,
	}
	if edit != nil {
		edit(opts)
	}
	s, err := server.NewServer(opts)
	require.NoError(t, err)
	go s.Start()
	require.True(t, s.ReadyForConnections(10*time.Second), "the embedded NATS server did not start within 10 s")
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}
