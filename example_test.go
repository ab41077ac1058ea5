package ptcx_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/ptcx/ptcx"
)

// The tools are plain Go functions; their JSON Schemas come from the types.
type Numbers struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type City struct {
	Name string `json:"name" jsonschema:"the city's name"`
}

type Weather struct {
	City    string  `json:"city"`
	Celsius float64 `json:"celsius"`
}

func add(_ context.Context, n Numbers) (float64, error) { return n.A + n.B, nil }

func weather(_ context.Context, c City) (Weather, error) {
	return Weather{City: c.Name, Celsius: 18}, nil
}

// What the model answered: an OpenAI Chat Completions assistant message
// with two tool calls, a program and a direct call.
var modelMessage = []byte(`{"role": "assistant", "content": null, "tool_calls": [
	{"id": "call_1", "type": "function", "function": {"name": "run_code", "arguments":
		"{\"description\": \"Add, and fetch the weather, at once\", \"code\": \"const [n, w] = await Promise.all([tools.add({a: 1, b: 2}), tools.weather({name: 'Paris'})]); return w.city + ': ' + (w.celsius + n) + ' °C'\"}"}},
	{"id": "call_2", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}}]}`)

// A host with two typed tools in ptc mode: it gives the model its tools and
// prompt, executes what the model emitted, and gives the results back. This
// is the README's embedding example; keep them the same.
func Example() {
	ctx := context.Background()
	h, err := ptcx.New(ctx, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(
		ptcx.Func("add", "Add two numbers.", add, ptcx.ConcurrencySafe()),
		ptcx.Func("weather", "The weather in a city.", weather, ptcx.ConcurrencySafe()),
	))
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)

	tools, _ := h.OpenAITools("") // the request's "tools": in ptc mode, only run_code
	prompt, _ := h.Prompt("")     // the system prompt's tool sections
	fmt.Println(tools[0].Function.Name, len(prompt))

	calls, err := ptcx.OpenAICalls(modelMessage)
	if err != nil {
		log.Fatal(err)
	}
	for _, call := range calls {
		reply, _ := json.Marshal(ptcx.OpenAIResult(h.Execute(ctx, call))) // append it to the messages
		fmt.Println(string(reply))
	}
	// Output:
	// run_code 2
	// {"role":"tool","tool_call_id":"call_1","content":"Paris: 21 °C"}
	// {"role":"tool","tool_call_id":"call_2","content":"UNKNOWN_TOOL: unknown tool \"add\": only run_code is callable directly — call add from inside a run_code program instead, e.g. run_code {\"code\": \"return await tools.add({a: 0, b: 0});\", \"description\": \"...\"}"}
}

// A person approves what a program can do before it runs: read its plan,
// remove what they refuse, and run the program bound to what is left.
func ExampleHost_Plan() {
	ctx := context.Background()
	h, err := ptcx.New(ctx, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(
		ptcx.Func("add", "Add two numbers.", add, ptcx.ConcurrencySafe()),
		ptcx.Func("weather", "The weather in a city.", weather, ptcx.ConcurrencySafe()),
	))
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)

	code := `const n = await tools.add({a: 1, b: 2});
try { return (await tools.weather({name: "Paris"})).celsius + n } catch (e) { return e.code }`
	plan, err := h.Plan("", code)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range plan.Calls {
		args, _ := json.Marshal(c.Args)
		fmt.Printf("line %d: %s %s\n", c.Line, c.Tool, args)
	}
	plan.Tools = []string{"add"} // the person refuses weather
	args, _ := json.Marshal(map[string]string{"description": "add, then the weather", "code": code})
	r := h.Execute(ctx, ptcx.Call{Name: "run_code", Args: args, Plan: plan})
	fmt.Println(r.Text)
	// Output:
	// line 1: add {"a":1,"b":2}
	// line 2: weather {"name":"Paris"}
	// DENIED
}
