package serve_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// Options.GuestSlots sets the slots of the Runtime the server starts; a
// negative count is refused.
func TestNew_guestSlots(t *testing.T) {
	cfg := func() *serve.Config {
		return &serve.Config{Listen: "127.0.0.1:0", SpillDir: t.TempDir(),
			Tenants: []serve.TenantConfig{{Name: "a", KeySHA256: sum(keyA), Mode: "ptc"}}}
	}
	srv, err := serve.New(context.Background(), cfg(), serve.Options{GuestSlots: 3})
	require.NoError(t, err)
	require.Equal(t, 3, serve.SandboxUsage(srv).Slots)
	require.NoError(t, srv.Close(context.Background()))

	_, err = serve.New(context.Background(), cfg(), serve.Options{GuestSlots: -1})
	require.EqualError(t, err, "serve: Options.GuestSlots -1: want a positive count, or 0 for the default")
}
