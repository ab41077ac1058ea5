package wasmhost_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// How a session's programs are compiled (guest/glue/glue.c, "Sessions"):
// each by a strict continuation of the one before, as sloppy code, and
// each name resolved to the innermost program that declares it.

// A program in a session is sloppy, as a fresh run's is, unless it says
// "use strict": the continuation compiling it is strict, its code is not.
func TestSession_Run_programsAreSloppyAsFreshOnes(t *testing.T) {
	rt := newRuntime(t, testConfig())
	for _, c := range []struct{ js, want string }{
		{`undeclaredX = 1; return typeof globalThis.undeclaredX`, `"number"`},
		{`return (function () { return this === globalThis })()`, `true`},
		{`with ({w: 3}) { return w }`, `3`},
		{`return 010`, `8`},
		{`function g(a, a) { return a } return g(1, 2)`, `2`},
		{`eval("var viaEval = 5"); return viaEval`, `5`},
		{`return (() => { eval("var inArrow = 6"); return inArrow })()`, `6`},
		{`"use strict"; try { undeclaredY = 1; return "assigned" } catch (e) { return e.name }`, `"ReferenceError"`},
		{`"use strict"; return (function () { return this })() === undefined`, `true`},
		{"// a note\n'use strict'\ntry { u1 = 1; return \"assigned\" } catch (e) { return e.name }", `"ReferenceError"`},
		{`"other"; "use strict"; try { u2 = 1; return "assigned" } catch (e) { return e.name }`, `"ReferenceError"`},
		{`"use strict".length; try { u3 = 1; return "assigned" } catch (e) { return e.name }`, `"assigned"`},
		{`"use\x20strict"; try { u4 = 1; return "assigned" } catch (e) { return e.name }`, `"assigned"`},
		{`"use strict`, ``}, // does not compile, fresh or not
	} {
		fresh, freshErr, _ := runJS(t, rt, c.js, api.Limits{})
		s := newSession(t, rt)
		requireResult(t, rt, s, `const before = 1; return before`, `1`)
		inSession, sessionErr := runIn(t, rt, s, c.js, api.Limits{})
		if c.want == "" {
			require.NotNil(t, freshErr, "%s", c.js)
			require.NotNil(t, sessionErr, "%s", c.js)
			require.Equal(t, api.KindSyntax, sessionErr.Kind, "%s", c.js)
			require.Equal(t, freshErr.Message, sessionErr.Message, "%s", c.js)
		} else {
			require.Nil(t, freshErr, "%s", c.js)
			require.Nil(t, sessionErr, "%s", c.js)
			require.JSONEq(t, c.want, string(fresh.Result), "fresh: %s", c.js)
			require.JSONEq(t, c.want, string(inSession.Result), "in a session: %s", c.js)
		}
		// The program after it is sloppy again, whatever it was.
		requireResult(t, rt, s, `undeclaredZ = before; return typeof undeclaredZ`, `"number"`)
	}
}

// A name resolves to the innermost program that declares it; a var a
// program's own eval declared stays that program's, visible to the
// programs after it and not a global.
func TestSession_Run_namesResolveInnermostFirst(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `let x = 1; function f() { return x } eval("var y = 5"); return f()`, `1`)
	requireResult(t, rt, s, `let x = 2; return [x, f(), y]`, `[2, 1, 5]`)
	requireResult(t, rt, s, `x = 3; y = 6; return [x, f(), y, typeof globalThis.y, typeof globalThis.x]`,
		`[3, 1, 6, "undefined", "undefined"]`)
	requireResult(t, rt, s, `const Math = {max: () => "mine"}; return Math.max(1, 2)`, `"mine"`)
	requireResult(t, rt, s, `return [x, y, Math.max(1, 2), JSON.stringify([1])]`, `[3, 6, "mine", "[1]"]`)
}

// A long session keeps every program's declarations and its globals: each
// program closes over a name once, however many programs declared it.
func TestSession_Run_longSessionKeepsEveryDeclaration(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	const n = 400
	for i := range n {
		requireResult(t, rt, s, "const v"+strconv.Itoa(i)+" = "+strconv.Itoa(i)+"; let same = "+strconv.Itoa(i)+"; return same", strconv.Itoa(i))
	}
	requireResult(t, rt, s, `return [v0, v199, v399, same, Math.max(2, 3)]`, `[0, 199, 399, 399, 3]`)
}

// A body that closes the session's wrapper early declares its top-level
// vars on the global object (its continuation is strict and keeps none)
// and leaves the session's scope as it was.
func TestSession_Run_bodyClosingTheWrapperDeclaresGlobals(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `const kept = "kept"; return 1`, `1`)
	escape := strings.Join([]string{
		`return 1}]})`,
		`var escaped = 7;`,
		`(function(){return [()=>undefined,async function(){return 2`,
	}, "\n")
	requireResult(t, rt, s, escape, `2`)
	requireResult(t, rt, s, `return [kept, escaped, typeof globalThis.escaped]`, `["kept", 7, "number"]`)
}

// FuzzSession_strictness runs a program whose first lines are the input
// fresh and as the second program of a session: the two must agree on
// whether it is strict (an undeclared assignment fails only in strict
// code), or fail to compile alike, at the same place. An input that could
// open or close a bracket is not tried: it could run into or out of its
// wrapper, and the two wrappers differ.
func FuzzSession_strictness(f *testing.F) {
	for _, seed := range []string{
		`"use strict"`, `'use strict';`, `"use strict"; "other"`, `"other"; 'use strict'`,
		"// note\n\"use strict\"", "/* note */ 'use strict'", `"use strict".length`, `"use\x20strict"`,
		`"use strict" + 1`, "\"use strict\"\n+1", `"use strict`, `'`, `"a" "use strict"`, "\"use strict\"\nawait 0",
		"\"use strict\"\n`t`", "\"use strict\"\n/re/.test('re')", `;"use strict"`, "",
	} {
		f.Add(seed)
	}
	rt := newRuntime(f, testConfig())
	limits := api.Limits{ComputeTime: 200 * time.Millisecond}
	f.Fuzz(func(t *testing.T, prologue string) {
		if strings.ContainsAny(prologue, "()[]{}") {
			return
		}
		js := prologue + "\ntry { undeclaredByFuzz = 1; return \"sloppy\" } catch (e) { return e instanceof ReferenceError ? \"strict\" : String(e) }"
		fresh, freshErr, _ := runJS(t, rt, js, limits)
		s := newSession(t, rt)
		requireResult(t, rt, s, `const before = 1; return before`, `1`)
		inSession, sessionErr := runIn(t, rt, s, js, limits)
		if freshErr != nil || sessionErr != nil {
			require.NotNil(t, freshErr, "only in a session: %v", sessionErr)
			require.NotNil(t, sessionErr, "only fresh: %v", freshErr)
			if freshErr.Kind == api.KindSyntax || sessionErr.Kind == api.KindSyntax {
				require.Equal(t, freshErr.Kind, sessionErr.Kind)
				require.Equal(t, freshErr.Message, sessionErr.Message)
				require.Equal(t, [2]int{freshErr.Line, freshErr.Column}, [2]int{sessionErr.Line, sessionErr.Column})
			}
			return
		}
		require.Equal(t, string(fresh.Result), string(inSession.Result))
	})
}

// A session's length costs no memory by itself: each program's scope
// closes over each earlier name once (guest/glue/scopes.patch). Before,
// it closed over every variable of every scope before it, so a session's
// memory grew with the square of its length: 88 MB at 1,000 programs of
// `return 1`, and the 256 MiB limit ran out before 2,000.
func TestSession_Run_lengthCostsNoMemory(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	memory := func(js string) int64 {
		out, re := runIn(t, rt, s, js, api.Limits{})
		require.Nil(t, re, "%s", js)
		return out.Stats.Memory
	}
	for range 100 {
		memory(`return 1`)
	}
	at100 := memory(`return 1`)
	for range 2900 {
		memory(`return 1`)
	}
	at3000 := memory(`return 1`)
	require.LessOrEqual(t, at3000, at100+2*65536, "memory at program 100: %d bytes, at 3,000: %d", at100, at3000)
}
