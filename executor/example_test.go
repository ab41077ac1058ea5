package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// A host registers a tool, picks ptc mode, sends the model the advertised
// tools, and executes whatever tool call the model emits. This is
// docs/embedding.md's host by hand ("The packages underneath"); keep them the
// same.
func Example() {
	ctx := context.Background()
	reg := registry.New()
	if err := reg.DeclareMode(registry.Deployment, api.ModePTC); err != nil {
		log.Fatal(err)
	}
	err := reg.Register(registry.Deployment, registry.Tool{
		Name:            "add",
		Description:     "Add two numbers.",
		InputSchema:     json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		ConcurrencySafe: true,
		Body: func(ctx context.Context, in api.Input) (api.Output, error) {
			var args struct{ A, B float64 }
			if err := json.Unmarshal(in.Args, &args); err != nil {
				return api.Output{}, err
			}
			return api.ValueOutput(args.A + args.B)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	ex, err := executor.New(reg, executor.NewConfig().WithRuntime(rt))
	if err != nil {
		log.Fatal(err)
	}

	advertised, _ := reg.WireSchemas(registry.Deployment) // send these to the model
	fmt.Println(advertised[0].Name)

	// The model's tool calls, as it emitted them:
	direct := ex.Execute(ctx, executor.Call{Name: "add", Args: json.RawMessage(`{"a": 1, "b": 2}`)})
	fmt.Println(direct.Err.Code)
	program := ex.Execute(ctx, executor.Call{Name: "run_code", Args: json.RawMessage(`{
		"description": "add in parallel",
		"code": "const [x, y] = await Promise.all([tools.add({a: 1, b: 2}), tools.add({a: 3, b: 4})]); return x + y"}`)})
	fmt.Println(program.Text)
	// Output:
	// run_code
	// UNKNOWN_TOOL
	// 10
}
