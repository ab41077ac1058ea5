package python

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// decodeProgram awaits tools.echo, whose answer is the payload under test,
// then tools.raw, whose answer is the same bytes in base64, and compares
// what the first became (glue/decode.c, or json's scanner when it
// declines, or runtime.py's resume) with what json.loads makes of the
// bytes, as runtime.py's parse would: [equal, got, want].
const decodeProgram = `import json, base64
try:
    r = await tools.echo()
    got = ("ok", type(r).__name__, repr(r))
except ToolCallError as e:
    got = ("err", e.code)
raw = base64.b64decode(await tools.raw())
try:
    w = json.loads(raw.decode("utf-8")) if raw else None
    want = ("ok", type(w).__name__, repr(w))
except ValueError:
    want = ("err", "TOOL_FAILED")
[got == want, repr(got), repr(want)]`

// decodeSeeds are results the host may send, and some it never does.
var decodeSeeds = []string{
	`{"i":1}`, `{"a":1,"a":2,"b":[]}`, `[1,-0,0.5,-2.5e-3,1E400,-1e400,123456789012345678,1234567890123456789]`,
	`"plain"`, `"caf\u00e9"`, "\"caf\xc3\xa9\"", `"\ud800"`, `"a\"b"`, "\"tab\there\"", "\"\xff\"", `true`, `false`, `null`,
	`[]`, `{}`, `[[[[[[]]]]]]`, `{"k":{"k":{"k":[true,false,null]}}}`, ` {"i":1}`, `{"i": 1}`, "[1,\n2]",
	`NaN`, `-Infinity`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `true1`, `[1,]`, `{"a":}`, `{"a"1}`, `{1:2}`, `[`, `"`,
	``, `0`, `-0.0`, `1.5e308`, `4.9e-324`, `2.2250738585072014e-308`, `9007199254740993`, `[1e-7,100.0,1e16]`,
	`{"":""}`, "\"\x7f\"", "\"\xe2\x80\xa8\"", `"\u0000"`, `123456789012345678901234567890`,
	// decode.c's limits, at and past them: 18 and 19 digits, a number's text
	// of 63 and 64 bytes, 64 and 65 levels.
	`-999999999999999999`, `-1000000000000000000`,
	"1." + strings.Repeat("5", 61), "1." + strings.Repeat("5", 62),
	strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 65) + strings.Repeat("]", 65),
	`{"a":"x","b":"y\n"}`,
}

// FuzzDecode_matchesJSONLoads: a nested call's result is the Python value
// json.loads makes of the answer's bytes (or the same failure), whichever
// path read it.
func FuzzDecode_matchesJSONLoads(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	g := newGuest(f)
	first := true
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) > 160 {
			return // nesting deep enough for a RecursionError is not what this compares
		}
		if !first {
			g.call("ptcx_next")
			g.reset()
		}
		first = false
		g.tb = t
		st := g.drive(g.start(config{Code: decodeProgram, Tools: []string{"echo", "raw"}, Session: true}), func(c call) (int32, string) {
			if c.Name == "raw" {
				return 1, `"` + base64.StdEncoding.EncodeToString(payload) + `"`
			}
			return 1, string(payload)
		})
		if st != 0 {
			t.Fatalf("payload %q: status %d, error %s", payload, st, *g.r.errJSON)
		}
		var out []any
		if err := json.Unmarshal([]byte(g.value()), &out); err != nil || len(out) != 3 {
			t.Fatalf("payload %q: result %s", payload, g.value())
		}
		if out[0] != true {
			t.Fatalf("payload %q: got %v, json.loads gives %v", payload, out[1], out[2])
		}
	})
}
