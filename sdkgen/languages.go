package sdkgen

import (
	"slices"
	"strings"

	"github.com/ptcx/ptcx/api"
)

// SectionLanguages names the prompt section that says which languages a
// program may be written in (PromptSections).
const SectionLanguages = "tools:languages"

// pythonMapping is how a Python program differs from the TypeScript one the
// SDK section describes, when the prompt is TypeScript's and Python is also
// enabled: the rules in one paragraph, how to read the declarations as
// Python, and a one-line example.
const pythonMapping = "- Python (`\"language\": \"python\"`): `code` is a module body with top-level `await`. " +
	"Call tools with keyword arguments, `await tools.name(key=value)` (or one dict; `tools[\"odd-name\"](...)` for names that are not identifiers), " +
	"run independent calls together with `asyncio.gather`, and end with an expression: its value is the result (as in a REPL); `print` writes the logs. " +
	"A failed call raises `ToolCallError` (with `.code`). Read the declarations above as Python values: an object type is a dict (its keys the keyword arguments), " +
	"`T[]` a list, `null` None, `number` an int or float; a key marked `?` may be absent. Example: " +
	"`{\"language\": \"python\", \"code\": \"import asyncio\\na, b = await asyncio.gather(tools.read(path=\\\"a.txt\\\"), tools.read(path=\\\"b.txt\\\"))\\nlen(a) + len(b)\"}`\n"

// typeScriptMapping is the TypeScript counterpart, when the prompt is
// Python's and TypeScript is also enabled.
const typeScriptMapping = "- TypeScript (`\"language\": \"typescript\"`, or no language): `code` is the body of an async function that `return`s the result, " +
	"calls tools with one object, `await tools.name({key: value})`, and runs independent calls with `Promise.all`; the tools, their arguments and results are those declared above.\n"

// PromptLanguage returns the language the prompt of a deployment that runs
// langs (nil: TypeScript only) declares the tools in: name when given
// ("typescript" or "python"), which must be one of langs; else the
// deployment's default language, TypeScript when langs has it (a program
// without a language is TypeScript), else the first of langs. An unknown
// name, or one the deployment does not run, is INVALID_ARGS naming the
// choices.
func PromptLanguage(langs []api.Language, name string) (api.Language, error) {
	if len(langs) == 0 {
		langs = []api.Language{api.LanguageTypeScript}
	}
	enabled := make([]api.Language, len(langs))
	for i, l := range langs {
		enabled[i] = l.Canonical()
	}
	if name == "" {
		if slices.Contains(enabled, api.LanguageTypeScript) {
			return api.LanguageTypeScript, nil
		}
		return enabled[0], nil
	}
	l, err := api.ParseLanguage(name)
	if err != nil {
		return "", api.Errorf(api.CodeInvalidArgs, "the prompt's language %q is unknown: the languages are %s", name, api.JoinLanguages(api.Languages))
	}
	if !slices.Contains(enabled, l) {
		return "", api.Errorf(api.CodeInvalidArgs, "the prompt's language %q is not one this deployment runs: it runs %s", name, api.JoinLanguages(enabled))
	}
	return l, nil
}

// PromptSections renders every tool section of the system prompt of a
// deployment whose programs may be written in langs (nil: TypeScript only),
// in prompt order, leaving out the empty ones: "tools:ptc-only" (ptc mode),
// "tools:sdk" in lang (SDKSection for TypeScript, PythonSDKSection for
// Python; "" is PromptLanguage's default), and, with more than one language,
// "tools:languages": the languages run_code takes and, in a line, how a
// program of the other language is written. The errors are PromptLanguage's
// (a lang that is unknown or not in langs) and Sections'.
func PromptSections(mode api.Mode, tools []api.Schema, langs []api.Language, lang api.Language) ([]Section, error) {
	if err := checkMode(mode); err != nil {
		return nil, err
	}
	in, err := PromptLanguage(langs, string(lang))
	if err != nil {
		return nil, err
	}
	sdk := SDKSection
	if in == api.LanguagePython {
		sdk = PythonSDKSection
	}
	text, err := sdk(mode, tools)
	if err != nil {
		return nil, err
	}
	var out []Section
	for _, s := range []Section{{SectionPTCOnly, PTCOnlySection(mode)}, {SectionSDK, text}, {SectionLanguages, languagesSection(mode, langs, in)}} {
		if s.Text != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// languagesSection renders the "tools:languages" section: the languages
// run_code takes (its language argument) and how a program in the language
// the prompt does not declare the tools in is written. It is empty in native
// mode, and with one language (the SDK section says all there is then).
func languagesSection(mode api.Mode, langs []api.Language, in api.Language) string {
	if !mode.HasRunCode() || len(langs) < 2 {
		return ""
	}
	names := make([]string, len(langs))
	others := false
	for i, l := range langs {
		names[i] = "`\"" + l.String() + "\"`"
		others = others || l.Canonical() != in
	}
	if !others {
		return ""
	}
	var b strings.Builder
	b.WriteString("run_code's `language` argument says what `code` is written in: " + strings.Join(names, " or ") +
		" (absent: typescript). The rules above are " + in.Title() + "'s.\n")
	for _, l := range langs {
		switch l.Canonical() {
		case in:
		case api.LanguagePython:
			b.WriteString(pythonMapping)
		case api.LanguageTypeScript:
			b.WriteString(typeScriptMapping)
		}
	}
	return b.String()
}
