// Package sdkgen turns tool definitions into what a model needs to write run_code programs: a
// TypeScript declaration block for the `tools` bindings (JSON Schema → TypeScript), the prompt
// sections that explain programs and the collapse rule ("tools:ptc-only", "tools:sdk"), and the
// one-line example of the right route that the UNKNOWN_TOOL message carries. For a large tool set
// (Deferred) it renders a listing of names and one-line descriptions instead of every declaration,
// and the catalog (Catalog) from which a program's tools.$search and tools.$describe answer.
// Dotted names are declared as namespaces too (tools.fs.read_file), by the rule the guest's prelude
// applies (namespaces.go). PythonStub renders the same tools as a Python type stub (python.go,
// pytypes.go, pynames.go): TypedDicts and a Tools Protocol, for Python programs and for checking
// them with pyright; what Python cannot express becomes `Any` with a comment saying why. The
// prompt's SDK section is in one language (PromptSections, PromptLanguage): TypeScript's
// (SDKSection) or Python's (PythonSDKSection: Python's rules and the stub's declarations,
// pyprompt.go), with the other enabled language said in a line of "tools:languages".
//
// Everything it renders is deterministic: the same tools give byte-identical text on every run and
// every machine (tools are sorted by name; properties keep the order of the schema's source text).
// It never panics on a schema; what TypeScript cannot express becomes `unknown /* reason */`.
//
// sdkgen imports only the standard library, package api and internal/text: it sees tools as [api.Schema] values,
// the public view the registry hands out, and modes as [api.Mode], so the registry, the executor,
// the root package and the CLI can all use it without an adapter or an import cycle.
package sdkgen
