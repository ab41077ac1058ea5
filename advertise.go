package ptcx

import (
	"fmt"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
)

// Advertised returns the tools scope advertises to the model ("" is the
// deployment), sorted by name: every visible tool in native mode, only
// run_code in ptc mode, both in both.
func (h *Host) Advertised(scope string) ([]Schema, error) {
	return h.reg.WireSchemas(scope)
}

// OpenAITools returns the advertised tools of scope as an OpenAI Chat
// Completions (or DeepSeek) "tools" array.
func (h *Host) OpenAITools(scope string) ([]OpenAITool, error) {
	ws, err := h.reg.WireSchemas(scope)
	if err != nil {
		return nil, err
	}
	return registry.OpenAITools(ws), nil
}

// ResponsesTools returns the advertised tools of scope as an OpenAI
// Responses "tools" array.
func (h *Host) ResponsesTools(scope string) ([]ResponsesTool, error) {
	ws, err := h.reg.WireSchemas(scope)
	if err != nil {
		return nil, err
	}
	return registry.ResponsesTools(ws), nil
}

// AnthropicTools returns the advertised tools of scope as an Anthropic
// Messages "tools" array.
func (h *Host) AnthropicTools(scope string) ([]AnthropicTool, error) {
	ws, err := h.reg.WireSchemas(scope)
	if err != nil {
		return nil, err
	}
	return registry.AnthropicTools(ws), nil
}

// Prompt returns the tool sections of scope's system prompt, in prompt
// order, leaving out the empty ones: "tools:ptc-only" (ptc mode: run_code is
// the only tool callable directly) and "tools:sdk" (ptc and both: how to
// write a program, and the declarations of every binding, in the prompt's
// language: TypeScript's, or the typed Python SDK's; WithPromptLanguage),
// and, with WithLanguages of more than one language, "tools:languages" (the
// languages, and in a line how a program of the other one is written), and
// with WithSessions,
// "tools:session" (executor.SessionPrompt: state persists between
// programs). In native mode there are none.
func (h *Host) Prompt(scope string) ([]Section, error) {
	mode, err := h.reg.Mode(scope)
	if err != nil {
		return nil, err
	}
	bindable, err := h.reg.Bindable(scope)
	if err != nil {
		return nil, err
	}
	sections, err := sdkgen.PromptSections(mode, bindable, h.languages, h.promptLanguage)
	if err != nil {
		return nil, fmt.Errorf("ptcx: the prompt of scope %q: %w", scope, err)
	}
	if h.sessions && mode != api.ModeNative {
		sections = append(sections, Section{Name: executor.SectionSession, Text: executor.SessionPrompt})
	}
	return sections, nil
}
