package mcpbridge

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/registry"
)

// maxPrefix is the longest prefix, leaving room for the tool's own name in
// the registry's 64 characters.
const maxPrefix = 32

var validPrefix = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,31}$`)

// launchers run the program named by their first argument that is not a
// flag (nor one of launcherVerbs); the bridge names an upstream after that
// program instead, and never after the launcher.
var launchers = map[string]bool{
	"npx": true, "pnpx": true, "bunx": true, "uvx": true, "pipx": true,
	"node": true, "deno": true, "bun": true, "tsx": true, "ts-node": true,
	"python": true, "python3": true, "uv": true,
	"npm": true, "pnpm": true, "yarn": true, "docker": true, "podman": true,
}

// launcherVerbs are the subcommands of launchers that run a program
// ("uv run server.py", "docker run -i image").
var launcherVerbs = map[string]bool{"run": true, "x": true, "exec": true, "dlx": true, "tool": true}

// generic are names that say nothing about a server: a script's usual file
// and directory names, and npm's names for "the MCP server of this scope".
// The bridge looks past them to the directory or scope that holds them.
var generic = map[string]bool{
	"index": true, "main": true, "server": true, "cli": true, "app": true, "start": true,
	"__main__": true, "__init__": true, "mcp": true, "mcp-server": true, "mcp_server": true,
	"dist": true, "build": true, "src": true, "lib": true, "bin": true, "out": true, ".": true, "..": true,
}

// derivePrefix names an upstream after its command: the program it runs
// (argv[0], or for a launcher such as npx, node or python its first
// argument that is neither a flag, a launcher verb such as "run", nor a
// NAME=VALUE setting), by the last part of its path that is not generic
// ("node /opt/github/dist/index.js" → "github", "npx @playwright/mcp" →
// "playwright", "npx -y @modelcontextprotocol/server-filesystem /tmp" →
// "server-filesystem"), without an extension or a version. Characters a
// tool name cannot hold become "_"; when nothing is left, it is "mcp".
func derivePrefix(argv []string) string {
	target := argv[0]
	if launchers[stem(argv[0])] {
		target = ""
		for _, a := range argv[1:] {
			if !strings.HasPrefix(a, "-") && !launcherVerbs[a] && !strings.Contains(a, "=") {
				target = a
				break
			}
		}
	}
	p := sanitize(meaningful(target))
	if p == "" || launchers[p] {
		return "mcp"
	}
	if c := p[0]; !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
		p = "_" + p
	}
	return text.Truncate(p, maxPrefix)
}

// meaningful is the last part of a program's path (or npm package name)
// that is not generic, stemmed; "" when there is none.
func meaningful(target string) string {
	parts := strings.Split(filepath.ToSlash(target), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		name := strings.TrimPrefix(stem(parts[i]), "@")
		if name != "" && !generic[strings.ToLower(name)] && !launchers[name] {
			return name
		}
	}
	return ""
}

// stem is a command's base name without a version ("pkg@1.2") or a script
// extension.
func stem(s string) string {
	s = filepath.Base(filepath.ToSlash(s))
	if s == "/" || s == "." {
		return ""
	}
	if i := strings.LastIndex(s, "@"); i > 0 {
		s = s[:i]
	}
	for _, ext := range []string{".exe", ".js", ".mjs", ".cjs", ".ts", ".py"} {
		s = strings.TrimSuffix(s, ext)
	}
	return s
}

// sanitize replaces every character a tool name cannot hold with "_".
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '_' || r == '.' || r == '-',
			r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// naming is the outcome of assigning registry names to upstream tools.
type naming struct {
	names    map[string]string // upstream name → registry name
	warnings []string
}

// assignNames gives each upstream tool the registry name
// "<prefix>.<tool>", deterministically whatever order the upstream lists
// them in. A name that is already valid and fits is kept; the others are
// sanitised (invalid characters → "_", cut to 64 characters) in sorted
// order and, if that collides with a name already given, suffixed "_2",
// "_3", .... Each changed name is reported; a tool without a name, or listed
// twice, is skipped with a warning.
func assignNames(label, prefix string, upstream []string) naming {
	n := naming{names: map[string]string{}}
	taken := map[string]bool{}
	sorted := slices.Clone(upstream)
	slices.Sort(sorted)
	var changed []string
	for i, name := range sorted {
		switch {
		case name == "":
			n.warnings = append(n.warnings, fmt.Sprintf("%s: a tool without a name was skipped", label))
		case i > 0 && sorted[i-1] == name:
			n.warnings = append(n.warnings, fmt.Sprintf("%s: tool %q is listed twice; only the first is used", label, name))
		case registry.ValidName(prefix + "." + name):
			n.names[name] = prefix + "." + name
			taken[prefix+"."+name] = true
		default:
			changed = append(changed, name)
		}
	}
	for _, name := range changed {
		base := text.Truncate(prefix+"."+sanitize(name), 64)
		got := base
		for k := 2; taken[got]; k++ {
			suffix := "_" + strconv.Itoa(k)
			got = text.Truncate(base, 64-len(suffix)) + suffix
		}
		taken[got] = true
		n.names[name] = got
		n.warnings = append(n.warnings, fmt.Sprintf("%s: tool %q is registered as %q (a ptcx tool name matches %s and has at most 64 characters)",
			label, name, got, `^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`))
	}
	return n
}
