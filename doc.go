// Package ptcx is the front door for Go hosts: one constructor, [New], that
// gives a ready [Host] (tool registry, sandbox runtime, executor) from
// options; typed tools from Go functions, [Func], whose JSON Schemas are
// inferred from the Go types; and wire adapters that turn a model's tool
// calls into [Call] values and each [Result] back into the model's message,
// for OpenAI Chat Completions ([OpenAICalls], [OpenAIResult]), OpenAI
// Responses ([ResponsesCalls], [ResponsesResult]) and Anthropic Messages
// ([AnthropicCalls], [AnthropicResult]).
//
// A wire decoder reads what a model API returned: a whole response, one
// message, an array of items, or one item. A payload it cannot read (not
// JSON, not one of those shapes) is a Go error for the host. An item that is
// recognisably a tool call but cannot be run (no id, no name, a field of the
// wrong kind) becomes a Call that Host.Execute answers with INVALID_ARGS
// saying what is wrong, without running anything, so that the model is
// told; such a call reaches no executor hook. Arguments that are not a JSON
// object are left to the executor, which answers INVALID_ARGS too. Decoders
// never panic, and their work is linear in the payload's size. A result
// encoder gives the model a failure as "CODE: message" (the OpenAI APIs have
// no error flag; Anthropic's is_error is set as well).
//
// A program that needs a person's decision half-way need not hold a
// goroutine while it waits: with [WithParkedApprovals] (and
// [WithParkedTools] for tools whose answers come from elsewhere),
// [Host.ExecuteParkable] parks it, suspended to bytes, as a [Parked] whose
// [Parked.Calls] say what it waits on; [Parked.Resume] continues it where
// it stopped with the decisions ([Approve], [Decline]), and
// [Parked.Marshal] and [Host.RestoreParked] move it to another process.
//
// It owns only that surface. Everything it builds comes from the packages
// underneath, which stay usable on their own: registry (tool definitions,
// scopes, modes, what is advertised), executor (the pipeline every call goes
// through), wasmhost (the sandbox) and sdkgen (the TypeScript SDK and the
// prompt sections). [Host.Registry] and [Host.Executor] reach them when a
// host needs more than the front door offers (scopes, restrictions).
//
// The package may import every package of the module; none of them imports
// it. A Host is safe for concurrent use.
package ptcx
