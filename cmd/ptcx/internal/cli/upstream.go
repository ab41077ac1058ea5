package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ptcx/ptcx/mcpbridge"
	"github.com/ptcx/ptcx/registry"
)

// upstreamName is the NAME of --upstream NAME=COMMAND: a word before the
// first "=" that could be a prefix (mcpbridge checks it fully).
var upstreamName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$`)

// parseUpstreams reads the --upstream flags: "[NAME=]COMMAND", the command
// shell-quoted.
func (s *setup) parseUpstreams() ([]mcpbridge.Upstream, error) {
	var out []mcpbridge.Upstream
	for _, flag := range s.upstreams {
		u := mcpbridge.Upstream{Timeout: s.upstreamTimeout, StartTimeout: s.upstreamTimeout}
		line := strings.TrimSpace(flag)
		if m := upstreamName.FindStringSubmatch(line); m != nil {
			u.Prefix, line = m[1], m[2]
		}
		argv, err := splitCommand(line)
		if err != nil {
			return nil, usage{fmt.Errorf("--upstream %q: %v", flag, err)}
		}
		u.Command = argv
		out = append(out, u)
	}
	for _, name := range s.upstreamTrust {
		found := false
		for i := range out {
			if out[i].Name() == name {
				out[i].Trusted, found = true, true
			}
		}
		if !found {
			var names []string
			for _, u := range out {
				names = append(names, u.Name())
			}
			return nil, usage{fmt.Errorf("--upstream-trust %q: no --upstream has that name (they are: %s)", name, strings.Join(names, ", "))}
		}
	}
	if s.upstreamTimeout < 0 {
		return nil, usage{fmt.Errorf("--upstream-timeout %v: want a positive duration", s.upstreamTimeout)}
	}
	return out, nil
}

// connectUpstreams bridges each upstream into the deployment scope, says on
// the log which prefix its tools got, and closes it with e.
func (s *setup) connectUpstreams(ctx context.Context, e *env, ups []mcpbridge.Upstream) error {
	for _, u := range ups {
		cmd := strings.Join(u.Command, " ")
		label := fmt.Sprintf("upstream %q", u.Prefix)
		if u.Prefix == "" {
			label = "upstream " + cmd
		}
		u.OnToolsChanged = func(ch mcpbridge.ToolsChange) { s.toolsChanged(label, ch) }
		b, err := mcpbridge.Connect(ctx, e.reg, registry.Deployment, u)
		if err != nil {
			if strings.Contains(err.Error(), "give this upstream another prefix") {
				return fmt.Errorf("--upstream %s: %w (with --upstream NAME=COMMAND)", cmd, err)
			}
			return fmt.Errorf("--upstream %s: %w", cmd, err)
		}
		e.cleanup = append(e.cleanup, func() { _ = b.Close() })
		e.bridges = append(e.bridges, b)
		for _, w := range b.Warnings() {
			fmt.Fprintf(s.log, "ptcx: %s\n", w) // each names its upstream
		}
		fmt.Fprintf(s.log, "ptcx: upstream %q: bridged %d tools as %s.<tool> (%s)\n", b.Prefix(), len(b.Tools()), b.Prefix(), cmd)
	}
	return nil
}

// toolsChanged reports a refresh after an upstream changed its tool list.
func (s *setup) toolsChanged(label string, ch mcpbridge.ToolsChange) {
	if ch.Err != nil {
		fmt.Fprintf(s.log, "ptcx: %v\n", ch.Err) // it names its upstream
		return
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", ch.Added}, {"restored", ch.Restored}, {"removed", ch.Removed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	if len(parts) == 0 {
		parts = []string{"no change"}
	}
	fmt.Fprintf(s.log, "ptcx: %s changed its tool list: %s\n", label, strings.Join(parts, "; "))
	for _, w := range ch.Warnings {
		fmt.Fprintf(s.log, "ptcx: %s\n", w)
	}
	if h := s.toolsChangedHook.Load(); h != nil && len(ch.Added)+len(ch.Restored)+len(ch.Removed) > 0 {
		(*h)()
	}
}
