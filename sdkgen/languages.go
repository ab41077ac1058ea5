package sdkgen

import (
	"strings"

	"github.com/ptcx/ptcx/api"
)

// SectionLanguages names the prompt section that says which languages a
// program may be written in (LanguagesSection).
const SectionLanguages = "tools:languages"

// pythonRules is how a Python program differs from the TypeScript one the
// SDK section describes; its example is one line.
const pythonRules = "- Python (`\"language\": \"python\"`): `code` is a module body with top-level `await`. " +
	"Call tools with keyword arguments, `await tools.name(key=value)` (or one dict; `tools[\"odd-name\"](...)` for names that are not identifiers), " +
	"run independent calls together with `asyncio.gather`, and end with an expression: its value is the result (as in a REPL); `print` writes the logs. " +
	"A failed call raises `ToolCallError` (with `.code`). The declarations above give the tools' arguments and results, as JSON. Example: " +
	"`{\"language\": \"python\", \"code\": \"import asyncio\\na, b = await asyncio.gather(tools.read(path=\\\"a.txt\\\"), tools.read(path=\\\"b.txt\\\"))\\nlen(a) + len(b)\"}`\n"

// LanguagesSection renders the "tools:languages" section: the languages
// run_code takes (its language argument) and how a Python program is
// written. It is empty in native mode, and when TypeScript is the only
// language (the SDK section says all there is then).
func LanguagesSection(mode api.Mode, langs []api.Language) string {
	if !mode.HasRunCode() || len(langs) < 2 && (len(langs) == 0 || langs[0].Canonical() == api.LanguageTypeScript) {
		return ""
	}
	names := make([]string, len(langs))
	python := false
	for i, l := range langs {
		names[i] = "`\"" + l.String() + "\"`"
		python = python || l.Canonical() == api.LanguagePython
	}
	var b strings.Builder
	b.WriteString("run_code's `language` argument says what `code` is written in: " + strings.Join(names, " or ") +
		" (absent: typescript). The rules above are TypeScript's.\n")
	if python {
		b.WriteString(pythonRules)
	}
	return b.String()
}

// WithLanguagesSection appends LanguagesSection to sections (Sections'),
// unless it is empty.
func WithLanguagesSection(sections []Section, mode api.Mode, langs []api.Language) []Section {
	if text := LanguagesSection(mode, langs); text != "" {
		sections = append(sections, Section{Name: SectionLanguages, Text: text})
	}
	return sections
}
