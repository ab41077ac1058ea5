package meter

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// brTableOf returns a br_table of n labels, the default one included, all
// to label l.
func brTableOf(n int, l uint32) []byte {
	c := cat(bs(0x0e), uleb(uint64(n-1)))
	for range n {
		c = cat(c, uleb(uint64(l)))
	}
	return c
}

// dispatchLoop returns a loop that turns local n times (at least once),
// each turn through a br_table of labels labels back to its header.
func dispatchLoop(n uint32, labels int) []byte {
	return cat(
		bs(0x02, tEmpty), // block: the exit
		loop(tEmpty),
		localGet(n), bs(0x45), brIf(1), // i32.eqz: exit at 0
		localGet(n), i32Const(1), i32Sub, localSet(n),
		i32Const(0), brTableOf(labels, 0),
		end, end,
	)
}

// funcNames returns a name section naming functions (index, name).
func funcNames(names ...any) []byte {
	var entries [][]byte
	for i := 0; i < len(names); i += 2 {
		entries = append(entries, cat(uleb(uint64(names[i].(int))), str(names[i+1].(string))))
	}
	sub := vecOf(entries...)
	return customSec("name", cat(bs(subFuncNames), uleb(uint64(len(sub))), sub))
}

// interpModule is a module importing ptcx.poll (function 0) and exporting
// run(n i32) -> i32 (function 1), whose code is given, with one i32 local
// (1) and its result in local 1; more are custom sections after the code.
func interpModule(code []byte, more ...[]byte) []byte {
	return mod(append([][]byte{
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1))),
		sec(7, vecOf(export("run", 0, 1))),
		sec(10, vecOf(body([][2]uint32{{1, tI32}}, code, localGet(1)))),
	}, more...)...)
}

// dispatchOpt exempts function "interp"'s br_table of 8 labels or more.
var dispatchOpt = Options{Module: "ptcx", Name: "poll", Interval: 10, Exempt: Exempt{Func: "interp", MinTargets: 8}}

// The dispatch loop is found by the function's name and its br_table, and
// left without a check; the function's other loop keeps its own. Running
// it shows it: the exempted loop turns without polling, the other polls.
func TestInstrument_exempt_found(t *testing.T) {
	// The counting loop first: it counts local 1 up to local 0 (n), then
	// the dispatch loop runs local 0 down to 0.
	code := cat(countLoop(1, 0), dispatchLoop(0, 8))
	in := interpModule(code, funcNames(1, "interp"))
	out, st := meterOpt(t, in, dispatchOpt)
	require.True(t, st.exempted, st.notExempted)
	require.Equal(t, 1, st.loops, "the counting loop keeps its check")
	require.Equal(t, uint32(1), st.exemptFunc)
	require.Equal(t, in[st.exemptLoop], byte(0x03), "ExemptLoop is a loop opcode")

	h := newHost(t, false)
	m := h.instantiate(t, out)
	require.Equal(t, uint64(1000), h.call(t, m, "run", 1000)[0])
	require.Equal(t, int64(100), h.polls.Load(), "1,000 turns of the counting loop poll 100 times; the dispatch loop's do not")

	all, stAll := meterOpt(t, in, Options{Module: "ptcx", Name: "poll", Interval: 10})
	require.False(t, stAll.exempted)
	require.Equal(t, 2, stAll.loops)
	h = newHost(t, false)
	m = h.instantiate(t, all)
	h.call(t, m, "run", 1000)
	require.Equal(t, int64(200), h.polls.Load(), "without Exempt both loops poll")

	_, rep, err := Instrument(in, dispatchOpt)
	require.NoError(t, err)
	require.Equal(t, Report{Loops: 1, Exempted: true, ExemptFunc: 1, ExemptLoop: st.exemptLoop}, rep)
}

// Of nested loops around the br_table, the innermost is exempted.
func TestInstrument_exempt_innermostLoop(t *testing.T) {
	outer := cat(loop(tEmpty), dispatchLoop(0, 8), end)
	in := interpModule(outer, funcNames(1, "interp"))
	_, st := meterOpt(t, in, dispatchOpt)
	require.True(t, st.exempted, st.notExempted)
	require.Equal(t, 1, st.loops, "the outer loop keeps its check")
	require.Equal(t, byte(0x03), in[st.exemptLoop])
	require.Equal(t, []byte{0x02, 0x40}, in[st.exemptLoop-2:st.exemptLoop], "the inner loop, right after dispatchLoop's exit block")
}

// Whatever does not identify exactly one loop exempts nothing: every loop
// is instrumented, and the report says why.
func TestInstrument_exempt_notFound(t *testing.T) {
	loopy := cat(countLoop(1, 0), dispatchLoop(0, 8))
	for _, tc := range []struct {
		name string
		in   []byte
		opt  Options
		why  string
	}{
		{"no name section", interpModule(loopy), dispatchOpt, "no name section"},
		{"two name sections", interpModule(loopy, funcNames(1, "interp"), funcNames(1, "interp")), dispatchOpt, "2 name sections"},
		{"no such name", interpModule(loopy, funcNames(1, "other")), dispatchOpt, `names no function "interp"`},
		{"the name twice", interpModule(loopy, funcNames(1, "interp", 1, "interp")), dispatchOpt, `names 2 functions "interp"`},
		{"an imported function", interpModule(loopy, funcNames(0, "interp")), dispatchOpt, "is imported"},
		{"an index past the functions", interpModule(loopy, funcNames(7, "interp")), dispatchOpt, "the module has 2 functions"},
		{"a malformed name section", interpModule(loopy, customSec("name", bs(subFuncNames, 0x05, 0x01))), dispatchOpt, "the name section is malformed"},
		{"a br_table one label short", interpModule(cat(countLoop(1, 0), dispatchLoop(0, 7)), funcNames(1, "interp")), dispatchOpt, "no br_table of 8 labels or more"},
		{"two br_tables", interpModule(cat(dispatchLoop(0, 8), dispatchLoop(0, 9)), funcNames(1, "interp")), dispatchOpt, "2 br_tables of 8 labels or more"},
		{"a br_table in no loop", interpModule(cat(bs(0x02, tEmpty), i32Const(0), brTableOf(8, 0), end), funcNames(1, "interp")), dispatchOpt, "is in no loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, all := meterOpt(t, tc.in, Options{Module: "ptcx", Name: "poll", Interval: 10})
			_, st := meterOpt(t, tc.in, tc.opt)
			require.False(t, st.exempted)
			require.Contains(t, st.notExempted, tc.why)
			require.Equal(t, all.loops, st.loops, "every loop is instrumented")
			_, rep, err := Instrument(tc.in, tc.opt)
			require.NoError(t, err)
			require.False(t, rep.Exempted)
			require.Equal(t, st.notExempted, rep.NotExempted)
		})
	}
}

// MinTargets is a count of labels: a br_table of exactly MinTargets is
// found, one of a label fewer is not (TestInstrument_exempt_notFound), and
// a bigger one is.
func TestInstrument_exempt_minTargets(t *testing.T) {
	for _, labels := range []int{8, 9, 300} {
		in := interpModule(dispatchLoop(0, labels), funcNames(1, "interp"))
		_, st := meterOpt(t, in, dispatchOpt)
		require.True(t, st.exempted, "%d labels: %s", labels, st.notExempted)
	}
	in := interpModule(dispatchLoop(0, 2), funcNames(1, "interp"))
	_, st := meterOpt(t, in, Options{Module: "ptcx", Name: "poll", Interval: 10, Exempt: Exempt{Func: "interp", MinTargets: 2}})
	require.True(t, st.exempted, "MinTargets 2, the least: %s", st.notExempted)
	for _, min := range []uint32{0, 1} {
		_, _, err := Instrument(in, Options{Module: "ptcx", Name: "poll", Interval: 10, Exempt: Exempt{Func: "interp", MinTargets: min}})
		require.ErrorContains(t, err, "Exempt.MinTargets")
	}
}

// Without Exempt.Func, nothing is looked for and nothing reported.
func TestInstrument_exempt_unset(t *testing.T) {
	in := interpModule(dispatchLoop(0, 8), funcNames(1, "interp"))
	_, rep, err := Instrument(in, Options{Module: "ptcx", Name: "poll", Interval: 10})
	require.NoError(t, err)
	require.Equal(t, Report{Loops: 1}, rep)
}
