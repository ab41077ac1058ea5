package wasmhost_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// remainderOperands are the doubles TestRuntime_Run_remainderIsFmod takes
// the remainder of, each by each: signed zeros, small integers (int32 in
// the guest), fractions, the edges of int32 and of the integers a double
// holds exactly (2^53 and its neighbours; 2^53+1 is not a double, the next
// one up is 2^53+2), magnitudes far past them, subnormals, NaN and the
// infinities.
var remainderOperands = []float64{
	0, math.Copysign(0, -1), 1, -1, 2, -2, 3, -7, 0.5, -0.5, 1.5, -2.75, 0.1,
	math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, -1000003, 1000003,
	12345678901234, -98765432109876,
	1 << 52, 1<<53 - 1, 1 << 53, -(1 << 53), -(1<<53 - 1), 1<<53 + 2, 1<<53 + 4,
	1 << 63, 1e300, -1e300, math.MaxFloat64, 1e-300,
	math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
	math.NaN(), math.Inf(1), math.Inf(-1),
}

// remainderProgram returns a program that computes a % b for every pair
// of ops, twice: on the doubles as given (bit for bit, through a
// Float64Array) and on the same values made int32 where they are int32
// (x | 0), which QuickJS keeps in another representation and divides on
// another path. It returns each result's bits in hex.
func remainderProgram(ops []float64) string {
	lits := make([]string, len(ops))
	for i, x := range ops {
		lits[i] = fmt.Sprintf("0x%xn", math.Float64bits(x))
	}
	return `const f = new Float64Array(1), u = new BigUint64Array(f.buffer);
const num = b => { u[0] = b; return f[0] };
const bits = x => { f[0] = x; return u[0].toString(16) };
const int = x => Number.isInteger(x) && x >= -(2 ** 31) && x < 2 ** 31 && !Object.is(x, -0) ? x | 0 : x;
const ops = [` + strings.Join(lits, ", ") + `].map(num);
const out = [];
for (const a of ops) for (const b of ops) out.push(bits(a % b), bits(int(a) % int(b)));
return out`
}

// requireRemainders runs remainderProgram(ops) and checks every result
// against Go's math.Mod, which is C's fmod and the remainder ECMA-262
// defines for %: exact, with the dividend's sign, NaN for an infinite
// dividend, a zero divisor or a NaN.
func requireRemainders(t *testing.T, rt *wasmhost.Runtime, ops []float64) {
	t.Helper()
	out, re, _ := runJS(t, rt, remainderProgram(ops), api.Limits{})
	require.Nil(t, re)
	var got []string
	require.NoError(t, json.Unmarshal(out.Result, &got))
	require.Len(t, got, 2*len(ops)*len(ops))
	for i, a := range ops {
		for j, b := range ops {
			want := math.Mod(a, b)
			for k, path := range []string{"doubles", "int32 where int32"} {
				h := got[2*(i*len(ops)+j)+k]
				u, err := strconv.ParseUint(h, 16, 64)
				require.NoError(t, err, "result %q", h)
				g := math.Float64frombits(u)
				what := fmt.Sprintf("%v %% %v (%s, bits %#x %% %#x) on %s", a, b, path, math.Float64bits(a), math.Float64bits(b), engineUnderTest())
				if math.IsNaN(want) {
					require.True(t, math.IsNaN(g), "%s: got %v, want NaN", what, g)
					continue
				}
				require.Equal(t, math.Float64bits(want), u, "%s: got %v, want %v", what, g, want)
			}
		}
	}
}

// engineUnderTest names the engine NewConfig picks (PTCX_ENGINE's).
func engineUnderTest() string {
	if e := os.Getenv(wasmhost.EngineEnv); e != "" {
		return e
	}
	return wasmhost.EngineWazero
}

func TestRuntime_Run_remainderIsFmod(t *testing.T) {
	requireRemainders(t, sharedRuntime(t), remainderOperands)
}

// TestRuntime_Run_remainderLoop runs compute_loop's program (bench/), whose
// % leaves int32 once i * i passes 2^31 (i = 46,341), against the same loop
// in Go.
func TestRuntime_Run_remainderLoop(t *testing.T) {
	const n = 100_000
	out, re, _ := runJS(t, sharedRuntime(t), fmt.Sprintf(`let s = 0; for (let i = 0; i < %d; i++) { s = (s + i * i) %% 1000003 } return s`, n), api.Limits{})
	require.Nil(t, re)
	s := 0
	for i := range n {
		s = (s + i*i) % 1000003
	}
	require.JSONEq(t, strconv.Itoa(s), string(out.Result))
}

// FuzzRuntime_Run_remainder checks a % b for any two doubles, and each
// with itself, against math.Mod.
func FuzzRuntime_Run_remainder(f *testing.F) {
	for _, x := range remainderOperands[:8] {
		f.Add(x, 1<<53-x)
	}
	// Compile the guest and run it once before the first input: under
	// -fuzz, each worker's first input must not wait for the compiler
	// (coverage-instrumented, it takes seconds).
	rt := sharedRuntime(f)
	requireHealthy(f, rt)
	f.Fuzz(func(t *testing.T, a, b float64) {
		requireRemainders(t, rt, []float64{a, b})
	})
}
