package serve_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

func TestParseConfig_store(t *testing.T) {
	key := sum("k")
	cfg := func(extra string) string {
		return `{"listen":"127.0.0.1:1",` + extra + `"tenants":[{"name":"a","key_sha256":"` + key + `"}]}`
	}
	tests := []struct {
		name, text string
		want       serve.StoreConfig
	}{
		{"nats string", cfg(`"store":"nats://127.0.0.1:4222",`), serve.StoreConfig{Kind: "nats", URL: "nats://127.0.0.1:4222"}},
		{"dir string", cfg(`"store":"dir:/var/lib/ptcx",`), serve.StoreConfig{Kind: "dir", Path: "/var/lib/ptcx"}},
		{"memory string", cfg(`"store":"memory",`), serve.StoreConfig{Kind: "memory"}},
		{"memory object", cfg(`"store":{"kind":"memory"},`), serve.StoreConfig{Kind: "memory"}},
		{"nats object", cfg(`"store":{"kind":"nats","url":"nats://h:1","records_bucket":"r","bind_only":true},`),
			serve.StoreConfig{Kind: "nats", URL: "nats://h:1", RecordsBucket: "r", BindOnly: true}},
		{"yaml string", "listen: 127.0.0.1:1\nstore: nats://h:2\ntenants:\n  - {name: a, key_sha256: " + key + "}\n", serve.StoreConfig{Kind: "nats", URL: "nats://h:2"}},
		{"yaml mapping", "listen: 127.0.0.1:1\nstore: {kind: dir, path: d}\ntenants:\n  - {name: a, key_sha256: " + key + "}\n", serve.StoreConfig{Kind: "dir", Path: "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := serve.ParseConfig([]byte(tt.text))
			require.NoError(t, err)
			require.Equal(t, tt.want, *c.Store)
		})
	}
}

func TestParseConfig_clusterInvalid(t *testing.T) {
	key := sum("k")
	cfg := func(extra string) string {
		return `{"listen":"127.0.0.1:1",` + extra + `"tenants":[{"name":"a","key_sha256":"` + key + `"}]}`
	}
	tests := []struct{ name, text, want string }{
		{"store string", cfg(`"store":"redis://h",`), `field store: "redis://h": want`},
		{"store kind", cfg(`"store":{"kind":"s3"},`), "field store.kind"},
		{"store unknown field", cfg(`"store":{"kind":"nats","urls":"x"},`), `unknown field "urls"`},
		{"yaml store unknown field", "listen: 127.0.0.1:1\nstore: {kind: nats, urls: x}\ntenants: []\n", "field urls not found"},
		{"nats without url", cfg(`"store":{"kind":"nats"},`), "field store.url: required"},
		{"dir without path", cfg(`"store":{"kind":"dir"},`), "field store.path: required"},
		{"token and user", cfg(`"store":{"kind":"nats","url":"nats://h:1","token":"t","user":"u"},`), "field store.token"},
		{"lease not a duration", cfg(`"lease":"10",`), `field lease: "10" is not a Go duration`},
		{"lease below", cfg(`"lease":"999ms",`), "field lease: 999ms is outside [1s, 5m0s]"},
		{"lease past", cfg(`"lease":"5m1s",`), "field lease: 5m1s is outside [1s, 5m0s]"},
		{"bad node", cfg(`"node":"a.b",`), `field node: "a.b" must match`},
		{"overflow without nats", cfg(`"overflow":true,"store":"dir:/tmp/x",`), "field overflow: needs a nats store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serve.ParseConfig([]byte(tt.text))
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestParseConfig_leaseBounds(t *testing.T) {
	key := sum("k")
	for _, lease := range []string{"1s", "10s", "5m"} {
		t.Run(lease, func(t *testing.T) {
			_, err := serve.ParseConfig([]byte(`{"listen":"127.0.0.1:1","store":"nats://h:1","lease":"` + lease + `","overflow":true,"node":"n-1","tenants":[{"name":"a","key_sha256":"` + key + `"}]}`))
			require.NoError(t, err, "at the bounds and within them the lease is accepted")
		})
	}
}
