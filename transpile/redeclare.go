package transpile

// maxRedeclareWork bounds an estimate of what esbuild's error for a name
// declared twice in one scope costs ("The symbol x has already been
// declared", with a note at the first declaration): esbuild works out the
// line and column of both places as it makes the error, moving its one
// position tracker between them, so each such error costs about twice the
// bytes between the two (about 16 ns per byte measured, esbuild v0.28.2).
// 1,000 of them after a 400 KB string cost 6.6 s of host CPU; 4,000 in a
// row, 0.75 s. Errors cannot be silenced as warnings are (see
// silencedWarnings), so the pre-check bounds, over every name in a binding
// position, the bytes back to the nearest place its note could point to.
// The budget costs at most about half a second.
const maxRedeclareWork = 32 << 20

// redeclarations is the pre-check's estimate of maxRedeclareWork.
//
// A binding position is the name after function, class or enum; every
// identifier of a const, let or var declaration outside its initialisers
// (destructuring patterns included, their property names too); and every
// identifier inside parentheses followed by '{' or '=>' (the parameters of a
// function, method, arrow or catch, default values included), and a lone
// arrow parameter. A redeclaration's note points at a binding of the same
// name in the same scope, so for a name bound at offset o the cost is at
// most o minus the later of the name's first binding and the start of the
// innermost scope: a block's '{', or a function's parameters' '(' (its
// parameters are in its body's scope). A var is hoisted out of the blocks it
// stands in, so for it only the first binding counts. What the
// estimate cannot tell apart it counts as a binding, which can only
// overstate.
type redeclarations struct {
	first map[string]int // where each name is first bound
	work  int64

	list     bool // in the bindings of a const, let or var
	isVar    bool // the list is a var's
	depth    int  // the checker's stack height at that keyword
	inInit   bool // after '=' or ':' (or in, of) at that height, until a ','
	nextName bool // after function, class or enum: the next identifier is a binding

	stmtHead bool      // the next '(' is the head of if, while, for, switch or with
	groups   []group   // the open '(', innermost last
	names    []nameAt  // the identifiers inside the open '(', in order: each group's are names[from:]
	closed   group     // the '(' closed by the previous token, when prev is prevClose
	closedIn []nameAt  // its identifiers
	lone     nameAt    // the previous token, when it was an identifier
	pending  int       // a function body may open here: its start, or -1
	scopes   []scopeAt // the function bodies open, innermost last
	prev     prevKind
}

type prevKind uint8

const (
	prevOther prevKind = iota
	prevIdent
	prevClose // a ')'
	prevArrow // a '=>'
)

type nameAt struct {
	name string
	at   int
}

type group struct {
	start int
	head  bool // an if/while/for/switch/with head: not parameters
	from  int  // where its identifiers begin in redeclarations.names
}

type scopeAt struct {
	start, height int
}

// bind counts a binding of name at offset at.
func (r *redeclarations) bind(name string, at int, hoisted bool) {
	first, ok := r.first[name]
	if !ok || at < first {
		r.first[name] = at
		return
	}
	from := first
	if n := len(r.scopes); n > 0 && !hoisted && r.scopes[n-1].start > from {
		from = r.scopes[n-1].start
	}
	if at > from {
		r.work += int64(at - from)
	}
}

// ident notes identifier t (not a property name after '.'), at stack
// height depth.
func (r *redeclarations) ident(t *token, depth int) {
	r.release()
	r.pending = -1
	defer func() { r.prev, r.lone = prevIdent, nameAt{t.text, t.start} }()
	switch t.text {
	case "const", "let", "var", "using":
		r.list, r.isVar, r.depth, r.inInit, r.nextName = true, t.text == "var", depth, false, false
		return
	case "function", "class", "enum":
		r.nextName = true
		return
	case "if", "while", "for", "switch", "with":
		r.stmtHead = true
		return
	case "in", "of":
		if r.list && depth == r.depth {
			r.inInit = true
		}
		return
	}
	if len(r.groups) > 0 { // one entry however deep: each group sees its own as names[from:]
		r.names = append(r.names, nameAt{t.text, t.start})
	}
	if r.nextName || (r.list && !r.inInit && depth >= r.depth) {
		r.bind(t.text, t.start, r.list && r.isVar)
	}
	r.nextName = false
}

// punct notes punctuator op at stack height depth (after the checker saw
// it: an opener has pushed its level, a closer has popped it).
func (r *redeclarations) punct(op string, depth int, start int) {
	r.release()
	prev := r.prev
	r.prev = prevOther
	pending := r.pending
	r.pending = -1
	switch op {
	case "(":
		r.groups = append(r.groups, group{start: start, head: r.stmtHead, from: len(r.names)})
		r.stmtHead = false
	case ")":
		if n := len(r.groups); n > 0 {
			r.closed = r.groups[n-1]
			r.closedIn = r.names[r.closed.from:len(r.names):len(r.names)]
			r.groups = r.groups[:n-1]
			r.prev = prevClose
		}
	case "=>":
		switch prev {
		case prevClose: // an arrow's parameters, bound where they stood
			r.params(r.closed)
			r.pending = r.closed.start
		case prevIdent:
			r.bind(r.lone.name, r.lone.at, false)
			r.pending = r.lone.at
		}
		r.prev = prevArrow
	case "{":
		switch {
		case prev == prevClose && !r.closed.head: // a function's, method's or catch's body
			r.params(r.closed)
			r.scopes = append(r.scopes, scopeAt{r.closed.start, depth})
		case prev == prevArrow && pending >= 0:
			r.scopes = append(r.scopes, scopeAt{pending, depth})
		case r.list && !r.inInit && depth-1 == r.depth: // a destructuring pattern, not a scope
		default: // a block (or an object literal or class body, in which nothing is bound but in nested functions)
			r.scopes = append(r.scopes, scopeAt{start, depth})
		}
	case "}":
		for len(r.scopes) > 0 && r.scopes[len(r.scopes)-1].height > depth {
			r.scopes = r.scopes[:len(r.scopes)-1]
		}
	}
	if op != "*" { // function* name
		r.nextName = false
	}
	if !r.list {
		return
	}
	switch {
	case depth < r.depth:
		r.list = false
	case depth > r.depth:
	case op == "=", op == ":": // an initialiser, or a type annotation: no bindings
		r.inInit = true
	case op == ",":
		r.inInit = false
	case op == ";":
		r.list = false
	}
}

// release forgets the identifiers of closed groups once no group is open
// and the last one closed can no longer turn out to be parameters, so the
// estimate keeps memory in proportion to the outermost open group.
func (r *redeclarations) release() {
	if len(r.groups) == 0 && r.prev != prevClose {
		r.names = r.names[:0]
	}
}

// params binds a parameter list's identifiers, inside the function they
// belong to.
func (r *redeclarations) params(g group) {
	r.scopes = append(r.scopes, scopeAt{g.start, -1})
	for _, n := range r.closedIn {
		r.bind(n.name, n.at, false)
	}
	r.scopes = r.scopes[:len(r.scopes)-1]
}
