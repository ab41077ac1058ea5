package serve_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve"
)

// limits.model_bytes, the model budget, is taken by the HTTP API as by
// run_code's arguments: from a request (at its minimum, below it, past the
// tenant's, negative) and from a tenant's config, whose value is the
// tenant's default and ceiling. The text is cut to the budget; the value
// stays whole.
func TestServer_limits_modelBytes(t *testing.T) {
	const tenantBudget = 2 * api.MinModelBytes
	ts := newServer(t, func(c *serve.Config) {
		c.Tenants[1].Limits = serve.RunLimits{ModelBytes: tenantBudget}
	})
	const program = `return "x".repeat(30000)`
	tests := []struct {
		name    string
		key     string
		limits  string
		status  int
		maxText int    // the text's bound, when the request is accepted
		failure string // the 400's message, or the failed execution's
	}{
		{"the deployment's default", keyA, ``, http.StatusOK, api.DefaultModelBytes, ""},
		{"at the minimum", keyA, `{"model_bytes": 1024}`, http.StatusOK, api.MinModelBytes, ""},
		{"below the minimum", keyA, `{"model_bytes": 1023}`, http.StatusOK, 0, "model_bytes"},
		{"the tenant's", keyB, ``, http.StatusOK, tenantBudget, ""},
		{"past the tenant's: lowered to it", keyB, `{"model_bytes": 20000}`, http.StatusOK, tenantBudget, ""},
		{"below the tenant's", keyB, `{"model_bytes": 1500}`, http.StatusOK, 1500, ""},
		{"negative", keyA, `{"model_bytes": -1}`, http.StatusBadRequest, 0, "the execution request: field limits.model_bytes: -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"code": ` + quoteJSON(program)
			if tt.limits != "" {
				body += `, "limits": ` + tt.limits
			}
			status, out, _ := raw(t, http.MethodPost, ts.url+"/v1/executions", tt.key, body+"}")
			require.Equal(t, tt.status, status, out)
			if status != http.StatusOK {
				var e serve.ErrorEnvelope
				require.NoError(t, json.Unmarshal([]byte(out), &e))
				require.Equal(t, serve.CodeBadRequest, e.Error.Code)
				require.Equal(t, tt.failure, e.Error.Message)
				return
			}
			var st serve.ExecutionState
			require.NoError(t, json.Unmarshal([]byte(out), &st))
			if tt.failure != "" {
				require.Equal(t, serve.StatusFailed, st.Status)
				require.Equal(t, string(api.CodeInvalidArgs), st.Error.Code)
				require.Contains(t, st.Error.Message, tt.failure)
				return
			}
			require.Equal(t, serve.StatusCompleted, st.Status, out)
			require.LessOrEqual(t, len(st.Text), tt.maxText)
			require.Greater(t, len(st.Text), tt.maxText/2, "the text fills its budget")
			var v string
			require.NoError(t, json.Unmarshal(st.Value, &v))
			require.Equal(t, strings.Repeat("x", 30000), v, "the value stays whole")
		})
	}
}
