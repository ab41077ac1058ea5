package plan_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/plan"
)

// bound are the tools the table's programs are read against (and run
// with, in the property test).
var bound = []string{"send_email", "lookup", "fs.read_file", "fs.write_file", "then", "a-b"}

// readCase is a program and its plan: dynamic, or the call sites as
// "tool line repeats args computed" (see site).
type readCase struct {
	name    string
	code    string
	dynamic bool
	sites   []string
}

func site(c plan.Call) string {
	args, _ := json.Marshal(c.Args)
	r := "once"
	if c.Repeats {
		r = "repeats"
	}
	return fmt.Sprintf("%s %d %s %s %s", c.Tool, c.Line, r, args, strings.Join(c.Computed, ","))
}

var readCases = []readCase{
	{name: "no calls", code: `return 1 + 1`},
	{name: "one call with literal args", code: "const to: string = 'x'\nawait tools.send_email({to: \"ada@example.com\", n: -2, tags: [\"a\", null], o: {b: true}})",
		sites: []string{`send_email 2 once {"n":-2,"o":{"b":true},"tags":["a",null],"to":"ada@example.com"} `}},
	{name: "computed members", code: "const who = (await tools.lookup({q: 'ada'})) as any\nawait tools.send_email({to: who.email, subject: `hi ${who.name}`, body: 'x'})",
		sites: []string{`lookup 1 once {"q":"ada"} `, `send_email 2 once {"body":"x"} subject,to`}},
	{name: "shorthand member", code: "const to = 'x'\nawait tools.send_email({to})", sites: []string{`send_email 2 once {} to`}},
	{name: "no arguments", code: "await tools.lookup()", sites: []string{`lookup 1 once {} `}},
	{name: "spread in the arguments", code: "const o = {to: 'x'}\nawait tools.send_email({...o, subject: 's'})",
		sites: []string{`send_email 2 once {"subject":"s"} ...`}},
	{name: "spread arguments", code: "const a = [{to: 'x'}]\nawait tools.send_email(...a)", sites: []string{`send_email 2 once {} ...`}},
	{name: "arguments not an object literal", code: "const a = {to: 'x'}\nawait tools.send_email(a)", sites: []string{`send_email 2 once {} ...`}},
	{name: "bracket name", code: `await tools["send_email"]({to: 'x'}); await tools["a-b"]({})`,
		sites: []string{`send_email 1 once {"to":"x"} `, `a-b 1 once {} `}},
	{name: "template name", code: "await tools[`lookup`]({q: 1})", sites: []string{`lookup 1 once {"q":1} `}},
	{name: "namespaced", code: "\n\nawait tools.fs.read_file({path: 'a'})\nawait tools.fs[\"write_file\"]({path: 'b', content: 'c'})",
		sites: []string{`fs.read_file 3 once {"path":"a"} `, `fs.write_file 4 once {"content":"c","path":"b"} `}},
	{name: "dotted bracket name", code: `await tools["fs.read_file"]({path: 'a'})`, sites: []string{`fs.read_file 1 once {"path":"a"} `}},
	{name: "$call with a literal name", code: `await tools.$call("then", {x: 1}); await tools.$call("lookup")`,
		sites: []string{`then 1 once {"x":1} `, `lookup 1 once {} `}},
	{name: "unbound names make no call", code: "try { await tools.nope({}) } catch {}\ntry { await tools.fs.nope({}) } catch {}\ntry { await tools.then() } catch {}\ntry { await tools.$call('nope', {}) } catch {}"},
	{name: "catalog functions", code: `try { await tools.$search("mail") } catch {}`},
	{name: "optional chaining", code: "await tools.send_email?.({to: 'x'})\nawait tools?.lookup({q: 'y'})\nawait tools.fs?.read_file({path: 'p'})",
		sites: []string{`send_email 1 once {"to":"x"} `, `lookup 2 once {"q":"y"} `, `fs.read_file 3 once {"path":"p"} `}},
	{name: "loop", code: "for (let i = 0; i < 3; i++) {\n  await tools.lookup({q: i})\n}", sites: []string{`lookup 2 repeats {} q`}},
	{name: "for of", code: "for (const q of ['a', 'b']) await tools.lookup({q})", sites: []string{`lookup 1 repeats {} q`}},
	{name: "while", code: "let i = 0\nwhile (i++ < 2) await tools.lookup({q: 'x'})", sites: []string{`lookup 2 repeats {"q":"x"} `}},
	{name: "callback", code: "await Promise.all(['a', 'b'].map((q) => tools.lookup({q})))", sites: []string{`lookup 1 repeats {} q`}},
	{name: "function called once", code: "async function f() { return tools.lookup({q: 'x'}) }\nawait f()", sites: []string{`lookup 1 repeats {"q":"x"} `}},
	{name: "getter in the arguments", code: "await tools.send_email({get to() { return 'x' }})", sites: []string{`send_email 1 once {} to`}},
	{name: "class", code: "class M { constructor(private q: string) {}\n  go() { return tools.lookup({q: this.q}) } }\nawait new M('x').go()",
		sites: []string{`lookup 2 repeats {} q`}},
	{name: "nested call in the arguments", code: "await tools.send_email({to: (await tools.lookup({q: 'x'})) as any})",
		sites: []string{`send_email 1 once {} to`, `lookup 1 once {"q":"x"} `}},
	{name: "an escaped name", code: "await \\u0074ools.send_email({to: 'x'})\nawait tools['\\u0073end_email']({to: 'y'})",
		sites: []string{`send_email 1 once {"to":"x"} `, `send_email 2 once {"to":"y"} `}},
	{name: "a call inside with", code: "with ({}) { await tools.lookup({q: 1}) }", sites: []string{`lookup 1 once {"q":1} `}},
	{name: "an object named tools of its own", code: "const o = { tools: 1 }\nreturn o.tools"},

	// Code made from text runs in the global scope, and the global object of
	// a plan-bound run holds no tools (wasmhost.Program.LexicalTools): these
	// make no call, and the property test checks that they do not.
	{name: "constructor of a function", code: "const F = (() => {}).constructor\nawait F('return tools.send_email({to: \"x\"})')()"},
	{name: "constructor by bracket", code: "const F = (async () => {})['constructor']\nawait F('return tools.send_email({to: \"x\"})')()"},
	{name: "constructor by string", code: "const k = 'constructor'\nconst F = Object[k]\nawait F('return tools.lookup({q: 1})')()"},
	{name: "Function", code: "await Function('return tools')().lookup({q: 1})"},
	{name: "globalThis", code: "await globalThis.tools.lookup({q: 1})"},
	{name: "globalThis by bracket", code: "await globalThis['to' + 'ols'].lookup({q: 1})"},
	{name: "this", code: "function g(this: any) { return this }\nawait g().tools.lookup({q: 1})"},
	{name: "prototype", code: "const p = Object.getPrototypeOf(async function () {})\nawait p.constructor('return tools.lookup({q: 1})')()"},
	{name: "__proto__", code: "const f: any = () => 1\nawait f.__proto__.constructor('return tools.lookup({q: 1})')()"},
	{name: "a getter on Object.prototype receives the global object", code: "Object.defineProperty(Object.prototype, 'zz', {get: ({}).valueOf, configurable: true})\n// @ts-ignore\nconst g: any = zz\ndelete (Object.prototype as any).zz\nawait g.tools.lookup({q: 1})"},
	{name: "with", code: "with (Math) { max(1) }"},
	{name: "constructor by a key built at run time", code: "const k = ['constr', 'uctor'].join('')\nconst F = (async () => {})[k]\ntry { await F('return tools.send_email({to: \"m\"})')() } catch {}\nawait tools.lookup({q: 'x'})",
		sites: []string{`lookup 4 once {"q":"x"} `}},
	{name: "Object.prototype by a key built at run time", code: "const O: any = Object\nconst p = O[['proto', 'type'].join('')]\nO[['define', 'Property'].join('')](p, 'zz', {get: ({}).valueOf, configurable: true})\n// @ts-ignore\nconst g: any = zz\ntry { await g.tools.send_email({to: 'm'}) } catch {}"},

	{name: "alias", code: "const t = tools\nawait t.send_email({to: 'x'})", dynamic: true},
	{name: "destructuring", code: "const {send_email} = tools\nawait send_email({to: 'x'})", dynamic: true},
	{name: "computed name", code: "const n = 'send_' + 'email'\nawait tools[n]({to: 'x'})", dynamic: true},
	{name: "$call with a computed name", code: "const n = 'send_email'\nawait tools.$call(n, {to: 'x'})", dynamic: true},
	{name: "passing tools", code: "async function f(t: any) { return t.send_email({to: 'x'}) }\nawait f(tools)", dynamic: true},
	{name: "spread of tools", code: "const all = {...tools}\nawait all.send_email({to: 'x'})", dynamic: true},
	{name: "shorthand tools", code: "const o = {tools}\nawait o.tools.send_email({to: 'x'})", dynamic: true},
	{name: "tool function read", code: "const f = tools.send_email\nawait f({to: 'x'})", dynamic: true},
	{name: "tool as a callback", code: "await Promise.all([{q: 'a'}].map(tools.lookup))", dynamic: true},
	{name: "Function.prototype.call", code: "await tools.send_email.call(null, {to: 'x'})", dynamic: true},
	{name: "Function.prototype.apply", code: "await tools.lookup.apply(undefined, [{q: 'x'}])", dynamic: true},
	{name: "bind", code: "const f = tools.lookup.bind(null)\nawait f({q: 'x'})", dynamic: true},
	{name: "$call.call", code: "await tools.$call.call(null, 'lookup', {q: 'x'})", dynamic: true},
	{name: "eval", code: "await eval('tools').lookup({q: 1})", dynamic: true},
	{name: "indirect eval", code: "await (0, eval)('tools.lookup({q: 1})')", dynamic: true},
	{name: "Reflect", code: "await Reflect.get(Reflect.get(Object.getPrototypeOf(tools) ? {} : {}, 'x') ?? {}, 'y')", dynamic: true},
	{name: "arguments.callee", code: "let n = (globalThis as any).n = ((globalThis as any).n ?? 0) + 1\nawait tools.lookup({q: 'x'})\nif (n < 2) await arguments.callee()", dynamic: true},
	{name: "program arguments in an arrow", code: "const again = () => arguments.callee\nawait tools.lookup({q: 'x'})", dynamic: true},
	{name: "reassigning tools", code: "try { (tools as any) = 1 } catch {}\nawait tools.lookup({q: 'x'})", dynamic: true},
	{name: "typeof tools", code: "return typeof tools", dynamic: true},
	{name: "tagged template", code: "try { await (tools.lookup as any)`x` } catch {}", dynamic: true},
	{name: "conditional callee", code: "const c = Math.random() > 2\nawait (c ? tools.send_email : tools.lookup)({q: 'x'})", dynamic: true},
	{name: "comma callee", code: "await (0, tools.lookup)({q: 'x'})", dynamic: true},
}

func TestRead_table(t *testing.T) {
	for _, c := range readCases {
		t.Run(c.name, func(t *testing.T) {
			p, err := plan.Read(c.code, bound)
			require.NoError(t, err)
			require.Equal(t, plan.Hash(c.code), p.Hash)
			require.Equal(t, c.dynamic, p.Dynamic, "reasons: %v", p.Reasons)
			if c.dynamic {
				require.NotEmpty(t, p.Reasons)
				require.ElementsMatch(t, bound, p.Tools)
				return
			}
			require.Empty(t, p.Reasons)
			got := make([]string, len(p.Calls))
			tools := map[string]bool{}
			for i, s := range p.Calls {
				got[i] = site(s)
				tools[s.Tool] = true
			}
			if c.sites == nil {
				c.sites = []string{}
			}
			require.Equal(t, c.sites, got)
			require.Len(t, p.Tools, len(tools))
		})
	}
}
