package sdkgen

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestRouteExample(t *testing.T) {
	tests := []struct {
		name   string
		tool   api.Schema
		wantJS string // the program RouteExample's code holds
	}{
		{"required strings", api.Schema{Name: "write", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"mode":{"type":"string"}},"required":["content","path"]}`)},
			`return await tools.write({path: "...", content: "..."});`},
		{"every placeholder type", api.Schema{Name: "t", InputSchema: json.RawMessage(`{"type":"object","required":["s","i","n","b","a","o","e","c","u","z","r","x"],"properties":{
			"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":["number","null"]},"b":{"type":"boolean"},
			"a":{"type":"array"},"o":{"type":"object","properties":{"k":{"type":"integer"}},"required":["k"]},
			"e":{"enum":["fast","slow"]},"c":{"const":{"v":[1]}},"u":{"anyOf":[{"type":"boolean"},{"type":"string"}]},
			"z":{"type":"null"},"r":{"$ref":"#/$defs/R"}},"$defs":{"R":{"type":"integer"}}}`)},
			`return await tools.t({s: "...", i: 0, n: 0, b: false, a: [], o: {k: 0}, e: "fast", c: {v: [1]}, u: false, z: null, r: 0, x: "..."});`},
		{"nothing required", api.Schema{Name: "list", InputSchema: json.RawMessage(`{"type":"object","properties":{"dir":{"type":"string"}}}`)},
			`return await tools.list({});`},
		{"no schema", api.Schema{Name: "ping"}, `return await tools.ping({});`},
		{"quoted tool and property names", api.Schema{Name: "my.tool", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"content-type":{"type":"string"}},"required":["content-type"]}`)},
			`return await tools["my.tool"]({"content-type": "..."});`},
		{"unreadable schema", api.Schema{Name: "odd", InputSchema: json.RawMessage(`{"type":`)}, `return await tools.odd({});`},
		{"schema that is not an object", api.Schema{Name: "odd", InputSchema: json.RawMessage(`{"type":"string"}`)}, `return await tools.odd({});`},
		{"recursive required refs stop", api.Schema{Name: "deep", InputSchema: json.RawMessage(
			`{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"n":{"$ref":"#/$defs/N"}},"required":["n"]}}}`)},
			`return await tools.deep({n: {n: "..."}});`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RouteExample(tc.tool)
			require.Equal(t, tc.wantJS, exampleCode(t, got))
			require.Equal(t, `run_code {"code": `+quote(tc.wantJS)+`, "description": "..."}`, got)
		})
	}
}
