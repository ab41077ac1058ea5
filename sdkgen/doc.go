// Package sdkgen turns tool definitions into what a model needs to write run_code programs: a
// TypeScript declaration block for the `tools` bindings (JSON Schema → TypeScript), the prompt
// sections that explain programs and the collapse rule ("tools:ptc-only", "tools:sdk"), and the
// one-line example of the right route that the UNKNOWN_TOOL message carries.
//
// Everything it renders is deterministic: the same tools give byte-identical text on every run and
// every machine (tools are sorted by name; properties keep the order of the schema's source text).
// It never panics on a schema; what TypeScript cannot express becomes `unknown /* reason */`.
//
// sdkgen imports only the standard library and internal/text: it sees tools as plain [Tool] values, so the registry,
// the executor and the CLI can all use it without import cycles.
package sdkgen
