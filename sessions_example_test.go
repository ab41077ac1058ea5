package ptcx_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/ptcx/ptcx"
)

// Two run_code calls of one conversation share their state: the second
// program uses the first's declaration.
func ExampleWithSessions() {
	ctx := context.Background()
	h, err := ptcx.New(ctx, ptcx.WithMode(ptcx.ModePTC), ptcx.WithSessions(ptcx.SessionLimits{}),
		ptcx.WithTools(ptcx.Func("add", "Add two numbers.", add, ptcx.ConcurrencySafe())))
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)
	defer h.CloseSession(ctx, "", "conversation-1")

	for _, code := range []string{
		`const total = await tools.add({a: 20, b: 1}); return total`,
		`return total * 2`,
	} {
		args, _ := json.Marshal(map[string]string{"description": "a step", "code": code})
		r := h.Execute(ctx, ptcx.Call{Name: "run_code", Args: args, Session: "conversation-1"})
		fmt.Println(r.Text)
	}
	// Output:
	// 21
	// 42
}
