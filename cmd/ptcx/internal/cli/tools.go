package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/ptcx/ptcx/internal/text"
)

var toolsCommand = command{
	name:    "tools",
	brief:   "list the tools visible in a scope, with its mode",
	summary: "List the tools visible in a scope, with the scope's mode and each tool's scheduling class.",
	usage:   "tools [--tools FILE] [--mode native|ptc|both] [--scope NAME] [--json]",
	run:     runTools,
}

type toolRow struct {
	Name        string `json:"name"`
	Class       string `json:"class"`
	Timeout     string `json:"timeout,omitempty"`
	Description string `json:"description"`
}

func runTools(ctx context.Context, c command, s *stdio, args []string) int {
	var st setup
	fs := newFlags(c, s)
	st.flags(fs, true)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	e, status, ok := st.buildNoArgs(ctx, fs, s, args)
	if !ok {
		return status
	}
	defer e.close()
	mode, err := e.reg.Mode(e.scope)
	if err != nil {
		return fail(s, err)
	}
	schemas, err := e.reg.Schemas(e.scope)
	if err != nil {
		return fail(s, err)
	}
	rows := make([]toolRow, 0, len(schemas))
	for _, sc := range schemas {
		r := toolRow{Name: sc.Name, Class: "exclusive", Description: firstLine(sc.Description)}
		if sc.ConcurrencySafe {
			r.Class = "concurrent"
		}
		if sc.Timeout > 0 {
			r.Timeout = sc.Timeout.String()
		}
		rows = append(rows, r)
	}
	if *asJSON {
		if err := writeJSON(s, map[string]any{"scope": e.scope, "mode": mode, "tools": rows}, true); err != nil {
			return fail(s, err)
		}
		return exitOK
	}
	fmt.Fprintf(s.out, "scope %s, mode %s\n", e.scope, mode)
	if len(rows) == 0 {
		fmt.Fprintln(s.out, "no tools")
		return exitOK
	}
	tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCLASS\tTIMEOUT\tDESCRIPTION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Class, orDash(r.Timeout), r.Description)
	}
	tw.Flush()
	return exitOK
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = text.Truncate(s, 77) + "..."
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
