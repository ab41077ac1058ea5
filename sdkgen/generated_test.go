package sdkgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// schemaGen builds random JSON Schemas together with an instance each schema accepts, so that a
// test can check that the rendered type is never narrower than the schema: every instance must
// be assignable to it.
type schemaGen struct {
	r    *rand.Rand
	defs map[string]any // $defs of the schema being built
	// defInstances holds an instance of each definition, for references to it.
	defInstances map[string]any
}

var genNames = []string{"a", "b", "class", "default", "with space", `q"uote`, "new\nline", "end*/", "0", "日本", "$x", "_"}

func (g *schemaGen) pick(n int) int { return g.r.IntN(n) }

func (g *schemaGen) name() string { return genNames[g.pick(len(genNames))] }

// scalar returns a random JSON scalar.
func (g *schemaGen) scalar() any {
	switch g.pick(5) {
	case 0:
		return g.name()
	case 1:
		return float64(g.pick(100) - 50)
	case 2:
		return 1.5
	case 3:
		return g.pick(2) == 0
	}
	return nil
}

// gen returns a schema and an instance of it.
func (g *schemaGen) gen(depth int) (schema map[string]any, instance any) {
	if depth <= 0 {
		switch g.pick(4) {
		case 0:
			return map[string]any{"type": "string"}, "s"
		case 1:
			return map[string]any{"type": "integer"}, 7
		case 2:
			return map[string]any{"type": "boolean"}, false
		}
		return map[string]any{}, []any{1, "x", nil}
	}
	switch g.pick(12) {
	case 0:
		values := []any{g.scalar(), g.scalar(), g.scalar()}
		return map[string]any{"enum": values}, values[g.pick(len(values))]
	case 1:
		_, v := g.gen(depth - 1)
		return map[string]any{"const": v}, v
	case 2:
		if g.pick(2) == 0 {
			return map[string]any{"type": []any{"string", "null"}}, nil
		}
		return map[string]any{"type": []any{"number", "null"}}, nil
	case 3:
		s, v := g.gen(depth - 1)
		return map[string]any{"type": "array", "items": s}, []any{v, v}
	case 4:
		return g.tuple(depth)
	case 5, 6, 7:
		return g.object(depth)
	case 8:
		s1, v1 := g.gen(depth - 1)
		s2, _ := g.gen(depth - 1)
		key := []string{"anyOf", "oneOf"}[g.pick(2)]
		if g.pick(2) == 0 {
			return map[string]any{key: []any{s1, s2}}, v1
		}
		return map[string]any{key: []any{s2, s1}}, v1
	case 9:
		return g.allOf(depth)
	case 10:
		return g.ref(depth)
	}
	s, v := g.gen(depth - 1)
	return s, v
}

func (g *schemaGen) tuple(depth int) (map[string]any, any) {
	n := 1 + g.pick(3)
	var prefix, inst []any
	for i := 0; i < n; i++ {
		s, v := g.gen(depth - 1)
		prefix = append(prefix, s)
		inst = append(inst, v)
	}
	schema := map[string]any{"type": "array", "prefixItems": prefix}
	minItems := g.pick(n + 1)
	schema["minItems"] = minItems
	switch g.pick(3) {
	case 0:
		schema["items"] = false
	case 1:
		s, v := g.gen(depth - 1)
		schema["items"] = s
		inst = append(inst, v)
	}
	if g.pick(2) == 0 && len(inst) > minItems {
		inst = inst[:minItems+g.pick(len(inst)-minItems)]
	}
	return schema, inst
}

func (g *schemaGen) object(depth int) (map[string]any, any) {
	props := map[string]any{}
	inst := map[string]any{}
	var required []any
	for i := 0; i < 1+g.pick(4); i++ {
		name := g.name()
		if props[name] != nil {
			continue
		}
		s, v := g.gen(depth - 1)
		if g.pick(3) == 0 {
			s["description"] = "about " + name + " */ \x01"
		}
		props[name] = s
		switch g.pick(3) {
		case 0:
			required = append(required, name)
			inst[name] = v
		case 1:
			inst[name] = v
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "required": required}
	switch g.pick(3) {
	case 0:
		schema["additionalProperties"] = false
	case 1:
		s, v := g.gen(depth - 1)
		schema["additionalProperties"] = s
		inst["extra key"] = v
	default:
		inst["anything else"] = map[string]any{"x": []any{1, nil}}
	}
	return schema, inst
}

// allOf intersects two open objects with different property names.
func (g *schemaGen) allOf(depth int) (map[string]any, any) {
	sa, va := g.gen(depth - 1)
	sb, vb := g.gen(depth - 1)
	a := map[string]any{"type": "object", "properties": map[string]any{"left": sa}, "required": []any{"left"}}
	b := map[string]any{"type": "object", "properties": map[string]any{"right": sb}}
	return map[string]any{"allOf": []any{a, b}}, map[string]any{"left": va, "right": vb}
}

// ref adds a definition (sometimes a recursive one) and refers to it.
func (g *schemaGen) ref(depth int) (map[string]any, any) {
	name := fmt.Sprintf("def %d/~x", len(g.defs))
	ptr := "#/$defs/" + strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
	ref := map[string]any{"$ref": ptr}
	g.defs[name] = true // reserved: definitions made while generating this one get other names
	if g.pick(2) == 0 {
		s, v := g.gen(depth - 1)
		g.defs[name], g.defInstances[name] = s, v
		return ref, v
	}
	// A list: {value, next?: List}.
	s, v := g.gen(depth - 1)
	g.defs[name] = map[string]any{
		"type": "object", "required": []any{"value"}, "additionalProperties": false,
		"properties": map[string]any{"value": s, "next": ref},
	}
	return ref, map[string]any{"value": v, "next": map[string]any{"value": v}}
}

// root generates an object schema with its $defs, and an instance.
func (g *schemaGen) root(depth int) (json.RawMessage, string) {
	g.defs, g.defInstances = map[string]any{}, map[string]any{}
	s, v := g.object(depth)
	s["$defs"] = g.defs
	schema, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	inst, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return schema, string(inst)
}

// TestDeclarations_typeCheck_generatedSchemas renders 150 random tools in one block and checks, in
// one tsc run, that the block is valid and that an instance of each input and output schema is
// assignable to the rendered argument and output types.
func TestDeclarations_typeCheck_generatedSchemas(t *testing.T) {
	t.Parallel()
	g := &schemaGen{r: rand.New(rand.NewPCG(4, 2026))}
	var tools []api.Schema
	var body strings.Builder
	for i := 0; i < 150; i++ {
		in, inInst := g.root(4)
		out, outInst := g.root(4)
		name := fmt.Sprintf("gen_%d", i)
		tools = append(tools, api.Schema{Name: name, InputSchema: in, OutputSchema: out})
		fmt.Fprintf(&body, "const in%d: Parameters<typeof tools.%s>[0] = %s;\n", i, name, inInst)
		fmt.Fprintf(&body, "const out%d: Awaited<ReturnType<typeof tools.%s>> = %s;\n", i, name, outInst)
	}
	body.WriteString("return null;")
	decls := mustDeclarations(t, tools)
	diags := runTSC(t, map[string]string{"gen_block.ts": decls, "gen_program.ts": asModule(decls, body.String())})
	if len(diags) > 0 {
		t.Logf("declarations:\n%s", decls)
	}
	require.Empty(t, diags)
}
