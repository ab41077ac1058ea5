package plan

import (
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
)

// toolCall records call when its callee is a path of names written in the
// program from tools (tools.x, tools["x"], tools.ns.x, tools.$call("x",
// ...)), and reports whether it did: anything else is walked as an
// ordinary expression, where a bare tools makes the plan dynamic.
func (w *walker) toolCall(call *ast.CallExpression) bool {
	path, ok := toolsPath(call.Callee)
	if !ok {
		return false
	}
	at := call.Callee.Idx0()
	if len(path) == 1 {
		switch name := path[0]; {
		case name == "$call":
			if len(call.ArgumentList) == 0 {
				return true // rejects: no name
			}
			tool, ok := literalString(call.ArgumentList[0])
			if !ok {
				w.dynamic(at, "tools.$call with a name computed at run time")
				return true
			}
			if w.bound[tool] {
				w.record(at, tool, call.ArgumentList[1:])
			}
			return true
		case name == "$search" || name == "$describe":
			return true // the catalog answers: no nested call
		case name == "then":
			return true // never a property of tools: no call
		case w.bound[name]:
			w.record(at, name, call.ArgumentList)
		}
		return true // not bound: the read throws, no call
	}
	for i := 1; i < len(path); i++ {
		prefix := strings.Join(path[:i], ".")
		if w.bound[prefix] || (i == 1 && strings.HasPrefix(prefix, "$")) {
			w.dynamic(at, "a property of the function of "+prefix+" can call it in ways the reader cannot follow")
			return true
		}
	}
	if name := strings.Join(path, "."); w.bound[name] {
		w.record(at, name, call.ArgumentList)
	}
	return true // a namespace or nothing: no call
}

// toolsPath returns the names of a callee that is tools followed by members
// named in the program, and whether it is one.
func toolsPath(e ast.Expression) ([]string, bool) {
	var rev []string
	for {
		switch x := e.(type) {
		case *ast.Optional:
			e = x.Expression
			continue
		case *ast.OptionalChain:
			e = x.Expression
			continue
		case *ast.DotExpression:
			rev = append(rev, string(x.Identifier.Name))
			e = x.Left
			continue
		case *ast.BracketExpression:
			s, ok := literalString(x.Member)
			if !ok {
				return nil, false
			}
			rev = append(rev, s)
			e = x.Left
			continue
		case *ast.Identifier:
			if x.Name != "tools" || len(rev) == 0 {
				return nil, false
			}
			path := make([]string, len(rev))
			for i, s := range rev {
				path[len(rev)-1-i] = s
			}
			return path, true
		}
		return nil, false
	}
}

// literalString is the value of a string literal or of a template with no
// substitution and no tag.
func literalString(e ast.Expression) (string, bool) {
	switch x := e.(type) {
	case *ast.StringLiteral:
		return string(x.Value), true
	case *ast.TemplateLiteral:
		if x.Tag == nil && len(x.Expressions) == 0 && len(x.Elements) == 1 && x.Elements[0].Valid {
			return string(x.Elements[0].Parsed), true
		}
	}
	return "", false
}

// record adds a call site of tool with the call's argument list.
func (w *walker) record(at file.Idx, tool string, args []ast.Expression) {
	c := Call{Tool: tool, Args: map[string]json.RawMessage{}, Computed: []string{}, Repeats: w.repeat > 0, Line: w.line(at)}
	if len(args) > 0 {
		readArgs(&c, args[0])
	}
	sort.Strings(c.Computed)
	w.plan.Calls = append(w.plan.Calls, c)
}

// readArgs fills c's Args and Computed from the call's first argument.
// Missing arguments are {} (the prelude sends them so).
func readArgs(c *Call, arg ast.Expression) {
	obj, ok := arg.(*ast.ObjectLiteral)
	if !ok {
		if _, undef := arg.(*ast.Identifier); undef && arg.(*ast.Identifier).Name == "undefined" {
			return
		}
		c.Computed = append(c.Computed, Opaque)
		return
	}
	computed := map[string]bool{}
	opaque := false
	for _, p := range obj.Value {
		kv, ok := p.(*ast.PropertyKeyed)
		if !ok {
			if ps, short := p.(*ast.PropertyShort); short && ps.Initializer == nil {
				name := string(ps.Name.Name)
				delete(c.Args, name)
				computed[name] = true
				continue
			}
			opaque = true // a spread
			continue
		}
		name, named := literalKey(kv)
		if !named {
			opaque = true
			continue
		}
		if v, ok := jsonLiteral(kv.Value); ok && kv.Kind == ast.PropertyKindValue {
			c.Args[name] = v
			delete(computed, name)
		} else {
			delete(c.Args, name)
			computed[name] = true
		}
	}
	for k := range computed {
		c.Computed = append(c.Computed, k)
	}
	if opaque {
		c.Computed = append(c.Computed, Opaque)
	}
}

// literalKey is the member name of a property that is not computed, not a
// number (whose name is its canonical text) and not __proto__ (which sets
// the prototype).
func literalKey(kv *ast.PropertyKeyed) (string, bool) {
	if kv.Computed {
		return "", false
	}
	s, ok := kv.Key.(*ast.StringLiteral)
	if !ok || s.Value == "__proto__" {
		return "", false
	}
	return string(s.Value), true
}

// jsonLiteral is the JSON text of an expression made only of literals.
func jsonLiteral(e ast.Expression) (json.RawMessage, bool) {
	v, ok := literalValue(e, 0)
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return b, true
}

// maxLiteralDepth bounds how deep a literal argument is read; a deeper one
// is computed.
const maxLiteralDepth = 32

func literalValue(e ast.Expression, depth int) (any, bool) {
	if depth > maxLiteralDepth {
		return nil, false
	}
	switch x := e.(type) {
	case *ast.StringLiteral:
		return string(x.Value), true
	case *ast.TemplateLiteral:
		return literalString(x)
	case *ast.BooleanLiteral:
		return x.Value, true
	case *ast.NullLiteral:
		return nil, true
	case *ast.NumberLiteral:
		return number(x.Value)
	case *ast.UnaryExpression:
		if n, ok := x.Operand.(*ast.NumberLiteral); ok && !x.Postfix && x.Operator.String() == "-" {
			if v, ok := number(n.Value); ok {
				return -v, true
			}
		}
	case *ast.ArrayLiteral:
		out := make([]any, 0, len(x.Value))
		for _, el := range x.Value {
			if el == nil {
				return nil, false
			}
			v, ok := literalValue(el, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	case *ast.ObjectLiteral:
		out := map[string]any{}
		for _, p := range x.Value {
			kv, ok := p.(*ast.PropertyKeyed)
			if !ok || kv.Kind != ast.PropertyKindValue {
				return nil, false
			}
			name, ok := literalKey(kv)
			if !ok {
				return nil, false
			}
			v, ok := literalValue(kv.Value, depth+1)
			if !ok {
				return nil, false
			}
			out[name] = v
		}
		return out, true
	}
	return nil, false
}

func number(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		return 0, false
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}
