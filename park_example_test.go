package ptcx_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/ptcx/ptcx"
)

type Account struct {
	ID string `json:"id"`
}

type Transfer struct {
	From   string  `json:"from"`
	To     string  `json:"to"`
	Amount float64 `json:"amount"`
}

// A program that needs a person's approval half-way parks instead of
// blocking: the host shows the person what it waits on, and the program
// continues where it stopped once they decide, hours later or in another
// process (Parked.Marshal, Host.RestoreParked). What it did before it
// parked is not done again: balance runs once.
func ExampleHost_ExecuteParkable() {
	ctx := context.Background()
	balanceCalls := 0
	balance := func(_ context.Context, a Account) (float64, error) { balanceCalls++; return 120, nil }
	transfer := func(_ context.Context, t Transfer) (string, error) {
		return fmt.Sprintf("sent %v from %s to %s", t.Amount, t.From, t.To), nil
	}
	h, err := ptcx.New(ctx, ptcx.WithMode(ptcx.ModePTC), ptcx.WithParkedApprovals(), ptcx.WithTools(
		ptcx.Func("balance", "An account's balance.", balance),
		ptcx.Func("transfer", "Move money between accounts.", transfer, ptcx.NeedsApproval()),
	))
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)

	code := `const b = await tools.balance({id: "A"});
return await tools.transfer({from: "A", to: "B", amount: b / 2});`
	args, _ := json.Marshal(map[string]string{"description": "move half of A to B", "code": code})
	_, parked := h.ExecuteParkable(ctx, ptcx.Call{ID: "call_1", Name: "run_code", Args: args})

	data, err := parked.Marshal() // kept anywhere: a file, a database, a queue
	if err != nil {
		log.Fatal(err)
	}
	parked.Release()
	parked, err = h.RestoreParked(data) // later, here or on a host with the same tools
	if err != nil {
		log.Fatal(err)
	}
	answers := map[string]ptcx.Answer{}
	for _, c := range parked.Calls() { // what the person is shown
		fmt.Printf("%s %s: %s %s (%s)\n", c.ID, c.Kind, c.Tool, c.Args, c.Reason)
		answers[c.ID] = ptcx.Approve()
	}
	r, _ := parked.Resume(ctx, answers)
	fmt.Println(r.ID, r.Text)
	fmt.Println("balance ran", balanceCalls, "time")
	// Output:
	// call_1:ptc:3 approval: transfer {"from":"A","to":"B","amount":60} (transfer needs approval: its declaration says needs_approval)
	// call_1 sent 60 from A to B
	// balance ran 1 time
}
