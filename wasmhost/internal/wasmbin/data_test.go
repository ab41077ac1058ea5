package wasmbin

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWithData_holdsTheNonZeroBlocks(t *testing.T) {
	memory := make([]byte, 65536)
	memory[5] = 1             // block 0
	memory[2*dataBlock+7] = 2 // block 2
	memory[3*dataBlock] = 3   // block 3, joined with block 2
	bin := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1 page
		0x0b, 0x01, 0x00, // data: no segments
	}
	out, err := WithData(bin, memory)
	require.NoError(t, err)
	layout, err := Parse(out)
	require.NoError(t, err)
	var data []byte
	for _, s := range layout.sections {
		if s.id == secData {
			data = out[s.start:s.end]
		}
	}
	want := []byte{2} // two segments: [0, 4096) and [8192, 16384)
	want = append(append(want, 0, 0x41, 0, 0x0b, 0x80, 0x20), memory[:dataBlock]...)
	want = append(append(want, 0, 0x41, 0x80, 0xc0, 0, 0x0b, 0x80, 0x40), memory[2*dataBlock:4*dataBlock]...)
	require.Equal(t, want, data)

	_, err = WithData(bin, memory[:100])
	require.ErrorIs(t, err, ErrBadModule, "an image of part of a page")
	_, err = WithData(bin[:13], memory)
	require.ErrorIs(t, err, ErrBadModule, "a module without a data section")
}
