package sdkgen

import (
	"fmt"

	"github.com/ptcx/ptcx/api"
)

// The names of the prompt sections, in the order Sections returns them.
const (
	SectionPTCOnly = "tools:ptc-only"
	SectionSDK     = "tools:sdk"
)

// Section is one named part of the system prompt.
type Section struct {
	Name string
	Text string
}

// ptcOnlyText is the collapse rule, stated before any per-tool guidance so that a model reading
// "use read before write" knows to do it from a program.
const ptcOnlyText = "run_code is the only tool you can call directly. Every other tool named in this prompt " +
	"must be called from inside a run_code program, as `await tools.<name>(args)`; calling it directly " +
	"fails with UNKNOWN_TOOL.\n"

// bindingsRule says where the tools.* functions exist: a rule of both languages' SDK rules.
const bindingsRule = "- The `tools.*` functions are bindings that exist only inside a program. Only tools whose schemas are listed " +
	"separately can be called directly; appearing below does not make a tool directly callable.\n"

// sdkRules is how to write a program; the example and the declarations follow it.
const sdkRules = "run_code runs a program that calls tools as typed async functions. How to write one:\n" +
	"- `code` is the body of an async function: use `await` anywhere and `return` the result.\n" +
	"- It is TypeScript with the types stripped: nothing is type-checked when it runs, so follow the declarations below.\n" +
	bindingsRule +
	"- Start independent calls together with `Promise.all`; `await` a call before any call that needs its result.\n" +
	"- Await every call you start: one that has not started when the program returns is abandoned, never run.\n" +
	"- A failed call throws `ToolCallError` (with `toolName`, `message` and `code`); uncaught, it fails the whole run, so catch it where a failure is expected: " +
	"`catch (e) { if (e instanceof ToolCallError && e.code === \"TOOL_TIMEOUT\") { /* retry or skip */ } else throw e; }`.\n" +
	"- Only the returned value and console output reach you, within a budget (past it they are cut, not failed): filter and summarise inside the program, and keep both small. " +
	"The result is made JSON as JSON.stringify would (a Map becomes an object, a Set an array, a Date its ISO string).\n" +
	"- A program has no modules (import, require), no fetch or network, no file system, no timers but setTimeout/clearTimeout (no setInterval), " +
	"and no Intl, TextEncoder, URL, structuredClone or process: only the tools below.\n"

// namespaceRule explains identifier-safe access to dotted names (namespaces.go) with one of them.
func namespaceRule(name string) string {
	return "- A dotted tool name is also a path when each part is an identifier: `tools." + name + "(args)` is `tools[" + quote(name) +
		"](args)`, which always works.\n"
}

// PTCOnlySection renders the "tools:ptc-only" section: the rule that run_code is the only tool the
// model can call directly. It is empty unless mode is "ptc"; under "both" the rule would be false,
// since direct calls really do run there. Any mode other than "ptc" (unknown ones included) gives
// "", so callers that need a mode checked use SDKSection or Sections.
func PTCOnlySection(mode api.Mode) string {
	if mode != api.ModePTC {
		return ""
	}
	return ptcOnlyText
}

// SDKSection renders the "tools:sdk" section: how to write a program, a complete example run_code
// call when a `bash` tool exists and its input schema accepts the example's arguments, and the
// declarations of tools. A large tool set (Deferred) gets the names and one-line descriptions of
// its tools instead of their declarations, with how to find the rest from a program
// (tools.$search, tools.$describe; DeferredDeclarations). It is empty under "native", where there is no run_code. tools are the
// scope's bindable tools (every visible tool but run_code). The error is a bad mode or one that
// Declarations reports.
func SDKSection(mode api.Mode, tools []api.Schema) (string, error) {
	if err := checkMode(mode); err != nil {
		return "", err
	}
	if mode == api.ModeNative {
		return "", nil
	}
	deferred := Deferred(tools)
	text := sdkRules
	if name := firstNamespaced(tools, nil); name != "" {
		text += namespaceRule(name)
	}
	if deferred {
		text += deferredRules
	}
	if ex := bashExample(tools); ex != "" {
		text += "\nA complete run_code call (the tool name, then its JSON arguments):\n" + ex + "\n"
	}
	decls, err := Declarations(tools) // checks the tools, whether or not its text is shown
	if err != nil {
		return "", err
	}
	if deferred {
		return text + deferredSection(tools), nil
	}
	return text + "\nDeclarations of the functions a program can call:\n```ts\n" + decls + "```\n", nil
}

// Sections renders the assembled tool sections of a TypeScript-only deployment in prompt order
// ("tools:ptc-only" before "tools:sdk"), leaving out the empty ones: PromptSections with
// TypeScript alone.
func Sections(mode api.Mode, tools []api.Schema) ([]Section, error) {
	return PromptSections(mode, tools, nil, api.LanguageTypeScript)
}

func checkMode(mode api.Mode) error {
	if _, err := api.ParseMode(string(mode)); err != nil {
		return fmt.Errorf("sdkgen: %w", err)
	}
	return nil
}
