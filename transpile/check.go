package transpile

import (
	"errors"
	"fmt"
	"strings"
)

// check is the pre-check Strip runs before esbuild sees a program. esbuild's
// parser, visitor and printer are recursive, and some of its passes are
// super-linear; a program that nests deep enough overflows the goroutine
// stack, which Go cannot recover from (the whole process dies), and some
// small programs cost seconds of CPU or gigabytes of memory. check reads
// the program once, in linear time, and refuses it when an upper bound of
// esbuild's recursion depth passes MaxNesting (as a *SyntaxError at the
// place it happens), or an upper bound of its super-linear work passes a
// budget (as a *LimitError).
//
// The depth model. The program is a stack of levels, one per open bracket
// ("(", "[", "{", "${"). Each level counts, since its statement or
// expression began, what can keep esbuild recursing within it:
//
//   - s, statement prefixes, which last to the end of the statement: if,
//     else, while, for, with, do, return, case, declarations and modifiers,
//     and '<' (type arguments, which commas do not end). A ';' ends them
//     unless "else" or "while" follows; so does a line break between an
//     operand and a token that starts a statement (automatic semicolon
//     insertion).
//   - r, right-associative operators, which last to the end of the
//     expression: assignments, '**', '?', ':', '=>', yield. A ',' ends
//     them too.
//   - p, the unary chain: prefix operators, '.', '?.', non-null '!',
//     keywords such as typeof, await, new, as. A left-associative binary
//     operator ends it (esbuild handles those chains iteratively).
//   - cm, commas where they may be the comma operator (in parentheses,
//     blocks, substitutions and index brackets), which esbuild's printer
//     simplifies recursively.
//
// The depth at a token is the sum over the stack of one per level plus its
// counters. Everything that can make esbuild recurse consumes a token that
// one of these counts (or an opener), so the depth bounds the recursion
// within a constant factor; what the model cannot tell apart it counts
// (an object's '{' as a level, a comparison '<' as type arguments).
//
// The lexer must not be fooled into hiding code (see lexer.go); where a '/'
// may start a regular expression or divide, the region the two readings
// disagree on is read so that it can only add to the count.
func check(code string) error {
	c := checker{
		lx:     newLexer(code),
		idents: map[string]identInfo{},
		bases:  map[string]int32{},
		redecl: redeclarations{first: map[string]int{}, pending: -1},
		slash:  slashRegex,
	}
	c.stack = append(c.stack, level{open: 0, block: true, commas: true, base: 1, sigBase: 2})
	var t token
	for {
		c.lx.slash = c.slash
		if err := c.lx.next(&t); err != nil {
			var amb *errAmbiguousSlash
			if !errors.As(err, &amb) {
				return c.syntaxAt(t.start, err.Error())
			}
			return c.ambiguous(amb.pos)
		}
		if t.kind == tkEOF {
			break
		}
		if err := c.step(&t); err != nil {
			return err
		}
	}
	return c.finish()
}

// level is one open bracket and what is pending inside it.
type level struct {
	open   byte // '(', '[', '{', '$' (a template substitution); 0 for the program
	header bool // the '(' of an if, while, for or with head
	commas bool // a ',' here may be the comma operator
	block  bool // a '{' read as a block (a ':' in it is a label or a case)

	base, sigBase, ltBase int // the depth, scope depth and speculation count below and including the opener
	s, r, p, cm           int // the depth counters (see check)
	sigS, sigR            int // scopes opened by for and namespace dots (to the statement's end) and '=>' (to the expression's)
	lt                    int // pending speculation points: '<' and '?'

	foldOps, foldSubst, foldBytes int64 // '+' and "${" in the current expression, "${" alone, and its literals' bytes
}

type checker struct {
	lx    *lexer
	stack []level
	slash slashMode

	prev          prevToken
	prevOperand   bool // prev ends an operand
	prevAmbiguous bool // prev may end an operand or a statement ('}', '>', contextual words)
	pendingSemi   bool // prev is ';': the statement counters end unless else/while follows
	nextHeader    bool // prev is if/while/for/with: the next '(' is a head
	nsName        bool // in the dotted name after namespace/module
	afterDot      bool // prev is '.' or '?.': an identifier is a property name

	depthWork, specWork, foldWork int64

	redecl redeclarations

	idents map[string]identInfo
	bases  map[string]int32 // identifier without trailing digits -> index
	stats  []baseStat
}

// prevToken is what the checker keeps of the previous token.
type prevToken struct {
	kind tokKind
	text string
	end  int
}

func (c *checker) top() *level { return &c.stack[len(c.stack)-1] }

func (c *checker) depth() int {
	lv := c.top()
	return lv.base + lv.s + lv.r + lv.p + lv.cm
}

func (c *checker) sigma() int {
	lv := c.top()
	return lv.sigBase + lv.sigS + lv.sigR
}

func (c *checker) ltSum() int64 {
	lv := c.top()
	return int64(lv.ltBase + lv.lt)
}

func (c *checker) step(t *token) error {
	if t.fake {
		c.fakeToken(t)
	} else {
		if c.pendingSemi {
			c.pendingSemi = false
			if !(t.kind == tkIdent && (t.text == "else" || t.text == "while")) {
				c.endStatement()
			}
		}
		if t.nl && c.prevOperand && startsStatement(t) {
			c.endStatement()
		}
		header := c.nextHeader
		c.nextHeader = false
		afterDot := c.afterDot
		c.afterDot = false
		if c.nsName && !(t.kind == tkIdent || t.text == ".") {
			c.nsName = false
		}
		switch t.kind {
		case tkIdent:
			if afterDot {
				c.operand()
			} else {
				c.ident(t, header)
				c.redecl.ident(t, len(c.stack))
			}
		case tkNumber, tkString, tkRegex:
			c.operand()
		case tkTemplate:
			c.tag()
			c.operand()
		case tkTemplateHead:
			c.tag()
			c.top().foldOps++
			c.top().foldSubst++
			c.push(level{open: '$', commas: true}, 0)
			c.setSlash(slashRegex, false)
		case tkPunct:
			c.punct(t, header)
			c.redecl.punct(t.text, len(c.stack), t.start)
		}
	}
	c.top().foldBytes += literalBytes(t)
	c.prev = prevToken{t.kind, t.text, t.end}
	d := c.depth()
	if d > MaxNesting {
		return c.syntaxAt(t.start, fmt.Sprintf("the program nests deeper than %d levels (brackets, operators, statements); flatten it", MaxNesting))
	}
	c.depthWork += int64(d)
	lt := c.ltSum()
	c.specWork += 40*lt + lt*lt
	return nil
}

// tag counts a template after an operand, which tags it and continues the
// unary chain.
func (c *checker) tag() {
	if c.prevOperand {
		c.top().p++
	}
}

func (c *checker) setSlash(m slashMode, operand bool) {
	c.slash, c.prevOperand, c.prevAmbiguous = m, operand, m == slashAmbiguous
}

func (c *checker) operand() { c.setSlash(slashDivide, true) }

// push opens a level; weight is the number of scopes esbuild may open with
// it (a '{' may be a function body after its parameters' scope).
func (c *checker) push(lv level, weight int) {
	lv.base = c.depth() + 1
	lv.sigBase = c.sigma() + weight
	lv.ltBase = int(c.ltSum())
	c.stack = append(c.stack, lv)
}

// endStatement ends the top level's statement: every counter restarts.
func (c *checker) endStatement() {
	lv := c.top()
	c.chargeFold(lv)
	lv.s, lv.r, lv.p, lv.cm, lv.sigS, lv.sigR, lv.lt = 0, 0, 0, 0, 0, 0, 0
}

// endExpression ends the top level's expression (a ',' or ';'): the
// right-associative operators and the unary chain end with it.
func (c *checker) endExpression() {
	lv := c.top()
	c.chargeFold(lv)
	lv.r, lv.p, lv.sigR = 0, 0, 0
}

// fakeToken counts a token of an ambiguous '/' region: it opens a level if
// it is an opener and otherwise adds to the unary chain; it never closes or
// ends anything.
func (c *checker) fakeToken(t *token) {
	switch {
	case t.kind == tkPunct && (t.text == "(" || t.text == "[" || t.text == "{"):
		c.push(level{open: t.text[0], commas: true, block: true}, 2)
	default:
		c.top().p++
		if t.kind == tkIdent {
			c.record(c.lookup(t.text).base)
		}
	}
	c.setSlash(slashAmbiguous, false)
}

func (c *checker) ident(t *token, header bool) {
	in := c.lookup(t.text)
	if t.escaped { // a name, or a keyword esbuild refuses; a '/' after it is either
		c.record(in.base)
		c.setSlash(slashAmbiguous, true)
		return
	}
	kw := in.kw
	if !kw.reserved {
		c.record(in.base)
	}
	if !in.isKw {
		c.operand()
		return
	}
	lv := c.top()
	switch kw.class {
	case kwValue:
		c.operand()
		return
	case kwStmt:
		lv.s++
		switch t.text {
		case "if", "while", "for", "with":
			c.nextHeader = true
		}
		switch t.text {
		case "for":
			lv.sigS++
		case "namespace", "module", "global":
			c.nsName = true
		}
	case kwUnary:
		lv.p++
		if t.text == "await" && header {
			c.nextHeader = true // for await (
		}
	case kwRight:
		lv.r++
	case kwBinary:
		lv.p = 0
	}
	c.setSlash(kw.slash, false)
}

func (c *checker) punct(t *token, header bool) {
	lv := c.top()
	op := t.text
	switch {
	case op == "(":
		if c.prevOperand { // a call continues the unary chain
			lv.p++
		}
		c.push(level{open: '(', header: header, commas: true}, 1)
		c.setSlash(slashRegex, false)
	case op == "[":
		if c.prevOperand { // so does an index
			lv.p++
		}
		c.push(level{open: '[', commas: c.prevOperand}, 0)
		c.setSlash(slashRegex, false)
	case op == "{":
		block := c.braceIsBlock(t)
		c.push(level{open: '{', commas: block, block: block}, 2)
		c.setSlash(slashRegex, false)
	case op == ")" || op == "]" || op == "}":
		c.close(t)
	case op == ",":
		if lv.commas {
			lv.cm++
		}
		c.endExpression()
		c.setSlash(slashRegex, false)
	case op == ";":
		c.endExpression()
		c.pendingSemi = true
		c.setSlash(slashRegex, false)
	case op == "=>":
		lv.r++
		lv.sigR++
		c.setSlash(slashRegex, false)
	case op == ":" || op == "?" || op == "**" || assignOps[op]:
		lv.r++
		if op == "?" {
			lv.lt++
		}
		c.setSlash(slashRegex, false)
	case op == "<" || op == "<<" || op == "<=":
		lv.s++ // type arguments, which commas do not end
		lv.lt++
		c.setSlash(slashRegex, false)
	case strings.HasPrefix(op, ">"):
		lv.p++ // may close type arguments, which continue the chain
		c.setSlash(slashAmbiguous, false)
	case op == "+" || op == "-":
		if c.prevOperand {
			lv.p = 0
			if op == "+" {
				lv.foldOps++
			}
		} else {
			lv.p++
		}
		c.setSlash(slashRegex, false)
	case binaryOps[op]:
		lv.p = 0
		c.setSlash(slashRegex, false)
	case op == "++" || op == "--" || op == "!":
		lv.p++
		switch {
		case c.prevAmbiguous:
			c.setSlash(slashAmbiguous, false)
		case c.prevOperand && !t.nl: // postfix, or TypeScript's non-null '!'
			c.setSlash(slashDivide, true)
		default:
			c.setSlash(slashRegex, false)
		}
	case op == "." || op == "?.":
		lv.p++
		if c.nsName {
			lv.sigS++
		}
		c.afterDot = true
		c.setSlash(slashDivide, false)
	default:
		lv.p++
		c.setSlash(slashRegex, false)
	}
}

// braceIsBlock tells a block '{' (whose commas may be comma operators and
// whose ':' are labels) from an object or type literal, from the token
// before it.
func (c *checker) braceIsBlock(t *token) bool {
	p := c.prev
	lv := c.top()
	switch {
	case p.end == 0 && p.kind == tkEOF: // the first token
		return true
	case t.nl && c.prevOperand:
		return true
	case p.kind == tkPunct:
		switch p.text {
		case ")", "=>", ";", "}":
			return true
		case "{":
			return lv.block
		case ":":
			return lv.block
		}
	case p.kind == tkIdent:
		switch p.text {
		case "else", "do", "try", "finally", "static":
			return true
		}
	}
	return false
}

// close pops to the level t closes; a closer with no opener is ignored
// (esbuild has stopped there, or the opener was an ambiguous region's).
func (c *checker) close(t *token) {
	want := byte('{')
	switch t.text {
	case ")":
		want = '('
	case "]":
		want = '['
	}
	i := len(c.stack) - 1
	for ; i > 0; i-- {
		if o := c.stack[i].open; o == want || want == '{' && o == '$' {
			break
		}
	}
	if i == 0 {
		c.top().p++
		c.setSlash(slashAmbiguous, false)
		return
	}
	closed := c.stack[i]
	for len(c.stack) > i {
		lv := c.top()
		bytes := lv.foldBytes
		c.chargeFold(lv)
		c.stack = c.stack[:len(c.stack)-1]
		c.top().foldBytes += bytes
	}
	switch {
	case closed.open == '$':
		next := c.lx.templateContinue(t.end)
		c.top().foldBytes += literalBytes(&next)
		if next.kind == tkTemplateHead {
			c.top().foldOps++
			c.top().foldSubst++
			c.push(level{open: '$', commas: true}, 0)
			c.setSlash(slashRegex, false)
			return
		}
		c.operand()
	case closed.open == '(' && closed.header:
		c.setSlash(slashRegex, false)
	case closed.open == '{':
		c.setSlash(slashAmbiguous, true)
	default:
		c.operand()
	}
}

func (c *checker) ambiguous(pos int) error {
	return c.syntaxAt(pos, "this '/' may start a regular expression or divide, and the two readings differ; put the regular expression or the division in parentheses")
}

// syntaxAt is a *SyntaxError at byte offset pos of the program.
func (c *checker) syntaxAt(pos int, msg string) *SyntaxError {
	src := c.lx.src
	lineStart := strings.LastIndexByte(src[:pos], '\n') + 1
	lineEnd := strings.IndexByte(src[pos:], '\n')
	if lineEnd < 0 {
		lineEnd = len(src) - pos
	}
	return &SyntaxError{
		Message:  msg,
		Line:     strings.Count(src[:pos], "\n") + 1,
		Column:   pos - lineStart + 1,
		LineText: src[lineStart : pos+lineEnd],
	}
}
