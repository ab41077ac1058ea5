package policy

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"

	"github.com/ptcx/ptcx/api"
)

// Bounds of a declaration's constraints: what registration compiles and
// every call of the tool evaluates.
const (
	// MaxConstraints is the most constraints one tool declares.
	MaxConstraints = 32
	// MaxConstraintBytes is the longest one constraint may be.
	MaxConstraintBytes = 2048
	// constraintCostLimit bounds one constraint's evaluation, in CEL's
	// cost units (about one per operation and per element a list or
	// string function walks): arguments are up to 4 MiB, so an
	// expression that walks them is stopped rather than let run.
	constraintCostLimit = 1_000_000
)

// Compiled is a checked Declaration: what the executor consults. It is
// immutable and safe for concurrent use.
type Compiled struct {
	decl        Declaration // as declared: what a trace records (Declaration)
	labels      api.Label
	call        api.Label // Top when the tool accepts any call
	args        map[string]api.Label
	argNames    []string // args' names, sorted
	ask         bool
	approval    bool // needs_approval
	handle      bool
	constraints []constraint
	callsPerRun int
	cost        int64
	maxCost     int64
}

type constraint struct {
	src string
	prg cel.Program
}

// celEnv is the environment constraints compile in: one variable, args,
// the call's arguments as a map. Numbers of any type compare with each
// other (args.amount <= 1000 holds for 999.5). CEL reads the decoded
// JSON as it is, with no copy: a json.Number is an int when it is one,
// else a double (one out of a double's range cannot be evaluated).
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
	)
})

// Compile checks d and compiles its constraints. It returns nil, nil for a
// Declaration that declares nothing: such a tool has no policy to consult.
// An error names the member at fault (the caller names the tool).
func Compile(d Declaration) (*Compiled, error) {
	if d.IsZero() {
		return nil, nil
	}
	c := &Compiled{decl: d, call: api.Top, handle: d.Handle, callsPerRun: d.CallsPerRun, cost: d.Cost, maxCost: d.MaxCost, approval: d.NeedsApproval}
	if d.Labels != nil {
		if !d.Labels.Valid() {
			return nil, fmt.Errorf("labels: %v is not a label", *d.Labels)
		}
		c.labels = *d.Labels
	}
	if a := d.Accepts; a != nil {
		if a.Call != nil {
			if !a.Call.Valid() {
				return nil, fmt.Errorf("accepts: %v is not a label", *a.Call)
			}
			c.call = *a.Call
		}
		for name, l := range a.Args {
			if name == "" {
				return nil, fmt.Errorf("accepts.args: an argument name is empty")
			}
			if !l.Valid() {
				return nil, fmt.Errorf("accepts.args.%s: %v is not a label", name, l)
			}
		}
		if len(a.Args) > 0 {
			c.args = make(map[string]api.Label, len(a.Args))
			for name, l := range a.Args {
				c.args[name] = l
				c.argNames = append(c.argNames, name)
			}
			sort.Strings(c.argNames)
		}
		if err := a.OnViolation.check(); err != nil {
			return nil, err
		}
		c.ask = a.OnViolation == Ask
	}
	switch {
	case d.CallsPerRun < 0:
		return nil, fmt.Errorf("calls_per_run: %d is negative (0 means no count)", d.CallsPerRun)
	case d.Cost < 0:
		return nil, fmt.Errorf("cost: %d is negative", d.Cost)
	case d.MaxCost < 0:
		return nil, fmt.Errorf("max_cost: %d is negative (0 means no bound)", d.MaxCost)
	case len(d.Constraints) > MaxConstraints:
		return nil, fmt.Errorf("constraints: %d of them, over the %d a tool may declare", len(d.Constraints), MaxConstraints)
	}
	if len(d.Constraints) > 0 {
		env, err := celEnv()
		if err != nil {
			return nil, fmt.Errorf("constraints: the CEL environment: %w", err)
		}
		for i, src := range d.Constraints {
			p, err := compileConstraint(env, src)
			if err != nil {
				return nil, fmt.Errorf("constraints[%d] %q: %w", i, shorten(src), err)
			}
			c.constraints = append(c.constraints, constraint{src: src, prg: p})
		}
	}
	return c, nil
}

func compileConstraint(env *cel.Env, src string) (cel.Program, error) {
	if len(src) > MaxConstraintBytes {
		return nil, fmt.Errorf("%d bytes, over the %d a constraint may have", len(src), MaxConstraintBytes)
	}
	if strings.TrimSpace(src) == "" {
		return nil, fmt.Errorf("empty: a constraint is a CEL expression over args, such as args.amount <= 1000")
	}
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("does not compile: %s", oneLine(iss.Err().Error()))
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("is of type %s, not bool: a constraint is a condition that must hold", t)
	}
	if bounded(env, ast) {
		return env.Program(ast)
	}
	return env.Program(ast, cel.CostLimit(constraintCostLimit))
}

// bounded reports whether ast's cost is within constraintCostLimit
// whatever the arguments: CEL's static estimate, with every argument's
// size unknown (unbounded), is an upper bound of what an evaluation's cost
// tracker would count. Such an expression (args.amount <= 1000,
// args.to.endsWith("@corp.test"), args.to in ["a", "b"]: nothing that
// walks an argument) can never reach the limit, so it is evaluated without
// the tracker, which costs more than the expression; any other (a
// comprehension over an argument, a comparison of two arguments, a regular
// expression) keeps it.
func bounded(env *cel.Env, ast *cel.Ast) bool {
	est, err := env.EstimateCost(ast, unknownSizes{})
	return err == nil && est.Max <= constraintCostLimit
}

// unknownSizes is the cost estimator that knows nothing: every argument's
// size is unbounded and every function costs what CEL's model says.
type unknownSizes struct{}

func (unknownSizes) EstimateSize(cost.AstNode) *cost.SizeEstimate { return nil }

func (unknownSizes) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
}

func shorten(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:77] + "..."
}

// Declaration returns the declaration c was compiled from (a trace records
// it, and a replay compiles it again). Do not change what it points to.
func (c *Compiled) Declaration() Declaration { return c.decl }

// Labels returns the labels the tool's results carry at least.
func (c *Compiled) Labels() api.Label { return c.labels }

// Ask reports whether a call past what the tool accepts is put to the
// approver rather than denied.
func (c *Compiled) Ask() bool { return c.ask }

// NeedsApproval reports whether every call of the tool is put to the
// approver (Declaration.NeedsApproval).
func (c *Compiled) NeedsApproval() bool { return c.approval }

// Handle reports whether the tool's results reach a program as handles
// (docs/security.md, "Handles"). A nil Compiled declares nothing: false.
func (c *Compiled) Handle() bool { return c != nil && c.handle }

// AcceptsCall returns the most a whole call may carry (api.Top: anything).
func (c *Compiled) AcceptsCall() api.Label { return c.call }

// AcceptsArgs returns the most each named argument may carry; nil when the
// tool names none. Do not change it.
func (c *Compiled) AcceptsArgs() map[string]api.Label { return c.args }

// AcceptsArgNames returns the names of AcceptsArgs, sorted. Do not change
// it.
func (c *Compiled) AcceptsArgNames() []string { return c.argNames }

// CallsPerRun returns the most calls of the tool one execution may make
// (0: no count).
func (c *Compiled) CallsPerRun() int { return c.callsPerRun }

// Cost returns what one call costs, and MaxCost the most an execution may
// have spent for a call of the tool to proceed (0: no bound).
func (c *Compiled) Cost() int64    { return c.cost }
func (c *Compiled) MaxCost() int64 { return c.maxCost }

// HasConstraints reports whether the tool declared constraints.
func (c *Compiled) HasConstraints() bool { return len(c.constraints) > 0 }

// CheckConstraints evaluates every constraint over args (a call's decoded
// arguments, as internal/resolve decodes them: numbers are json.Number). It
// returns the first constraint that does not hold, and why (false, or the
// evaluation's error: a missing argument, a type mismatch, a number out of
// range, the cost limit); "" when all hold.
func (c *Compiled) CheckConstraints(args map[string]any) (failed, why string) {
	if len(c.constraints) == 0 {
		return "", ""
	}
	return c.check(activation{args: args})
}

// check evaluates every constraint with in binding args.
func (c *Compiled) check(in interpreter.Activation) (failed, why string) {
	for _, k := range c.constraints {
		out, _, err := k.prg.Eval(in)
		switch {
		case err != nil:
			return k.src, "it could not be evaluated: " + oneLine(err.Error())
		case out == types.True:
			continue
		case out == types.False:
			return k.src, "it is false for these arguments"
		default:
			return k.src, fmt.Sprintf("it evaluated to %v, not a bool", out.Value())
		}
	}
	return "", ""
}

// activation binds args for an evaluation. It is one map, so it is held in
// an interface without an allocation.
type activation struct{ args map[string]any }

func (a activation) ResolveName(name string) (any, bool) {
	if name == "args" {
		return a.args, true
	}
	return nil, false
}

func (activation) Parent() interpreter.Activation { return nil }
