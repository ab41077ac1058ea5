package registry

import (
	"encoding/json"

	"github.com/ptcx/ptcx/api"
)

// OpenAITool is one entry of an OpenAI (or DeepSeek) chat-completions
// "tools" array.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function part of an OpenAITool.
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// AnthropicTool is one entry of an Anthropic Messages API "tools" array.
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ResponsesTool is one entry of an OpenAI Responses API "tools" array: a
// function tool, flat (no "function" wrapper). Strict is always false:
// strict mode needs every property required and every object closed, which
// ptcx's schemas (run_code's own, with its optional limits) do not promise.
type ResponsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// ResponsesTools renders schemas in the OpenAI Responses tool format.
func ResponsesTools(schemas []api.Schema) []ResponsesTool {
	out := make([]ResponsesTool, 0, len(schemas))
	for _, s := range schemas {
		out = append(out, ResponsesTool{Type: "function", Name: s.Name, Description: s.Description, Parameters: clone(s.InputSchema)})
	}
	return out
}

// OpenAITools renders schemas in the OpenAI/DeepSeek tool format.
func OpenAITools(schemas []api.Schema) []OpenAITool {
	out := make([]OpenAITool, 0, len(schemas))
	for _, s := range schemas {
		out = append(out, OpenAITool{Type: "function", Function: OpenAIFunction{
			Name: s.Name, Description: s.Description, Parameters: clone(s.InputSchema),
		}})
	}
	return out
}

// AnthropicTools renders schemas in the Anthropic tool format.
func AnthropicTools(schemas []api.Schema) []AnthropicTool {
	out := make([]AnthropicTool, 0, len(schemas))
	for _, s := range schemas {
		out = append(out, AnthropicTool{Name: s.Name, Description: s.Description, InputSchema: clone(s.InputSchema)})
	}
	return out
}
