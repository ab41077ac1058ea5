package transpile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// redeclareWork is the pre-check's redeclaration estimate for code.
func redeclareWork(t *testing.T, code string) int64 {
	t.Helper()
	c := checker{lx: newLexer(code), idents: map[string]identInfo{}, bases: map[string]int32{},
		slash: slashRegex, redecl: redeclarations{first: map[string]int{}, pending: -1}}
	c.stack = append(c.stack, level{open: 0, block: true, commas: true, base: 1, sigBase: 2})
	var tok token
	for {
		c.lx.slash = c.slash
		require.NoError(t, c.lx.next(&tok))
		if tok.kind == tkEOF {
			return c.redecl.work
		}
		require.NoError(t, c.step(&tok))
	}
}

// n declarations of one name in one scope, one per 13-byte line, cost the
// bytes from each to the first: 13 n(n-1)/2.
func TestCheck_redeclarationBound(t *testing.T) {
	decls := func(n int) string { return strings.Repeat("const a = 1;\n", n) }
	require.EqualValues(t, 13*3, redeclareWork(t, decls(3)), "0 + 13 + 26")
	n := 2
	for int64(13*(n+1)*n/2) <= maxRedeclareWork {
		n++
	}
	require.LessOrEqual(t, int64(13*n*(n-1)/2), int64(maxRedeclareWork))
	require.NoError(t, check(decls(n)), "at the bound")
	require.NoError(t, check(decls(n-1)), "below it")
	err := check(decls(n + 1))
	var le *LimitError
	require.ErrorAs(t, err, &le, "past it")
	require.Equal(t, "redeclaration work", le.Limit)
	require.ErrorIs(t, err, ErrLimit)
}

// Each route by which a note can point far back is counted; names bound
// again in other scopes are not.
func TestCheck_redeclarationRoutes(t *testing.T) {
	big := `"` + strings.Repeat("x", 100_000) + `"`
	lets := strings.Repeat("let a; ", 400)
	refused := map[string]string{
		"after a long string":     "const a = 0; const s = " + big + ";\n" + strings.Repeat("const a = 1;\n", 400),
		"function parameter":      "function f(a, b = " + big + ") { " + lets + "}",
		"arrow parameters":        "const f = (a, b = " + big + ") => { " + lets + "};",
		"lone arrow parameter":    "const f = a => { const s = " + big + "; " + lets + "};",
		"method parameter":        "class C { m(a, b = " + big + ") { " + lets + "} }",
		"catch parameter":         "try {} catch (a) { const s = " + big + "; " + lets + "}",
		"var hoisted out a block": "let a; const s = " + big + "; " + strings.Repeat("{ var a; } ", 400),
		"destructuring":           "const {a} = {a: 1}; const s = " + big + "; " + strings.Repeat("const {a} = {a: 1}; ", 400),
		"function declarations":   "function a() {} const s = " + big + "; " + strings.Repeat("function a() {} ", 400),
	}
	for name, code := range refused {
		t.Run(name, func(t *testing.T) {
			var le *LimitError
			require.True(t, errors.As(check(code), &le), "refused")
			require.Equal(t, "redeclaration work", le.Limit)
		})
	}
	accepted := map[string]string{
		"the same name in many blocks":          strings.Repeat("{ const a = 1; let b = a; }\n", 4000),
		"the same parameters in many functions": manyFunctions(4000),
		"type annotations":                      "let x: " + strings.Repeat("A|", 20000) + "A",
	}
	for name, code := range accepted {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, check(code))
		})
	}
}

// Warnings are never made: a program that assigns a constant thousands of
// times after a long string (each warning's note points back at the
// constant) transforms, and its warnings are not errors.
func TestStrip_warningsSilenced(t *testing.T) {
	code := "const a = 0;\nconst s = \"" + strings.Repeat("x", 400_000) + "\";\n" + strings.Repeat("a = 1;\n", 8000)
	_, err := Strip(code)
	require.NoError(t, err)
	for _, id := range []string{"assign-to-constant", "duplicate-object-key", "duplicate-case", "equals-nan"} {
		require.Contains(t, silencedWarnings, id)
	}
}

func manyFunctions(n int) string {
	var b strings.Builder
	for i := range n {
		name := []byte{'f', byte('a' + i%26), byte('a' + i/26%26), byte('a' + i/676%26)} // no digits: numbered names are the renamer's own bound
		fmt.Fprintf(&b, "function %s(a, b) { const c = a + b; return c }\n", name)
	}
	return b.String()
}

// An identifier inside nested parentheses is kept once, not once per open
// group: 900 groups deep, 50,000 identifiers keep 50,000 entries (the
// estimate's memory is linear in the program, not in its nesting times it).
func TestCheck_redeclarationMemoryIsLinear(t *testing.T) {
	code := strings.Repeat("(", 900) + strings.Repeat("a+", 50_000) + "a" + strings.Repeat(")", 900)
	c := checker{lx: newLexer(code), idents: map[string]identInfo{}, bases: map[string]int32{},
		slash: slashRegex, redecl: redeclarations{first: map[string]int{}, pending: -1}}
	c.stack = append(c.stack, level{open: 0, block: true, commas: true, base: 1, sigBase: 2})
	var tok token
	peak := 0
	for {
		c.lx.slash = c.slash
		require.NoError(t, c.lx.next(&tok))
		if tok.kind == tkEOF {
			break
		}
		require.NoError(t, c.step(&tok))
		peak = max(peak, len(c.redecl.names))
	}
	require.Equal(t, 50_001, peak)
}

// A program is stripped only in a slot: with every slot taken, a new
// program waits, and goes on when one is given back; a cached one does not
// wait.
func TestStrip_slotsBoundConcurrency(t *testing.T) {
	cached := "return 'slots, cached'"
	_, err := Strip(cached)
	require.NoError(t, err)
	for range cap(stripSlots) {
		stripSlots <- struct{}{}
	}
	_, err = Strip(cached)
	require.NoError(t, err, "a cached program needs no slot")
	done := make(chan error, 1)
	go func() { _, err := Strip("return 'slots, new'"); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("stripped with every slot taken: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	<-stripSlots
	require.NoError(t, <-done)
	for range cap(stripSlots) - 1 {
		<-stripSlots
	}
}
