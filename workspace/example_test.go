package workspace_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/workspace"
)

// Register the workspace tools and call one through an executor.
func Example() {
	dir, err := os.MkdirTemp("", "ptcx-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	ws, err := workspace.New(dir, workspace.Options{}) // bash stays off
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	reg := registry.New()
	for _, tool := range ws.Tools() {
		if err := reg.Register(registry.Deployment, tool); err != nil {
			log.Fatal(err)
		}
	}

	e, err := executor.New(reg, executor.NewConfig())
	if err != nil {
		log.Fatal(err)
	}
	r := e.Execute(context.Background(), executor.Call{Name: "read", Args: []byte(`{"path": "hello.txt", "end_line": 1}`)})
	fmt.Println(string(r.Value))
	fmt.Println(r.Text)

	r = e.Execute(context.Background(), executor.Call{Name: "read", Args: []byte(`{"path": "../etc/passwd"}`)})
	fmt.Println(r.Err)
	// Output:
	// {"path":"hello.txt","content":"hello\n","start_line":1,"end_line":1,"total_lines":2,"truncated":true}
	// hello
	// [lines 1-1 of 2 in hello.txt; continue with start_line 2]
	// TOOL_FAILED: path "../etc/passwd" escapes the workspace: ".." may not lead above the workspace root
}
