package sdkgen

import (
	"net/url"
	"strconv"
	"strings"
)

// ref renders a `$ref`. A local JSON pointer (`#`, `#/$defs/X`, `#/definitions/X`, or any other
// pointer into the same document) becomes a named type, so recursive and mutually recursive
// schemas render as recursive type aliases. Anything else (another document, an anchor, a
// pointer to nothing) is `unknown /* reason */`.
func (d *document) ref(ref string, c ctx) expr {
	frag, isLocal := strings.CutPrefix(ref, "#")
	if !isLocal {
		return unknownExpr("non-local $ref " + ref)
	}
	ptr, err := url.PathUnescape(frag)
	if err != nil {
		return unknownExpr("invalid $ref " + ref)
	}
	if ptr != "" && !strings.HasPrefix(ptr, "/") {
		return unknownExpr("$ref to an anchor is not supported: " + ref)
	}
	nt, ok := d.types[ptr]
	if !ok {
		target, found := resolvePointer(d.root, ptr)
		if !found {
			return unknownExpr("unresolved $ref " + ref)
		}
		if _, isSchema := target.(*object); !isSchema {
			if _, isBool := target.(bool); !isBool {
				return unknownExpr("$ref target is not a schema: " + ref)
			}
		}
		nt = &namedType{name: d.names.alloc(d.prefix + defName(ptr)), schema: target, broken: map[*namedType]bool{}}
		d.types[ptr] = nt
		d.order = append(d.order, nt)
		d.pending = append(d.pending, nt)
	}
	if c.direct && d.cur != nil {
		if d.cur.broken[nt] {
			return unknownExpr("circular $ref " + ref)
		}
		d.cur.edges = append(d.cur.edges, nt)
	}
	return primary(nt.name)
}

// resolvePointer follows a decoded JSON pointer ("" is the whole document).
func resolvePointer(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case *object:
			next, ok := v.get(tok)
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 9 || tok != "0" && tok[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil
}

// defName derives the name part of a named type from the last token of its pointer:
// `/$defs/tree_node` → `TreeNode`.
func defName(ptr string) string {
	last := ptr[strings.LastIndexByte(ptr, '/')+1:]
	last = strings.ReplaceAll(strings.ReplaceAll(last, "~1", "/"), "~0", "~")
	if p := pascal(last); p != "" {
		return p
	}
	return "Type"
}

// breakCycles finds the references that would make TypeScript report "Type alias circularly
// references itself" (a cycle of named types through direct positions only: `type A = B | string;
// type B = A | number`) and renders them as unknown. One depth-first search finds every back edge;
// without them the direct-reference graph is acyclic, and re-rendering a type with some of its
// references broken adds no new ones.
func (d *document) breakCycles() {
	const (
		white = iota
		grey
		black
	)
	color := map[*namedType]int{}
	var rerender []*namedType
	var visit func(u *namedType)
	visit = func(u *namedType) {
		color[u] = grey
		for _, v := range u.edges {
			switch color[v] {
			case white:
				visit(v)
			case grey:
				if !u.broken[v] {
					if len(u.broken) == 0 {
						rerender = append(rerender, u)
					}
					u.broken[v] = true
				}
			}
		}
		color[u] = black
	}
	for _, nt := range d.order {
		if color[nt] == white {
			visit(nt)
		}
	}
	for _, nt := range rerender {
		d.renderNamed(nt)
	}
}
