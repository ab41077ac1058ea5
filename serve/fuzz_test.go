package serve_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// FuzzDecoders feeds one input to every request decoder: each either
// fails with an error or returns a request that re-encodes, never panics.
func FuzzDecoders(f *testing.F) {
	for _, s := range []string{
		`{"code":"return 1"}`,
		`{"code":"x","client_tools":[{"name":"ask","description":"d","input_schema":{"type":"object"}}],"limits":{"wall_ms":5},"wait":false}`,
		`{"results":[{"id":"c1","ok":true,"value":1},{"id":"c2","ok":false,"error":{"message":"no"}}]}`,
		`{"name":"run_code","arguments":{"code":"return 1"}}`,
		`{"decisions":[{"id":"c1","approve":true},{"id":"c2","approve":false,"reason":"no"}]}`,
		`{"code":"x","workspace_state":"w","session":"w"}`, `{"code":"x","session":"s","keep_state":true,"workspace_state":"t"}`,
		`{"code":"x","client_tools":[{"name":"pay","input_schema":{"type":"object"},"labels":{"integrity":"untrusted"},"accepts":{"confidentiality":"private","args":{"to":{"integrity":"trusted"}},"on_violation":"ask"},"constraints":["args.amount <= 10"],"calls_per_run":1,"cost":2,"max_cost":5}]}`,
		`{"code":"x","client_tools":[{"name":"pay","input_schema":{"type":"object"},"constraints":["args.("],"labels":{"integrity":"x"}}]}`,
		`{"code":`, `[]`, `null`, `{"code":"a"} x`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if req, err := serve.DecodeExecutionRequest(data); err == nil {
			require.NotEmpty(t, req.Code)
			if req.Session != "" && req.WorkspaceState != "" {
				require.Equal(t, req.Session, req.WorkspaceState, "two workspace states accepted")
			}
			_, err := json.Marshal(req)
			require.NoError(t, err)
		}
		if req, err := serve.DecodeToolResults(data); err == nil {
			for _, r := range req.Results {
				require.NotEmpty(t, r.ID)
				require.Equal(t, r.OK, r.Error == nil)
			}
		}
		if req, err := serve.DecodeApprovals(data); err == nil {
			require.NotEmpty(t, req.Decisions)
			seen := map[string]bool{}
			for _, d := range req.Decisions {
				require.NotEmpty(t, d.ID)
				require.False(t, seen[d.ID], "an id decided twice accepted")
				seen[d.ID] = true
			}
		}
		if req, err := serve.DecodeCallRequest(data); err == nil {
			require.NotEmpty(t, req.Name)
		}
		_, _ = serve.ParseConfig(data)
	})
}
