package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ptcx/ptcx/sdkgen"
)

var sdkCommand = command{
	name:    "sdk",
	summary: "Print the TypeScript declarations of the tools a run_code program in the scope can call.",
	usage:   "sdk [--tools FILE] [--scope NAME]",
	run:     runSDK,
}

var promptCommand = command{
	name:    "prompt",
	summary: "Print the tool sections of the system prompt for the scope's mode, in order\n(tools:ptc-only, then tools:sdk; empty ones are left out).",
	usage:   "prompt [--tools FILE] [--mode native|ptc|both] [--scope NAME] [--json]",
	run:     runPrompt,
}

func runSDK(ctx context.Context, c command, s *stdio, args []string) int {
	var st setup
	fs := newFlags(c, s)
	st.flags(fs, false)
	e, status, ok := st.buildNoArgs(ctx, fs, s, args)
	if !ok {
		return status
	}
	defer e.close()
	bindable, err := e.reg.Bindable(e.scope)
	if err != nil {
		return fail(s, err)
	}
	decl, err := sdkgen.Declarations(bindable)
	if err != nil {
		return fail(s, err)
	}
	fmt.Fprint(s.out, decl)
	return exitOK
}

func runPrompt(ctx context.Context, c command, s *stdio, args []string) int {
	var st setup
	fs := newFlags(c, s)
	st.flags(fs, true)
	asJSON := fs.Bool("json", false, "print the sections as a JSON array of {name, text}")
	e, status, ok := st.buildNoArgs(ctx, fs, s, args)
	if !ok {
		return status
	}
	defer e.close()
	sections, err := e.promptSections()
	if err != nil {
		return fail(s, err)
	}
	if *asJSON {
		type section struct {
			Name string `json:"name"`
			Text string `json:"text"`
		}
		out := make([]section, 0, len(sections))
		for _, sec := range sections {
			out = append(out, section(sec))
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fail(s, err)
		}
		s.out.Write(append(b, '\n'))
		return exitOK
	}
	for i, sec := range sections {
		if i > 0 {
			fmt.Fprintln(s.out)
		}
		fmt.Fprintf(s.out, "<!-- %s -->\n%s", sec.Name, sec.Text)
	}
	return exitOK
}

// promptSections renders the scope's tool sections of the system prompt.
func (e *env) promptSections() ([]sdkgen.Section, error) {
	mode, err := e.reg.Mode(e.scope)
	if err != nil {
		return nil, err
	}
	bindable, err := e.reg.Bindable(e.scope)
	if err != nil {
		return nil, err
	}
	return sdkgen.Sections(mode, bindable)
}
