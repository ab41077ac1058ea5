package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/trace"
	"github.com/ptcx/ptcx/wasmhost"
)

// evalFlags are the flags of evaluation harnesses: --seed and --trace.
type evalFlags struct {
	seed      *uint64
	tracePath string

	file   *os.File
	writer *trace.Writer
}

func (ef *evalFlags) register(fs *flag.FlagSet) {
	fs.Func("seed", "run every program in a deterministic world seeded with `N` (a uint64): Math.random, Date, performance.now and timer order repeat exactly", func(v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("want an unsigned 64-bit integer, got %q", v)
		}
		ef.seed = &n
		return nil
	})
	fs.StringVar(&ef.tracePath, "trace", "", "write one JSON line per run_code execution to `FILE` (docs/trace.md; replay it with ptcx replay)")
}

// world is the --seed world, or nil.
func (ef *evalFlags) world() *wasmhost.World {
	if ef.seed == nil {
		return nil
	}
	return &wasmhost.World{Seed: *ef.seed}
}

// open creates (or, with appending, extends) the trace file and makes st
// record into it and apply the seed. It returns a function that closes
// the file and reports a write error.
func (ef *evalFlags) open(st *setup, appending bool) (func() error, error) {
	if ef.tracePath != "" {
		flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if appending {
			flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		f, err := os.OpenFile(ef.tracePath, flags, 0o644)
		if err != nil {
			return nil, fmt.Errorf("--trace: %w", err)
		}
		ef.file, ef.writer = f, trace.NewWriter(f)
	}
	st.observe = func(reg *registry.Registry, cfg executor.Config) executor.Config {
		if w := ef.world(); w != nil {
			cfg = cfg.WithWorld(*w)
		}
		if ef.writer != nil {
			cfg = trace.NewRecorder(reg, func(r trace.Record) { _ = ef.writer.Write(r) }).Install(cfg)
		}
		return cfg
	}
	return ef.close, nil
}

func (ef *evalFlags) close() error {
	if ef.file == nil {
		return nil
	}
	err := ef.writer.Err()
	if cerr := ef.file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("--trace: %w", cerr)
	}
	ef.file = nil
	return err
}
