package sdkgen

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ptcx/ptcx/api"
)

// generatedOddTools are the odd cases too large to keep in testdata/odd.json.
func generatedOddTools() []api.Schema {
	var tools []api.Schema
	add := func(name, schema string) {
		tools = append(tools, api.Schema{Name: name, InputSchema: json.RawMessage(schema)})
	}

	huge := make([]string, 5000)
	for i := range huge {
		huge[i] = fmt.Sprintf("%q", fmt.Sprintf("value-%04d", i))
	}
	add("enum_huge", `{"type":"object","properties":{"v":{"enum":[`+strings.Join(huge, ",")+`]}}}`)

	var mixed []string
	for i := 0; i < 300; i++ {
		mixed = append(mixed, []string{fmt.Sprintf(`"s%d"`, i), fmt.Sprint(i), "true", "null", `{"k":1}`, "[1]"}[i%6])
	}
	add("enum_huge_mixed", `{"type":"object","properties":{"v":{"enum":[`+strings.Join(mixed, ",")+`]}}}`)

	add("deep_object", strings.Repeat(`{"type":"object","properties":{"a":`, 60)+`{"type":"string"}`+strings.Repeat(`}}`, 60))
	add("deep_array", `{"type":"object","properties":{"a":`+strings.Repeat(`{"type":"array","items":`, 60)+`{"type":"string"}`+strings.Repeat(`}`, 60)+`}}`)
	add("deep_const", `{"type":"object","properties":{"a":{"const":`+strings.Repeat(`[`, 60)+strings.Repeat(`]`, 60)+`}}}`)
	add("deep_anyof", `{"type":"object","properties":{"a":`+strings.Repeat(`{"anyOf":[{"type":"null"},`, 60)+`{"type":"string"}`+strings.Repeat(`]}`, 60)+`}}`)

	// A chain of 300 aliases closed into one cycle, and 30 definitions that all refer to all
	// others directly.
	var chain, dense []string
	for i := 0; i < 300; i++ {
		chain = append(chain, fmt.Sprintf(`"D%d":{"$ref":"#/$defs/D%d"}`, i, (i+1)%300))
	}
	add("alias_chain", `{"type":"object","properties":{"x":{"$ref":"#/$defs/D0"}},"$defs":{`+strings.Join(chain, ",")+`}}`)
	for i := 0; i < 30; i++ {
		var refs []string
		for j := 0; j < 30; j++ {
			refs = append(refs, fmt.Sprintf(`{"$ref":"#/$defs/E%d"}`, j))
		}
		refs = append(refs, `{"type":"object","properties":{"next":{"$ref":"#/$defs/E0"}}}`)
		dense = append(dense, fmt.Sprintf(`"E%d":{"anyOf":[%s]}`, i, strings.Join(refs, ",")))
	}
	add("dense_cycles", `{"type":"object","properties":{"x":{"$ref":"#/$defs/E0"}},"$defs":{`+strings.Join(dense, ",")+`}}`)

	// Tool names that all sanitise to CX, each with definitions named like the others' types.
	for _, sep := range []string{".", "_", "-", " ", "+", "/", ":", "", "__", ".."} {
		add("c"+sep+"x", `{"type":"object","properties":{"a":{"$ref":"#/$defs/Args"},"b":{"$ref":"#/$defs/X2Args"},"c":{"$ref":"#/$defs/Output"}},"$defs":{"Args":{"type":"string"},"X2Args":{"type":"number"},"Output":{"type":"boolean"}}}`)
	}
	return tools
}
