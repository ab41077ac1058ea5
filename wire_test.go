package ptcx_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
)

type cityArgs struct {
	City string `json:"city" jsonschema:"the city's name"`
}

type forecast struct {
	City    string  `json:"city"`
	Celsius float64 `json:"celsius"`
}

func stationWeather(_ context.Context, in cityArgs) (forecast, error) {
	if in.City == "Atlantis" {
		return forecast{}, errors.New("no weather station in Atlantis")
	}
	return forecast{City: in.City, Celsius: 18}, nil
}

var weatherTool = ptcx.Func("weather", "The weather in a city.", stationWeather, ptcx.ConcurrencySafe())

// A wire format: how a model's tool calls are read and its results given
// back.
type wireFormat struct {
	decode func([]byte) ([]ptcx.Call, error)
	encode func([]ptcx.Result) any
}

var wireFormats = map[string]wireFormat{
	"openai": {ptcx.OpenAICalls, func(rs []ptcx.Result) any {
		out := make([]ptcx.OpenAIToolMessage, len(rs))
		for i, r := range rs {
			out[i] = ptcx.OpenAIResult(r)
		}
		return out
	}},
	"responses": {ptcx.ResponsesCalls, func(rs []ptcx.Result) any {
		out := make([]ptcx.ResponsesOutput, len(rs))
		for i, r := range rs {
			out[i] = ptcx.ResponsesResult(r)
		}
		return out
	}},
	"anthropic": {ptcx.AnthropicCalls, func(rs []ptcx.Result) any { return ptcx.AnthropicResults(rs...) }},
}

// Round trips over the documented payload shapes in testdata/wire: every
// tool call decoded, executed, and answered in the API's own shape (the
// replies are golden files).
func TestWire_roundTrip(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "wire", "*.json"))
	require.NoError(t, err)
	require.Len(t, paths, 10)
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			format := wireFormats[strings.SplitN(name, "_", 2)[0]]
			require.NotNil(t, format.decode, "testdata/wire files are named <format>_<shape>.json")
			payload, err := os.ReadFile(path)
			require.NoError(t, err)
			calls, err := format.decode(payload)
			require.NoError(t, err)
			h := newHost(t, ptcx.WithTools(addTool, weatherTool))
			results := make([]ptcx.Result, len(calls))
			for i, c := range calls {
				require.Nil(t, c.Problem())
				results[i] = h.Execute(context.Background(), c)
				require.Equal(t, c.ID, results[i].ID, "the reply answers the model's own id")
			}
			reply, err := json.MarshalIndent(format.encode(results), "", "  ")
			require.NoError(t, err)
			golden(t, filepath.Join("wire", name+".reply.golden"), string(reply)+"\n")
		})
	}
}

// check is what one malformed or unusual item must give.
type check struct {
	name    string
	payload string
	calls   int    // how many calls decode
	id      string // the first call's id
	code    api.Code
	text    string // the model's text for the first call (contains)
}

func runChecks(t *testing.T, format wireFormat, checks []check) {
	t.Helper()
	h := newHost(t, ptcx.WithTools(addTool, weatherTool))
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := format.decode([]byte(tc.payload))
			require.NoError(t, err)
			require.Len(t, calls, tc.calls)
			if tc.calls == 0 {
				return
			}
			r := h.Execute(context.Background(), calls[0])
			require.Equal(t, tc.id, r.ID)
			if tc.code == "" {
				require.Nil(t, r.Err)
			} else {
				require.NotNil(t, r.Err)
				require.Equal(t, tc.code, r.Err.Code)
			}
			b, err := json.Marshal(format.encode([]ptcx.Result{r}))
			require.NoError(t, err)
			require.Contains(t, string(b), tc.text)
		})
	}
}

func TestOpenAICalls_items(t *testing.T) {
	runChecks(t, wireFormats["openai"], []check{
		{"arguments that are not JSON", `{"id":"c1","type":"function","function":{"name":"add","arguments":"{\"a\":1,"}}`,
			1, "c1", api.CodeInvalidArgs, `"content":"INVALID_ARGS: arguments are not valid JSON: unexpected EOF"`},
		{"arguments that are an array, in the string", `{"id":"c1","type":"function","function":{"name":"add","arguments":"[1,2]"}}`,
			1, "c1", api.CodeInvalidArgs, `"content":"INVALID_ARGS: arguments must be a JSON object, got an array"`},
		{"arguments that are an array, not a string", `{"id":"c1","type":"function","function":{"name":"add","arguments":[1,2]}}`,
			1, "c1", api.CodeInvalidArgs, `arguments must be a JSON object, got an array`},
		{"arguments that are a JSON string twice", `{"id":"c1","type":"function","function":{"name":"add","arguments":"\"{\\\"a\\\":1}\""}}`,
			1, "c1", api.CodeInvalidArgs, `arguments must be a JSON object, got a string`},
		{"arguments that miss a property", `{"id":"c1","type":"function","function":{"name":"add","arguments":"{\"a\":1}"}}`,
			1, "c1", api.CodeInvalidArgs, `INVALID_ARGS: invalid arguments for add: arguments does not match the schema: at /: missing property 'b'`},
		{"empty arguments mean {}", `{"id":"c1","type":"function","function":{"name":"add","arguments":""}}`,
			1, "c1", api.CodeInvalidArgs, `missing properties 'a', 'b'`},
		{"arguments as an object (compatible servers)", `{"id":"c1","type":"function","function":{"name":"add","arguments":{"a":1,"b":1}}}`,
			1, "c1", "", `"content":"2"`},
		{"no id", `{"type":"function","function":{"name":"add","arguments":"{}"}}`,
			1, "", api.CodeInvalidArgs, `"tool_call_id":"","content":"INVALID_ARGS: the tool call has no \"id\": its result could not be matched to it"`},
		{"an id that is not a string", `{"id":7,"type":"function","function":{"name":"add","arguments":"{}"}}`,
			1, "", api.CodeInvalidArgs, `the tool call's \"id\" is a number, not a string`},
		{"no function", `{"id":"c1","type":"function"}`,
			1, "c1", api.CodeInvalidArgs, `the tool call has no tool name (\"function.name\")`},
		{"a function that is not an object", `{"id":"c1","type":"function","function":"add"}`,
			1, "c1", api.CodeInvalidArgs, `the tool call's \"function\" is a string, not an object`},
		{"a name that is not a string", `{"id":"c1","type":"function","function":{"name":["add"]}}`,
			1, "c1", api.CodeInvalidArgs, `the tool call's \"function.name\" is an array, not a string`},
		{"a custom tool call", `{"id":"c1","type":"custom","custom":{"name":"add","input":"1+2"}}`,
			1, "c1", api.CodeInvalidArgs, `tool calls of type \"custom\" are not supported: ptcx tools are function tools`},
		{"an unknown tool", `{"id":"c1","type":"function","function":{"name":"rm","arguments":"{}"}}`,
			1, "c1", api.CodeUnknownTool, `"content":"UNKNOWN_TOOL: unknown tool \"rm\""`},
		{"a message whose tool_calls are null", `{"role":"assistant","content":"hi","tool_calls":null}`, 0, "", "", ""},
		{"an empty tool_calls array", `[]`, 0, "", "", ""},
	})
}

func TestResponsesCalls_items(t *testing.T) {
	runChecks(t, wireFormats["responses"], []check{
		{"arguments that are not JSON", `{"type":"function_call","call_id":"c1","name":"add","arguments":"{a:1}"}`,
			1, "c1", api.CodeInvalidArgs, `"output":"INVALID_ARGS: arguments are not valid JSON: invalid character 'a' looking for beginning of object key string"`},
		{"arguments that are an array", `{"type":"function_call","call_id":"c1","name":"add","arguments":"[]"}`,
			1, "c1", api.CodeInvalidArgs, `arguments must be a JSON object, got an array`},
		{"no call_id (the item id is not the call's)", `{"type":"function_call","id":"fc_1","name":"add","arguments":"{}"}`,
			1, "", api.CodeInvalidArgs, `"call_id":"","output":"INVALID_ARGS: the tool call has no \"call_id\": its result could not be matched to it"`},
		{"no name", `{"type":"function_call","call_id":"c1","arguments":"{}"}`,
			1, "c1", api.CodeInvalidArgs, `the tool call has no tool name (\"name\")`},
		{"a tool failure", `{"type":"function_call","call_id":"c1","name":"weather","arguments":"{\"city\":\"Atlantis\"}"}`,
			1, "c1", api.CodeToolFailed, `{"type":"function_call_output","call_id":"c1","output":"TOOL_FAILED: no weather station in Atlantis"}`},
		{"a success", `{"type":"function_call","call_id":"c1","name":"add","arguments":"{\"a\":1,\"b\":2}"}`,
			1, "c1", "", `{"type":"function_call_output","call_id":"c1","output":"3"}`},
		{"a reasoning item", `{"type":"reasoning","id":"rs_1","summary":[]}`, 0, "", "", ""},
		{"an empty output", `{"object":"response","output":[]}`, 0, "", "", ""},
	})
}

func TestAnthropicCalls_items(t *testing.T) {
	runChecks(t, wireFormats["anthropic"], []check{
		{"input that is an array", `{"type":"tool_use","id":"t1","name":"add","input":[1,2]}`,
			1, "t1", api.CodeInvalidArgs, `{"type":"tool_result","tool_use_id":"t1","content":"INVALID_ARGS: arguments must be a JSON object, got an array","is_error":true}`},
		{"input that is a string", `{"type":"tool_use","id":"t1","name":"add","input":"{\"a\":1}"}`,
			1, "t1", api.CodeInvalidArgs, `arguments must be a JSON object, got a string`},
		{"no input means {}", `{"type":"tool_use","id":"t1","name":"add"}`,
			1, "t1", api.CodeInvalidArgs, `missing properties 'a', 'b'`},
		{"no id", `{"type":"tool_use","name":"add","input":{}}`,
			1, "", api.CodeInvalidArgs, `"tool_use_id":"","content":"INVALID_ARGS: the tool call has no \"id\": its result could not be matched to it","is_error":true`},
		{"no name", `{"type":"tool_use","id":"t1","input":{}}`,
			1, "t1", api.CodeInvalidArgs, `the tool call has no tool name (\"name\")`},
		{"a tool failure", `{"type":"tool_use","id":"t1","name":"weather","input":{"city":"Atlantis"}}`,
			1, "t1", api.CodeToolFailed, `"content":"TOOL_FAILED: no weather station in Atlantis","is_error":true`},
		{"a success has no is_error", `{"type":"tool_use","id":"t1","name":"add","input":{"a":1,"b":2}}`,
			1, "t1", "", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"3"}]}`},
		{"a user message of plain text", `{"role":"user","content":"hello"}`, 0, "", "", ""},
		{"a server tool", `{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}}`, 0, "", "", ""},
	})
}

// Payloads that are not one of the shapes are the host's problem: a Go
// error, saying what was expected.
func TestWire_payloadErrors(t *testing.T) {
	for _, tc := range []struct {
		format, payload, want string
	}{
		{"openai", `{"id":`, "ptcx: the OpenAI chat completion payload is not valid JSON"},
		{"openai", ``, "ptcx: the OpenAI chat completion payload is not valid JSON"},
		{"openai", `42`, "ptcx: the OpenAI chat completion payload is a number, not an object or an array"},
		{"openai", `{"object":"list"}`, `payload has none of "choices", "tool_calls", "role", "function" or "type"`},
		{"openai", `{"choices":[]}`, "has 0 choices: pass the message of the one the conversation continues with"},
		{"openai", `{"choices":[{"message":{}},{"message":{}}]}`, "has 2 choices"},
		{"openai", `{"choices":{"message":{}}}`, `"choices" is an object, not an array`},
		{"openai", `{"choices":[{"index":0}]}`, `the choice's "message" is empty, not an object`},
		{"openai", `{"choices":[7]}`, `the choice is a number, not an object`},
		{"openai", `{"role":"assistant","tool_calls":{"id":"x"}}`, `"tool_calls" is an object, not an array`},
		{"openai", `[{"id":"c1"},"call"]`, "tool call 1 is a string, not an object"},
		{"responses", `"hi"`, "ptcx: the OpenAI response payload is a string, not an object or an array"},
		{"responses", `{"id":"resp_1"}`, `payload has neither "output" nor "type"`},
		{"responses", `{"output":"text"}`, `"output" is a string, not an array`},
		{"responses", `[{"call_id":"c1"}]`, `output item 0 has no "type"`},
		{"responses", `[{"type":1}]`, `output item 0: "type" is a number, not a string`},
		{"responses", `[null]`, `output item 0 is null, not an object`},
		{"anthropic", `true`, "ptcx: the Anthropic message payload is a boolean, not an object or an array"},
		{"anthropic", `{"role":"assistant"}`, `payload has neither "content" nor "type"`},
		{"anthropic", `{"content":{"type":"text"}}`, `"content" is an object, not an array`},
		{"anthropic", `[{"id":"t1"}]`, `content block 0 has no "type"`},
		{"anthropic", `[[]]`, `content block 0 is an array, not an object`},
	} {
		t.Run(tc.format+" "+tc.payload, func(t *testing.T) {
			calls, err := wireFormats[tc.format].decode([]byte(tc.payload))
			require.Nil(t, calls)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
