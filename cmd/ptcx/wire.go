package main

import (
	"context"

	"github.com/ptcx/ptcx/registry"
)

var wireCommand = command{
	name:    "wire",
	summary: "Print the tools the scope advertises to a model, as a JSON array in the model API's format.",
	usage:   "wire [--tools FILE] [--mode native|ptc|both] [--scope NAME] [--upstream [NAME=]CMD]... [--format openai|anthropic]",
	run:     runWire,
}

func runWire(ctx context.Context, c command, s *stdio, args []string) int {
	var st setup
	fs := newFlags(c, s)
	st.flags(fs, true)
	format := fs.String("format", "openai", "the tool `FORMAT`: openai (also DeepSeek) or anthropic")
	e, status, ok := st.buildNoArgs(ctx, fs, s, args)
	if !ok {
		return status
	}
	defer e.close()
	if *format != "openai" && *format != "anthropic" {
		return usageError(fs, s, "unknown --format %q: want openai or anthropic", *format)
	}
	wire, err := e.reg.WireSchemas(e.scope)
	if err != nil {
		return fail(s, err)
	}
	var v any = registry.OpenAITools(wire)
	if *format == "anthropic" {
		v = registry.AnthropicTools(wire)
	}
	if err := writeJSON(s, v, true); err != nil {
		return fail(s, err)
	}
	return exitOK
}
