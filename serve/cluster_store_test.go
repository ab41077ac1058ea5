package serve_test

import (
	"os"
	"testing"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/store/storetest"
)

// withTestStore runs the API suite on the store PTCX_TEST_STORE names:
// unset or memory (the default), dir (a temporary directory) or nats (an
// embedded NATS server per test server), e.g.
// PTCX_TEST_STORE=nats go test ./serve/.
func withTestStore(t testing.TB, cfg *serve.Config) {
	t.Helper()
	switch kind := os.Getenv("PTCX_TEST_STORE"); kind {
	case "", "memory":
	case "dir":
		cfg.Store = &serve.StoreConfig{Kind: "dir", Path: t.TempDir()}
	case "nats":
		cfg.Store = &serve.StoreConfig{Kind: "nats", URL: storetest.NATS(t, nil).ClientURL()}
	default:
		t.Fatalf("PTCX_TEST_STORE=%q: want memory, dir or nats", kind)
	}
}
