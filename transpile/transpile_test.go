package transpile

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStrip_valid(t *testing.T) {
	tests := []struct {
		name, code string
		want       []string // substrings of the output
		not        []string // substrings that must be gone
	}{
		{"types stripped", "const x: number = 1;\nreturn x", []string{"const x = 1;", "return x;"}, []string{": number"}},
		{"interface gone", "interface A { a: string }\nconst a: A = {a: 'x'}\nreturn a", []string{`const a = { a: "x" };`}, []string{"interface"}},
		{"top-level await", "const r = await tools.read({path: 'a'});\nreturn r", []string{"await tools.read("}, nil},
		{"using kept", "await using r = {async [Symbol.asyncDispose]() {}};\nreturn 1", []string{"await using r"}, nil},
		{"generics and as", "function id<T>(x: T): T { return x }\nreturn id<number>(1) as number", []string{"function id(x)", "return id(1);"}, []string{"<T>", " as "}},
		{"empty program", "", nil, nil},
		{"only a comment", "// nothing", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Strip(tt.code)
			require.NoError(t, err)
			js := p.JS
			for _, w := range tt.want {
				require.Contains(t, js, w)
			}
			for _, n := range tt.not {
				require.NotContains(t, js, n)
			}
			require.NotContains(t, js, header, "the wrapper must be removed")
		})
	}
}

func TestStrip_enumHelpersStayInBody(t *testing.T) {
	p, err := Strip("enum E { A, B }\nreturn E.B")
	require.NoError(t, err)
	js := p.JS
	require.Contains(t, js, "let E;")
	require.True(t, strings.HasSuffix(strings.TrimSpace(js), "return 1 /* B */;"), js)
}

func TestStrip_syntaxErrorLocation(t *testing.T) {
	tests := []struct {
		name       string
		code       string
		line, col  int
		msgContain string
	}{
		{"first line", "let x = ;", 1, 9, `Unexpected ";"`},
		{"third line", "const a = 1\nconst b = 2\nconst c: = 3", 3, 10, "Unexpected"},
		{"static import refused", "import fs from 'fs'", 1, 8, "Unexpected"},
		{"unterminated block", "if (true) {\n  return 1", 2, 11, "Unexpected end of file"},
		{"unterminated string", "const s = 'abc\nreturn s", 1, 15, "Unterminated string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Strip(tt.code)
			var se *SyntaxError
			require.True(t, errors.As(err, &se), "got %v", err)
			require.Equal(t, tt.line, se.Line, se.Error())
			require.Equal(t, tt.col, se.Column, se.Error())
			require.Contains(t, se.Message, tt.msgContain)
			require.Contains(t, se.Error(), fmt.Sprintf("line %d, column %d", tt.line, tt.col))
		})
	}
}

func TestStrip_cacheEvictsOldest(t *testing.T) {
	c := newLRU(2, 1<<20)
	c.put("a", &Program{JS: "A"})
	c.put("b", &Program{JS: "B"})
	_, _ = c.get("a") // a is now newer than b
	c.put("c", &Program{JS: "C"})
	_, okB := c.get("b")
	_, okA := c.get("a")
	_, okC := c.get("c")
	require.False(t, okB)
	require.True(t, okA)
	require.True(t, okC)
}

// The cache is bounded in bytes as well as entries: putting past the byte
// bound evicts the oldest, and a program larger than the whole bound is not
// kept.
func TestStrip_cacheBoundedInBytes(t *testing.T) {
	prog := func(n int) *Program { return &Program{JS: strings.Repeat("x", n)} }
	c := newLRU(100, 1000)
	c.put("a", prog(399)) // 400 bytes with its key
	c.put("b", prog(399))
	c.put("c", prog(199)) // 1000: at the bound, all kept
	for _, k := range []string{"a", "b", "c"} {
		_, ok := c.get(k)
		require.True(t, ok, k)
	}
	require.Equal(t, 1000, c.bytes)
	c.put("d", prog(0)) // 1001: past it, the oldest goes
	_, okA := c.get("a")
	require.False(t, okA)
	require.Equal(t, 601, c.bytes)
	c.put("e", prog(1000)) // larger than the bound: not kept, nothing evicted
	_, okE := c.get("e")
	require.False(t, okE)
	require.Equal(t, 601, c.bytes)
	require.Equal(t, 24+24*3, (&Program{lines: [][]segment{{{}, {}, {}}}}).size(), "a line and its segments")
}

func TestStrip_hammer(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := fmt.Sprintf("const v: number = %d;\nreturn v", i%8)
			p, err := Strip(code)
			require.NoError(t, err)
			require.Contains(t, p.JS, fmt.Sprintf("const v = %d;", i%8))
		}()
	}
	wg.Wait()
}

func BenchmarkStrip(b *testing.B) {
	b.Run("cold", func(b *testing.B) {
		for i := range b.N {
			if _, err := Strip(fmt.Sprintf("const x: number = %d;\nreturn x", i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		for range b.N {
			if _, err := Strip("const x: number = 1;\nreturn x"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Locate maps positions in the stripped JavaScript back to the TypeScript
// as written, through esbuild's source map.
func TestProgram_Locate(t *testing.T) {
	code := "const a: number = 1;\n\n\n// comment\nfunction f(x: number) {\n  if (x > 0) { throw new Error(\"deep \" + x) }\n}\nf(a);\n"
	p, err := Strip(code)
	require.NoError(t, err)
	lines := strings.Split(p.JS, "\n")
	find := func(needle string) (int, int) {
		for i, l := range lines {
			if c := strings.Index(l, needle); c >= 0 {
				return i + 1, c + 1
			}
		}
		t.Fatalf("%q not in %q", needle, p.JS)
		return 0, 0
	}
	for _, tt := range []struct {
		needle    string
		line, col int
	}{
		{"throw new Error", 6, 16},
		{"f(a)", 8, 1},
		{"const a = 1", 1, 1},
		{"function f(x)", 5, 1},
	} {
		l, c := find(tt.needle)
		gotLine, gotCol, ok := p.Locate(l, c)
		require.True(t, ok, tt.needle)
		require.Equal(t, tt.line, gotLine, tt.needle)
		require.Equal(t, tt.col, gotCol, tt.needle)
	}
	_, _, ok := p.Locate(1000, 1)
	require.False(t, ok)
	_, _, ok = p.Locate(0, 0)
	require.False(t, ok)
	_, _, ok = (*Program)(nil).Locate(1, 1)
	require.False(t, ok)
}

// Helpers esbuild may hoist in front of the body shift the lines after
// them; Locate accounts for them. (No construct esbuild hoists at esnext
// today, so the Program is built by hand: one hoisted line, the wrapper's
// header, one body line.)
func TestProgram_Locate_afterHoistedLines(t *testing.T) {
	p := &Program{prefixLines: 1, lines: [][]segment{
		{{genCol: 0, line: 5, col: 2}},                               // the hoisted line, made from user line 5
		{{genCol: 0, line: 0, col: 0}},                               // the header
		{{genCol: 2, line: 1, col: 0}, {genCol: 8, line: 1, col: 6}}, // user line 1
	}}
	line, col, ok := p.Locate(1, 1)
	require.True(t, ok)
	require.Equal(t, [2]int{5, 3}, [2]int{line, col})
	line, col, ok = p.Locate(2, 10)
	require.True(t, ok)
	require.Equal(t, [2]int{1, 7}, [2]int{line, col})
}

func TestDecodeVLQ(t *testing.T) {
	v, err := decodeVLQ("AAgBC")
	require.NoError(t, err)
	require.Equal(t, []int{0, 0, 16, 1}, v)
	_, err = decodeVLQ("g")
	require.Error(t, err, "truncated")
	_, err = decodeVLQ("A!")
	require.Error(t, err)
}

func TestStrip_cachesOnlySmallPrograms(t *testing.T) {
	small := "return 'small cached program'"
	big := "return '" + strings.Repeat("x", maxCachedBytes) + "'"
	_, err := Strip(small)
	require.NoError(t, err)
	_, err = Strip(big)
	require.NoError(t, err)
	_, ok := cache.get(small)
	require.True(t, ok)
	_, ok = cache.get(big)
	require.False(t, ok, "a program over maxCachedBytes is not kept")
}
