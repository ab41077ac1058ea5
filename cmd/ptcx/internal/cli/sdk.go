package cli

import (
	"context"
	"fmt"

	"github.com/ptcx/ptcx/sdkgen"
)

var sdkCommand = command{
	name:    "sdk",
	brief:   "print the typed SDK (TypeScript, or a Python stub) of the scope's tools",
	summary: "Print the TypeScript declarations of the tools a run_code program in the scope can call,\nor with --language python their Python type stub (TypedDicts and a Tools Protocol).",
	usage:   "sdk [--tools FILE] [--scope NAME] [--upstream [NAME=]CMD]... [--language typescript|python]",
	run:     runSDK,
}

var promptCommand = command{
	name:    "prompt",
	brief:   "print the system prompt's tool sections for the scope's mode",
	summary: "Print the tool sections of the system prompt for the scope's mode, in order\n(tools:ptc-only, then tools:sdk, then tools:languages with more than one language; empty ones\nare left out). --language python declares the tools in Python (the typed Python SDK) and\nstates Python's rules; it must be one of --languages.",
	usage:   "prompt [--tools FILE] [--mode native|ptc|both] [--scope NAME] [--upstream [NAME=]CMD]... [--languages LIST] [--language typescript|python] [--json]",
	run:     runPrompt,
}

func runSDK(ctx context.Context, c command, s *stdio, args []string) int {
	var st setup
	fs := newFlags(c, s)
	st.flags(fs, false)
	language := fs.String("language", "typescript", "the SDK's `LANGUAGE`: typescript (declarations) or python (a type stub, ptcx_sdk.pyi)")
	e, status, ok := st.buildNoArgs(ctx, fs, s, args)
	if !ok {
		return status
	}
	defer e.close()
	render := sdkgen.Declarations
	switch *language {
	case "typescript":
	case "python":
		render = sdkgen.PythonStub
	default:
		return usageError(fs, s, "--language %q: want typescript or python", *language)
	}
	bindable, err := e.reg.Bindable(e.scope)
	if err != nil {
		return fail(s, err)
	}
	decl, err := render(bindable)
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
	st.promptLanguageFlag(fs)
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
	if len(sections) == 0 {
		mode, _ := e.reg.Mode(e.scope)
		fmt.Fprintf(s.err, "ptcx prompt: no tool sections: scope %q is in %s mode, where the model calls every tool directly "+
			"from its schema (ptcx wire prints them) and there is no run_code; use --mode ptc or --mode both for the SDK sections\n", e.scope, mode)
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
		if err := writeJSON(s, out, true); err != nil {
			return fail(s, err)
		}
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

// promptSections renders the scope's tool sections of the system prompt, in
// the prompt's language (--language).
func (e *env) promptSections() ([]sdkgen.Section, error) {
	mode, err := e.reg.Mode(e.scope)
	if err != nil {
		return nil, err
	}
	bindable, err := e.reg.Bindable(e.scope)
	if err != nil {
		return nil, err
	}
	return sdkgen.PromptSections(mode, bindable, e.languages, e.promptLanguage)
}
