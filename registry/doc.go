// Package registry owns tool definitions, scopes and modes: which tools a
// scope can see, which of them are advertised to the model (WireSchemas), and
// which may execute for a given caller (ResolveExecution, the one resolver the
// executor uses on every execution path).
//
// It also owns the vocabulary every layer shares: Result, Error and its stable
// Codes. Registration failures (UNSUPPORTED_SCHEMA, bad names, duplicates) are
// *Error values like the executor's.
//
// The registry imports the standard library, a JSON-Schema library,
// golang.org/x/text (to word numbers in messages) and internal/text.
// A Registry is safe for concurrent use.
package registry
