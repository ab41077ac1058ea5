package plan

import (
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"

	"github.com/ptcx/ptcx/transpile"
)

// walker reads one parsed program. It visits every node the parser can
// make; a node it does not know makes the plan dynamic, so that a parser
// upgrade adding a construct cannot hide a call.
type walker struct {
	bound map[string]bool
	file  *file.File
	prog  *transpile.Program
	plan  *Plan

	repeat int // enclosing loops and functions: a site here can run more than once
	fn     int // enclosing non-arrow functions (arguments is theirs)
	nest   int // the walk's depth, bounded by maxNest
}

// maxNest bounds the walk's recursion. transpile bounds a program's
// nesting, but an operator chain (a + b + c ...) is as deep as it is long
// in the AST.
const maxNest = 4096

func (w *walker) dynamic(at file.Idx, why string) {
	w.plan.Dynamic = true
	if len(w.plan.Reasons) < maxReasons {
		w.plan.Reasons = append(w.plan.Reasons, Reason{Line: w.line(at), Why: why})
	}
}

// line maps a position of the wrapped JavaScript to a line of the program
// text as sent, or 0 when it has none (code esbuild added).
func (w *walker) line(at file.Idx) int {
	pos := w.file.Position(int(at) - w.file.Base())
	col := pos.Column
	if pos.Line == 1 {
		col -= len(wrapHead)
	}
	if l, _, ok := w.prog.Locate(pos.Line, max(col, 1)); ok {
		return l
	}
	return 0
}

// program walks the body of the program's function inside the guest's
// wrapper (wrapHead): it runs once.
func (w *walker) program(p *ast.Program) {
	if body := programBody(p); body != nil {
		w.fn++ // the program function's own arguments
		w.stmts(body.List)
		w.fn--
		return
	}
	w.repeat++ // not the shape the wrapper makes: read it all as repeating
	w.stmts(p.Body)
	w.repeat--
}

// programBody is the body of the program's function: the function the
// wrapper's outer function returns.
func programBody(p *ast.Program) *ast.BlockStatement {
	if len(p.Body) != 1 {
		return nil
	}
	es, ok := p.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	outer, ok := es.Expression.(*ast.FunctionLiteral)
	if !ok || outer.Body == nil || len(outer.Body.List) != 1 {
		return nil
	}
	ret, ok := outer.Body.List[0].(*ast.ReturnStatement)
	if !ok {
		return nil
	}
	inner, ok := ret.Argument.(*ast.FunctionLiteral)
	if !ok || inner.Body == nil {
		return nil
	}
	return inner.Body
}

func (w *walker) stmts(list []ast.Statement) {
	for _, s := range list {
		w.stmt(s)
	}
}

// enter counts one level of nesting; past maxNest the plan is dynamic and
// the walk goes no deeper (the caller returns without leave).
func (w *walker) enter(at file.Idx) bool {
	if w.nest >= maxNest {
		w.dynamic(at, "the program nests too deeply for the plan reader")
		return false
	}
	w.nest++
	return true
}

// leave ends what a successful enter began.
func (w *walker) leave() { w.nest-- }

func (w *walker) stmt(s ast.Statement) {
	if s == nil {
		return
	}
	if !w.enter(s.Idx0()) {
		return
	}
	defer w.leave()
	switch s := s.(type) {
	case *ast.BlockStatement:
		w.stmts(s.List)
	case *ast.ExpressionStatement:
		w.expr(s.Expression)
	case *ast.VariableStatement:
		w.bindings(s.List)
	case *ast.LexicalDeclaration:
		w.bindings(s.List)
	case *ast.FunctionDeclaration:
		w.function(s.Function)
	case *ast.ClassDeclaration:
		w.classLit(s.Class)
	case *ast.IfStatement:
		w.expr(s.Test)
		w.stmt(s.Consequent)
		w.stmt(s.Alternate)
	case *ast.ForStatement:
		switch in := s.Initializer.(type) {
		case nil:
		case *ast.ForLoopInitializerExpression:
			w.expr(in.Expression)
		case *ast.ForLoopInitializerVarDeclList:
			w.bindings(in.List)
		case *ast.ForLoopInitializerLexicalDecl:
			w.bindings(in.LexicalDeclaration.List)
		default:
			w.dynamic(s.Idx0(), "the plan reader does not know this loop's initializer")
		}
		w.repeat++
		w.expr(s.Test)
		w.expr(s.Update)
		w.stmt(s.Body)
		w.repeat--
	case *ast.ForInStatement:
		w.expr(s.Source)
		w.loopInto(s.Into, s.Body)
	case *ast.ForOfStatement:
		w.expr(s.Source)
		w.loopInto(s.Into, s.Body)
	case *ast.WhileStatement:
		w.repeat++
		w.expr(s.Test)
		w.stmt(s.Body)
		w.repeat--
	case *ast.DoWhileStatement:
		w.repeat++
		w.stmt(s.Body)
		w.expr(s.Test)
		w.repeat--
	case *ast.LabelledStatement:
		w.stmt(s.Statement)
	case *ast.BranchStatement, *ast.EmptyStatement, *ast.DebuggerStatement:
	case *ast.ReturnStatement:
		w.expr(s.Argument)
	case *ast.ThrowStatement:
		w.expr(s.Argument)
	case *ast.SwitchStatement:
		w.expr(s.Discriminant)
		for _, c := range s.Body {
			w.expr(c.Test)
			w.stmts(c.Consequent)
		}
	case *ast.TryStatement:
		w.stmt(s.Body)
		if s.Catch != nil {
			w.target(s.Catch.Parameter)
			w.stmt(s.Catch.Body)
		}
		if s.Finally != nil {
			w.stmt(s.Finally)
		}
	case *ast.WithStatement: // with may make tools another object's: a listed call is then over-counted, never missed
		w.expr(s.Object)
		w.stmt(s.Body)
	default:
		w.dynamic(s.Idx0(), "the plan reader does not know this statement")
	}
}

func (w *walker) loopInto(into ast.ForInto, body ast.Statement) {
	w.repeat++
	defer func() { w.repeat-- }()
	switch in := into.(type) {
	case *ast.ForIntoVar:
		w.target(in.Binding.Target)
		w.expr(in.Binding.Initializer)
	case *ast.ForDeclaration:
		w.target(in.Target)
	case *ast.ForIntoExpression:
		w.target(in.Expression)
	default:
		w.dynamic(body.Idx0(), "the plan reader does not know this loop's variable")
	}
	w.stmt(body)
}

func (w *walker) bindings(list []*ast.Binding) {
	for _, b := range list {
		w.target(b.Target)
		w.expr(b.Initializer)
	}
}

// target walks what a declaration or an assignment writes to: a name, a
// member, or a pattern with its defaults and computed keys.
func (w *walker) target(t ast.Expression) {
	if t == nil {
		return
	}
	if !w.enter(t.Idx0()) {
		return
	}
	defer w.leave()
	switch t := t.(type) {
	case *ast.Identifier:
		if t.Name == "tools" {
			w.dynamic(t.Idx, "the program declares or assigns a name tools of its own")
		}
	case *ast.ObjectPattern:
		for _, p := range t.Properties {
			switch p := p.(type) {
			case *ast.PropertyKeyed:
				w.key(p.Key, p.Computed)
				w.target(p.Value)
			case *ast.PropertyShort:
				w.target(&p.Name)
				w.expr(p.Initializer)
			default:
				w.dynamic(p.Idx0(), "the plan reader does not know this pattern")
			}
		}
		w.target(t.Rest)
	case *ast.ArrayPattern:
		for _, e := range t.Elements {
			w.target(e)
		}
		w.target(t.Rest)
	case *ast.AssignExpression: // a default: target = value
		w.target(t.Left)
		w.expr(t.Right)
	case *ast.Binding:
		w.target(t.Target)
		w.expr(t.Initializer)
	default: // a member, or anything else an assignment may write to
		w.expr(t)
	}
}

func (w *walker) expr(e ast.Expression) {
	if e == nil {
		return
	}
	if !w.enter(e.Idx0()) {
		return
	}
	defer w.leave()
	switch e := e.(type) {
	case *ast.Identifier:
		w.ref(e)
	case *ast.CallExpression:
		if !w.toolCall(e) {
			w.expr(e.Callee)
		}
		w.exprs(e.ArgumentList)
	case *ast.NewExpression:
		w.expr(e.Callee)
		w.exprs(e.ArgumentList)
	case *ast.DotExpression:
		w.expr(e.Left)
	case *ast.BracketExpression:
		w.expr(e.Left)
		w.expr(e.Member)
	case *ast.PrivateDotExpression:
		w.expr(e.Left)
	case *ast.OptionalChain:
		w.expr(e.Expression)
	case *ast.Optional:
		w.expr(e.Expression)
	case *ast.AssignExpression:
		w.target(e.Left)
		w.expr(e.Right)
	case *ast.BinaryExpression:
		w.expr(e.Left)
		w.expr(e.Right)
	case *ast.ConditionalExpression:
		w.expr(e.Test)
		w.expr(e.Consequent)
		w.expr(e.Alternate)
	case *ast.UnaryExpression:
		w.expr(e.Operand)
	case *ast.SequenceExpression:
		w.exprs(e.Sequence)
	case *ast.AwaitExpression:
		w.expr(e.Argument)
	case *ast.YieldExpression:
		w.expr(e.Argument)
	case *ast.SpreadElement:
		w.expr(e.Expression)
	case *ast.ArrayLiteral:
		w.exprs(e.Value)
	case *ast.ObjectLiteral:
		for _, p := range e.Value {
			w.property(p)
		}
	case *ast.FunctionLiteral:
		w.function(e)
	case *ast.ArrowFunctionLiteral:
		w.arrow(e)
	case *ast.ClassLiteral:
		w.classLit(e)
	case *ast.TemplateLiteral:
		w.expr(e.Tag)
		w.exprs(e.Expressions)
	case *ast.StringLiteral, *ast.NumberLiteral, *ast.BooleanLiteral, *ast.NullLiteral, *ast.RegExpLiteral,
		*ast.SuperExpression, *ast.MetaProperty, *ast.ThisExpression:
	case *ast.ObjectPattern, *ast.ArrayPattern:
		w.target(e)
	default:
		w.dynamic(e.Idx0(), "the plan reader does not know this expression")
	}
}

func (w *walker) exprs(list []ast.Expression) {
	for _, e := range list {
		w.expr(e)
	}
}

// ref is a name read as a value.
//
// The tools of a run bound to a plan are only in the scope around the
// program's (the guest's wrapper; wasmhost.Program.LexicalTools): the
// global object has none, so code made from text (the Function
// constructor, an indirect eval), which runs in the global scope, cannot
// reach them. What can is the program's own text: the name tools and a
// direct eval (which runs in the program's scope); and the program's
// arguments.callee can run it, and its "once" sites, again. Those are the
// names ref watches.
func (w *walker) ref(id *ast.Identifier) {
	switch n := string(id.Name); {
	case n == "tools":
		w.dynamic(id.Idx, "tools is used other than to call a tool by a name written in the program (tools.name(...))")
	case n == "arguments" && w.fn == 1: // the wrapper's, not a function's of the program
		w.dynamic(id.Idx, "the program's own arguments can run the program again (arguments.callee)")
	case n == "eval":
		w.dynamic(id.Idx, "a direct eval runs code the reader cannot see in the program's own scope, where tools is")
	}
}

// key walks a property key that is computed.
func (w *walker) key(k ast.Expression, computed bool) {
	if computed {
		w.expr(k)
	}
}

func (w *walker) property(p ast.Property) {
	switch p := p.(type) {
	case *ast.PropertyKeyed:
		w.key(p.Key, p.Computed)
		w.expr(p.Value) // a method, getter or setter is a FunctionLiteral
	case *ast.PropertyShort:
		w.ref(&p.Name)
		w.expr(p.Initializer)
	case *ast.SpreadElement:
		w.expr(p.Expression)
	default:
		w.dynamic(p.Idx0(), "the plan reader does not know this property")
	}
}

func (w *walker) params(pl *ast.ParameterList) {
	if pl == nil {
		return
	}
	w.bindings(pl.List)
	w.target(pl.Rest)
}

func (w *walker) function(f *ast.FunctionLiteral) {
	if f == nil {
		return
	}
	w.repeat++
	w.fn++
	w.params(f.ParameterList)
	if f.Body != nil {
		w.stmts(f.Body.List)
	}
	w.fn--
	w.repeat--
}

func (w *walker) arrow(f *ast.ArrowFunctionLiteral) {
	w.repeat++
	w.params(f.ParameterList)
	switch b := f.Body.(type) {
	case *ast.BlockStatement:
		w.stmts(b.List)
	case *ast.ExpressionBody:
		w.expr(b.Expression)
	default:
		w.dynamic(f.Idx0(), "the plan reader does not know this function body")
	}
	w.repeat--
}

func (w *walker) classLit(c *ast.ClassLiteral) {
	if c == nil {
		return
	}
	w.expr(c.SuperClass)
	w.repeat++ // field initialisers and methods run per instance or per call
	for _, el := range c.Body {
		switch el := el.(type) {
		case *ast.MethodDefinition:
			w.key(el.Key, el.Computed)
			w.function(el.Body)
		case *ast.FieldDefinition:
			w.key(el.Key, el.Computed)
			w.expr(el.Initializer)
		case *ast.ClassStaticBlock:
			if el.Block != nil {
				w.stmts(el.Block.List)
			}
		default:
			w.dynamic(el.Idx0(), "the plan reader does not know this class member")
		}
	}
	w.repeat--
}
