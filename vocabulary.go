package ptcx

import (
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
)

// The words a host uses, under the names the front door gives them. They
// are aliases: a value of one is a value of the package underneath.
type (
	// Result is the settled outcome of one call.
	Result = api.Result
	// Error is the one error type of ptcx, with a stable Code.
	Error = api.Error
	// Code is a stable error code.
	Code = api.Code
	// Kind refines CODE_RUN_FAILED: why a program did not settle.
	Kind = api.Kind
	// Location is a position in a program's source.
	Location = api.Location
	// Limits bound one run_code program.
	Limits = api.Limits
	// Mode decides what a scope advertises and what a model may call
	// directly.
	Mode = api.Mode
	// Schema is the public view of a tool.
	Schema = api.Schema
	// Body runs a hand-written tool.
	Body = registry.Body
	// Input is what a Body receives.
	Input = api.Input
	// Output is what a Body returns on success.
	Output = api.Output
	// Finalizer is applied once to every result of a tool.
	Finalizer = registry.Finalizer
	// Section is one named part of the system prompt.
	Section = sdkgen.Section
	// OpenAITool is one entry of an OpenAI Chat Completions "tools" array.
	OpenAITool = registry.OpenAITool
	// ResponsesTool is one entry of an OpenAI Responses "tools" array.
	ResponsesTool = registry.ResponsesTool
	// AnthropicTool is one entry of an Anthropic Messages "tools" array.
	AnthropicTool = registry.AnthropicTool
	// Label is where data came from: its integrity and confidentiality
	// (docs/security.md, "Data flow").
	Label = api.Label
	// Policy is what a tool declares about data flow and its capabilities
	// (Tool.Policy, WithPolicy).
	Policy = policy.Declaration
	// Accepts is the most a call of a tool may carry (Policy.Accepts).
	Accepts = policy.Accepts
)

// The modes (see api.Mode).
const (
	ModeNative = api.ModeNative
	ModePTC    = api.ModePTC
	ModeBoth   = api.ModeBoth
)

// Language is the language of a run_code program (WithLanguages).
type Language = api.Language

// The languages (see api.Language).
const (
	LanguageTypeScript = api.LanguageTypeScript
	LanguagePython     = api.LanguagePython
)
