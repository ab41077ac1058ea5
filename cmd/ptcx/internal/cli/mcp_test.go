package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// serveMCP runs `ptcx mcp args...` in-process and connects a real client of
// the official SDK to it over pipes.
func serveMCP(t *testing.T, args ...string) (*mcp.ClientSession, *lockedBuilder) {
	t.Helper()
	return serveMCPWith(t, nil, args...)
}

// serveMCPWith is serveMCP with client options.
func serveMCPWith(t *testing.T, copts *mcp.ClientOptions, args ...string) (*mcp.ClientSession, *lockedBuilder) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &lockedBuilder{}
	done := make(chan int, 1)
	go func() {
		status := run(append([]string{"mcp"}, args...), inR, outW, stderr)
		outW.Close()
		done <- status
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, copts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err, "stderr: %s", stderr.String())
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		select {
		case status := <-done:
			require.Equal(t, exitOK, status, "stderr: %s", stderr.String())
		case <-time.After(30 * time.Second):
			t.Error("ptcx mcp did not exit when its client went away")
		}
	})
	return cs, stderr
}

// lockedBuilder is a strings.Builder safe to read while ptcx writes to it.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func TestMCP_ptcByDefault(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "b.txt"), []byte("beta\n"), 0o644))
	cs, _ := serveMCP(t, "--workspace", ws)

	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, list.Tools, 1)
	require.Equal(t, "run_code", list.Tools[0].Name)
	require.Contains(t, list.Tools[0].Description, "declare const tools", "run_code carries the SDK")
	require.Contains(t, cs.InitializeResult().Instructions, "run_code is the only tool you can call directly")

	text, isErr := callTool(t, cs, "write", map[string]any{"path": "c.txt", "content": "x"})
	require.True(t, isErr)
	require.Contains(t, text, "UNKNOWN_TOOL")
	require.Contains(t, text, "only run_code is callable directly")
	_, err = os.Stat(filepath.Join(ws, "c.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)

	text, isErr = callTool(t, cs, "run_code", map[string]any{
		"description": "read two files",
		"code": `const [a, b] = await Promise.all([tools.read({path: "a.txt"}), tools.read({path: "b.txt"})]);
			await tools.write({path: "c.txt", content: a.content + b.content});
			return (await tools.read({path: "c.txt"})).content.trim().split("\n")`,
	})
	require.False(t, isErr, text)
	require.JSONEq(t, `["alpha","beta"]`, text)
}

func TestMCP_bothAndUpstream(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "upstream")
	build := exec.Command("go", "build", "-o", bin, "../../../../mcpbridge/testdata/upstream")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	cs, stderr := serveMCP(t, "--mode", "both", "--no-builtin", "--upstream", bin)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	require.Contains(t, names, "run_code")
	require.Contains(t, names, "upstream.echo")
	require.Contains(t, stderr.String(), "bridged")
	for _, tool := range list.Tools {
		switch tool.Name {
		case "upstream.echo": // the upstream marks it read-only: the hint is passed on
			require.Equal(t, &mcp.ToolAnnotations{ReadOnlyHint: true}, tool.Annotations)
		case "upstream.crash": // no annotations upstream
			require.Nil(t, tool.Annotations)
		}
	}

	text, isErr := callTool(t, cs, "upstream.echo", map[string]any{"text": "direct"})
	require.False(t, isErr, text)
	require.Contains(t, text, "direct")

	text, isErr = callTool(t, cs, "run_code", map[string]any{
		"description": "two upstream tools in parallel",
		"code":        `const r = await Promise.all([tools["upstream.echo"]({text: "one"}), tools["upstream.upper"]({text: "two"})]); return JSON.stringify(r)`,
	})
	require.False(t, isErr, text)
	require.Contains(t, text, "one")
	require.Contains(t, text, "TWO")
}

func TestMCP_badUpstream(t *testing.T) {
	var stdout, stderr strings.Builder
	status := run([]string{"mcp", "--upstream", "/nonexistent/server"}, strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, exitTool, status)
	require.Contains(t, stderr.String(), "--upstream /nonexistent/server")

	status = run([]string{"mcp", "--upstream", `server "unterminated`}, strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, exitUsage, status)
	require.Contains(t, stderr.String(), "unterminated")
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"npx -y server", []string{"npx", "-y", "server"}, ""},
		{`node "my server.js" --root '/a b'`, []string{"node", "my server.js", "--root", "/a b"}, ""},
		{`a\ b "c\"d" 'e\f'`, []string{"a b", `c"d`, `e\f`}, ""},
		{`x ""`, []string{"x", ""}, ""},
		{"  ", nil, "empty command"},
		{`x 'y`, nil, "unterminated ' quote"},
		{`x \`, nil, "backslash"},
	}
	for _, tt := range tests {
		got, err := splitCommand(tt.in)
		if tt.err != "" {
			require.ErrorContains(t, err, tt.err, tt.in)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tt.want, got, tt.in)
	}
}

func TestClientGone(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{context.Canceled, true},
		{io.EOF, true},
		{fmt.Errorf("writing: %w", io.ErrClosedPipe), true},
		{fmt.Errorf("write |1: %w", syscall.EPIPE), true},
		{errors.New("connection reset by a bug"), false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, clientGone(tt.err), tt.err.Error())
	}
}
