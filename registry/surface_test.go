package registry_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// routes lists every exported identifier of pkg that leads to a tool body: a
// function, method or variable whose value is, holds or returns a func (a
// registry.Body, a finalizer, a method value), a registry.Body, or anything of
// package internal/resolve; or that takes a callback receiving one. Types are
// followed through pointers, containers, exported struct fields and exported
// methods, so a route hidden one type deeper (a method returning a struct
// whose method returns the body) is found too. registry.Tool holds a Body,
// but only as a host's input: taking a Tool is not a route, returning one is.
func routes(pkg *types.Package) []string {
	var found []string
	seen := map[types.Type]bool{}
	var leads func(t types.Type) bool
	leads = func(t types.Type) bool {
		if seen[t] {
			return false
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Named:
			if p := t.Obj().Pkg(); p != nil && strings.HasSuffix(p.Path(), "/internal/resolve") {
				return true
			}
			if t.Obj().Name() == "Body" && t.Obj().Pkg() == pkg {
				return true
			}
			for i := range t.NumMethods() {
				if m := t.Method(i); m.Exported() && signatureLeads(m.Type().(*types.Signature), leads) {
					return true
				}
			}
			return leads(t.Underlying())
		case *types.Alias:
			return leads(types.Unalias(t))
		case *types.Pointer:
			if n, ok := t.Elem().(*types.Named); ok {
				ms := types.NewMethodSet(t)
				for i := range ms.Len() {
					if m := ms.At(i).Obj(); m.Exported() && signatureLeads(m.Type().(*types.Signature), leads) {
						return true
					}
				}
				return leads(n)
			}
			return leads(t.Elem())
		case *types.Slice:
			return leads(t.Elem())
		case *types.Array:
			return leads(t.Elem())
		case *types.Map:
			return leads(t.Key()) || leads(t.Elem())
		case *types.Chan:
			return leads(t.Elem())
		case *types.Struct:
			for i := range t.NumFields() {
				if f := t.Field(i); f.Exported() && leads(f.Type()) {
					return true
				}
			}
		case *types.Signature:
			return true // a func handed out can run what it closes over
		case *types.Interface:
			for i := range t.NumMethods() {
				if signatureLeads(t.Method(i).Type().(*types.Signature), leads) {
					return true
				}
			}
		}
		return false
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Func:
			if signatureLeads(obj.Type().(*types.Signature), leads) {
				found = append(found, name)
			}
		case *types.Var:
			if leads(obj.Type()) {
				found = append(found, name)
			}
		case *types.TypeName:
			named, ok := obj.Type().(*types.Named)
			if !ok {
				continue
			}
			ms := types.NewMethodSet(types.NewPointer(named))
			for i := range ms.Len() {
				if m := ms.At(i).Obj(); m.Exported() && signatureLeads(m.Type().(*types.Signature), leads) {
					found = append(found, name+"."+m.Name())
				}
			}
		}
		clear(seen)
	}
	return found
}

// signatureLeads reports whether calling a function of type sig can hand out
// a route: a result that leads to a body, or a callback parameter that
// receives one.
func signatureLeads(sig *types.Signature, leads func(types.Type) bool) bool {
	for v := range sig.Results().Variables() {
		if leads(v.Type()) {
			return true
		}
	}
	for v := range sig.Params().Variables() {
		if cb, ok := v.Type().Underlying().(*types.Signature); ok {
			for p := range cb.Params().Variables() {
				if leads(p.Type()) {
					return true
				}
			}
		}
	}
	return false
}

// handsBack reports whether method route ("Type.Method") of files returns,
// in every return statement, its own receiver or the type's empty literal
// (Type{}) as its first result, and no other result that is a Type: it
// gives its caller back only what the caller held (Tool.RegistryTool), so
// it is no route whatever the type holds.
func handsBack(files []*ast.File, route string) bool {
	typ, method, ok := strings.Cut(route, ".")
	if !ok {
		return false
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != method || fn.Recv == nil || len(fn.Recv.List[0].Names) != 1 {
				continue
			}
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); !ok || id.Name != typ {
				continue
			}
			recv, only := fn.Recv.List[0].Names[0].Name, true
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				ret, ok := n.(*ast.ReturnStmt)
				if !ok || len(ret.Results) == 0 {
					return !ok
				}
				first, rest := ret.Results[0], ret.Results[1:]
				id, isRecv := first.(*ast.Ident)
				lit, isLit := first.(*ast.CompositeLit)
				switch {
				case isRecv && id.Name == recv:
				case isLit && len(lit.Elts) == 0:
					if t, ok := lit.Type.(*ast.Ident); !ok || t.Name != typ {
						only = false
					}
				default:
					only = false
				}
				for _, r := range rest {
					if _, ok := r.(*ast.CompositeLit); ok {
						only = false
					}
				}
				return false
			})
			return only
		}
	}
	return false
}

// The registry's exported API (what `go doc ./registry` shows) has no route
// to a tool body: only the executor reaches one, through internal/resolve.
// The package is type-checked from source, so a route added anywhere in it
// fails this test without anyone having to list it; a method that only
// hands its receiver back (handsBack) is read from the source to be one.
func TestRegistry_exportedAPI_hasNoRouteToABody(t *testing.T) {
	fset := token.NewFileSet()
	pkg, err := importer.ForCompiler(fset, "source", nil).Import("github.com/ptcx/ptcx/registry")
	require.NoError(t, err)
	require.NotNil(t, pkg.Scope().Lookup("Registry"), "the registry was type-checked")
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, name := range names {
		if !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, name, nil, 0)
			require.NoError(t, err)
			files = append(files, f)
		}
	}
	require.NotEmpty(t, files)
	var left []string
	for _, r := range routes(pkg) {
		if !handsBack(files, r) {
			left = append(left, r)
		}
	}
	require.Empty(t, left)
}

// handsBack tells a method that returns its receiver from one that returns
// anything else of its type.
func TestHandsBack(t *testing.T) {
	tests := []struct {
		name, src string
		want      bool
	}{
		{"the receiver or the empty literal", `func (t Tool) Same() (Tool, error) { if t.err != nil { return Tool{}, t.err }; return t, nil }`, true},
		{"a value of another variable", `func (t Tool) Other() Tool { return registered }`, false},
		{"a literal with fields", `func (t Tool) Copy() Tool { return Tool{Body: t.Body} }`, false},
		{"the receiver and another Tool", `func (t Tool) Two() (Tool, Tool) { return t, Tool{Body: nil} }`, false},
		{"a method of another type", `func (r R) Same() Tool { return Tool{} }`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n"+tt.src, 0)
			require.NoError(t, err)
			name := "Tool." + f.Decls[0].(*ast.FuncDecl).Name.Name
			require.Equal(t, tt.want, handsBack([]*ast.File{f}, name))
		})
	}
}

// The check finds each kind of route, so that the test above can fail.
func TestRoutes_findsEachKindOfRoute(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"no route", `type Body func(); type Tool struct{ Body Body }; func Register(Tool) {}; type Schema struct{ Name string }; func Get() Schema { return Schema{} }`, nil},
		{"a func returning a Body", `type Body func(); func Lookup() Body { return nil }`, []string{"Lookup"}},
		{"a method returning a Body", `type Body func(); type R struct{}; func (*R) Body(string) Body { return nil }`, []string{"R.Body"}},
		{"a struct that holds a Body", `type Body func(); type Tool struct{ Body Body }; type R struct{}; func (R) Tools() []Tool { return nil }`, []string{"R.Tools"}},
		{"a returned type whose method returns a func", `type D struct{}; func (*D) Run() func() { return nil }; func Resolve() *D { return nil }`, []string{"D.Run", "Resolve"}},
		{"a variable holding a func", `var Hook func()`, []string{"Hook"}},
		{"a callback that receives a Body", `type Body func(); func Each(f func(Body)) {}`, []string{"Each"}},
		{"an unexported field is no route", `type Body func(); type D struct{ body Body }; func Get() D { return D{} }`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package x\n"+tt.src, 0)
			require.NoError(t, err)
			pkg, err := (&types.Config{}).Check("x", fset, []*ast.File{f}, nil)
			require.NoError(t, err)
			require.Equal(t, tt.want, routes(pkg))
		})
	}
}
