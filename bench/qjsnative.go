package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// QJSNative is QuickJS-NG built natively from the guest's qjs-src
// (scripts/qjs-native.sh, make bench only), ImplQJSNativeSwitch or
// ImplQJSNativeGoto: the reference compute_loop is held to. Each job is
// one process of bench/native/qjsbench.c evaluating the program (a
// function body, called at once) a warm-up and then once per sample in
// one context, each timed around JS_Eval alone. It measures compute_loop
// only; every other workload is unsupported.
type QJSNative struct {
	name, bin string
}

// NewQJSNative returns the native peer name whose qjsbench binary is
// name under dir; Missing when it is not there.
func NewQJSNative(name, dir string) Impl {
	if name != ImplQJSNativeSwitch && name != ImplQJSNativeGoto {
		return Missing(name, fmt.Sprintf("no native peer %q: want %s or %s", name, ImplQJSNativeSwitch, ImplQJSNativeGoto))
	}
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err != nil {
		return Missing(name, fmt.Sprintf("no %s: scripts/qjs-native.sh builds it (make bench runs it)", bin))
	}
	return &QJSNative{name: name, bin: bin}
}

// Name is ImplQJSNativeSwitch or ImplQJSNativeGoto.
func (q *QJSNative) Name() string { return q.name }

// Measure runs a compute_loop job.
func (q *QJSNative) Measure(ctx context.Context, j Job) (Raw, error) {
	if j.Workload != "compute_loop" {
		return Raw{}, fmt.Errorf("%w: %s is the native reference of compute_loop only", ErrUnsupported, q.name)
	}
	p := j.Warmup()
	dir, err := os.MkdirTemp("", "ptcx-bench-qjs-")
	if err != nil {
		return Raw{}, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "program.js")
	if err := os.WriteFile(file, []byte("(function () {\n"+p.JS+"\n})()"), 0o600); err != nil {
		return Raw{}, err
	}
	out, err := output(ctx, DefaultNodeTimeout, q.name, q.bin, file, strconv.Itoa(j.Samples+1))
	if err != nil {
		return Raw{}, err
	}
	raw := Raw{Note: "QuickJS-NG built natively (-O3) from the guest's qjs-src, timed around JS_Eval in one context"}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i := 0; sc.Scan(); i++ {
		ns, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			return Raw{}, fmt.Errorf("%s: a line %q, not \"NS JSON\"", q.name, sc.Text())
		}
		t, err := strconv.ParseFloat(ns, 64)
		if err != nil {
			return Raw{}, fmt.Errorf("%s: %w", q.name, err)
		}
		if err := CheckAnswer(p, []byte(value)); err != nil {
			return Raw{}, fmt.Errorf("%s: %w", q.name, err)
		}
		if i > 0 { // the first is the warm-up
			raw.Samples = append(raw.Samples, t)
		}
	}
	if len(raw.Samples) != j.Samples {
		return Raw{}, fmt.Errorf("%s: %d samples, want %d", q.name, len(raw.Samples), j.Samples)
	}
	return raw, nil
}
