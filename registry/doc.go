// Package registry owns tool definitions, scopes and modes: which tools a
// scope can see, which of them are advertised to the model (WireSchemas), and
// which may execute for a given caller (ResolveExecution, the one resolver the
// executor uses on every execution path).
//
// The words it shares with every other layer (Error and its Codes, Result,
// Mode, Schema) are package api's. Registration failures (UNSUPPORTED_SCHEMA,
// bad names, duplicates) are *api.Error values like the executor's.
//
// The registry imports api, the standard library and a JSON-Schema library.
// A Registry is safe for concurrent use.
package registry
