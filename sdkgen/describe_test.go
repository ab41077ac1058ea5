package sdkgen_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/sdkgen"
)

func TestDescribeRunCode(t *testing.T) {
	read := api.Schema{Name: "read", InputSchema: json.RawMessage(`{"type":"object"}`)}
	runCode := api.Schema{Name: "run_code", InputSchema: json.RawMessage(`{"type":"object"}`), Transport: true}
	tests := []struct {
		name     string
		bindable []api.Schema
		want     []string
		not      []string
	}{
		{"the bindings follow the base", []api.Schema{read}, []string{"BASE\n\nThe program's bindings:\n\n", "read(args"}, nil},
		{"the transport is never a binding", []api.Schema{read, runCode}, []string{"read(args"}, []string{"run_code"}},
		{"no tools", nil, []string{"BASE\n\nThe program's bindings:\n\n", "type ToolName = never;"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sdkgen.DescribeRunCode("scope", "BASE", tt.bindable)
			for _, w := range tt.want {
				require.Contains(t, got, w)
			}
			for _, n := range tt.not {
				require.NotContains(t, got, n)
			}
		})
	}
}

func TestDescribeRunCode_undeclarableToolsGiveTheBase(t *testing.T) {
	bad := []api.Schema{{Name: "a"}, {Name: "a"}} // two tools with one name
	require.Equal(t, "BASE", sdkgen.DescribeRunCode("scope", "BASE", bad))
}
