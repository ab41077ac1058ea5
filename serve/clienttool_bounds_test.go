package serve_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
)

// fullRegexp is an expression of exactly regexbound.MaxSize (2048)
// instructions, its repetitions expanded.
const fullRegexp = "x{1000}y{1000}z{48}"

// withTools is an execution request whose client tools have these
// input schemas.
func withTools(schemas ...string) []byte {
	tools := make([]string, len(schemas))
	for i, s := range schemas {
		tools[i] = fmt.Sprintf(`{"name":"t%d","input_schema":%s}`, i, s)
	}
	return []byte(`{"code":"return 1","client_tools":[` + strings.Join(tools, ",") + `]}`)
}

// sized pads a schema with a description to exactly n bytes.
func sized(n int) string {
	s := `{"type":"object","description":""}`
	return `{"type":"object","description":"` + strings.Repeat("d", n-len(s)) + `"}`
}

// nested is an object schema whose properties nest to depth levels of
// JSON (two per schema level, so depth is even).
func nested(depth int) string {
	inner := `{"type":"object"}`
	for range depth/2 - 1 {
		inner = `{"type":"object","properties":{"a":` + inner + `}}`
	}
	return inner
}

func patterns(exprs ...string) string {
	props := make([]string, len(exprs))
	for i, e := range exprs {
		props[i] = fmt.Sprintf(`"p%d":{"type":"string","pattern":%s}`, i, strconv.Quote(e))
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
}

// TestDecodeExecutionRequest_clientSchemaBounds: each bound on a client
// tool's schema below, at and above it, and the place a refusal names.
func TestDecodeExecutionRequest_clientSchemaBounds(t *testing.T) {
	full := make([]string, 32)
	for i := range full {
		full[i] = fullRegexp
	}
	tests := []struct {
		name string
		body []byte
		want string // "" when accepted
	}{
		{"schema size below", withTools(sized(serve.MaxClientSchemaBytes - 1)), ""},
		{"schema size at", withTools(sized(serve.MaxClientSchemaBytes)), ""},
		{"schema size above", withTools(`{"type":"object"}`, sized(serve.MaxClientSchemaBytes+1)),
			"field client_tools[1].input_schema: the schema is 65537 bytes, over the maximum of 65536 a client tool's schema may be"},
		{"output schema size above", []byte(`{"code":"return 1","client_tools":[{"name":"t","input_schema":{"type":"object"},"output_schema":` + sized(serve.MaxClientSchemaBytes+1) + `}]}`),
			"field client_tools[0].output_schema: the schema is 65537 bytes"},
		{"depth below", withTools(nested(serve.MaxJSONDepth - 2)), ""},
		{"depth at", withTools(nested(serve.MaxJSONDepth)), ""},
		{"depth above", withTools(nested(serve.MaxJSONDepth + 2)),
			"field client_tools[0].input_schema: the schema nests deeper than 128 levels (at byte"},
		{"pattern length at", withTools(patterns(strings.Repeat("[ab]", 1024))), ""},
		{"pattern length above", withTools(patterns("a", strings.Repeat("[ab]", 1024)+"a")),
			"field client_tools[0].input_schema.properties.p1.pattern: the regular expression is 4097 bytes, over the maximum of 4096 a client tool's may be"},
		{"pattern size below", withTools(patterns("x{1000}y{1000}z{47}")), ""},
		{"pattern size at", withTools(patterns(fullRegexp)), ""},
		{"pattern size above", withTools(patterns("x{1000}y{1000}z{49}")),
			`field client_tools[0].input_schema.properties.p0.pattern: the regular expression "x{1000}y{1000}z{49}" is too large: with its repetitions expanded it is more than 2048 instructions`},
		{"patternProperties key above", withTools(`{"type":"object","patternProperties":{"^a$":{},"x{1000}y{1000}z{49}":{}}}`),
			`field client_tools[0].input_schema.patternProperties["x{1000}y{1000}z{49}"]: the regular expression "x{1000}y{1000}z{49}" is too large`},
		{"pattern in an array and under a quoted key", withTools(`{"type":"object","properties":{"a b":{"anyOf":[{"type":"string"},{"pattern":"x{1000}y{1000}z{49}"}]}}}`),
			`field client_tools[0].input_schema.properties["a b"].anyOf[1].pattern: the regular expression`},
		{"anywhere: a pattern in data is bounded too", withTools(`{"type":"object","default":{"pattern":"x{1000}y{1000}z{49}"}}`),
			"field client_tools[0].input_schema.default.pattern: "},
		{"not an expression: left to the registry", withTools(patterns("((")), ""},
		{"the request's expressions together at", withTools(patterns(full[:16]...), patterns(full[16:]...)), ""},
		{"the request's expressions together above", withTools(patterns(full[:16]...), patterns(append(full[16:], "a")...)),
			"field client_tools[1].input_schema.properties.p9.pattern: the client tools' regular expressions come to more than 65536 instructions together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serve.DecodeExecutionRequest(tt.body)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// TestDecodeToolResults_depth: a result's value nests at most
// MaxJSONDepth levels; brackets in strings do not count.
func TestDecodeToolResults_depth(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + `"[[{{"` + strings.Repeat("]", n) }
	for _, tt := range []struct {
		name  string
		value string
		at    int // the offset named, 0 when accepted
	}{
		{"below", deep(serve.MaxJSONDepth - 1), 0},
		{"at", deep(serve.MaxJSONDepth), 0},
		{"above", deep(serve.MaxJSONDepth + 1), 128},
		{"objects above", strings.Repeat(`{"a\"{":`, serve.MaxJSONDepth+1) + "1" + strings.Repeat("}", serve.MaxJSONDepth+1), 128 * 8},
		{"the red team's 9,990 levels", deep(9990), -1}, // the body's own bound (internal/strictjson) refuses it first
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"results":[{"id":"c1","ok":true,"value":1},{"id":"c2","ok":true,"value":` + tt.value + `}]}`
			_, err := serve.DecodeToolResults([]byte(body))
			if tt.at == 0 {
				require.NoError(t, err)
				return
			}
			if tt.at < 0 {
				require.ErrorContains(t, err, "at results[1].value")
				require.ErrorContains(t, err, "the value nests deeper than 1000 levels of arrays and objects")
				return
			}
			require.ErrorContains(t, err, fmt.Sprintf("field results[1].value: the value nests deeper than 128 levels (at byte %d of it), the maximum; flatten it", tt.at))
		})
	}
}

// TestServer_clientToolBounds: over HTTP a refused schema or result is 400
// naming the field; the red team's 0.9 MB pattern is refused before
// anything compiles it.
func TestServer_clientToolBounds(t *testing.T) {
	ts := newServer(t, nil)
	redTeam := fmt.Sprintf(`{"type":"object","properties":{"x":{"type":"string","pattern":%q}}}`, strings.Repeat("a", 900_000))
	for _, tt := range []struct{ schema, want string }{
		{redTeam, "field client_tools[0].input_schema: the schema is 900067 bytes, over the maximum of 65536"},
		{patterns(strings.Repeat("a", 5000)), "field client_tools[0].input_schema.properties.p0.pattern: the regular expression is 5000 bytes, over the maximum of 4096"},
	} {
		code, body, _ := raw(t, http.MethodPost, ts.url+"/v1/executions", keyA, string(withTools(tt.schema)))
		require.Equal(t, http.StatusBadRequest, code, body)
		require.Contains(t, body, tt.want)
	}
	code, body, _ := raw(t, http.MethodPost, ts.url+"/v1/executions/ex_0/tool_results", keyA,
		`{"results":[{"id":"c","ok":true,"value":`+strings.Repeat("[", 200)+strings.Repeat("]", 200)+`}]}`)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "field results[0].value: the value nests deeper than 128 levels")
}

// computeSeconds reads tenant's ptcx_compute_seconds_total from ts.
func computeSeconds(t *testing.T, ts *testServer, tenant string) float64 {
	t.Helper()
	status, body, _ := raw(t, http.MethodGet, ts.url+"/metrics", "", "")
	require.Equal(t, http.StatusOK, status)
	m := regexp.MustCompile(`(?m)^ptcx_compute_seconds_total\{tenant="` + tenant + `"\} (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

// TestServer_hostWorkCharged: compiling a request's client tools and
// decoding its tool results move the tenant's compute counter, and no
// other tenant's, though no program runs (a syntax error; results for an
// execution that does not exist).
func TestServer_hostWorkCharged(t *testing.T) {
	ts := newServer(t, nil)
	full := make([]string, 32)
	for i := range full {
		full[i] = fullRegexp
	}
	req := fmt.Sprintf(`{"code":"return (","client_tools":[{"name":"t","input_schema":%s}]}`, patterns(full...))
	before, other := computeSeconds(t, ts, "a"), computeSeconds(t, ts, "b")
	code, body, _ := raw(t, http.MethodPost, ts.url+"/v1/executions?wait=true", keyA, req)
	require.Equal(t, http.StatusOK, code, body)
	var st serve.ExecutionState
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	require.Equal(t, serve.StatusFailed, st.Status, "the program did not run: %s", body)
	compiled := computeSeconds(t, ts, "a")
	require.Greater(t, compiled, before, "the schemas' compilation is charged")

	value := "[" + strings.Repeat(`"abcdefgh",`, 50_000) + "1]"
	code, body, _ = raw(t, http.MethodPost, ts.url+"/v1/executions/ex_0/tool_results", keyA, `{"results":[{"id":"c","ok":true,"value":`+value+`}]}`)
	require.Equal(t, http.StatusNotFound, code, body)
	require.Greater(t, computeSeconds(t, ts, "a"), compiled, "decoding the results is charged")
	require.Equal(t, other, computeSeconds(t, ts, "b"), "to the tenant whose request it was")
}

// BenchmarkDecodeToolResults_deep: a result nested 1,000 and 10,000
// levels (the red team's shape: 9,990 levels cost 1.3 s once its tool's
// output_schema was checked) is refused while it is decoded; the time per
// level should stay flat from 1k to 10k (linear).
func BenchmarkDecodeToolResults_deep(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		body := []byte(`{"results":[{"id":"c","ok":true,"value":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}]}`)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := serve.DecodeToolResults(body); err == nil {
					b.Fatal("a value past MaxJSONDepth was accepted")
				}
			}
		})
	}
}
