package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ptcx/ptcx/api"
)

// CPythonNative is ImplCPythonNative: CPython built natively, a new
// process per run, as Monty measures a subprocess sandbox: `python3 -I -S
// -c PROGRAM`, the program's last line, its final expression, printed
// (`print(1 + 1)`), and the last line of its standard output compared with
// the answer as print writes it (pythonStr). The executable is the one
// python3 resolves to (sys.executable, asked once), so that a launcher in
// front of it (a pyenv shim, a shell script) is not timed with it; -I
// (isolated: no environment variables, no user site) and -S (no site
// module) make its figure CPython's own start and the program's, not what
// the machine's site-packages do at start-up (a .pth file that imports a
// package costs a start hundreds of milliseconds on a loaded 2-core
// machine): the fastest start this CPython has, the strictest peer. It
// measures python_1plus1 and python_session_feeds (measureAfresh: a process
// per feed, re-running the feeds so far). Measure is not safe for
// concurrent use.
type CPythonNative struct {
	exe, version string
	warmed       map[string]bool
}

// NewCPythonNative returns the peer running the CPython that python
// names (a path, or a name looked up on PATH; "" is python3); Missing
// when there is none or it cannot say what it is.
func NewCPythonNative(ctx context.Context, python string) Impl {
	if python == "" {
		python = "python3"
	}
	path, err := exec.LookPath(python)
	if err != nil {
		return Missing(ImplCPythonNative, fmt.Sprintf("no %s: %v (make bench installs Debian's python3 when it is missing)", python, err))
	}
	out, err := output(ctx, processTimeout, ImplCPythonNative, path, "-I", "-S", "-c", "import sys; print(sys.executable); print(sys.version.split()[0])")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 2 || lines[0] == "" {
		return Missing(ImplCPythonNative, fmt.Sprintf("%s did not say its executable and version (%v): %q", path, err, out))
	}
	return &CPythonNative{exe: lines[0], version: lines[1], warmed: map[string]bool{}}
}

// Name is ImplCPythonNative.
func (c *CPythonNative) Name() string { return ImplCPythonNative }

// Version is the CPython version it runs (3.11.2).
func (c *CPythonNative) Version() string { return c.version }

// RunsLanguage is nil for Python only.
func (c *CPythonNative) RunsLanguage(lang api.Language) error {
	if lang.Canonical() != api.LanguagePython {
		return fmt.Errorf("%s runs Python programs only", ImplCPythonNative)
	}
	return nil
}

// Measure runs a Python Latency or Session job.
func (c *CPythonNative) Measure(ctx context.Context, j Job) (Raw, error) {
	raw, err := measureAfresh(ctx, ImplCPythonNative, j, c.run, c.warmed)
	raw.Note = fmt.Sprintf("CPython %s (%s), native, `python3 -I -S -c` in a new process per run", c.version, c.exe)
	return raw, err
}

// run is one process of p, the value of its last line printed and checked.
func (c *CPythonNative) run(ctx context.Context, p Program) error {
	want, err := pythonStr(p.Answer)
	if err != nil {
		return fmt.Errorf("bench: %s: the answer of %q: %w", ImplCPythonNative, p.Python, err)
	}
	out, err := output(ctx, processTimeout, ImplCPythonNative, c.exe, "-I", "-S", "-c", printLast(p.Python))
	if err != nil {
		return err
	}
	text := strings.TrimSuffix(string(out), "\n")
	if got := text[strings.LastIndexByte(text, '\n')+1:]; got != want {
		return fmt.Errorf("wrong answer: %s printed %q, want %q (program %q)", ImplCPythonNative, got, want, p.Python)
	}
	return nil
}

// printLast is src with its last line, its final expression, printed.
func printLast(src string) string {
	i := strings.LastIndexByte(src, '\n') + 1
	return src[:i] + "print(" + src[i:] + ")"
}

// pythonStr is what Python's print writes for the value of the JSON text
// answer: a string as it is, anything else as repr writes it (None, True,
// 'a', [1, 2], {'k': 7.0}; a number as the answer writes it, so an answer
// is to write its floats as Python does, 7.0 and not 7).
func pythonStr(answer string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(answer))
	dec.UseNumber()
	var b strings.Builder
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	if s, ok := tok.(string); ok {
		b.WriteString(s)
	} else if err := pythonRepr(&b, dec, tok); err != nil {
		return "", err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("%q is not one JSON value", answer)
	}
	return b.String(), nil
}

// pythonRepr writes repr of the JSON value that starts with tok.
func pythonRepr(b *strings.Builder, dec *json.Decoder, tok json.Token) error {
	switch v := tok.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		b.WriteString(map[bool]string{true: "True", false: "False"}[v])
	case json.Number:
		b.WriteString(v.String())
	case string:
		b.WriteString(pythonStrRepr(v))
	case json.Delim:
		end, sep := "]", ", "
		if v == '{' {
			end = "}"
		}
		b.WriteString(string(v))
		for n := 0; dec.More(); n++ {
			if n > 0 {
				b.WriteString(sep)
			}
			t, err := dec.Token()
			if err != nil {
				return err
			}
			if v == '{' {
				b.WriteString(pythonStrRepr(t.(string)) + ": ")
				if t, err = dec.Token(); err != nil {
					return err
				}
			}
			if err := pythonRepr(b, dec, t); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		b.WriteString(end)
	}
	return nil
}

// pythonStrRepr is repr of the str s: in single quotes unless s holds one
// and no double quote, backslashes, the quote and control characters
// escaped.
func pythonStrRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < utf8.RuneSelf && (r < 0x20 || r == 0x7f), r >= utf8.RuneSelf && r <= 0xff && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r) && r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
