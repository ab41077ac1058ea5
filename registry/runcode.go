package registry

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
)

// RunCode is the name of the reserved transport: the one tool through which
// a program of tool calls is sent. It cannot be registered or restricted.
const RunCode = "run_code"

// MaxCodeLength is the most characters run_code's code may have (its
// schema's maxLength): api.MaxCodeBytes. The executor also bounds the
// program's size in bytes, by a deployment limit no higher than this.
const MaxCodeLength = api.MaxCodeBytes

// MinMemoryMB is the lowest limits.memory_mb run_code's schema accepts: the
// least memory the sandbox runs a program with (api.MinMemoryBytes).
const MinMemoryMB = api.MinMemoryBytes >> 20

// RunCodeInputSchema is run_code's argument schema; its numbers are
// MaxCodeLength, MinMemoryMB and api.MinModelBytes (a test reads them back).
// Limits may only lower the deployment's limits: a higher one is lowered to
// the deployment's. Its limits object is api.RunCodeLimits.
const RunCodeInputSchema = `{
  "type": "object",
  "properties": {
    "code": {
      "type": "string",
      "minLength": 1,
      "maxLength": 524288,
      "description": "TypeScript: the body of an async function. Call tools with await tools.<name>(args); return the answer."
    },
    "description": {
      "type": "string",
      "pattern": "\\S",
      "description": "One line saying what the program does."
    },
    "limits": {
      "type": "object",
      "description": "Optional lower limits for this run.",
      "properties": {
        "timeout_ms": {"type": "integer", "minimum": 1, "description": "Compute time in milliseconds."},
        "wall_ms": {"type": "integer", "minimum": 1, "description": "Wall time in milliseconds."},
        "memory_mb": {"type": "integer", "minimum": 4, "description": "Memory in MiB."},
        "output_bytes": {"type": "integer", "minimum": 1, "description": "Bytes of logs plus result the host accepts (a hard cap: past it the run fails)."},
        "model_bytes": {"type": "integer", "minimum": 1024, "description": "Bytes of text shown for this run (the model budget): past it the output is cut, not failed."},
        "max_calls": {"type": "integer", "minimum": 1, "description": "Nested tool calls in total."}
      },
      "additionalProperties": false
    }
  },
  "required": ["code"],
  "additionalProperties": false
}`

// RunCodeOutputSchema is the shape of run_code's value.
const RunCodeOutputSchema = `{
  "type": "object",
  "properties": {
    "logs": {"type": "array", "items": {"type": "string"}},
    "result": {}
  },
  "required": ["logs"],
  "additionalProperties": false
}`

// DefaultRunCodeDescription is run_code's description when no describer is
// installed (see Registry.SetRunCodeDescriber).
const DefaultRunCodeDescription = "Run a TypeScript program that calls the other tools as typed async functions " +
	"(await tools.<name>(args)), in a sandbox. Use Promise.all for independent calls. " +
	"Only console output and the returned value come back."

// Describer renders run_code's description for a scope from base
// (DefaultRunCodeDescription) and the tools a program there can call (every
// visible tool but run_code, sorted by name). sdkgen.DescribeRunCode is one.
type Describer func(scope, base string, bindable []api.Schema) string

// languageAnchor is where run_code's input schema takes its language
// property.
const languageAnchor = `"limits": {`

// runCodeInputSchemaWith is RunCodeInputSchema with a language property:
// a string of the names in enum, or any string when enum is empty (what the
// executor validates against: it checks the name against the languages it
// runs itself, naming them).
func runCodeInputSchemaWith(enum []api.Language) string {
	prop := `"language": {"type": "string", `
	if len(enum) > 0 {
		names := make([]string, len(enum))
		for i, l := range enum {
			names[i] = strconv.Quote(l.String())
		}
		prop += `"enum": [` + strings.Join(names, ", ") + `], `
	}
	if len(enum) > 0 && !slices.Contains(enum, api.LanguageTypeScript) {
		// Python alone: a program without the property is refused, not
		// taken for TypeScript (executor/runargs.go).
		prop += `"description": "The program's language: python, which every program must name (a module body with top-level await; its last expression is the result)."},
    `
	} else {
		prop += `"description": "The program's language: typescript (the default) or python (a module body with top-level await; its last expression is the result)."},
    `
	}
	return strings.Replace(RunCodeInputSchema, languageAnchor, prop+languageAnchor, 1)
}

// runCodeDefinition is built once; the executor supplies its body. Its
// schema, which arguments are validated against, has the language property
// whatever the languages enabled; the advertised one
// (runCodeSchemaLocked) has it when a program may need to name its
// language: more than one is enabled, or Python alone.
var runCodeDefinition = func() *resolve.Definition {
	d, err := resolve.New(api.Schema{
		Name:         RunCode,
		Description:  DefaultRunCodeDescription,
		InputSchema:  json.RawMessage(runCodeInputSchemaWith(nil)),
		OutputSchema: json.RawMessage(RunCodeOutputSchema),
		Transport:    true,
	}, nil, nil)
	if err != nil {
		panic("registry: run_code's own schemas do not compile: " + err.Error())
	}
	return d
}()
