package transpile

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func rep(s string, n int) string { return strings.Repeat(s, n) }

// longProgram is testdata/realistic.ts repeated in blocks: about 3,600
// lines and 130 KB of ordinary code.
func longProgram(t testing.TB) string {
	b, err := os.ReadFile("testdata/realistic.ts")
	require.NoError(t, err)
	return rep("{\n"+string(b)+"}\n", 30)
}

func TestStrip_sourceSize(t *testing.T) {
	comment := func(n int) string { return "//" + rep("x", n-2) }
	for _, n := range []int{MaxSourceBytes - 1, MaxSourceBytes} {
		_, err := Strip(comment(n))
		require.NoError(t, err, n)
	}
	_, err := Strip(comment(MaxSourceBytes + 1))
	var le *LimitError
	require.ErrorAs(t, err, &le)
	require.ErrorIs(t, err, ErrLimit)
	require.Equal(t, "source size", le.Limit)
	require.Equal(t, int64(MaxSourceBytes), le.Max)
	require.Equal(t, int64(MaxSourceBytes+1), le.Got)
	require.Contains(t, err.Error(), "524289 bytes, over the limit of 524288; send a smaller program")
}

// The depth of x=((…(1)…)) with d parentheses is d+2 (the program, the
// assignment, one per parenthesis).
func TestCheck_nestingBound(t *testing.T) {
	parens := func(d int) string { return "x=" + rep("(", d) + "1" + rep(")", d) }
	for _, d := range []int{MaxNesting - 3, MaxNesting - 2} {
		p, err := Strip(parens(d))
		require.NoError(t, err, d)
		require.Contains(t, p.JS, "x = 1;")
	}
	_, err := Strip(parens(MaxNesting - 1))
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	require.Equal(t, fmt.Sprintf("the program nests deeper than %d levels (brackets, operators, statements); flatten it", MaxNesting), se.Message)
	require.Equal(t, 1, se.Line)
	require.Equal(t, MaxNesting+1, se.Column, "the parenthesis that crosses the bound")
	require.Equal(t, parens(MaxNesting-1), se.LineText)
}

// maxAccepted is the largest d up to hi whose gen(d) check accepts.
func maxAccepted(gen func(int) string, hi int) int {
	lo := 0
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if s := gen(mid); len(s) <= MaxSourceBytes && check(s) == nil {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Every construct that makes esbuild recurse, or work super-linearly, is
// bounded: each family is accepted up to some depth and refused just past
// it, by the nesting bound (as a SyntaxError) or by a work budget (as a
// LimitError); the deepest accepted nest transforms.
func TestCheck_families(t *testing.T) {
	const nesting = "nesting"
	label := func(d int) string {
		var b strings.Builder
		for i := range d {
			fmt.Fprintf(&b, "l%d:", i)
		}
		return b.String() + ";"
	}
	shadowNumbered := func(d int) string {
		var b strings.Builder
		b.WriteString("let f = (a")
		for i := 2; i <= d; i++ {
			fmt.Fprintf(&b, ",a%d", i)
		}
		return b.String() + ") => [" + rep("a=>0,", d) + "]"
	}
	params := "(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y,z)=>"
	tests := []struct {
		name string
		gen  func(d int) string
		want string // nesting, or the LimitError's Limit
		run  bool   // transform the deepest accepted nest
	}{
		{"parentheses", func(d int) string { return "x=" + rep("(", d) + "1" + rep(")", d) }, nesting, true},
		{"brackets", func(d int) string { return "x=" + rep("[", d) + rep("]", d) }, nesting, true},
		{"blocks", func(d int) string { return rep("{", d) + rep("}", d) }, nesting, true},
		{"objects", func(d int) string { return "x=" + rep("{a:", d) + "1" + rep("}", d) }, "renaming work", true},
		{"spread", func(d int) string { return "x=" + rep("[...", d) + "a" + rep("]", d) }, nesting, true},
		{"not", func(d int) string { return "x=" + rep("!", d) + "1" }, nesting, true},
		{"minus", func(d int) string { return "x=" + rep("- ", d) + "1" }, nesting, true},
		{"typeof", func(d int) string { return "x=" + rep("typeof ", d) + "1" }, nesting, true},
		{"await", func(d int) string { return "x=" + rep("await ", d) + "1" }, nesting, true},
		{"new", func(d int) string { return "x=" + rep("new ", d) + "a" }, nesting, true},
		{"increment", func(d int) string { return "x=" + rep("++", d) + "a" }, nesting, false},
		{"void delete", func(d int) string { return "x=" + rep("void delete ", d) + "a" }, nesting, true},
		{"type assertion", func(d int) string { return "x=" + rep("<A>", d) + "a" }, nesting, true},
		{"assignment", func(d int) string { return rep("a=", d) + "1" }, nesting, true},
		{"compound assignment", func(d int) string { return rep("a??=", d) + "1" }, nesting, true},
		{"exponent", func(d int) string { return "x=" + rep("2**", d) + "2" }, nesting, true},
		{"conditional chain", func(d int) string { return "x=" + rep("a?a:", d) + "a" }, nesting, true},
		{"conditional nest", func(d int) string { return "x=" + rep("a?", d) + "a" + rep(":a", d) }, nesting, true},
		{"arrow with block", func(d int) string { return "x=" + rep("()=>{return ", d) + "1" + rep("}", d) }, nesting, true},
		{"if", func(d int) string { return rep("if(a)", d) + ";" }, nesting, true},
		{"else if", func(d int) string { return "if(a){}" + rep("else if(a){}", d) }, nesting, true},
		{"else if with semicolons", func(d int) string { return "if(a)b;" + rep("else if(a)b;", d) }, nesting, true},
		{"while", func(d int) string { return rep("while(a)", d) + ";" }, nesting, true},
		{"for", func(d int) string { return rep("for(;;)", d) + ";" }, nesting, true},
		{"do", func(d int) string { return rep("do ", d) + ";" + rep("while(a)", d) }, nesting, true},
		{"labels", label, "renaming work", true},
		{"template", func(d int) string { return "x=" + rep("`${", d) + "1" + rep("}`", d) }, nesting, true},
		{"generic type", func(d int) string { return "let x: " + rep("A<", d) + "A" + rep(">", d) }, nesting, true},
		{"generic type with commas", func(d int) string { return "let x: " + rep("A<B,", d) + "A" + rep(">", d) }, nesting, true},
		{"keyof", func(d int) string { return "let x: " + rep("keyof ", d) + "A" }, nesting, true},
		{"conditional type", func(d int) string { return "let x: " + rep("A extends B ? C : ", d) + "A" }, nesting, true},
		{"function type", func(d int) string { return "let x: " + rep("()=>", d) + "A" }, nesting, true},
		{"member chain", func(d int) string { return "x=a" + rep(".b", d) }, nesting, true},
		{"optional chain", func(d int) string { return "x=a" + rep("?.b", d) }, nesting, true},
		{"member chain through type arguments", func(d int) string { return "x=a" + rep(".b<T>()", d) }, nesting, true},
		{"call chain", func(d int) string { return "x=a" + rep("()", d) }, nesting, true},
		{"index chain", func(d int) string { return "x=a" + rep("[0]", d) }, nesting, true},
		{"non-null chain", func(d int) string { return "x=a" + rep("!", d) }, nesting, true},
		{"as chain", func(d int) string { return "x=a" + rep(" as any", d) }, nesting, true},
		{"tagged template chain", func(d int) string { return "x=a" + rep("`x`", d) }, nesting, true},
		{"number member chain", func(d int) string { return "x=1..a" + rep(".a", d) }, nesting, true},
		{"comma operator", func(d int) string { return "x=(" + rep("a,", d) + "a)" }, nesting, true},
		{"comma operator in a block", func(d int) string { return "{" + rep("a,", d) + "a}" }, nesting, true},
		{"comma operator after a label", func(d int) string { return "l:{" + rep("a,", d) + "a}" }, nesting, true},
		{"arrow chain", func(d int) string { return "x=" + rep("x=>", d) + "x" }, "renaming work", false},
		{"shadowed parameters", func(d int) string { return "x=" + rep(params, d) + "0" }, "renaming work", false},
		{"numbered names", shadowNumbered, "renaming work", false},
		{"string concatenation", func(d int) string { return "x=" + rep("'a'+", d) + "'a'" }, "string folding work", true},
		{"nested concatenation", func(d int) string { return "x=" + rep("('aaaa'+", d) + "'a'" + rep(")", d) }, nesting, true},
		{"comparison chain", func(d int) string { return "x=" + rep("a<", d) + "a" }, "type-argument and conditional lookahead work", false},
		{"comparisons in arguments", func(d int) string { return "f(" + rep("a<b,", d) + "a)" }, nesting, false},
		{"comparisons and parentheses", func(d int) string { return "x=" + rep("a<(", d) + "a" + rep(")", d) }, "renaming work", false},
		{"conditional arrows", func(d int) string { return "x=" + rep("a?(b)=>", d) + "c" + rep(":c", d) }, "renaming work", false},
		{"conditionals", func(d int) string { return "x=" + rep("a?(", d) + "0" + rep("):0", d) }, "renaming work", false},
		{"indented lines", func(d int) string { return rep("{\n", 900) + rep("0\n", d) + rep("}", 900) }, "nesting work", true},
		{"blocks repeated", func(d int) string { return rep(rep("{", 900)+rep("}", 900)+"\n", d) }, "nesting work", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := maxAccepted(tt.gen, 1<<17)
			require.Greater(t, m, 3, "even small nests are refused")
			require.NoError(t, check(tt.gen(m-1)), "below the bound")
			err := check(tt.gen(m + 1))
			if tt.want == nesting {
				var se *SyntaxError
				require.ErrorAs(t, err, &se, "past the bound (%d)", m+1)
				require.Contains(t, se.Message, "nests deeper than")
			} else {
				var le *LimitError
				require.ErrorAs(t, err, &le, "past the bound (%d)", m+1)
				require.ErrorIs(t, err, ErrLimit)
				require.Equal(t, tt.want, le.Limit)
				require.Greater(t, le.Got, le.Max)
			}
			if tt.run {
				_, err := Strip(tt.gen(m))
				var le *LimitError
				require.False(t, errors.As(err, &le), "the deepest accepted nest is accepted by Strip: %v", err)
			}
		})
	}
}

// Left-associative chains are iterative in esbuild and are not bounded by
// length: only by the size bound.
func TestCheck_leftAssociativeChainsPass(t *testing.T) {
	for _, op := range []string{"+", "-", "*", "&&", "||", "??", "==", "|", "&", " in ", " instanceof "} {
		code := "x=" + rep("a"+op, 20000) + "a"
		require.NoError(t, check(code), op)
	}
	require.NoError(t, check("let x: "+rep("A|", 20000)+"A"))
}

// Real programs pass with a wide margin: the repository's examples, and a
// 3,600-line program (testdata/realistic.ts repeated) whose strings,
// templates, comments and regular expressions are full of brackets and
// operators.
func TestStrip_realProgramsPass(t *testing.T) {
	files, err := os.ReadDir("../examples")
	require.NoError(t, err)
	var programs []string
	for _, d := range files {
		ts, err := os.ReadDir("../examples/" + d.Name())
		require.NoError(t, err)
		for _, f := range ts {
			if strings.HasSuffix(f.Name(), ".ts") {
				b, err := os.ReadFile("../examples/" + d.Name() + "/" + f.Name())
				require.NoError(t, err)
				programs = append(programs, string(b))
			}
		}
	}
	require.NotEmpty(t, programs)
	long := longProgram(t)
	require.Greater(t, strings.Count(long, "\n"), 3000)
	programs = append(programs, long)
	for _, code := range programs {
		_, err := Strip(code)
		var le *LimitError
		require.False(t, errors.As(err, &le), "%v", err)
		if se := (*SyntaxError)(nil); errors.As(err, &se) {
			require.NotContains(t, se.Message, "nests deeper", se.LineText)
			require.NotContains(t, se.Message, "may start a regular expression", se.LineText)
		}
	}
	_, err = Strip(long)
	require.NoError(t, err)
}

// A lexer that misreads a string, template, comment or regular expression
// would hide brackets from the count; each of these hides 5,000 nested
// parentheses from a careless one and must be refused.
func TestCheck_lexerCannotBeFooled(t *testing.T) {
	deep := rep("(", 5000) + "1" + rep(")", 5000)
	tests := []struct{ name, code string }{
		{"regex with a quote after an if head", "if(x) /'/ ;" + deep},
		{"regex with a quote after while", "while(x) /\"/.test(y);x=" + deep},
		{"division then a string", "x = a / '/' + " + deep},
		{"regex with a backtick after a block", "{}/`/ ;x=" + deep},
		{"regex or division after a block", "{} / 2 / " + deep},
		{"regex with a bracket after a block", "{}/[/]/;x=" + deep},
		{"regex after an object", "x = {} /'/ + " + deep},
		{"regex with closers after a block", rep("(()=>{{}/))))))/;", 600)},
		{"regex after '>'", "x = a<b>/ " + deep},
		{"regex after a contextual word", "x = of / '/' + " + deep},
		{"regex after an escaped keyword", "\\u0069f(x) / '/' + " + deep},
		{"regex after a postfix '!' after a block", "{} ! /'/;" + deep},
		{"regex followed by a comment opener", "{} /a//" + deep},
		{"regex with an html comment", "{} /<!--/;x=" + deep},
		{"line comment ended by U+2028", "// comment\u2028x=" + deep},
		{"line comment ended by CR", "// comment\rx=" + deep},
		{"string across U+2028", "x = 'a\u2028' + " + deep + "+'"},
		{"string with an escaped quote", "x = 'a\\'' + " + deep + "+'"},
		{"string with an escaped line break", "x = 'a\\\n' + " + deep + "+'"},
		{"template with a brace in text", "x = `}` + " + deep + "+`"},
		{"template with nested templates", "x = `${`${'`'}`}` + " + deep + "+`"},
		{"html open comment ends at the line", "x = 1 <!-- comment\nx=" + deep},
		{"html close comment only at a line start", "x = a --> b;x=" + deep},
		{"block comment", "/* ' ` \" */ x=" + deep},
		{"number then member", "x = 1..a" + rep(".a", 2000)},
		{"exponent number", "x = 1e-5 + " + deep},
		{"hex number with e", "x = 0xe-" + deep},
		{"optional call with digits", "x = a?.5:" + deep},
		{"escaped identifier", "x\\u0061 = " + deep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := check(tt.code)
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			require.True(t, strings.Contains(se.Message, "nests deeper") || strings.Contains(se.Message, "may start a regular expression"), se.Message)
		})
	}
}

// The readings of '/' that are certain are not refused.
func TestCheck_slashReadings(t *testing.T) {
	for _, code := range []string{
		"x = a / b / c",
		"x = (a + b) / 2",
		"x = a[0] / 2",
		"x = /[/]'\"`/g.test(s)",
		"if (x) /'/.test(y)",
		"x = a++ / 2",
		"x = a! / 2",
		"return /a(b)/.exec(s)",
		"x = `${a}` / 2",
		"x = 1 / 2 / 3",
		"{} /a/.test(s)",
		"x = a > b / c",
		"if (a) {} /re/.test(s)",
	} {
		require.NoError(t, check(code), code)
	}
	_, err := Strip("{}/'/")
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 1, se.Line)
	require.Equal(t, 3, se.Column)
	require.Contains(t, se.Message, "put the regular expression or the division in parentheses")
}

// A program that ends the wrapper function early and keeps nesting is
// counted after the stray '}'.
func TestCheck_strayCloserKeepsCounting(t *testing.T) {
	err := check("}" + rep("(", 5000))
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
}

func TestLimitError_message(t *testing.T) {
	err := check("x=" + rep("'aa'+", 5000) + "'a'")
	var le *LimitError
	require.ErrorAs(t, err, &le)
	require.Regexp(t, `^transpile: the program's string folding work is \d+ units, over the limit of \d+; build long strings from an array with join, not a chain of '\+'$`, err.Error())
}

func FuzzCheck(f *testing.F) {
	b, err := os.ReadFile("testdata/realistic.ts")
	require.NoError(f, err)
	for _, s := range []string{
		string(b), "x = a / b", "{}/`/", "if(x) /'/ (", "`${`${a}`}`", "a<b>(c)", "x=>x=>x",
		"l:{a,b}", "'a'+'b'", "1..a.b", "\\u0069f(x)", "// a\u2028b", "<!-- a\nb", "a\n-->b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if len(code) > 4096 {
			return
		}
		if check(code) != nil {
			return
		}
		_, _ = Strip(code) // esbuild must not crash on anything the pre-check accepts
	})
}

func BenchmarkCheck(b *testing.B) {
	code := longProgram(b)[:100<<10]
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(code)))
		for range b.N {
			if err := check(code); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("esbuild", func(b *testing.B) { // the baseline: Strip without its cache
		b.SetBytes(int64(len(code)))
		for i := range b.N {
			if _, err := Strip(code + fmt.Sprintf("\n//%d", i)); err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) {
					b.Fatal(err)
				}
			}
		}
	})
}
