package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/transpile"
)

// runCodeArgs are run_code's arguments, taken from the decoded arguments its
// schema validated: the code a string of 1 to registry.MaxCodeLength
// characters, every limit an integer of at least its minimum.
type runCodeArgs struct {
	Code     string
	Language api.Language // canonical: TypeScript when absent (checkLanguage checked it)
	Limits   api.RunCodeLimits
}

func runCodeArgsOf(args map[string]any) runCodeArgs {
	var a runCodeArgs
	a.Code, _ = args["code"].(string)
	lang, _ := args["language"].(string)
	a.Language = api.Language(lang).Canonical()
	l, _ := args["limits"].(map[string]any)
	a.Limits = api.RunCodeLimits{
		TimeoutMS:   limitValue(l["timeout_ms"]),
		WallMS:      limitValue(l["wall_ms"]),
		MemoryMB:    limitValue(l["memory_mb"]),
		OutputBytes: int(min(limitValue(l["output_bytes"]), math.MaxInt)),
		ModelBytes:  int(min(limitValue(l["model_bytes"]), math.MaxInt)),
		MaxCalls:    int(min(limitValue(l["max_calls"]), math.MaxInt)),
	}
	return a
}

// limitValue reads an integer limit as the schema accepted it: in any JSON
// form of an integer ("1000", "1e3", "1000.0"), and of any size, saturating
// at math.MaxInt64, so that an absurdly high limit is lowered to the
// deployment's like any other too-high one. Absent is 0 (the deployment's).
func limitValue(v any) int64 {
	n, _ := v.(json.Number)
	if n == "" {
		return 0
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, _ := strconv.ParseFloat(string(n), 64) // ±Inf when out of range
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= 0:
		return 0
	}
	return int64(f)
}

// limits returns the caller's limits within the deployment's.
func (a runCodeArgs) limits(ceiling api.Limits) api.Limits {
	return a.Limits.Limits().Within(ceiling)
}

// checkCodeSize refuses a program over the deployment's size limit, in
// bytes: the schema's maxLength counts characters, and a program of
// multibyte characters can pass it at up to four times the bytes.
func (x *execution) checkCodeSize() bool {
	code, _ := x.args["code"].(string)
	if limit := x.e.cfg.maxCodeBytes; len(code) > limit {
		problem := fmt.Sprintf("code is %d bytes, over the limit of %d bytes", len(code), limit)
		x.fail(invalidArgs(x.req.Tool, "/code", problem,
			"send a shorter program, and have it read large data through tool calls rather than carry it in its text"))
		return false
	}
	return true
}

// checkLanguage refuses a program in a language this executor does not
// run (Config.WithLanguages), naming those it does: before the schema's
// check, which lets any string through (registry: the advertised schema
// has the language property only when there is a choice).
func (x *execution) checkLanguage() bool {
	v, present := x.args["language"]
	name, isString := v.(string)
	enabled := x.e.cfg.Languages()
	if !present && !slices.Contains(enabled, api.LanguageTypeScript) {
		// Absent is TypeScript, which this deployment does not run: never
		// run it all the same, nor guess another language.
		problem := fmt.Sprintf("a program without a language is TypeScript, which this deployment does not run: "+
			"it runs %s; give run_code's \"language\"", api.JoinLanguages(enabled))
		x.fail(invalidArgs(x.req.Tool, "/language", problem, ""))
		return false
	}
	if !present || !isString {
		return true // absent: TypeScript; not a string: the schema says so
	}
	lang, err := api.ParseLanguage(name)
	if err == nil && slices.Contains(enabled, lang) {
		return true
	}
	problem := fmt.Sprintf("language %q is not one this deployment runs: it runs %s", name, api.JoinLanguages(enabled))
	if err != nil {
		problem = fmt.Sprintf("unknown language %q: this deployment runs %s", name, api.JoinLanguages(enabled))
	}
	x.fail(invalidArgs(x.req.Tool, "/language", problem, ""))
	return false
}

// programOf is the program the guest runs: TypeScript with its types
// stripped (transpile), Python as written (its guest reports its own
// syntax errors).
func programOf(a runCodeArgs) (*transpile.Program, error) {
	if a.Language == api.LanguagePython {
		return &transpile.Program{JS: a.Code}, nil
	}
	return transpile.Strip(a.Code)
}

// checkLanguage refuses what a program's language cannot have: a Python
// run's memory below its floor (api.PythonMinMemoryBytes), a plan (plans
// read TypeScript only).
func (a runCodeArgs) checkLanguage(x *execution, limits api.Limits) *api.Error {
	if a.Language != api.LanguagePython {
		return nil
	}
	if x.plan != nil {
		return invalidArgs("run_code", "/language", "a Python program cannot be bound to a plan: plans read TypeScript only, for now; run it without the plan, or in TypeScript", "")
	}
	if err := a.Language.CheckMemory(limits.MemoryBytes); err != nil {
		var ae *api.Error
		if errors.As(err, &ae) {
			return invalidArgs("run_code", "/limits/memory_mb", ae.Message, "")
		}
		return invalidArgs("run_code", "/limits/memory_mb", err.Error(), "")
	}
	return nil
}
