package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestScanFlat_shapes(t *testing.T) {
	for _, tt := range []struct {
		text string
		flat bool
	}{
		{`{}`, true},
		{` { } `, true},
		{`{"i":1}`, true},
		{"{\n\t\"path\" : \"a.txt\" ,\r\"n\":-0.5e+3,\"b\":true,\"f\":false,\"z\":null}", true},
		{`{"s":"a\"b\\c\/\b\f\n\r\t\u00e9\uABCD"}`, true},
		{`{"é":"ü"}`, true},
		{`{"s":"` + "\xff" + `"}`, true}, // json.Valid does not check a value's UTF-8
		{`{"a":{}}`, false},              // nested: not flat
		{`{"a":[1]}`, false},
		{`{"\u0061":1}`, false},         // an escaped key: the general way decodes it
		{`{"` + "\xff" + `":1}`, false}, // a key in invalid UTF-8
		{`{"a":1,"a":2}`, false},        // a duplicate: the general way reports it
		{`{"a":1,}`, false},             // invalid from here on
		{`{"a":1 "b":2}`, false},
		{`{"a" 1}`, false},
		{`{a:1}`, false},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{`{"a":.5}`, false},
		{`{"a":1e}`, false},
		{`{"a":-}`, false},
		{`{"a":+1}`, false},
		{`{"a":1x}`, false},
		{`{"a":tru}`, false},
		{`{"a":nul}`, false},
		{`{"a":"x}`, false},
		{`{"a":"\x"}`, false},
		{`{"a":"\u12"}`, false},
		{`{"a":"` + "\x01" + `"}`, false},
		{`{"a":1}x`, false},
		{`{"a":1}{}`, false},
		{`[1]`, false},
		{`"x"`, false},
		{``, false},
		{`{`, false},
		{`{"a":`, false},
	} {
		var o flatObject
		require.Equal(t, tt.flat, scanFlat([]byte(tt.text), &o), tt.text)
		if tt.flat {
			require.True(t, json.Valid([]byte(tt.text)), "flat but not valid JSON: %s", tt.text)
		}
	}
}

func TestScanFlat_kinds(t *testing.T) {
	var o flatObject
	b := []byte(`{"s":"x","i":-12,"z":0,"f":1.5,"e":1e3,"b":false,"n":null}`)
	require.True(t, scanFlat(b, &o))
	require.Equal(t, int8(7), o.n)
	want := []quickTypes{qString, qNumber | qInteger, qNumber | qInteger, qNumber, qNumber, qBoolean, qNull}
	for i, k := range want {
		require.Equal(t, k, o.fields[i].kind, string(o.key(b, i)))
	}
	require.Equal(t, "s", string(o.key(b, 0)))
}

// objectOf returns an object of n fields, each "kI":I.
func objectOf(n int) string {
	f := make([]string, n)
	for i := range f {
		f[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return "{" + strings.Join(f, ",") + "}"
}

func TestScanFlat_maxFlatFields(t *testing.T) {
	for n, flat := range map[int]bool{maxFlatFields - 1: true, maxFlatFields: true, maxFlatFields + 1: false} {
		var o flatObject
		require.Equal(t, flat, scanFlat([]byte(objectOf(n)), &o), "%d fields", n)
		m, err := ParseArgs(json.RawMessage(objectOf(n)))
		require.Nil(t, err, "%d fields are still arguments, read the general way", n)
		require.Len(t, m, n)
	}
}

func TestScanFlat_maxFlatBytes(t *testing.T) {
	// {"s":"xxx…"} of exactly size bytes.
	of := func(size int) []byte { return []byte(`{"s":"` + strings.Repeat("x", size-len(`{"s":""}`)) + `"}`) }
	for size, flat := range map[int]bool{maxFlatBytes - 1: true, maxFlatBytes: true, maxFlatBytes + 1: false} {
		b := of(size)
		require.Len(t, b, size)
		var o flatObject
		require.Equal(t, flat, scanFlat(b, &o), "%d bytes", size)
		m, err := ParseArgs(b)
		require.Nil(t, err, "%d bytes are still arguments, read the general way", size)
		require.Len(t, m["s"], size-len(`{"s":""}`))
	}
}

func TestReadArgs_flatAndGeneralAgree(t *testing.T) {
	for _, text := range []string{``, `{}`, `{"i":1}`, `{"a":"x","b":[1,{"c":null}]}`, `{"\u0061":2}`} {
		var a Args
		require.Nil(t, ReadArgs(json.RawMessage(text), &a), text)
		want, err := parseArgs(json.RawMessage(orEmptyObject(text)))
		require.Nil(t, err)
		require.Equal(t, want, a.Map(), text)
	}
	for _, text := range []string{`[]`, `{"a":1,"a":2}`, `{"a":`, `nope`} {
		var a Args
		err := ReadArgs(json.RawMessage(text), &a)
		_, want := parseArgs(json.RawMessage(text))
		require.NotNil(t, err, text)
		require.Equal(t, want.Message, err.Message, text)
		require.Equal(t, api.CodeInvalidArgs, err.Code, text)
	}
}

// Lookup and Has answer as the decoded map does, and of a flat object
// without decoding it.
func TestArgs_LookupAndHas_asTheMap(t *testing.T) {
	names := []string{"i", "s", "e", "t", "n", "f", "a", "b", "c", "", "x", "\u0061"}
	for _, text := range []string{``, `{}`, `{"i":1}`, `{"s":"x","e":"\u00e9\n","t":true,"n":null,"f":-1.5e3}`,
		`{"a":"x","b":[1,{"c":null}]}`, `{"\u0061":2}`, `{"":0}`} {
		var a Args
		require.Nil(t, ReadArgs(json.RawMessage(text), &a), text)
		flat := a.flat.n >= 0
		var got []any
		for _, name := range names {
			v, ok := a.Lookup(name)
			require.Equal(t, ok, a.Has(name), "%s %q", text, name)
			got = append(got, v, ok)
		}
		if flat {
			require.Nil(t, a.m, "%s: a flat object is not decoded", text)
		}
		m := a.Map()
		for i, name := range names {
			v, ok := m[name]
			require.Equal(t, v, got[2*i], "%s %q", text, name)
			require.Equal(t, ok, got[2*i+1], "%s %q", text, name)
		}
	}
}

func orEmptyObject(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

func TestDefinition_Validate_matchesValidateArgs(t *testing.T) {
	schemas := []string{
		`{"type":"object","properties":{"i":{"type":"integer"},"s":{"type":"string"}},"required":["i"],"additionalProperties":false}`,
		`{"type":"object","properties":{"i":{"type":"integer","minimum":0}}}`, // not quick: the full validator on the decoded map
	}
	args := []string{`{"i":1}`, `{"i":1.5}`, `{"i":-1}`, `{"s":"x"}`, `{"i":1,"x":true}`, `{"i":1,"s":2}`, `{"i":{"n":1}}`, `{"i":"1"}`}
	for _, schema := range schemas {
		d, err := New(api.Schema{Name: "t", InputSchema: json.RawMessage(schema)},
			func(context.Context, api.Input) (api.Output, error) { return api.Output{}, nil }, nil)
		require.NoError(t, err)
		for _, text := range args {
			var a Args
			require.Nil(t, ReadArgs(json.RawMessage(text), &a))
			m, perr := ParseArgs(json.RawMessage(text))
			require.Nil(t, perr)
			require.Equal(t, d.ValidateArgs(m), d.Validate(&a), "%s against %s", text, schema)
		}
	}
}

func TestValidJSON_matchesEncodingJSON(t *testing.T) {
	for _, text := range []string{`{"i":1}`, `{"i":1,}`, `{"a":{"b":[1,2]}}`, `[1,2`, `"x"`, `null`, ``, `{"a":1}x`, objectOf(maxFlatFields + 1)} {
		require.Equal(t, json.Valid([]byte(text)), ValidJSON([]byte(text)), text)
	}
}

// FuzzScanFlat: what scanFlat calls flat is valid JSON, an object without a
// key twice, whose fields are the decoded map's, with the same types.
func FuzzScanFlat(f *testing.F) {
	for _, s := range []string{`{}`, `{"i":1}`, `{"a":"x\n","b":-1.5e3,"c":true,"d":null}`, `{"a":1,"a":2}`,
		`{"a":{}}`, `{"é":"\u00e9"}`, `{"a":01}`, objectOf(maxFlatFields)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var o flatObject
		flat := scanFlat(b, &o)
		require.Equal(t, json.Valid(b), ValidJSON(b))
		if !flat {
			return
		}
		require.True(t, json.Valid(b), "flat but not valid: %q", b)
		m, err := parseArgs(b)
		require.Nil(t, err, "flat but not arguments: %q", b)
		require.Len(t, m, int(o.n))
		for i := range int(o.n) {
			v, ok := m[string(o.key(b, i))]
			require.True(t, ok, "key %q of %q", o.key(b, i), b)
			for _, k := range []quickTypes{qString, qInteger, qNumber, qBoolean, qNull} {
				require.Equal(t, k.holds(v), o.fields[i].kind&k != 0, "type %d of key %q of %q", k, o.key(b, i), b)
			}
		}
	})
}

// FlatStrings gives a flat object's string fields, key and contents, in
// order, when every string is its own bytes; for anything else (an escape,
// bytes that are not UTF-8, what scanFlat refuses) it gives nothing.
func TestFlatStrings(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string // key=value
		ok   bool
	}{
		{`{}`, nil, true},
		{`{"n":1,"b":true,"z":null}`, nil, true},
		{` {"path" : "a.txt", "n":2, "q":"é"} `, []string{"path=a.txt", "q=é"}, true},
		{`{"a":"","b":"x"}`, []string{"a=", "b=x"}, true},
		{`{"a":"x","b":"\n"}`, nil, false},
		{`{"a":"x","b":"\u0041"}`, nil, false},
		{"{\"a\":\"\xff\"}", nil, false},
		{`{"a":"x","a":"y"}`, nil, false},
		{`{"a":{"b":"x"}}`, nil, false},
		{`{"a":"x"`, nil, false},
	} {
		var got []string
		ok := FlatStrings([]byte(tt.in), func(k, v []byte) { got = append(got, string(k)+"="+string(v)) })
		require.Equal(t, tt.ok, ok, tt.in)
		require.Equal(t, tt.want, got, tt.in)
	}
}
