//go:build unix

// Command upstream is the MCP server the mcpbridge tests bridge to: a real
// subprocess speaking MCP over stdio through the official SDK, with tools
// that misbehave on request.
//
// Tools: echo and upper (read-only; "meet" makes two calls wait for each
// other, which only works if they run at the same time), slow (sleeps,
// counting cancellations), stats, pid, spawn (starts a child in the same
// process group), pic (text and an image), err (isError), crash (exits),
// garbage (writes non-JSON to stdout), freeze (stops itself), flood (sends
// a given number of progress notifications before answering), badschema (an
// input schema no validator can compile), "a b" / "a_b" (names that
// collide once sanitised), and addtool / droptool (change the tool list,
// which makes the SDK send notifications/tools/list_changed).
//
// Flags: -page-size N lists tools N per page; -fail-start exits at once
// with a message on stderr; -garbage-start greets on stdout before serving;
// -hang-start never answers; -sleep just sleeps (the child spawn starts).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	pageSize := flag.Int("page-size", 0, "tools per tools/list page")
	failStart := flag.Bool("fail-start", false, "exit at once with a message on stderr")
	garbageStart := flag.Bool("garbage-start", false, "write a greeting to stdout before serving")
	hangStart := flag.Bool("hang-start", false, "never answer anything")
	sleep := flag.Bool("sleep", false, "sleep forever")
	flag.Parse()

	switch {
	case *sleep, *hangStart:
		select {}
	case *failStart:
		fmt.Fprintln(os.Stderr, "boom: cannot read the configuration file /etc/upstream.conf")
		os.Exit(2)
	case *garbageStart:
		fmt.Println("Welcome to upstream v1.0!")
	}

	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "v0"}, &mcp.ServerOptions{PageSize: *pageSize})
	u := &upstream{meets: map[string]chan struct{}{}}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	add := func(name, desc, in, out string, ann *mcp.ToolAnnotations, h mcp.ToolHandler) {
		t := &mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(in), Annotations: ann}
		if out != "" {
			t.OutputSchema = json.RawMessage(out)
		}
		s.AddTool(t, h)
	}
	const textIn = `{"type":"object","properties":{"text":{"type":"string"},"meet":{"type":"string"}},"required":["text"],"additionalProperties":false}`
	const empty = `{"type":"object","additionalProperties":false}`
	add("echo", "Echo the text back.", textIn, `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, readOnly, u.echo)
	add("upper", "Upper-case the text.", textIn, "", readOnly, u.upper)
	add("slow", "Sleep for the given seconds.", `{"type":"object","properties":{"seconds":{"type":"number"}},"required":["seconds"]}`, "", readOnly, u.slow)
	add("stats", "Counters.", empty, `{"type":"object"}`, readOnly, u.stats)
	add("pid", "The process ID.", empty, `{"type":"object"}`, readOnly, u.pid)
	add("spawn", "Start a child that sleeps forever.", empty, `{"type":"object"}`, nil, u.spawn)
	add("pic", "A chart.", empty, "", readOnly, u.pic)
	add("err", "Always fails.", empty, "", nil, u.err)
	add("crash", "Exit the process.", empty, "", nil, u.crash)
	add("garbage", "Write non-JSON to stdout.", empty, "", nil, u.garbage)
	add("freeze", "Stop the process.", empty, "", nil, u.freeze)
	add("flood", "Send count notifications, then answer.", `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`, "", readOnly, u.flood)
	add("badschema", "Its schema cannot compile.", `{"type":"object","properties":{"x":{"type":"nonsense"}}}`, "", nil, u.upper)
	add("a b", "A name with a space.", textIn, "", readOnly, u.upper)
	add("a_b", "A name that is already fine.", textIn, "", readOnly, u.upper)
	closed, open := false, true
	add("closed", "Upper-case the text, reaching nothing outside.", textIn, "", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closed}, u.upper)
	add("web", "Upper-case the text, as if fetched from the web.", textIn, "", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &open}, u.upper)
	const nameIn = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	add("addtool", "Add a tool named name (an upper-caser); the SDK sends tools/list_changed.", nameIn, "", nil,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := args[struct{ Name string }](req)
			if err != nil {
				return fail(err.Error()), nil
			}
			add(a.Name, "Added at run time.", textIn, "", readOnly, u.upper)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added " + a.Name}}}, nil
		})
	add("droptool", "Remove the tool named name; the SDK sends tools/list_changed.", nameIn, "", nil,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := args[struct{ Name string }](req)
			if err != nil {
				return fail(err.Error()), nil
			}
			s.RemoveTools(a.Name)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "dropped " + a.Name}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(1)
	}
}

type upstream struct {
	mu        sync.Mutex
	meets     map[string]chan struct{}
	running   int
	cancelled int
	calls     int
}

type textArgs struct {
	Text string `json:"text"`
	Meet string `json:"meet"`
}

func args[T any](req *mcp.CallToolRequest) (T, error) {
	var v T
	err := json.Unmarshal(req.Params.Arguments, &v)
	return v, err
}

func fail(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

func structured(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

// meet waits until another call with the same key arrives.
func (u *upstream) meet(ctx context.Context, key string) error {
	if key == "" {
		return nil
	}
	u.mu.Lock()
	ch, ok := u.meets[key]
	if ok {
		delete(u.meets, key)
		close(ch)
		u.mu.Unlock()
		return nil
	}
	ch = make(chan struct{})
	u.meets[key] = ch
	u.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Second):
		return fmt.Errorf("nobody came to meet %q", key)
	}
}

func (u *upstream) count() {
	u.mu.Lock()
	u.calls++
	u.mu.Unlock()
}

func (u *upstream) echo(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	u.count()
	a, err := args[textArgs](req)
	if err != nil {
		return fail(err.Error()), nil
	}
	if err := u.meet(ctx, a.Meet); err != nil {
		return fail(err.Error()), nil
	}
	return structured(map[string]string{"text": a.Text})
}

func (u *upstream) upper(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	u.count()
	a, err := args[textArgs](req)
	if err != nil {
		return fail(err.Error()), nil
	}
	if err := u.meet(ctx, a.Meet); err != nil {
		return fail(err.Error()), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(a.Text)}}}, nil
}

func (u *upstream) slow(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	u.count()
	a, err := args[struct{ Seconds float64 }](req)
	if err != nil {
		return fail(err.Error()), nil
	}
	u.mu.Lock()
	u.running++
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.running--
		u.mu.Unlock()
	}()
	select {
	case <-time.After(time.Duration(a.Seconds * float64(time.Second))):
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	case <-ctx.Done():
		u.mu.Lock()
		u.cancelled++
		u.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (u *upstream) stats(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return structured(map[string]int{"running": u.running, "cancelled": u.cancelled, "calls": u.calls})
}

func (u *upstream) pid(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return structured(map[string]int{"pid": os.Getpid()})
}

func (u *upstream) spawn(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cmd := exec.Command(os.Args[0], "-sleep")
	if err := cmd.Start(); err != nil {
		return fail(err.Error()), nil
	}
	return structured(map[string]int{"pid": cmd.Process.Pid})
}

func (u *upstream) pic(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a chart"},
		&mcp.ImageContent{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
	}}, nil
}

func (u *upstream) err(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return fail("disk on fire"), nil
}

func (u *upstream) crash(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	fmt.Fprintln(os.Stderr, "crash: exiting on purpose")
	os.Exit(3)
	return nil, nil
}

func (u *upstream) garbage(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	fmt.Println("this is not json")
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}

// freeze stops the whole process, so that nothing (not even a ping) is
// answered; the handler itself never returns, in case it runs on before
// the stop reaches its thread.
func (u *upstream) freeze(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	select {}
}

// flood sends count progress notifications (for a token the client never
// asked for), then answers "flooded".
func (u *upstream) flood(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	u.count()
	a, err := args[struct{ Count int }](req)
	if err != nil {
		return fail(err.Error()), nil
	}
	for i := range a.Count {
		p := &mcp.ProgressNotificationParams{ProgressToken: "flood", Progress: float64(i), Message: "still flooding"}
		if err := req.Session.NotifyProgress(ctx, p); err != nil {
			return nil, err
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "flooded"}}}, nil
}
