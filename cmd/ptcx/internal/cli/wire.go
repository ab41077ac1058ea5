package cli

import (
	"context"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

var wireCommand = command{
	name:    "wire",
	brief:   "print the advertised tools in a model API's tools format",
	summary: "Print the tools the scope advertises to a model, as a JSON array in the model API's format.",
	usage:   "wire [--tools FILE] [--mode native|ptc|both] [--scope NAME] [--upstream [NAME=]CMD]... [--format openai|responses|anthropic]",
	run:     runWire,
}

// wireFormats render the advertised tools in each model API's format.
var wireFormats = map[string]func([]api.Schema) any{
	"openai":    func(ws []api.Schema) any { return registry.OpenAITools(ws) },
	"responses": func(ws []api.Schema) any { return registry.ResponsesTools(ws) },
	"anthropic": func(ws []api.Schema) any { return registry.AnthropicTools(ws) },
}

func runWire(ctx context.Context, c command, s *stdio, args []string) int {
	var st setup
	fs := newFlags(c, s)
	st.flags(fs, true)
	format := fs.String("format", "openai", "the tool `FORMAT`: openai (Chat Completions, also DeepSeek), responses (OpenAI Responses) or anthropic")
	e, status, ok := st.buildNoArgs(ctx, fs, s, args)
	if !ok {
		return status
	}
	defer e.close()
	render, ok := wireFormats[*format]
	if !ok {
		return usageError(fs, s, "unknown --format %q: want openai, responses or anthropic", *format)
	}
	wire, err := e.reg.WireSchemas(e.scope)
	if err != nil {
		return fail(s, err)
	}
	v := render(wire)
	if err := writeJSON(s, v, true); err != nil {
		return fail(s, err)
	}
	return exitOK
}
