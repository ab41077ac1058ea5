//go:build linux

package mcpbridge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpbridge"
	"github.com/ptcx/ptcx/registry"
)

const (
	textIn  = `{"type":"object","properties":{"text":{"type":"string"},"meet":{"type":"string"}},"required":["text"],"additionalProperties":false}`
	emptyIn = `{"type":"object","additionalProperties":false}`
)

func TestConnect_import(t *testing.T) {
	// Two tools per page: listing must follow the pages.
	v := connect(t, upstream("-page-size", "2"), api.ModeNative, executor.NewConfig())
	require.Equal(t, []string{
		"up.a_b", "up.a_b_2", "up.addtool", "up.closed", "up.crash", "up.droptool", "up.echo", "up.err", "up.flood", "up.freeze", "up.garbage",
		"up.pic", "up.pid", "up.slow", "up.spawn", "up.stats", "up.upper", "up.web",
	}, v.b.Tools())

	tests := []struct {
		name, desc, in, out string
		safe                bool
	}{
		{"up.echo", "Echo the text back.", textIn, `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, true},
		// Without an output schema, a tool's value is its text.
		{"up.upper", "Upper-case the text.", textIn, `{"type":"string"}`, true},
		{"up.stats", "Counters.", emptyIn, `{"type":"object"}`, true},
		{"up.spawn", "Start a child that sleeps forever.", emptyIn, `{"type":"object"}`, false},
		{"up.crash", "Exit the process.", emptyIn, `{"type":"string"}`, false},
		{"up.a_b", "A name that is already fine.", textIn, `{"type":"string"}`, true},
		{"up.a_b_2", "A name with a space.", textIn, `{"type":"string"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := v.reg.Get(registry.Deployment, tt.name)
			require.True(t, ok)
			require.Equal(t, tt.desc, s.Description)
			require.JSONEq(t, tt.in, string(s.InputSchema))
			require.JSONEq(t, tt.out, string(s.OutputSchema))
			require.Equal(t, tt.safe, s.ConcurrencySafe)
			require.Equal(t, tt.safe, v.exec.SchedulingClass(registry.Deployment, tt.name) == executor.Concurrent)
		})
	}

	w := v.b.Warnings()
	require.Len(t, w, 2, w)
	require.Contains(t, w[0], `upstream "up": tool "a b" is registered as "up.a_b_2"`)
	require.Contains(t, w[1], `upstream "up": tool "up.badschema" skipped: UNSUPPORTED_SCHEMA`)
	_, ok := v.reg.Get(registry.Deployment, "up.badschema")
	require.False(t, ok)
}

func TestConnect_prefix(t *testing.T) {
	tests := []struct {
		prefix, want, wantErr string
	}{
		{"", "upstream.echo", ""}, // derived from the command's base name
		{"my-fs", "my-fs.echo", ""},
		{"a.b", "a.b.echo", ""},
		{"9lives", "", `invalid prefix "9lives"`},
		{"has space", "", `invalid prefix "has space"`},
		{"a_prefix_that_is_far_too_long_to_leave_room", "", "invalid prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			reg := registry.New()
			b, err := mcpbridge.Connect(context.Background(), reg, registry.Deployment,
				mcpbridge.Upstream{Command: []string{upstreamBin}, Prefix: tt.prefix})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.Nil(t, b)
				return
			}
			require.NoError(t, err)
			defer func() { require.NoError(t, b.Close()) }()
			require.Contains(t, b.Tools(), tt.want)
		})
	}
}

func TestDerivePrefix(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"/usr/local/bin/mcp-server-git", "--repo", "."}, "mcp-server-git"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, "server-filesystem"},
		{[]string{"npx", "@playwright/mcp@latest"}, "playwright"},
		{[]string{"uvx", "mcp-server-fetch@1.2"}, "mcp-server-fetch"},
		{[]string{"python3", "-m", "mcp_server_time"}, "mcp_server_time"},
		{[]string{"node", "/opt/servers/github/build/index.js"}, "github"},
		{[]string{"node", "build/index.js"}, "mcp"},
		{[]string{"uv", "run", "weather/server.py", "--port", "1"}, "weather"},
		{[]string{"uv", "run", "weather/server.py"}, "weather"},
		{[]string{"docker", "run", "-i", "--rm", "-e", "TOKEN=1", "mcp/github"}, "github"},
		{[]string{"deno", "run", "-A", "jsr:@scope/tool"}, "tool"},
		{[]string{"./my server.py"}, "my_server"},
		{[]string{"./42"}, "_42"},
		{[]string{"npx"}, "mcp"},
		{[]string{"node", "index.js"}, "mcp"},
		{[]string{"/"}, "mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := mcpbridge.DerivePrefix(tt.argv)
			require.Equal(t, tt.want, got)
			require.True(t, registry.ValidName(got+".tool"))
		})
	}
}

func TestAssignNames(t *testing.T) {
	long := "a_tool_name_that_goes_on_and_on_and_on_and_on_and_on_and_on_and_on"
	tests := []struct {
		name     string
		upstream []string
		want     map[string]string
		warnings int
	}{
		{"valid names are kept", []string{"read", "write.file", "x-y"},
			map[string]string{"read": "p.read", "write.file": "p.write.file", "x-y": "p.x-y"}, 0},
		{"a valid name wins over a sanitised one whatever the order", []string{"a b", "a_b", "a/b"},
			map[string]string{"a_b": "p.a_b", "a b": "p.a_b_2", "a/b": "p.a_b_3"}, 2},
		{"non-ASCII", []string{"größe"}, map[string]string{"größe": "p.gr__e"}, 1},
		{"too long", []string{long, long + "2"},
			map[string]string{long: ("p." + long)[:64], long + "2": ("p." + long)[:62] + "_2"}, 2},
		{"no name and duplicates", []string{"", "dup", "dup"}, map[string]string{"dup": "p.dup"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings := mcpbridge.AssignNames("p", tt.upstream)
			require.Equal(t, tt.want, got)
			require.Len(t, warnings, tt.warnings, warnings)
			for _, n := range got {
				require.True(t, registry.ValidName(n), n)
			}
			// Deterministic whatever the upstream's order.
			reversed := append([]string(nil), tt.upstream...)
			for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
				reversed[i], reversed[j] = reversed[j], reversed[i]
			}
			again, _ := mcpbridge.AssignNames("p", reversed)
			require.Equal(t, got, again)
		})
	}
}

func TestConnect_prefixInUse(t *testing.T) {
	v := connect(t, upstream(), api.ModeNative, executor.NewConfig())
	_, err := mcpbridge.Connect(context.Background(), v.reg, registry.Deployment, upstream())
	require.ErrorContains(t, err, `tool "up.a_b" is already registered for scope "deployment": give this upstream another prefix`)
	// The first bridge is untouched.
	require.JSONEq(t, `{"text":"still here"}`, string(v.ok(t, "up.echo", `{"text":"still here"}`)))
}

func TestConnect_startFailures(t *testing.T) {
	tests := []struct {
		name  string
		u     mcpbridge.Upstream
		scope string
		want  []string
	}{
		{"no such command", mcpbridge.Upstream{Command: []string{"/nonexistent/mcp-server"}}, "",
			[]string{`upstream "nonexistent"`, `did not start: cannot start "/nonexistent/mcp-server"`, "no such file or directory"}},
		{"no command", mcpbridge.Upstream{}, "", []string{"the upstream has no command"}},
		{"unknown scope", upstream(), "nope", []string{`unknown scope "nope"`}},
		{"exits at start", upstream("-fail-start"), "",
			[]string{`upstream "up"`, "-fail-start", "did not start: it exited (exit status 2; stderr: boom: cannot read the configuration file /etc/upstream.conf)"}},
		{"garbage at start", upstream("-garbage-start"), "",
			[]string{"did not start: it broke the protocol: it wrote text that is not JSON to stdout", `"Welcome to upstream v1.0!"`}},
		{"never answers", func() mcpbridge.Upstream {
			u := upstream("-hang-start")
			u.StartTimeout = 300e6
			return u
		}(), "", []string{"did not start: it did not answer the MCP initialize request within 300ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := mcpbridge.Connect(context.Background(), registry.New(), tt.scope, tt.u)
			require.Nil(t, b)
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestBridge_results(t *testing.T) {
	v := connect(t, upstream(), api.ModeNative, executor.NewConfig())
	tests := []struct {
		tool, args string
		wantValue  string // JSON
		wantText   string
		wantCode   api.Code
	}{
		// structuredContent is the value.
		{"up.echo", `{"text":"hi"}`, `{"text":"hi"}`, "{\n  \"text\": \"hi\"\n}", ""},
		// Text content only: the text, as a JSON string.
		{"up.upper", `{"text":"hi"}`, `"HI"`, "HI", ""},
		// Non-text content: a placeholder.
		{"up.pic", `{}`, `"a chart\n[image/png, 4 bytes]"`, "a chart\n[image/png, 4 bytes]", ""},
		// isError: the upstream's text is the message.
		{"up.err", `{}`, "", "disk on fire", api.CodeToolFailed},
		// The executor validates against the upstream's schema first.
		{"up.echo", `{"text":5,"extra":true}`, "", "invalid arguments for up.echo", api.CodeInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			r := v.call(context.Background(), tt.tool, tt.args)
			if tt.wantCode != "" {
				require.NotNil(t, r.Err)
				require.Equal(t, tt.wantCode, r.Err.Code)
				require.Contains(t, r.Text, tt.wantText)
				return
			}
			require.Nil(t, r.Err, r.Text)
			require.JSONEq(t, tt.wantValue, string(r.Value))
			require.Equal(t, tt.wantText, r.Text)
		})
	}
	// Validation stopped the last call before the upstream saw it: echo
	// and upper ran once each.
	require.Equal(t, 2, v.stat(t, "calls"))
}

func TestBridge_rawArgumentsReachUpstream(t *testing.T) {
	v := connect(t, upstream(), api.ModeNative, executor.NewConfig())
	got := v.ok(t, "up.echo", `{"text":"ünïcödé \"quoted\" \u0001"}`)
	var m map[string]string
	require.NoError(t, json.Unmarshal(got, &m))
	require.Equal(t, "ünïcödé \"quoted\" \u0001", m["text"])
}
