package workspace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/registry"
)

const (
	// maxLineText caps the text of one grep match, in runes.
	maxLineText = 300
	// grepLineBytes is how much of one line grep searches; a longer line is
	// searched in its first 64 KiB.
	grepLineBytes = 64 << 10
)

const grepInput = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Regular expression (Go RE2 syntax: no lookaround or backreferences), matched against each line."},
    "path": {"type": "string", "description": "File or directory to search, relative to the workspace root (default \".\", the root)."},
    "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.go\" (matched against file names at any depth) or \"src/**/*.ts\" (matched against paths relative to path)."},
    "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

const grepOutput = `{
  "type": "object",
  "properties": {
    "matches": {
      "type": "array",
      "description": "Matching lines, sorted by path then line.",
      "items": {
        "type": "object",
        "properties": {
          "path": {"type": "string", "description": "File, relative to the workspace root."},
          "line": {"type": "integer", "description": "Line number, 1-based."},
          "text": {"type": "string", "description": "The line, without its line ending; cut with \"…\" when long."}
        },
        "required": ["path", "line", "text"],
        "additionalProperties": false
      }
    },
    "truncated": {"type": "boolean", "description": "True when there were more matches than the cap."},
    "files_searched": {"type": "integer", "description": "Text files searched (binary files are skipped)."}
  },
  "required": ["matches", "truncated", "files_searched"],
  "additionalProperties": false
}`

type grepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Glob            string `json:"glob"`
	CaseInsensitive bool   `json:"case_insensitive"`
}

type grepMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

type grepResult struct {
	Matches       []grepMatch `json:"matches"`
	Truncated     bool        `json:"truncated"`
	FilesSearched int         `json:"files_searched"`
}

func (w *Workspace) grepTool() registry.Tool {
	return registry.Tool{
		Name: "grep",
		Description: fmt.Sprintf("Search the text files of the workspace for a regular expression (Go RE2 syntax). Returns matching "+
			"lines as {path, line, text}, at most %d, each cut to %d characters; a line is searched in its first %s (less for a pattern of more than %d instructions). Binary files and hard-linked files are skipped; symbolic links to "+
			"directories are not followed. The pattern may be at most %s and %d instructions with its repetitions expanded; a search reads at most %d directory entries.",
			w.opts.MaxMatches, maxLineText, size(grepLineBytes), maxMatchWork/grepLineBytes, size(maxPatternBytes), maxRegexpSize, maxScanEntries),
		InputSchema:     json.RawMessage(grepInput),
		OutputSchema:    json.RawMessage(grepOutput),
		ConcurrencySafe: true,
		Body:            w.grep,
		Policy:          readPolicy(),
	}
}

// grep searches one file, or every text file under a directory, line by
// line.
func (w *Workspace) grep(ctx context.Context, in api.Input) (api.Output, error) {
	var a grepArgs
	if err := decode(in, &a); err != nil {
		return api.Output{}, err
	}
	if a.Pattern == "" {
		return api.Output{}, failf(nil, "pattern is empty: give a regular expression to search for")
	}
	re, progSize, err := compilePattern(a.Pattern, a.CaseInsensitive)
	if err != nil {
		return api.Output{}, err
	}
	var filter globPattern
	if a.Glob != "" {
		if filter, err = w.compileGlob(a.Glob); err != nil {
			return api.Output{}, err
		}
		if !strings.Contains(a.Glob, "/") {
			filter = append(globPattern{"**"}, filter...)
		}
	}
	if a.Path == "" {
		a.Path = "."
	}
	t, err := w.resolve(ctx, a.Path)
	if err != nil {
		return api.Output{}, err
	}
	fi, err := w.fsys.Stat(t.real)
	if err != nil {
		return api.Output{}, describe(t.name, err)
	}
	s := &searcher{re: re, window: matchWindow(progSize), max: w.opts.MaxMatches, res: grepResult{Matches: []grepMatch{}}}
	cut := ""
	if fi.IsDir() {
		cut, err = w.walk(ctx, t, filter, func(name, real string) bool {
			more, _ := s.file(ctx, w, name, real)
			return more
		})
	} else {
		_, err = s.file(ctx, w, t.name, t.real)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return api.Output{}, err
	}
	slices.SortStableFunc(s.res.Matches, func(a, b grepMatch) int { return strings.Compare(a.Path, b.Path) })
	s.res.Truncated = s.res.Truncated || cut != ""
	return output(s.res, grepText(s.res, a.Pattern, cut))
}

// searcher collects the matches of one grep call.
type searcher struct {
	re     *regexp.Regexp
	window int // bytes of each line searched: matchWindow
	max    int
	res    grepResult
}

// file searches one file, named name for the model and real in the root.
// It reports false when no more files should be searched. Errors are
// returned for the caller that searches this one file; a directory search
// skips files it cannot read.
func (s *searcher) file(ctx context.Context, w *Workspace, name, real string) (more bool, err error) {
	f, err := w.fsys.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return true, describe(name, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return true, failf(nil, "%q is not a regular file: grep searches text files", name)
	} else if err := w.checkLinks(name, fi); err != nil {
		return true, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	sample, err := sniff(br)
	if err != nil {
		return true, describe(name, err)
	}
	if looksBinary(sample) {
		return true, failf(ErrBinary, "file %q is binary (it contains NUL bytes or invalid UTF-8): grep searches text files only", name)
	}
	s.res.FilesSearched++
	lr := newLineReader(ctx, br)
	for n := 1; ; n++ {
		line, _, err := lr.next(s.window, 0)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return true, describe(name, err)
		}
		line = bytes.TrimRight(line, "\r\n")
		matched := s.re.Match(line)
		if err := ctx.Err(); err != nil { // a match can take a while: check after each
			return false, err
		}
		if !matched {
			continue
		}
		if len(s.res.Matches) == s.max {
			s.res.Truncated = true
			return false, nil
		}
		s.res.Matches = append(s.res.Matches, grepMatch{Path: name, Line: n, Text: text.ShortenRunes(string(line), maxLineText)})
	}
}

// grepText shows one match a line as "path:line: text".
func grepText(r grepResult, pattern, cut string) string {
	var b strings.Builder
	if len(r.Matches) == 0 {
		fmt.Fprintf(&b, "no matches for %q in %d text files\n", text.ShortenRunes(pattern, 80), r.FilesSearched)
	}
	for _, m := range r.Matches {
		fmt.Fprintf(&b, "%s:%d: %s\n", shown(m.Path), m.Line, m.Text)
	}
	switch {
	case cut != "":
		fmt.Fprintf(&b, "[%s: narrow the path or the glob]\n", cut)
	case r.Truncated:
		fmt.Fprintf(&b, "[truncated at %d matches: narrow the pattern, the path or the glob]\n", len(r.Matches))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
