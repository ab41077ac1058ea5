package wasmhost_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ptcx/ptcx/wasmhost"
)

// Example shows a run end to end: a program that calls a tool, logs and
// returns.
func Example() {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig().WithCompilationCacheDir(cacheDir))
	if err != nil {
		panic(err)
	}
	defer rt.Close(ctx)

	files := wasmhost.DispatcherFunc(func(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
		done(wasmhost.CallResult{OK: true, Value: json.RawMessage(`["a.go","b.txt","c.go"]`)})
	})
	out, err := rt.Run(ctx, wasmhost.Program{
		JS: `const names = await tools.list_files({dir: "."});
console.log("listed", names.length);
return names.filter((n) => n.endsWith(".go"));`,
		Tools: []string{"list_files"},
	}, files)
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Logs)
	fmt.Println(string(out.Result))
	// Output:
	// [listed 3]
	// ["a.go","c.go"]
}
