package meter

import (
	"strings"
	"testing"
)

// tableModule is a module importing ptcx.poll whose one function's body is
// code (not validated: WritesTables only decodes).
func tableModule(code ...[]byte) []byte {
	return mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(nil, nil))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1))),
		sec(10, vecOf(body(nil, code...))),
	)
}

func TestWritesTables_instructions(t *testing.T) {
	refNull := bs(0xd0, 0x70)
	cases := []struct {
		name string
		code []byte
		want bool
	}{
		{"no table instruction", cat(countLoop(0, 0)), false},
		{"table.get", cat(i32Const(0), bs(0x25, 0x00), drop), false},
		{"table.size", cat(bs(0xfc, 16, 0x00), drop), false},
		{"call_indirect", cat(i32Const(0), bs(0x11, 0x01, 0x00)), false},
		{"table.set", cat(i32Const(0), refNull, bs(0x26, 0x00)), true},
		{"table.set, a long index", cat(i32Const(0), refNull, bs(0x26, 0x80, 0x80, 0x00)), true},
		{"table.set in a loop", cat(loop(tEmpty), i32Const(0), refNull, bs(0x26, 0x00), end), true},
		{"table.init", cat(i32Const(0), i32Const(0), i32Const(0), bs(0xfc, 12, 0x00, 0x00)), true},
		{"elem.drop", bs(0xfc, 13, 0x00), true},
		{"table.copy", cat(i32Const(0), i32Const(0), i32Const(0), bs(0xfc, 14, 0x00, 0x00)), true},
		{"table.grow", cat(refNull, i32Const(1), bs(0xfc, 15, 0x00), drop), true},
		{"table.fill", cat(i32Const(0), refNull, i32Const(1), bs(0xfc, 17, 0x00)), true},
		{"memory.fill (not a table)", cat(i32Const(0), i32Const(0), i32Const(0), memoryFill()), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := WritesTables(tableModule(c.code), pollOpt)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("WritesTables = %v, want %v", got, c.want)
			}
		})
	}
}

func TestWritesTables_malformed(t *testing.T) {
	_, err := WritesTables(tableModule(bs(0x26)), pollOpt) // table.set without its index
	if err == nil || !strings.Contains(err.Error(), "meter:") {
		t.Fatalf("err = %v, want a decoding error", err)
	}
}

func TestWritesTables_metered(t *testing.T) {
	in := tableModule(countLoop(0, 0), i32Const(0), bs(0xd0, 0x70), bs(0x26, 0x00))
	out, _ := meter(t, in, 100)
	for _, wasm := range [][]byte{in, out} {
		got, err := WritesTables(wasm, pollOpt)
		if err != nil || !got {
			t.Fatalf("WritesTables = %v, %v; want true: the instrumentation keeps the table.set", got, err)
		}
	}
}
