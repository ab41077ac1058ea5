package executor

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ptcx/ptcx/api"
)

// runCodeArgs are run_code's arguments, taken from the decoded arguments its
// schema validated: the code a string of 1 to registry.MaxCodeLength
// characters, every limit an integer of at least its minimum.
type runCodeArgs struct {
	Code   string
	Limits struct {
		TimeoutMS, WallMS, MemoryMB, OutputBytes, ModelBytes, MaxCalls int64
	}
}

func runCodeArgsOf(args map[string]any) runCodeArgs {
	var a runCodeArgs
	a.Code, _ = args["code"].(string)
	l, _ := args["limits"].(map[string]any)
	a.Limits.TimeoutMS = limitValue(l["timeout_ms"])
	a.Limits.WallMS = limitValue(l["wall_ms"])
	a.Limits.MemoryMB = limitValue(l["memory_mb"])
	a.Limits.OutputBytes = limitValue(l["output_bytes"])
	a.Limits.ModelBytes = limitValue(l["model_bytes"])
	a.Limits.MaxCalls = limitValue(l["max_calls"])
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
	l := a.Limits
	return api.Limits{
		ComputeTime: time.Duration(scaled(l.TimeoutMS, int64(time.Millisecond))),
		WallTime:    time.Duration(scaled(l.WallMS, int64(time.Millisecond))),
		MemoryBytes: scaled(l.MemoryMB, 1<<20),
		OutputBytes: int(min(l.OutputBytes, math.MaxInt)),
		ModelBytes:  int(min(l.ModelBytes, math.MaxInt)),
		MaxCalls:    int(min(l.MaxCalls, math.MaxInt)),
	}.Within(ceiling)
}

// scaled is v*unit, saturating instead of overflowing: a caller asking for
// an absurdly high limit gets the ceiling, not a negative limit.
func scaled(v, unit int64) int64 {
	if v > math.MaxInt64/unit {
		return math.MaxInt64
	}
	return v * unit
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
