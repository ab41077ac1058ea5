package serve_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

func TestParseConfig_valid(t *testing.T) {
	tests := []struct{ name, text string }{
		{"json", `{"listen":"127.0.0.1:8080","log_level":"debug","log_format":"text","tenants":[{"name":"a","key_sha256":"` + sum("k") + `","mode":"ptc","quotas":{"max_concurrent":2,"max_pending":3}}]}`},
		{"yaml", "listen: 127.0.0.1:8080\ntenants:\n  - name: a\n    key_sha256: " + sum("k") + "\n    mode: ptc\n    quotas: {max_concurrent: 2, max_pending: 3}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := serve.ParseConfig([]byte(tt.text))
			require.NoError(t, err)
			require.Equal(t, "127.0.0.1:8080", c.Listen)
			require.Equal(t, 2, c.Tenants[0].Quotas.MaxConcurrent)
			require.Equal(t, 3, c.Tenants[0].Quotas.MaxPending)
		})
	}
}

func TestParseConfig_invalid(t *testing.T) {
	key := sum("k")
	tenant := func(extra string) string {
		return `{"listen":"127.0.0.1:1","tenants":[{"name":"a","key_sha256":"` + key + `"` + extra + `}]}`
	}
	tests := []struct{ name, text, want string }{
		{"no listen", `{"tenants":[]}`, "field listen: required"},
		{"bad listen", `{"listen":"nowhere","tenants":[]}`, "field listen"},
		{"no tenants", `{"listen":"127.0.0.1:1"}`, "field tenants: at least one"},
		{"bad name", `{"listen":"127.0.0.1:1","tenants":[{"name":"A B","key_sha256":"` + key + `"}]}`, "field tenants[0].name"},
		{"bad key", `{"listen":"127.0.0.1:1","tenants":[{"name":"a","key_sha256":"abc"}]}`, "field tenants[0].key_sha256: want 64 hex digits"},
		{"bad mode", tenant(`,"mode":"turbo"`), "field tenants[0].mode"},
		{"unknown language", tenant(`,"languages":["typescript","cobol"]`), `field tenants[0].languages: INVALID_ARGS: unknown language "cobol": the languages are typescript and python`},
		{"no language", tenant(`,"languages":[]`), "field tenants[0].languages: no language enabled"},
		{"python below its memory floor", tenant(`,"languages":["typescript","python"],"limits":{"memory_mb":16}`), "field tenants[0].limits.memory_mb: 16 is below the 32 MiB a Python program needs, and .languages has python"},
		{"a language twice", tenant(`,"languages":["python","python"]`), "field tenants[0].languages: language python is given twice"},
		{"negative quota", tenant(`,"quotas":{"max_pending":-1}`), "field tenants[0].quotas.max_pending: -1 is negative"},
		{"duplicate name", `{"listen":"127.0.0.1:1","tenants":[{"name":"a","key_sha256":"` + key + `"},{"name":"a","key_sha256":"` + sum("j") + `"}]}`, "field tenants[1].name"},
		{"duplicate key", `{"listen":"127.0.0.1:1","tenants":[{"name":"a","key_sha256":"` + key + `"},{"name":"b","key_sha256":"` + key + `"}]}`, "field tenants[1].key_sha256"},
		{"store kind", `{"listen":"127.0.0.1:1","store":{"kind":"s3"},"tenants":[]}`, "field store.kind"},
		{"negative server bound", `{"listen":"127.0.0.1:1","server":{"max_wait_ms":-5},"tenants":[]}`, "field server.max_wait_ms"},
		{"log level", `{"listen":"127.0.0.1:1","log_level":"verbose","tenants":[]}`, `field log_level: "verbose" is not a log level: want one of debug, info, warn, error`},
		{"log level case", `{"listen":"127.0.0.1:1","log_level":"INFO","tenants":[]}`, "field log_level"},
		{"log format", `{"listen":"127.0.0.1:1","log_format":"logfmt","tenants":[]}`, `field log_format: "logfmt" is not a log format: want one of json, text`},
		{"yaml log format", "listen: 127.0.0.1:1\nlog_format: xml\ntenants: []\n", "field log_format"},
		{"json unknown field", "{\n  \"listen\": \"127.0.0.1:1\",\n  \"tenant\": []\n}", `unknown field "tenant"`},
		{"json syntax line", "{\n  \"listen\": \"127.0.0.1:1\",\n  \"tenants\": [,]\n}", "line 3"},
		{"json type line", "{\n  \"listen\": 5\n}", "line 2"},
		{"yaml unknown field line", "listen: 127.0.0.1:1\ntenantz: []\n", "line 2: field tenantz not found"},
		{"yaml type line", "listen: 127.0.0.1:1\ntenants:\n  - name: a\n    quotas: {max_pending: lots}\n", "line 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serve.ParseConfig([]byte(tt.text))
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestLoadConfig_namesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "serve.yaml")
	require.NoError(t, os.WriteFile(p, []byte("listen: 1\n"), 0o600))
	_, err := serve.LoadConfig(p)
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "config "+p+": "), err.Error())

	_, err = serve.LoadConfig(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// NewLogger writes JSON or text lines at the level asked and above; a bad
// level or format is an error naming it.
func TestNewLogger(t *testing.T) {
	var b strings.Builder
	log, err := serve.NewLogger(&b, "warn", "text")
	require.NoError(t, err)
	log.Info("hidden")
	log.Warn("shown", "k", "v")
	require.Equal(t, 1, strings.Count(b.String(), "\n"), b.String())
	require.Contains(t, b.String(), "level=WARN msg=shown k=v")

	b.Reset()
	log, err = serve.NewLogger(&b, "", "")
	require.NoError(t, err)
	log.Debug("hidden")
	log.Info("shown")
	require.Contains(t, b.String(), `"level":"INFO","msg":"shown"`)
	require.NotContains(t, b.String(), "hidden")

	b.Reset()
	log, err = serve.NewLogger(&b, "debug", "json")
	require.NoError(t, err)
	log.Debug("shown")
	require.Contains(t, b.String(), `"level":"DEBUG"`)

	_, err = serve.NewLogger(&b, "trace", "json")
	require.ErrorContains(t, err, `"trace" is not a log level`)
	_, err = serve.NewLogger(&b, "info", "yaml")
	require.ErrorContains(t, err, `"yaml" is not a log format`)
}
