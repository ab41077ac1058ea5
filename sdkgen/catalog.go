package sdkgen

import (
	"encoding/json"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/text"
)

// The bounds past which a tool set is large: the SDK section then lists names and one-line
// descriptions only (DeferredSDKSection), and a program finds the rest in the sandbox with
// tools.$search and tools.$describe, from a catalog the executor hands the guest. Either bound
// makes a set large. 64 tools or 24 KiB of names, descriptions and schemas is about where full
// declarations pass 6k tokens, the most Cloudflare's Code Mode and Codex put in front of a model
// before deferring tools.
const (
	DeferTools = 64
	DeferBytes = 24 << 10
)

// Deferred reports whether tools (a scope's bindable tools; run_code is not counted) is a large
// tool set: more than DeferTools tools, or more than DeferBytes of names, descriptions and
// schemas. It reads lengths only, so the executor can ask on every run.
func Deferred(tools []api.Schema) bool {
	n, size := 0, 0
	for _, t := range tools {
		if t.Transport {
			continue
		}
		n++
		size += len(t.Name) + len(t.Description) + len(t.InputSchema) + len(t.OutputSchema)
	}
	return n > DeferTools || size > DeferBytes
}

// SummaryBytes bounds a tool's one-line description in the listing of a large tool set.
const SummaryBytes = 100

// Summary is the one-line description of a tool: the first sentence of its description (up to
// the first ". " or line break), on one line, at most SummaryBytes bytes (cut at the end of a
// word, or of a character when the word is long, with "…").
func Summary(description string) string { return summary(description, SummaryBytes) }

// summary is Summary within max bytes.
func summary(description string, max int) string {
	s := strings.TrimSpace(description)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	s = commentText(s)
	if len(s) > max {
		cut := text.Boundary(s, max-len("…"))
		if space := strings.LastIndexByte(s[:cut], ' '); space > cut/2 {
			cut = space // at a word's end when that keeps most of it
		}
		s = s[:cut] + "…"
	}
	return s
}

// CatalogEntry is what a program's tools.$search and tools.$describe know of one tool
// (docs/abi.md, the catalog).
type CatalogEntry struct {
	Name string `json:"name"`
	// Summary is Summary(Description): what $search returns beside the name.
	Summary     string `json:"summary"`
	Description string `json:"description"`
	// Declaration is TypeScript that adds the tool to the Tools interface of DeferredDeclarations:
	// its argument and output types, then `interface Tools { name(args): Promise<Output>; }`
	// (and the namespace interfaces a dotted name is reached through). Declarations of several
	// tools merge: the type names are unique across the whole set.
	Declaration  string          `json:"declaration"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// Catalog renders the catalog entries of tools (run_code left out), sorted by name. It fails as
// Declarations does.
func Catalog(tools []api.Schema) ([]CatalogEntry, error) {
	decls, names, err := compile(tools)
	if err != nil {
		return nil, err
	}
	// Each namespace is an interface, named after its path: a tool's declaration says
	// `fs: ToolsFs;` in Tools and declares its own member in ToolsFs.
	type via struct{ iface, key string }
	paths := map[*toolDecl][]via{}
	var walk func(node *nsNode, key string, above []via)
	walk = func(node *nsNode, key string, above []via) {
		v := via{iface: names.alloc("Tools" + pascal(node.path)), key: key}
		chain := append(append([]via(nil), above...), v)
		for _, k := range node.keys {
			if td, ok := node.tools[k]; ok {
				paths[td] = chain
				continue
			}
			walk(node.children[k], k, chain)
		}
	}
	for _, ns := range namespaceTree(decls) {
		walk(ns, ns.path, nil)
	}

	out := make([]CatalogEntry, len(decls))
	for i, td := range decls {
		var b strings.Builder
		writeTypes(&b, td)
		b.WriteString("interface Tools {\n")
		key := propertyKey(td.tool.Name)
		if td.tool.Name == "then" {
			key = ""
		}
		writeMember(&b, td, key, 1)
		chain := paths[td]
		if len(chain) > 0 {
			b.WriteString("  " + chain[0].key + ": " + chain[0].iface + ";\n")
		}
		b.WriteString("}\n")
		for j, v := range chain {
			b.WriteString("interface " + v.iface + " {\n")
			if j+1 < len(chain) {
				b.WriteString("  " + chain[j+1].key + ": " + chain[j+1].iface + ";\n")
			} else {
				writeMember(&b, td, td.tool.Name[strings.LastIndexByte(td.tool.Name, '.')+1:], 1)
			}
			b.WriteString("}\n")
		}
		out[i] = CatalogEntry{
			Name: td.tool.Name, Summary: Summary(td.tool.Description), Description: td.tool.Description,
			Declaration: b.String(), InputSchema: orNull(td.tool.InputSchema), OutputSchema: orNull(td.tool.OutputSchema),
		}
	}
	return out, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if strings.TrimSpace(string(raw)) == "" {
		return json.RawMessage("null")
	}
	return raw
}
