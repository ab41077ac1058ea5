// Package ptcx is the front door for Go hosts: one constructor, [New], that
// gives a ready [Host] (tool registry, sandbox runtime, executor) from
// options; typed tools from Go functions, [Func], whose JSON Schemas are
// inferred from the Go types; and wire adapters that turn a model's tool
// calls into [Call] values and each [Result] back into the model's message,
// for OpenAI Chat Completions ([OpenAICalls], [OpenAIResult]), OpenAI
// Responses ([ResponsesCalls], [ResponsesResult]) and Anthropic Messages
// ([AnthropicCalls], [AnthropicResult]).
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
