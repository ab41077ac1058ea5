package sdkgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestSummary_firstSentence(t *testing.T) {
	long := strings.Repeat("word ", 40)
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"Read a file.", "Read a file."},
		{"Read a file. It must exist.", "Read a file."},
		{"Read a file\nfrom the workspace.", "Read a file"},
		{"  Version 1.2 of it. More.", "Version 1.2 of it."},
		{"Tab\there, */ closed.", `Tab here, *\/ closed.`},
		{long, strings.Repeat("word ", 18) + "word…"},
		{strings.Repeat("x", 200), strings.Repeat("x", SummaryBytes-len("…")) + "…"},
		{strings.Repeat("é", 100), strings.Repeat("é", (SummaryBytes-len("…"))/2) + "…"},
	} {
		got := Summary(tc.in)
		require.Equal(t, tc.want, got, "%q", tc.in)
		require.LessOrEqual(t, len(got), SummaryBytes)
	}
}

// A set is large past DeferTools tools or past DeferBytes of names, descriptions and schemas;
// run_code does not count.
func TestDeferred_bounds(t *testing.T) {
	tools := func(n int) []api.Schema {
		out := make([]api.Schema, n)
		for i := range out {
			out[i] = api.Schema{Name: fmt.Sprintf("t%03d", i)}
		}
		return out
	}
	sized := func(size int) []api.Schema {
		return []api.Schema{{Name: "t", Description: strings.Repeat("d", size-1)}}
	}
	for _, tc := range []struct {
		name  string
		tools []api.Schema
		want  bool
	}{
		{"below the count", tools(DeferTools - 1), false},
		{"at the count", tools(DeferTools), false},
		{"past the count", tools(DeferTools + 1), true},
		{"at the count, with run_code", append(tools(DeferTools), api.Schema{Name: "run_code", Transport: true}), false},
		{"below the bytes", sized(DeferBytes - 1), false},
		{"at the bytes", sized(DeferBytes), false},
		{"past the bytes", sized(DeferBytes + 1), true},
		{"schemas count", []api.Schema{{Name: "t", InputSchema: json.RawMessage(`"` + strings.Repeat("s", DeferBytes) + `"`)}}, true},
	} {
		require.Equal(t, tc.want, Deferred(tc.tools), tc.name)
	}
}

// The listing gives every tool an equal share of ListingBytes, names only when the share is too
// small, and counts what does not fit.
func TestListing_bounds(t *testing.T) {
	tools := func(n int) []api.Schema {
		out := make([]api.Schema, n)
		for i := range out {
			out[i] = api.Schema{Name: fmt.Sprintf("tool_%04d", i), Description: "Does thing number " + fmt.Sprint(i) + " for the caller."}
		}
		return out
	}
	for _, tc := range []struct {
		n                   int
		summaries, complete bool
	}{{10, true, true}, {300, true, true}, {1000, false, true}, {3000, false, false}} {
		l := listing(tools(tc.n), "tools.$search")
		require.LessOrEqual(t, len(l), ListingBytes+100, "%d tools", tc.n)
		require.Equal(t, tc.summaries, strings.Contains(l, "- tool_0000: Does"), "%d tools", tc.n)
		require.Equal(t, tc.complete, !strings.Contains(l, "more (find them with tools.$search)"), "%d tools", tc.n)
		if tc.complete {
			require.Equal(t, tc.n, strings.Count(l, "\n"))
		}
	}
	require.Empty(t, listing(nil, "tools.$search"))
}
