package meter

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/ptcx/ptcx/guest"
)

// fuzzBulkBytes derives Options.BulkBytes from a byte of the fuzzer's
// input: 1<<b for b < 32 (1 is refused), 0 for 32 <= b < 38 and else a
// number that is not a power of two.
func fuzzBulkBytes(b uint8) uint32 {
	switch b %= 40; {
	case b < 32:
		return 1 << b
	case b < 38:
		return 0
	}
	return uint32(b)*1000 + 1
}

// FuzzInstrument checks that no input makes Instrument panic or modify its
// input, that every error says "meter: ", and that every output is the input
// with exactly the expected changes, is refused as already metered, and
// validates in wazero whenever the input does (for small inputs).
func FuzzInstrument(f *testing.F) {
	f.Add(guest.Wasm(), uint32(10000), uint8(12))
	f.Add(guest.Wasm(), uint32(10000), uint8(32))
	f.Add(loopModule(), uint32(1), uint8(32))
	f.Add(tightLoop(), uint32(3), uint8(1))
	f.Add(mod(), uint32(1), uint8(0))
	f.Add(bulkModule("fill"), uint32(10), uint8(4))
	f.Add(bulkModule("copy"), uint32(1), uint8(31))
	f.Add(bulkModule("init"), uint32(7), uint8(2))
	f.Add(chargeThenLoop(), uint32(1000), uint8(39))
	f.Add(manyLocals(2, 1000), uint32(5), uint8(3))
	f.Add(everySection(), uint32(7), uint8(5))
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	f.Fuzz(func(t *testing.T, wasm []byte, interval uint32, bulk uint8) {
		in := bytes.Clone(wasm)
		opt := Options{Module: "ptcx", Name: "poll", Interval: interval, BulkBytes: fuzzBulkBytes(bulk)}
		out, st, err := instrument(wasm, opt)
		if !bytes.Equal(in, wasm) {
			t.Fatal("the input was modified")
		}
		if err != nil {
			if out != nil {
				t.Fatal("output with an error")
			}
			if !strings.HasPrefix(err.Error(), "meter: ") {
				t.Fatalf("error without the prefix: %v", err)
			}
			return
		}
		if b := opt.BulkBytes; b == 1 || b&(b-1) != 0 {
			t.Fatalf("BulkBytes %d accepted", b)
		}
		// checkGrowth strips what it expects was inserted: it cannot if
		// the input holds the same bytes.
		chargeCore := cat(i32ShrU, i32Sub, globalSet(st.global), globalGet(st.global), i32Const(0), i32LeS)
		if !bytes.Contains(wasm, expectedCheck(st.global, st.poll, interval, opt.BulkBytes != 0)) &&
			!bytes.Contains(wasm, chargeCore) {
			checkGrowth(t, wasm, out, st, opt)
		}
		m, err := decodeModule(out, "ptcx", "poll")
		if err != nil {
			t.Fatalf("the output does not decode: %v", err)
		}
		if !m.metered || len(m.loops) != st.loops {
			t.Fatalf("output: metered %v, %d loops; want true, %d", m.metered, len(m.loops), st.loops)
		}
		if opt.BulkBytes != 0 && len(m.bulk) != st.bulk() {
			t.Fatalf("output: %d bulk-memory instructions, %d charged", len(m.bulk), st.bulk())
		}
		inWrites, err1 := WritesTables(wasm, opt)
		outWrites, err2 := WritesTables(out, opt)
		if err1 != nil || err2 != nil || inWrites != outWrites {
			t.Fatalf("WritesTables: input %v (%v), output %v (%v): the instrumentation writes no table", inWrites, err1, outWrites, err2)
		}
		if _, err := Instrument(out, opt); err == nil ||
			!strings.Contains(err.Error(), "already metered") {
			t.Fatalf("instrumenting the output again: %v", err)
		}
		if len(wasm) > 1<<16 {
			return
		}
		if c, err := r.CompileModule(ctx, wasm); err == nil {
			_ = c.Close(ctx)
			c, err := r.CompileModule(ctx, out)
			if err != nil {
				t.Fatalf("the input validates, the output does not: %v", err)
			}
			_ = c.Close(ctx)
		}
	})
}
