package serve_test

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/protocol"
)

type openAPIDoc struct {
	Paths      map[string]map[string]any `yaml:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]any `yaml:"properties"`
		} `yaml:"schemas"`
	} `yaml:"components"`
}

func TestOpenAPI_routesMatchHandlers(t *testing.T) {
	var doc openAPIDoc
	require.NoError(t, yaml.Unmarshal(serve.OpenAPI, &doc))
	var documented []string
	for path, item := range doc.Paths {
		for method := range item {
			if method != "parameters" {
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	ts := newServer(t, nil)
	var served []string
	for _, r := range serve.Routes(ts.srv) {
		served = append(served, r[0]+" "+r[1])
	}
	sort.Strings(documented)
	sort.Strings(served)
	require.Equal(t, served, documented, "openapi.yaml's paths and the handlers' routes differ")
}

// TestOpenAPI_operationIDs pins each route's operationId, the method name
// the clients generated from the document use (clients/), and requires a
// 4XX answer of every operation (scripts/openapi-lint.sh lints the rest).
func TestOpenAPI_operationIDs(t *testing.T) {
	var doc openAPIDoc
	require.NoError(t, yaml.Unmarshal(serve.OpenAPI, &doc))
	want := map[string]string{
		"POST /v1/executions":                   "createExecution",
		"GET /v1/executions/{id}":               "getExecution",
		"DELETE /v1/executions/{id}":            "cancelExecution",
		"POST /v1/executions/{id}/tool_results": "postToolResults",
		"POST /v1/executions/{id}/approvals":    "postApprovals",
		"GET /v1/executions/{id}/events":        "streamEvents",
		"DELETE /v1/sessions/{name}":            "deleteSession",
		"POST /v1/calls":                        "callTool",
		"POST /v1/plans":                        "createPlan",
		"GET /v1/tools":                         "listTools",
		"GET /v1/prompt":                        "getPrompt",
		"POST /mcp":                             "mcp",
		"GET /healthz":                          "healthz",
		"GET /readyz":                           "readyz",
		"GET /metrics":                          "metrics",
	}
	want["GET /v1/executions/{id}/handles/{handle}"] = "getHandle" // docs/security.md, "Handles"
	got := map[string]string{}
	for path, item := range doc.Paths {
		for method, op := range item {
			if method == "parameters" {
				continue
			}
			route := strings.ToUpper(method) + " " + path
			op, _ := op.(map[string]any)
			got[route], _ = op["operationId"].(string)
			responses, _ := op["responses"].(map[string]any)
			has4xx := false
			for code := range responses {
				has4xx = has4xx || (len(code) == 3 && code[0] == '4')
			}
			require.True(t, has4xx, "%s has no 4XX response", route)
		}
	}
	require.Equal(t, want, got)
}

func TestOpenAPI_schemasMatchTypes(t *testing.T) {
	var doc openAPIDoc
	require.NoError(t, yaml.Unmarshal(serve.OpenAPI, &doc))
	types := map[string]any{
		"RunLimits": serve.RunLimits{}, "ClientTool": serve.ClientTool{}, "ExecutionRequest": serve.ExecutionRequest{},
		"Stats": serve.Stats{}, "CallRecord": serve.CallRecord{}, "PendingCall": serve.PendingCall{},
		"ExecutionState": serve.ExecutionState{}, "ToolResultError": serve.ToolResultError{}, "ToolResult": serve.ToolResult{},
		"ToolResultsRequest": serve.ToolResultsRequest{}, "CallRequest": serve.CallRequest{}, "CallResponse": serve.CallResponse{},
		"ErrorBody": serve.ErrorBody{}, "ErrorEnvelope": serve.ErrorEnvelope{}, "Event": serve.Event{},
		"ApprovalsRequest": serve.ApprovalsRequest{}, "Decision": serve.Decision{},
		"PlanRequest": serve.PlanRequest{}, "Plan": plan.Plan{}, "PlanCall": plan.Call{}, "PlanReason": plan.Reason{}, "PlanRules": plan.Rules{},
		"Label": protocol.Label{}, "Accepts": protocol.Accepts{}, "PolicyViolation": api.PolicyViolation{},
		"Handle": api.Handle{}, "HandleValue": protocol.HandleValue{},
	}
	var names []string
	for name := range doc.Components.Schemas {
		names = append(names, name)
	}
	for name := range types {
		require.True(t, slices.Contains(names, name), "type %s is not documented in openapi.yaml", name)
	}
	for name, schema := range doc.Components.Schemas {
		v, ok := types[name]
		require.True(t, ok, "openapi.yaml documents schema %s, which no Go type carries", name)
		var documented []string
		for p := range schema.Properties {
			documented = append(documented, p)
		}
		sort.Strings(documented)
		require.Equal(t, jsonFields(reflect.TypeOf(v)), documented, "schema %s", name)
	}
}

func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		tag := strings.Split(f.Tag.Get("json"), ",")[0]
		if !f.IsExported() || tag == "-" {
			continue
		}
		out = append(out, tag)
	}
	sort.Strings(out)
	return out
}
