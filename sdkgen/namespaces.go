package sdkgen

import (
	"sort"
	"strings"

	"github.com/ptcx/ptcx/api"
)

// nsNode is one namespace of dotted tool names: `fs` for "fs.read_file" and "fs.write_file".
// A program reaches "fs.read_file" as tools.fs.read_file besides tools["fs.read_file"]; the
// guest's prelude (guest/prelude.js, namespaces) builds the same tree by the same rule.
type nsNode struct {
	path     string               // the dotted path from tools: "fs", "a.b"
	keys     []string             // members in the order of the sorted tool names
	tools    map[string]*toolDecl // leaf members
	children map[string]*nsNode   // nested namespaces
}

// namespaceTree returns the top-level namespaces of decls (sorted by name), in order. A dotted
// name gets a namespace path when every segment is an identifier and none is "then" (the
// namespace would be a thenable), its first segment does not start with "$" (tools.$call) and is
// not a tool's name, no shorter dotted prefix of it is a tool's name, and it is not itself a
// prefix of a longer name (one key cannot be both a tool and a namespace). Other dotted names are
// reached only with brackets.
func namespaceTree(decls []*toolDecl) []*nsNode { return namespaceTreeOf(decls, nil) }

// namespaceTreeOf is namespaceTree where, when segmentOK is not nil, a dotted name also needs
// every segment to pass it (the Python stub's rule: every segment an attribute name).
func namespaceTreeOf(decls []*toolDecl, segmentOK func(string) bool) []*nsNode {
	names := make([]string, len(decls))
	for i, td := range decls {
		names[i] = td.tool.Name
	}
	byName, prefixes := nameSets(names)
	root := &nsNode{children: map[string]*nsNode{}}
	for _, td := range decls {
		parts := strings.Split(td.tool.Name, ".")
		if len(parts) < 2 || !namespaced(parts, byName, prefixes) || !allSegments(parts, segmentOK) {
			continue
		}
		node := root
		for _, seg := range parts[:len(parts)-1] {
			child, ok := node.children[seg]
			if !ok {
				path := seg
				if node.path != "" {
					path = node.path + "." + seg
				}
				child = &nsNode{path: path, tools: map[string]*toolDecl{}, children: map[string]*nsNode{}}
				node.children[seg] = child
				node.keys = append(node.keys, seg)
			}
			node = child
		}
		leaf := parts[len(parts)-1]
		node.tools[leaf] = td
		node.keys = append(node.keys, leaf)
	}
	out := make([]*nsNode, len(root.keys))
	for i, k := range root.keys {
		out[i] = root.children[k]
	}
	return out
}

func allSegments(parts []string, ok func(string) bool) bool {
	if ok == nil {
		return true
	}
	for _, p := range parts {
		if !ok(p) {
			return false
		}
	}
	return true
}

// nameSets returns the set of names and the set of their proper dotted prefixes ("a" and "a.b"
// for "a.b.c").
func nameSets(names []string) (byName, prefixes map[string]bool) {
	byName = make(map[string]bool, len(names))
	prefixes = map[string]bool{}
	for _, name := range names {
		byName[name] = true
		for i := 0; i < len(name); i++ {
			if name[i] == '.' {
				prefixes[name[:i]] = true
			}
		}
	}
	return byName, prefixes
}

// firstNamespaced returns the first name of tools, in sorted order, that is reached through a
// namespace, or "". segmentOK is namespaceTreeOf's (nil for TypeScript, pyName for Python).
func firstNamespaced(tools []api.Schema, segmentOK func(string) bool) string {
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if !t.Transport {
			names = append(names, t.Name)
		}
	}
	sort.Strings(names)
	byName, prefixes := nameSets(names)
	for _, name := range names {
		if parts := strings.Split(name, "."); len(parts) > 1 && namespaced(parts, byName, prefixes) && allSegments(parts, segmentOK) {
			return name
		}
	}
	return ""
}

func namespaced(parts []string, byName, prefixes map[string]bool) bool {
	if strings.HasPrefix(parts[0], "$") {
		return false
	}
	for j, seg := range parts {
		if seg == "then" || !isIdentifier(seg) {
			return false
		}
		if j < len(parts)-1 && byName[strings.Join(parts[:j+1], ".")] {
			return false
		}
	}
	return !prefixes[strings.Join(parts, ".")]
}

// writeNamespace writes node as a property of a type literal at indentation level indent:
// `fs: {` then its members, one a line, then `};`.
func writeNamespace(b *strings.Builder, node *nsNode, key string, indent int) {
	pad := indentation(indent)
	b.WriteString(pad + key + ": {\n")
	for _, k := range node.keys {
		if td, ok := node.tools[k]; ok {
			writeMember(b, td, k, indent+1)
			continue
		}
		writeNamespace(b, node.children[k], k, indent+1)
	}
	b.WriteString(pad + "};\n")
}
