package sdkgen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ptcx/ptcx/api"
)

// ListingBytes bounds the listing of a large tool set in the SDK section. Every tool gets a line
// with its name and as much of its one-line description as an equal share of ListingBytes
// allows; when that share leaves no room for a useful description (fewer than
// minSummaryBytes), the lines have names only, and past ListingBytes the remaining tools are
// counted (and found with tools.$search). With the rules and the declarations the section stays
// within SectionBytes however many tools there are.
const (
	ListingBytes    = 18 << 10
	SectionBytes    = 24 << 10
	minSummaryBytes = 16
)

// deferredRules tells a model how to work with a large tool set.
const deferredRules = "- This tool set is large, so only names and one-line descriptions are listed below. A program finds the rest itself, " +
	"in the sandbox and at no cost in calls: `tools.$search(\"what it does\")` returns the best-matching tools (name and description, best first) " +
	"and `tools.$describe(name)` a tool's TypeScript declaration and JSON Schemas; both return at once (no await needed). " +
	"When unsure of a tool's arguments, describe it first: `return tools.$describe(\"fs.read_file\").declaration;`.\n"

// deferredTools declares what a program gets on tools when the tool set is large: the catalog
// functions and $call. A tool's declaration ($describe) adds its member to Tools.
const deferredTools = `/** One match of tools.$search. */
type ToolMatch = { readonly name: string; readonly description: string };
/** What tools.$describe returns; declaration adds the tool to Tools. */
type ToolDescription = { readonly name: string; readonly description: string; readonly declaration: string; readonly inputSchema: JsonValue; readonly outputSchema: JsonValue };
interface Tools {
  /** The bound tools whose names and descriptions best match query, best first: at most limit (default 10, at most 50). */
  $search(query: string, limit?: number): readonly ToolMatch[];
  /** One bound tool's TypeScript declaration and JSON Schemas; throws a TypeError for a name that is not bound. */
  $describe(name: string): ToolDescription;
  /** Calls the bound tool named name, as tools[name](args) does. */
  $call(name: string, args?: { [key: string]: JsonValue }): Promise<unknown>;
}
declare const tools: Tools;
`

// DeferredDeclarations renders the declaration block of a large tool set: the same globals as
// Declarations, ToolName as any string, and `tools` as the Tools interface with $search,
// $describe and $call only. Each tool's CatalogEntry.Declaration adds its member to Tools.
func DeferredDeclarations() string {
	return preamble + "\ntype ToolName = string;\n" + toolCallError + deferredTools
}

// listing renders "- name: summary" lines for tools (run_code left out), sorted by name, within
// ListingBytes, then a line that counts the tools left out, if any, saying how a program finds
// them: search, tools.$search in TypeScript.
func listing(tools []api.Schema, search string) string {
	sorted := make([]api.Schema, 0, len(tools))
	fixed := 0
	for _, t := range tools {
		if !t.Transport {
			sorted = append(sorted, t)
			fixed += len("- \n") + len(commentText(t.Name))
		}
	}
	if len(sorted) == 0 {
		return ""
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	share := 0
	if fixed < ListingBytes {
		share = min((ListingBytes-fixed)/len(sorted)-len(": "), SummaryBytes)
	}
	var b strings.Builder
	for i, t := range sorted {
		line := "- " + commentText(t.Name)
		if s := summary(t.Description, share); share >= minSummaryBytes && s != "" {
			line += ": " + s
		}
		line += "\n"
		if b.Len()+len(line) > ListingBytes {
			fmt.Fprintf(&b, "- … and %d more (find them with %s)\n", len(sorted)-i, search)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// deferredSection is the SDK section of a large tool set, after the rules and the example.
func deferredSection(tools []api.Schema) string {
	return "\nDeclarations of what a program gets:\n```ts\n" + DeferredDeclarations() + "```\n" +
		"\nThe bound tools (name: what it does):\n" + listing(tools, "tools.$search")
}
