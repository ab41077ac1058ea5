package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"github.com/stretchr/testify/require"
)

// hostileArgs are arguments as large as a bounded constraint could be
// handed: long strings, long lists, a wide map, a number out of range.
func hostileArgs() map[string]any {
	long := strings.Repeat("x", 1<<20)
	list := make([]any, 100_000)
	wide := make(map[string]any, 10_000)
	for i := range list {
		list[i] = json.Number("1")
	}
	for i := range 10_000 {
		wide[fmt.Sprintf("k%d", i)] = list
	}
	args := map[string]any{"to": long, "s": long, "i": list, "amount": json.Number("1e400"), "x": wide, "list": list, "a": long, "b": long}
	for k, v := range wide {
		args[k] = v
	}
	return args
}

// A constraint evaluated without the cost tracker (bounded) must cost no
// more than its static estimate, and that within the limit, whatever its
// arguments: the estimate is what lets it go untracked.
func TestBounded_estimateCoversTheActualCost(t *testing.T) {
	env, err := celEnv()
	require.NoError(t, err)
	args := hostileArgs()
	for _, src := range []string{
		"args.i < 10",
		"args.amount <= 1000",
		`args.to == "a@corp.test"`,
		`args.to.endsWith("@corp.test")`,
		`args.to.startsWith("ops-")`,
		`args.to in ["a@corp.test", "b@corp.test"]`,
		`size(args.s) < 10 && size(args.list) < 10`,
		`has(args.x) && "a" in args`,
		`args == {"a": 1}`,
		`args.x == {"a": 1}`,
		`args.list == [1, 2]`,
		`args.i + 1 < 10`,
		`args.amount * 2.0 < 10.0`,
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		require.True(t, bounded(env, ast), "%s: its cost does not depend on its arguments", src)
		est, err := env.EstimateCost(ast, unknownSizes{})
		require.NoError(t, err)
		prg, err := env.Program(ast, cel.CostTracking(nil))
		require.NoError(t, err)
		_, det, _ := prg.Eval(activation{args: args})
		require.NotNil(t, det, src)
		actual := det.ActualCost()
		require.NotNil(t, actual, src)
		require.LessOrEqual(t, *actual, est.Max, src)
		require.LessOrEqual(t, *actual, uint64(constraintCostLimit), src)
	}
}

// A constraint whose cost grows with its arguments keeps the cost limit.
func TestBounded_notWhatWalksAnArgument(t *testing.T) {
	env, err := celEnv()
	require.NoError(t, err)
	for _, src := range []string{
		"args.list.all(x, x > 0)",
		"args.list.exists(x, x == 3)",
		"args.list.map(x, x + 1).size() > 0",
		`args.s.matches("a+b")`,
		"args.a == args.b",
		"args.a > args.b",
		`args.a + args.b == "x"`,
		`string(args.i) == "1"`,
		"1 in args.list",
		`args.to.contains("@corp")`,
	} {
		ast, iss := env.Compile(src)
		require.NoError(t, iss.Err(), src)
		require.False(t, bounded(env, ast), "%s walks an argument: it keeps the cost limit", src)
	}
}
