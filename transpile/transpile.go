// Package transpile turns a run_code program — TypeScript, the body of an
// async function — into plain JavaScript for the guest, with esbuild's Go API.
// Types are stripped, not checked. It imports only esbuild.
//
// esbuild is recursive and in places super-linear, and a stack overflow
// kills the whole process, so before esbuild reads a program Strip bounds
// its size (MaxSourceBytes) and runs a linear pre-check (check.go) of its
// nesting (MaxNesting) and of the work esbuild would do (limits.go).
//
// Strip is safe for concurrent use; small programs are cached by content,
// because evaluation harnesses send the same program many times.
package transpile

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"
)

// wrapper makes the program a function body for esbuild, so that top-level
// `return`, `await` and `using` parse. It is one line, so user line N is
// line N+1 of what esbuild sees.
const (
	header = "async function __ptcx_program__() {"
	footer = "\n}"
)

// SyntaxError is a program that does not parse. Line and Column are 1-based
// and relative to the program text as the caller sent it.
type SyntaxError struct {
	Message string
	Line    int
	Column  int
	// LineText is the offending line of the program.
	LineText string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
}

// Program is a stripped program: the JavaScript for the guest, and the map
// from its positions back to the code as the caller sent it. It is
// immutable.
type Program struct {
	// JS is the body of an async function, in plain JavaScript.
	JS string

	prefixLines int         // lines of helpers esbuild hoisted in front of the body
	lines       [][]segment // per line of esbuild's output
}

// Locate maps a 1-based line and column of JS (as the guest reports them in
// stacks) to the 1-based line and column of the original TypeScript. ok is
// false when the position has no origin in the user's code.
func (p *Program) Locate(line, col int) (userLine, userCol int, ok bool) {
	if p == nil || line < 1 || col < 1 {
		return 0, 0, false
	}
	gen := line // the body skips the wrapper's header line of the output
	if line <= p.prefixLines {
		gen = line - 1
	}
	if gen >= len(p.lines) || len(p.lines[gen]) == 0 {
		return 0, 0, false
	}
	segs := p.lines[gen]
	s := segs[0]
	for _, c := range segs {
		if c.genCol > col-1 {
			break
		}
		s = c
	}
	if s.line < 1 { // the wrapper's header, not the user's code
		return 0, 0, false
	}
	return s.line, s.col + 1, true
}

// The transform cache holds at most cacheSize programs of at most
// maxCachedBytes of source each, and at most cacheBytes in all (source,
// JavaScript and source map, as Program.size counts them): the programs
// worth caching are the small ones harnesses resend, and a client sending
// large distinct programs must not pin memory.
const (
	cacheSize      = 512
	maxCachedBytes = 64 << 10
	cacheBytes     = 32 << 20
)

var cache = newLRU(cacheSize, cacheBytes)

// stripSlots bounds the programs stripped at once (Strip): one per core.
var stripSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// silencedWarnings turns off every JavaScript warning esbuild can give (its
// --log-override names). Strip shows no warning, and esbuild works out each
// warning's line and column as it is made, moving its one position tracker
// between the warning and its note: a note points at an earlier place (the
// constant assigned to, the first of two duplicate keys or cases), so 1,000
// assignments to a constant declared before a 400 KB string cost 2.5 s of
// host CPU, and 8,000 of them 18 s. A silenced warning is never made.
var silencedWarnings = func() map[string]api.LogLevel {
	m := map[string]api.LogLevel{}
	for _, id := range []string{"assert-to-with", "assert-type-json", "assign-to-constant", "assign-to-define",
		"assign-to-import", "bigint", "call-import-namespace", "class-name-will-throw", "commonjs-variable-in-esm",
		"confusing-typescript-cast", "delete-super-property", "direct-eval", "duplicate-case", "duplicate-class-member",
		"duplicate-object-key", "empty-import-meta", "equals-nan", "equals-negative-zero", "equals-new-object",
		"html-comment-in-js", "impossible-typeof", "indirect-require", "private-name-will-throw", "semicolon-after-return",
		"suspicious-boolean-not", "suspicious-define", "suspicious-logical-operator", "suspicious-nullish-coalescing",
		"this-is-undefined-in-esm", "unsupported-dynamic-import", "unsupported-jsx-comment", "unsupported-regexp",
		"unsupported-require-call"} {
		m[id] = api.LogLevelSilent
	}
	return m
}()

// Strip returns code's JavaScript body: TypeScript types removed, everything
// else as written (modern syntax is kept: the guest supports it), with a map
// back to code. A syntax error is returned as *SyntaxError with the first
// problem found; a program nesting deeper than MaxNesting is one too. A
// program over MaxSourceBytes, or whose transform would cost more host work
// than the pre-check's budgets (check.go), is refused as a *LimitError
// (matching ErrLimit) before esbuild reads it.
func Strip(code string) (*Program, error) {
	if len(code) > MaxSourceBytes {
		return nil, sizeError(len(code))
	}
	if p, ok := cache.get(code); ok {
		return p, nil
	}
	// The pre-check and esbuild run in one of stripSlots at a time: each
	// costs at most about a second of host CPU, and this bounds how many
	// cores programs being stripped take at once (the sandbox's admission
	// comes only after). A program waits for a slot, then runs to the end:
	// esbuild cannot be interrupted.
	stripSlots <- struct{}{}
	defer func() { <-stripSlots }()
	if err := check(code); err != nil {
		return nil, err
	}
	r := api.Transform(header+"\n"+code+footer, api.TransformOptions{
		Loader:      api.LoaderTS,
		Target:      api.ESNext,
		LogLevel:    api.LogLevelSilent,
		LogOverride: silencedWarnings,
		Sourcemap:   api.SourceMapExternal,
	})
	if len(r.Errors) > 0 {
		return nil, syntaxError(r.Errors[0], code)
	}
	p, err := unwrap(string(r.Code))
	if err != nil {
		return nil, err
	}
	if p.lines, err = parseMappings(r.Map); err != nil {
		return nil, fmt.Errorf("transpile: %w", err)
	}
	if len(code) <= maxCachedBytes {
		cache.put(code, p)
	}
	return p, nil
}

// unwrap takes the function body back out of esbuild's output. esbuild prints
// the function as "header\n  body...\n}\n", possibly after helpers it hoisted
// to the top level; those are kept, in front of the body.
func unwrap(out string) (*Program, error) {
	i := strings.Index(out, header)
	j := strings.LastIndex(out, "}")
	if i < 0 || j < i+len(header) {
		return nil, fmt.Errorf("transpile: unexpected esbuild output shape")
	}
	prefix := out[:i]
	return &Program{
		JS:          prefix + strings.TrimPrefix(out[i+len(header):j], "\n"),
		prefixLines: strings.Count(prefix, "\n"),
	}, nil
}

func syntaxError(m api.Message, code string) *SyntaxError {
	e := &SyntaxError{Message: m.Text}
	if m.Location == nil {
		return e
	}
	e.Line = m.Location.Line - 1 // the header line
	e.Column = m.Location.Column + 1
	e.LineText = m.Location.LineText
	lines := strings.Count(code, "\n") + 1
	switch {
	case e.Line < 1: // cannot happen: the header parses
		e.Line, e.Column = 1, 1
	case e.Line > lines: // reported on the footer: the program ended early
		e.Line = lines
		last := code[strings.LastIndex(code, "\n")+1:]
		e.Column = len(last) + 1
		e.LineText = last
	}
	return e
}

// lru is a small least-recently-used cache of transforms, bounded in
// entries and in bytes.
type lru struct {
	mu       sync.Mutex
	max      int
	maxBytes int
	bytes    int
	tick     uint64
	items    map[string]*entry
}

type entry struct {
	p    *Program
	size int
	used uint64
}

func newLRU(max, maxBytes int) *lru {
	return &lru{max: max, maxBytes: maxBytes, items: map[string]*entry{}}
}

func (c *lru) get(k string) (*Program, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil, false
	}
	c.tick++
	e.used = c.tick
	return e.p, true
}

func (c *lru) put(k string, p *Program) {
	size := len(k) + p.size()
	if size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.items[k]; ok {
		c.bytes -= old.size
		delete(c.items, k)
	}
	for len(c.items) > 0 && (len(c.items) >= c.max || c.bytes+size > c.maxBytes) {
		var oldest string
		min := ^uint64(0)
		for key, e := range c.items {
			if e.used < min {
				oldest, min = key, e.used
			}
		}
		c.bytes -= c.items[oldest].size
		delete(c.items, oldest)
	}
	c.tick++
	c.items[k] = &entry{p: p, size: size, used: c.tick}
	c.bytes += size
}

// size is about how many bytes p holds: its JavaScript and its source map
// (a segment is three ints, a line a slice header).
func (p *Program) size() int {
	n := len(p.JS) + 24*len(p.lines)
	for _, l := range p.lines {
		n += 24 * len(l)
	}
	return n
}
