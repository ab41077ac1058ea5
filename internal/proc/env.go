package proc

import (
	"os"
	"slices"
	"strings"
)

// defaultPath is PATH when ptcx has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// Env is an environment for a tool's process, built from an allowlist so
// that no host token, key or credential reaches the process unless named.
// The zero value is empty; BaseEnv is where tools start.
type Env struct{ vars []string } // "K=V", one per name

// BaseEnv is the allowlist every tool's process starts from: PATH (or
// /usr/local/bin:/usr/bin:/bin), LANG (or C.UTF-8), TERM=dumb, and LC_ALL
// and TZ when ptcx has them. Nothing else of ptcx's environment is passed.
func BaseEnv() Env {
	var e Env
	e.Set("PATH", getenvOr("PATH", defaultPath))
	e.Set("LANG", getenvOr("LANG", "C.UTF-8"))
	e.Set("TERM", "dumb")
	e.Pass("LC_ALL", "TZ")
	return e
}

// Set sets name to value, replacing an earlier value.
func (e *Env) Set(name, value string) {
	e.vars = slices.DeleteFunc(e.vars, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	e.vars = append(e.vars, name+"="+value)
}

// Pass copies each named variable that ptcx has from its own environment,
// replacing an earlier value.
func (e *Env) Pass(names ...string) {
	for _, name := range names {
		if v, ok := os.LookupEnv(name); ok {
			e.Set(name, v)
		}
	}
}

// Environ is the environment as exec.Cmd.Env wants it. It is never nil:
// a nil Env would make exec pass all of ptcx's environment.
func (e Env) Environ() []string { return append([]string{}, e.vars...) }

func getenvOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// ValidName reports whether name can be an environment variable's name in
// a tool's environment: letters, digits and underscores, not starting with
// a digit.
func ValidName(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
