package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/toolsfile"
)

// setup holds the flags every command shares and builds what they describe.
type setup struct {
	tools string
	mode  string
	scope string
}

func (s *setup) flags(fs *flag.FlagSet, withMode bool) {
	fs.StringVar(&s.tools, "tools", "", "a tools `FILE` (JSON) declaring command tools, modes and scopes")
	if withMode {
		fs.StringVar(&s.mode, "mode", "", "the deployment's `MODE`: native, ptc or both (default: the tools file's, else native)")
	}
	fs.StringVar(&s.scope, "scope", registry.Deployment, "the caller's `SCOPE`")
}

// env is what a command runs against.
type env struct {
	reg   *registry.Registry
	exec  *executor.Executor
	scope string
	close func()
}

// build loads the tools file, applies the mode and checks the scope.
func (s *setup) build(ctx context.Context) (*env, error) {
	var mode registry.Mode
	if s.mode != "" {
		m, err := registry.ParseMode(s.mode)
		if err != nil {
			return nil, usage{err}
		}
		mode = m
	}
	reg := registry.New()
	if s.tools != "" {
		f, err := toolsfile.Load(s.tools)
		if err != nil {
			return nil, err
		}
		if err := f.Apply(reg, mode); err != nil {
			return nil, err
		}
	} else if mode != "" {
		if err := reg.DeclareMode(registry.Deployment, mode); err != nil {
			return nil, err
		}
	}
	if _, err := reg.Mode(s.scope); err != nil {
		return nil, usage{fmt.Errorf("--scope: %w", err)}
	}
	ex, err := executor.New(reg, executor.NewConfig())
	if err != nil {
		return nil, err
	}
	return &env{reg: reg, exec: ex, scope: s.scope, close: func() {}}, nil
}

// usage marks an error as the command line's fault (exit status 2).
type usage struct{ err error }

func (u usage) Error() string { return u.err.Error() }
func (u usage) Unwrap() error { return u.err }
