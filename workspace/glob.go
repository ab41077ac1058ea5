package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/ptcx/ptcx/registry"
)

const globInput = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Glob pattern relative to path, e.g. \"**/*.go\" or \"src/*.ts\": * ? and [a-z] match within one path segment, ** matches any number of directories."},
    "path": {"type": "string", "description": "Directory to search from, relative to the workspace root (default \".\", the root)."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

const globOutput = `{
  "type": "object",
  "properties": {
    "matches": {"type": "array", "items": {"type": "string"}, "description": "Matching files, relative to the workspace root, sorted."},
    "truncated": {"type": "boolean", "description": "True when more files matched than the cap."}
  },
  "required": ["matches", "truncated"],
  "additionalProperties": false
}`

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

type globResult struct {
	Matches   []string `json:"matches"`
	Truncated bool     `json:"truncated"`
}

func (w *Workspace) globTool() registry.Tool {
	return registry.Tool{
		Name: "glob",
		Description: fmt.Sprintf("Find files in the workspace by glob pattern, e.g. \"**/*.go\". Returns paths relative to the "+
			"workspace root, sorted, at most %d. Directories are not returned (use list); links to directories are not followed, links to files are returned when they stay inside the workspace.", w.opts.MaxMatches),
		InputSchema:     json.RawMessage(globInput),
		OutputSchema:    json.RawMessage(globOutput),
		ConcurrencySafe: true,
		Body:            w.glob,
	}
}

// glob returns the files under a directory whose path relative to it
// matches a pattern.
func (w *Workspace) glob(ctx context.Context, in registry.Input) (registry.Output, error) {
	var a globArgs
	if err := decode(in, &a); err != nil {
		return registry.Output{}, err
	}
	pat, err := w.compileGlob(a.Pattern)
	if err != nil {
		return registry.Output{}, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	t, err := w.resolve(a.Path)
	if err != nil {
		return registry.Output{}, err
	}
	res := globResult{Matches: []string{}}
	err = w.walk(ctx, t, pat, func(name, _ string) bool {
		if len(res.Matches) == w.opts.MaxMatches {
			res.Truncated = true
			return false
		}
		res.Matches = append(res.Matches, name)
		return true
	})
	if err != nil {
		return registry.Output{}, err
	}
	slices.Sort(res.Matches)
	text := strings.Join(res.Matches, "\n")
	switch {
	case len(res.Matches) == 0:
		text = fmt.Sprintf("no files match %q", a.Pattern)
	case res.Truncated:
		text += fmt.Sprintf("\n[truncated at %d matches: narrow the pattern or the path]", len(res.Matches))
	}
	return output(res, text)
}

// walk calls found, in walk order, for every file (not directory) under the
// directory t whose path relative to t matches pat (nil: every file), with
// its workspace-relative name and its resolved path in the root, until
// found returns false. Directory links are not entered; a link to a file is
// reported only when it resolves inside the workspace.
func (w *Workspace) walk(ctx context.Context, t target, pat globPattern, found func(name, real string) bool) error {
	fi, err := w.fsys.Stat(t.real)
	if err != nil {
		return describe(t.name, err)
	}
	if !fi.IsDir() {
		return failf(nil, "%q is a file, not a directory: give a directory to search", t.name)
	}
	err = fs.WalkDir(w.fsys.FS(), t.real, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if p == t.real {
				return describe(t.name, err)
			}
			return nil // an unreadable subdirectory is skipped
		}
		if p == t.real {
			return nil
		}
		rel := p
		if t.real != "." {
			rel = strings.TrimPrefix(p, t.real+"/")
		}
		full, deeper := true, true
		if pat != nil {
			full, deeper = pat.match(rel)
		}
		if d.IsDir() {
			if !deeper {
				return fs.SkipDir
			}
			return nil
		}
		if !full {
			return nil
		}
		real, ok := w.fileAt(p, d)
		if ok && !found(display(t.name, t.real, p), real) {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// fileAt returns where the entry d at p leads, if it is a file: p itself,
// or for a symbolic link its resolved target, when that stays inside the
// workspace and is not a directory.
func (w *Workspace) fileAt(p string, d fs.DirEntry) (string, bool) {
	if d.Type()&fs.ModeSymlink == 0 {
		return p, true
	}
	real, err := w.follow(p, p)
	if err != nil {
		return "", false
	}
	fi, err := w.fsys.Stat(real)
	return real, err == nil && !fi.IsDir()
}

// globPattern is a compiled glob: its "/"-separated segments. "**" matches
// any number of whole segments, zero included; any other segment is a
// path.Match pattern for exactly one segment.
type globPattern []string

// compileGlob checks and splits a pattern. A pattern is relative to the
// searched directory: it may be neither absolute nor contain "..".
func (w *Workspace) compileGlob(p string) (globPattern, error) {
	orig := p
	if strings.HasPrefix(p, "/") {
		rel, ok := w.inside(path.Clean(p))
		if !ok {
			return nil, failf(ErrEscapes, "pattern %q escapes the workspace: patterns are relative to the searched directory", orig)
		}
		return nil, failf(nil, "pattern %q is absolute: patterns are relative to the searched directory (the workspace root by default), e.g. %q", orig, rel)
	}
	var pat globPattern
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "" || seg == ".":
			continue
		case seg == "..":
			return nil, failf(ErrEscapes, "pattern %q escapes the workspace: \"..\" is not allowed in patterns; give path instead", orig)
		case seg == "**" && len(pat) > 0 && pat[len(pat)-1] == "**":
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return nil, failf(nil, "invalid glob pattern %q: segment %q is malformed (use * ? [a-z] within a segment, ** for any number of directories, \\ to escape)", orig, seg)
		}
		pat = append(pat, seg)
	}
	if len(pat) == 0 {
		return nil, failf(nil, "glob pattern %q is empty: give a pattern such as \"**/*.go\"", orig)
	}
	return pat, nil
}

// match reports whether rel (slash-separated) matches p completely (full),
// and whether a path below rel could still match (deeper: a directory worth
// entering). It tracks the set of pattern positions reachable so far, so it
// is linear in len(p) times the number of segments of rel.
func (p globPattern) match(rel string) (full, deeper bool) {
	states := make([]bool, len(p)+1)
	states[0] = true
	states = p.closure(states)
	for _, seg := range splitPath(rel) {
		next := make([]bool, len(p)+1)
		for i, on := range states[:len(p)] {
			switch {
			case !on:
			case p[i] == "**":
				next[i] = true
			default:
				if ok, _ := path.Match(p[i], seg); ok {
					next[i+1] = true
				}
			}
		}
		states = p.closure(next)
	}
	return states[len(p)], slices.Contains(states[:len(p)], true)
}

// closure adds the positions reachable by letting a "**" match nothing.
func (p globPattern) closure(states []bool) []bool {
	for i, seg := range p {
		if states[i] && seg == "**" {
			states[i+1] = true
		}
	}
	return states
}
