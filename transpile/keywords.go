package transpile

import "strings"

// The words and operators the pre-check (check.go) treats specially.

// startsStatement reports whether t, after a line break that follows an
// operand, can only begin a new statement (so a semicolon is inserted).
func startsStatement(t *token) bool {
	switch t.kind {
	case tkNumber, tkString:
		return true
	case tkIdent:
		return !continuationWords[t.text]
	case tkPunct:
		switch t.text {
		case "!", "~", "++", "--", "@":
			return true
		}
	}
	return false
}

// continuationWords may continue an expression or statement across a line
// break.
var continuationWords = map[string]bool{
	"in": true, "instanceof": true, "as": true, "satisfies": true, "of": true, "from": true,
	"else": true, "while": true, "catch": true, "finally": true, "extends": true,
	"implements": true, "is": true, "keyof": true, "asserts": true, "infer": true,
}

type kwClass uint8

const (
	kwNone    kwClass = iota
	kwValue           // this, super, null, true, false: an operand
	kwStmt            // statement prefixes and declarations (s)
	kwUnary           // prefix keywords and type operators (p)
	kwRight           // yield (r)
	kwBinary          // in, instanceof: end the unary chain
	kwContext         // a keyword only in some places: also a name
)

type keyword struct {
	class    kwClass
	slash    slashMode // how a '/' right after it reads
	reserved bool      // never a binding name (not a renamer symbol)
}

var keywords = func() map[string]keyword {
	m := map[string]keyword{}
	set := func(class kwClass, slash slashMode, reserved bool, words string) {
		for _, w := range strings.Fields(words) {
			m[w] = keyword{class, slash, reserved}
		}
	}
	set(kwValue, slashDivide, true, "this super null true false")
	set(kwStmt, slashRegex, true, "if else while for with do return throw case break continue debugger switch try catch finally export import enum const var default")
	set(kwStmt, slashAmbiguous, false, "declare abstract namespace module interface type let using static public private protected readonly override accessor get set global")
	set(kwUnary, slashRegex, true, "typeof void delete new function class extends")
	set(kwUnary, slashAmbiguous, false, "await keyof infer unique asserts is as satisfies of implements async from")
	set(kwRight, slashAmbiguous, false, "yield")
	set(kwBinary, slashRegex, true, "in instanceof")
	return m
}()

var assignOps = map[string]bool{
	"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true, "**=": true,
	"<<=": true, ">>=": true, ">>>=": true, "&=": true, "|=": true, "^=": true,
	"&&=": true, "||=": true, "??=": true,
}

var binaryOps = map[string]bool{
	"*": true, "/": true, "%": true, "==": true, "!=": true, "===": true, "!==": true,
	"&": true, "|": true, "^": true, "&&": true, "||": true, "??": true,
}
