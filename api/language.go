package api

import (
	"fmt"
	"strings"
)

// Language is the language of a run_code program: which guest runs it.
// The zero value is TypeScript.
type Language string

const (
	// LanguageTypeScript is TypeScript (types stripped, run on QuickJS-NG):
	// the default, also spelled "" (the zero value).
	LanguageTypeScript Language = "typescript"
	// LanguagePython is Python 3.13 (CPython for wasm32-wasi): a module
	// body with top-level await whose final expression is the result.
	LanguagePython Language = "python"
)

// Languages are the languages there are, the default first.
var Languages = []Language{LanguageTypeScript, LanguagePython}

// PythonMinMemoryBytes is the least memory limit a Python run may have: the
// Python guest's linear memory once initialised (its image, 20 MiB: the
// interpreter, the preloaded modules, the 8 MiB wasm stack) and room for a
// small program above it. A lower limit is refused for Python, naming it.
const PythonMinMemoryBytes = 32 << 20

// ParseLanguage reads a language's name: "typescript" (or ""), or "python";
// anything else is INVALID_ARGS naming the languages there are.
func ParseLanguage(s string) (Language, error) {
	switch l := Language(s); l {
	case "", LanguageTypeScript:
		return LanguageTypeScript, nil
	case LanguagePython:
		return l, nil
	}
	return "", Errorf(CodeInvalidArgs, "unknown language %q: the languages are %s", s, JoinLanguages(Languages))
}

// Canonical returns the language's name with the zero value spelled out:
// LanguageTypeScript for "".
func (l Language) Canonical() Language {
	if l == "" {
		return LanguageTypeScript
	}
	return l
}

// String returns the language's canonical name.
func (l Language) String() string { return string(l.Canonical()) }

// MinMemoryBytes is the least memory limit a run of the language may have:
// PythonMinMemoryBytes for Python, MinMemoryBytes otherwise.
func (l Language) MinMemoryBytes() int64 {
	if l == LanguagePython {
		return PythonMinMemoryBytes
	}
	return MinMemoryBytes
}

// CheckMemory refuses a memory limit (a run's, defaults applied) below the
// language's floor, with INVALID_ARGS naming it.
func (l Language) CheckMemory(memoryBytes int64) error {
	if floor := l.MinMemoryBytes(); memoryBytes < floor {
		return Errorf(CodeInvalidArgs, "a memory limit of %d MiB is below the %d MiB a %s program needs (its interpreter alone): "+
			"raise memory_mb to at least %d", memoryBytes>>20, floor>>20, l.Title(), floor>>20)
	}
	return nil
}

// Title is the language's name as prose writes it: "TypeScript", "Python".
func (l Language) Title() string {
	switch l.Canonical() {
	case LanguageTypeScript:
		return "TypeScript"
	case LanguagePython:
		return "Python"
	}
	return string(l)
}

// JoinLanguages names languages in a message: "typescript and python".
func JoinLanguages(ls []Language) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.String()
	}
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// CheckLanguages checks a deployment's set of enabled languages: known,
// none twice, not empty. The result is the set canonical, in the order given.
func CheckLanguages(ls []Language) ([]Language, error) {
	if len(ls) == 0 {
		return nil, fmt.Errorf("no language enabled: enable at least %s", LanguageTypeScript)
	}
	out := make([]Language, 0, len(ls))
	for _, l := range ls {
		c, err := ParseLanguage(string(l))
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			if o == c {
				return nil, fmt.Errorf("language %s is given twice", c)
			}
		}
		out = append(out, c)
	}
	return out, nil
}
