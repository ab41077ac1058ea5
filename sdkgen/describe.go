package sdkgen

import (
	"strings"

	"github.com/ptcx/ptcx/api"
)

// DescribeRunCode renders run_code's description for a scope: base (the
// registry's default description) followed by the declarations of the tools
// a program there can call, so that a client that only sees run_code (an MCP
// client in ptc mode) still sees every binding's types. It is a
// registry.Describer: install it with Registry.SetRunCodeDescriber. When the
// declarations cannot be rendered, the description is base alone. A large
// tool set (Deferred) gets DeferredDeclarations and the listing of its
// tools' names and one-line descriptions instead.
func DescribeRunCode(scope, base string, bindable []api.Schema) string {
	decl, err := Declarations(bindable)
	if err != nil {
		return base
	}
	if Deferred(bindable) {
		return base + "\n\n" + strings.TrimPrefix(deferredRules, "- ") + deferredSection(bindable)
	}
	return base + "\n\nThe program's bindings:\n\n" + decl
}

// DescribeRunCodeIn returns the describer of run_code for a deployment whose prompt declares the
// tools in lang (PromptLanguage): DescribeRunCode for TypeScript; for Python, base followed by
// how a program is written (with "language": "python") and the Python declarations of
// PythonSDKSection, or a large tool set's listing.
func DescribeRunCodeIn(lang api.Language) func(scope, base string, bindable []api.Schema) string {
	if lang == api.LanguagePython {
		return describeRunCodePython
	}
	return DescribeRunCode
}
