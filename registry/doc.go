// Package registry owns tool definitions, scopes and modes: which tools a
// scope can see (Get, Schemas, Bindable) and which of them are advertised to
// the model (WireSchemas). What may execute for a given caller is decided by
// its resolver, which only the executor reaches (through internal/resolve):
// no exported identifier of this package leads to a tool body, so every call
// goes through the executor's pipeline.
//
// The words it shares with every other layer (Error and its Codes, Result,
// Mode, Schema) are package api's. Registration failures (UNSUPPORTED_SCHEMA,
// bad names, duplicates) are *api.Error values like the executor's.
//
// The registry imports api, internal/text, the standard library, a JSON-Schema
// library and golang.org/x/text (to word numbers in messages).
// A Registry is safe for concurrent use.
package registry
