package api_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// The limits are declared once, in limits.go; their doc comments,
// docs/security.md's tables and docs/architecture.md say them again for
// readers, and these tests hold them to the constants (scripts/check-docs.sh
// runs them).

// securityDoc is where the bounds are listed for operators.
const securityDoc = "../docs/security.md"

// sizeText writes a size as the docs do: "256 MiB", "24 KiB", "80 bytes".
func sizeText(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return countText(n>>u.shift) + " " + u.name
		}
	}
	return countText(n) + " bytes"
}

// countText writes a count as the docs do: "128", "10,000".
func countText(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// durationText writes a duration as the docs do: "30 s", "10 min".
func durationText(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return countText(int64(d/time.Hour)) + " h"
	case d >= time.Minute && d%time.Minute == 0:
		return countText(int64(d/time.Minute)) + " min"
	case d%time.Second == 0:
		return countText(int64(d/time.Second)) + " s"
	}
	return countText(d.Milliseconds()) + " ms"
}

// limitText writes a field of Limits in its unit.
func limitText(field string, v reflect.Value) string {
	switch {
	case v.Type() == reflect.TypeFor[time.Duration]():
		return durationText(time.Duration(v.Int()))
	case strings.HasSuffix(field, "Bytes"):
		return sizeText(v.Int())
	}
	return countText(v.Int())
}

func TestDocText(t *testing.T) {
	require.Equal(t, "256 MiB", sizeText(256<<20))
	require.Equal(t, "24 KiB", sizeText(24<<10))
	require.Equal(t, "1,000 bytes", sizeText(1000))
	require.Equal(t, "4 GiB", sizeText(4<<30))
	require.Equal(t, "10,000", countText(10_000))
	require.Equal(t, "524,288", countText(524_288))
	require.Equal(t, "999", countText(999))
	require.Equal(t, "30 s", durationText(30*time.Second))
	require.Equal(t, "10 min", durationText(10*time.Minute))
	require.Equal(t, "24 h", durationText(24*time.Hour))
	require.Equal(t, "250 ms", durationText(250*time.Millisecond))
}

// Every field of Limits says its default in its doc comment ("Default 4
// MiB."), and says the default DefaultLimits gives.
func TestLimits_docCommentsStateTheDefaults(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "limits.go", nil, parser.ParseComments)
	require.NoError(t, err)
	docs := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Limits" {
			return true
		}
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			for _, name := range field.Names {
				docs[name.Name] = strings.Join(strings.Fields(field.Doc.Text()), " ")
			}
		}
		return false
	})
	defaults := reflect.ValueOf(api.DefaultLimits())
	require.Len(t, docs, defaults.NumField())
	for i := range defaults.NumField() {
		name := defaults.Type().Field(i).Name
		want := "Default " + limitText(name, defaults.Field(i))
		require.Regexp(t, regexp.QuoteMeta(want)+`[ .]`, docs[name], "the doc comment of Limits.%s", name)
	}
}

// docRows returns the rows of doc's Markdown tables as their cells.
func docRows(t *testing.T, doc string) [][]string {
	t.Helper()
	b, err := os.ReadFile(doc)
	require.NoError(t, err)
	var rows [][]string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

// docs/security.md's tables of bounds give each limit's default as the
// constants do: the row whose first cell is the bound's name (or starts
// with it and a colon) has a second cell that starts with its value.
func TestDocs_securityTablesStateTheLimits(t *testing.T) {
	d := api.DefaultLimits()
	bounds := []struct{ row, value string }{
		{"compute time", durationText(d.ComputeTime)},
		{"wall time", durationText(d.WallTime)},
		{"guest memory", fmt.Sprintf("%s (at least %s)", sizeText(d.MemoryBytes), sizeText(api.MinMemoryBytes))},
		{"output", sizeText(int64(d.OutputBytes))},
		{"the text the model is shown (the model budget)", fmt.Sprintf("%s (at least %s)", sizeText(int64(d.ModelBytes)), sizeText(api.MinModelBytes))},
		{"a run's ledger", fmt.Sprintf("%s calls listed (the rest counted), %s of argument summary each", countText(api.MaxLedgerCalls), sizeText(api.MaxLedgerArgsBytes))},
		{"nested calls pending / in total", countText(int64(d.MaxPendingCalls)) + " / " + countText(int64(d.MaxCalls))},
		{"one nested call's arguments", sizeText(int64(d.MaxCallArgBytes))},
		{"arguments of the calls in flight, summed", sizeText(int64(d.MaxInFlightArgBytes))},
		{"program size", fmt.Sprintf("%s (bytes of UTF-8; %s characters in the schema)", sizeText(api.MaxCodeBytes), countText(api.MaxCodeBytes))},
		{"source size", sizeText(api.MaxCodeBytes)},
	}
	rows := docRows(t, securityDoc)
	for _, b := range bounds {
		var found []string
		for _, r := range rows {
			if len(r) > 1 && (r[0] == b.row || strings.HasPrefix(r[0], b.row+":")) {
				found = append(found, r[1])
			}
		}
		require.Len(t, found, 1, "%s: one row is %q", securityDoc, b.row)
		require.True(t, strings.HasPrefix(found[0], b.value), "%s, row %q: the value %q does not start with %q", securityDoc, b.row, found[0], b.value)
	}
}

// Every code of api/code.go is named in docs/architecture.md, which says
// where each comes from.
func TestDocs_architectureNamesEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "code.go", nil, 0)
	require.NoError(t, err)
	var codes []string
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				for _, v := range s.(*ast.ValueSpec).Values {
					codes = append(codes, strings.Trim(v.(*ast.BasicLit).Value, `"`))
				}
			}
		}
	}
	require.Contains(t, codes, string(api.CodeNodeLost), "code.go was read")
	b, err := os.ReadFile("../docs/architecture.md")
	require.NoError(t, err)
	for _, c := range codes {
		require.True(t, strings.Contains(string(b), "`"+c+"`"), "docs/architecture.md names code %s", c)
	}
}
