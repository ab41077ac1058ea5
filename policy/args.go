package policy

import (
	"reflect"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"
)

// Args are a call's decoded arguments (numbers are json.Number), as
// constraints read them: one top-level argument by name, which a call's
// arguments can answer without decoding the rest (Lookup), or all of them
// (Map). The executor's are its call's (internal/resolve.Args).
type Args interface {
	// Lookup returns the argument name and whether the call gives it.
	Lookup(name string) (any, bool)
	// Map returns every argument; it is not changed.
	Map() map[string]any
}

// CheckArgs is CheckConstraints over args: a constraint that reads
// arguments by name (args.amount, has(args.to), "to" in args) reads only
// those; anything else (the map's size, iterating it, comparing it whole)
// reads args.Map().
func (c *Compiled) CheckArgs(args Args) (failed, why string) {
	if len(c.constraints) == 0 {
		return "", ""
	}
	return c.check(argsActivation{&lazyArgs{args}})
}

// argsActivation binds args to a lazyArgs. Both are one pointer, held in
// an interface without an allocation.
type argsActivation struct{ args *lazyArgs }

func (a argsActivation) ResolveName(name string) (any, bool) {
	if name == "args" {
		return a.args, true
	}
	return nil, false
}

func (argsActivation) Parent() interpreter.Activation { return nil }

// lazyArgs is args as a CEL map (traits.Mapper): a lookup by a string key
// asks Args.Lookup; every other operation is the map of Args.Map's, as CEL
// reads any map[string]any.
type lazyArgs struct{ a Args }

var _ traits.Mapper = (*lazyArgs)(nil)

func (l *lazyArgs) full() traits.Mapper {
	return types.DefaultTypeAdapter.NativeToValue(l.a.Map()).(traits.Mapper)
}

// Find returns the value of key, and whether args has it.
func (l *lazyArgs) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return l.full().Find(key)
	}
	v, ok := l.a.Lookup(string(k))
	if !ok {
		return nil, false
	}
	return types.DefaultTypeAdapter.NativeToValue(v), true
}

func (l *lazyArgs) Get(key ref.Val) ref.Val {
	if v, ok := l.Find(key); ok {
		return v
	}
	return l.full().Get(key) // the error CEL gives for a map without key
}

func (l *lazyArgs) Contains(key ref.Val) ref.Val {
	if k, ok := key.(types.String); ok {
		_, has := l.a.Lookup(string(k))
		return types.Bool(has)
	}
	return l.full().Contains(key)
}

func (l *lazyArgs) Size() ref.Val                    { return l.full().Size() }
func (l *lazyArgs) Iterator() traits.Iterator        { return l.full().Iterator() }
func (l *lazyArgs) Equal(other ref.Val) ref.Val      { return l.full().Equal(other) }
func (l *lazyArgs) Type() ref.Type                   { return types.MapType }
func (l *lazyArgs) Value() any                       { return l.a.Map() }
func (l *lazyArgs) ConvertToType(t ref.Type) ref.Val { return l.full().ConvertToType(t) }

func (l *lazyArgs) ConvertToNative(t reflect.Type) (any, error) {
	return l.full().ConvertToNative(t)
}
