package executor

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/ptcx/ptcx/api"
)

// runCodeArgs are run_code's arguments, taken from the decoded arguments its
// schema validated: the code a string of 1 to registry.MaxCodeLength
// characters, every limit an integer of at least its minimum.
type runCodeArgs struct {
	Code   string
	Limits api.RunCodeLimits
}

func runCodeArgsOf(args map[string]any) runCodeArgs {
	var a runCodeArgs
	a.Code, _ = args["code"].(string)
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
		x.fail(&api.Error{Code: api.CodeInvalidArgs,
			Message:    "invalid arguments for " + x.req.Tool + ": " + problem + "; send a shorter program, and have it read large data through tool calls rather than carry it in its text",
			Violations: []string{"at /code: " + problem}})
		return false
	}
	return true
}
