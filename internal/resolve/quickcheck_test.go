package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestQuickSchema_onlySimpleSchemas(t *testing.T) {
	for _, tt := range []struct {
		schema string
		simple bool
	}{
		{`{"type":"object"}`, true},
		{`{"type":"object","description":"x","properties":{"a":{"type":"string","description":"y"}},"required":["a"]}`, true},
		{`{"type":"object","properties":{"a":{"type":["integer","null"]}},"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"a":{}}}`, true},
		{`{"properties":{"a":{"type":"string"}}}`, false},                               // no type: not an object schema
		{`{"type":"object","properties":{"a":{"type":"string","minLength":1}}}`, false}, // a constraint
		{`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"array"}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"object"}}}`, false},
		{`{"type":"object","properties":{"a":{"enum":["x"]}}}`, false},
		{`{"type":"object","properties":{"a":true}}`, false},
		{`{"type":"object","additionalProperties":{"type":"string"}}`, false},
		{`{"type":"object","$defs":{}}`, false},
		{`{"type":"object","patternProperties":{"^x":{}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"string","nullable":true}}}`, false},
		{`{"type":"object","properties":{"a":{"type":[]}}}`, false},
		{`{"type":"object","required":[1]}`, false},
	} {
		require.Equal(t, tt.simple, newQuickSchema(json.RawMessage(tt.schema)) != nil, tt.schema)
	}
}

func TestQuickSchema_vouchesOnlyForValidArguments(t *testing.T) {
	schema := `{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},` +
		`"b":{"type":"boolean"},"z":{"type":["string","null"]},"any":{}},"required":["s"],"additionalProperties":false}`
	q := newQuickSchema(json.RawMessage(schema))
	require.NotNil(t, q)
	for args, vouched := range map[string]bool{
		`{"s":"x"}`:                    true,
		`{"s":"x","i":-12,"n":1.5e3}`:  true,
		`{"s":"x","b":false,"z":null}`: true,
		`{"s":"x","any":3}`:            true,
		`{"s":"x","i":1.0}`:            false, // an integer, but only the full validator says so
		`{"s":"x","i":1.5}`:            false,
		`{"i":1}`:                      false, // s is required
		`{"s":1}`:                      false,
		`{"s":"x","extra":1}`:          false, // no additional properties
		`{"s":"x","any":{}}`:           false, // objects are not vouched for
		`{"s":"x","z":1}`:              false,
	} {
		decoded, err := ParseArgs(json.RawMessage(args))
		require.Nil(t, err)
		require.Equal(t, vouched, q.valid(decoded), args)
	}
}

// The quick check never accepts what the full validator refuses: random
// simple schemas against random arguments.
func TestQuickSchema_neverDisagreesWithTheValidator(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	types := []string{"string", "integer", "number", "boolean", "null"}
	values := []string{`"x"`, `""`, `0`, `-7`, `1.0`, `2.5`, `1e3`, `true`, `false`, `null`, `{}`, `[]`, `[1]`, `{"a":1}`,
		`123456789012345678901234567890`, `-0`}
	names := []string{"a", "b", "c", "d"}
	vouched := 0
	for range 3000 {
		props := map[string]any{}
		for _, n := range names {
			switch rng.IntN(4) {
			case 0: // not declared
			case 1:
				props[n] = map[string]any{}
			case 2:
				props[n] = map[string]any{"type": types[rng.IntN(len(types))]}
			case 3:
				i, j := rng.IntN(len(types)), rng.IntN(len(types)-1)
				if j >= i {
					j++
				}
				props[n] = map[string]any{"type": []string{types[i], types[j]}, "description": "d"}
			}
		}
		schema := map[string]any{"type": "object", "properties": props}
		var req []string
		for _, n := range names {
			if rng.IntN(3) == 0 {
				req = append(req, n)
			}
		}
		if req != nil {
			schema["required"] = req
		}
		if k := rng.IntN(3); k < 2 {
			schema["additionalProperties"] = k == 1
		}
		raw, _ := json.Marshal(schema)
		full, err := compileSchema("test", raw, true)
		require.NoError(t, err)
		q := newQuickSchema(raw)
		require.NotNil(t, q, "%s", raw)
		for range 10 {
			args := "{"
			for i, n := range append(names, "e") {
				if rng.IntN(2) == 0 {
					continue
				}
				if args != "{" {
					args += ","
				}
				args += fmt.Sprintf("%q:%s", n, values[(i+rng.IntN(len(values)))%len(values)])
			}
			args += "}"
			decoded, perr := ParseArgs(json.RawMessage(args))
			require.Nil(t, perr)
			var a Args
			require.Nil(t, ReadArgs(json.RawMessage(args), &a))
			if a.m == nil { // flat: the quick check on its fields says the same
				require.Equal(t, q.valid(decoded), q.validFlat(a.raw, &a.flat), args)
			}
			if q.valid(decoded) {
				vouched++
				require.Nil(t, validate(full, decoded, api.CodeInvalidArgs, "arguments"), "quick check vouched for %s against %s", args, raw)
			}
		}
	}
	require.Greater(t, vouched, 1000, "the quick check should vouch for many of these")
}

// A tool whose schema the quick check vouches for still refuses arguments
// with a key twice: the arguments are refused as they are decoded, before
// either check, whose map could not tell which value came first.
func TestDefinition_ValidateArgs_quickCheckedToolRefusesDuplicateKeys(t *testing.T) {
	d, err := New(api.Schema{Name: "read", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		func(context.Context, api.Input) (api.Output, error) { return api.Output{}, nil }, nil)
	require.NoError(t, err)
	require.NotNil(t, d.quick, "the schema is simple enough for the quick check")
	for _, args := range []string{`{"path":"a","path":"b"}`, `{"path":"a","x":[{"k":1,"k":1}]}`} {
		_, perr := ParseArgs(json.RawMessage(args))
		require.NotNil(t, perr, args)
		require.Equal(t, api.CodeInvalidArgs, perr.Code, args)
	}
	decoded, perr := ParseArgs(json.RawMessage(`{"path":"a"}`))
	require.Nil(t, perr)
	require.Nil(t, d.ValidateArgs(decoded))
}
