package ptcx_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/sdkgen"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run %s -update to create it", t.Name())
	require.Equal(t, string(want), got, "run go test -run %s -update if the change is intended", t.Name())
}

type priority string

type (
	readArgs struct {
		Path   string `json:"path" jsonschema:"the file, relative to the workspace"`
		Offset int    `json:"offset,omitempty" jsonschema:"the first line to read, from 0"`
	}
	readResult struct {
		Text      string `json:"text"`
		Truncated bool   `json:"truncated"`
	}
	ticketQuery struct {
		Labels   []string   `json:"labels" jsonschema:"every label a ticket must carry"`
		Priority *priority  `json:"priority,omitempty"`
		Since    time.Time  `json:"since"`
		Owner    *ownerSpec `json:"owner,omitempty"`
	}
	ownerSpec struct {
		Team string `json:"team"`
	}
	ticket struct {
		ID       int               `json:"id"`
		Title    string            `json:"title"`
		Priority priority          `json:"priority"`
		Fields   map[string]string `json:"fields,omitempty"`
		Updated  time.Time         `json:"updated"`
	}
)

func readFile(context.Context, readArgs) (readResult, error)     { return readResult{}, nil }
func findTickets(context.Context, ticketQuery) ([]ticket, error) { return nil, nil }
func ping(context.Context, struct{}) (string, error)             { return "pong", nil }

// The SDK a program sees for tools built from Go functions is typed from
// the Go types: arguments, results, descriptions, enums, optional fields.
func TestFunc_sdk_golden(t *testing.T) {
	h := newHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(
		ptcx.Func("read_file", "Read a text file.", readFile, ptcx.ConcurrencySafe()),
		ptcx.Func("find_tickets", "Find tickets matching a query.", findTickets,
			ptcx.Enum[priority]("low", "high", "urgent")),
		ptcx.Func("ping", "Check the service is up.", ping),
	))
	bindable, err := h.Registry().Bindable("")
	require.NoError(t, err)
	decls, err := sdkgen.Declarations(bindable)
	require.NoError(t, err)
	golden(t, "sdk_go_types.golden", decls)

	sections, err := h.Prompt("")
	require.NoError(t, err)
	require.Len(t, sections, 2)
	require.Contains(t, sections[1].Text, decls, "the prompt carries the same declarations")
}
