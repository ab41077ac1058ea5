package wasmbin

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// tinyModule is a module with one memory (min 1, max 4), an exported
// mutable i32 global initialised to 7, an immutable one, and an active and
// a passive data segment.
func tinyModule() []byte {
	b := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	sec := func(id byte, content ...byte) {
		b = append(b, id)
		b = appendU32(b, uint32(len(content)))
		b = append(b, content...)
	}
	sec(secMemory, 1, 1, 1, 4)
	sec(secGlobal, 2, valI32, 1, 0x41, 7, 0x0b, valI64, 0, 0x42, 3, 0x0b)
	sec(secExport, 1, 2, 's', 'p', 3, 0)
	sec(secData, 2,
		0, 0x41, 16, 0x0b, 3, 'a', 'b', 'c', // active at 16
		1, 2, 'x', 'y') // passive
	return b
}

func TestParseModule_tiny(t *testing.T) {
	m, err := Parse(tinyModule())
	require.NoError(t, err)
	require.Equal(t, []Global{{Index: 0, valType: valI32, Export: "sp"}}, m.Mutable)
	require.Equal(t, uint32(2), m.Globals)
	require.Equal(t, uint32(1), m.memMin)
	require.True(t, m.hasMemMax)
	require.Equal(t, uint32(4), m.memMax)
}

func TestModuleLayout_variant_rewritesMemoryGlobalsAndData(t *testing.T) {
	m, err := Parse(tinyModule())
	require.NoError(t, err)
	bin, err := m.Variant(3, []uint64{0xfffffff0})
	require.NoError(t, err)
	v, err := Parse(bin)
	require.NoError(t, err)
	require.Equal(t, uint32(3), v.memMin)
	require.Equal(t, uint32(4), v.memMax)
	require.Equal(t, m.Mutable, v.Mutable)
	var data, globals []byte
	for _, s := range v.sections {
		switch s.id {
		case secData:
			data = bin[s.start:s.end]
		case secGlobal:
			globals = bin[s.start:s.end]
		}
	}
	// Same count; the active segment keeps its offset and loses its bytes;
	// the passive one is kept.
	require.Equal(t, []byte{2, 0, 0x41, 16, 0x0b, 0, 1, 2, 'x', 'y'}, data)
	// -16 as a signed LEB128, then the immutable global unchanged.
	require.Equal(t, []byte{2, valI32, 1, 0x41, 0x70, 0x0b, valI64, 0, 0x42, 3, 0x0b}, globals)
}

func TestModuleLayout_variant_refusals(t *testing.T) {
	m, err := Parse(tinyModule())
	require.NoError(t, err)
	_, err = m.Variant(4, []uint64{1}) // at the maximum
	require.NoError(t, err)
	_, err = m.Variant(5, []uint64{1})
	require.ErrorIs(t, err, ErrBadModule)
	require.ErrorContains(t, err, "past the memory's maximum of 4")
	_, err = m.Variant(1, nil)
	require.ErrorContains(t, err, "0 global values for 1 mutable globals")
}

func TestParseModule_malformed(t *testing.T) {
	good := tinyModule()
	tests := []struct {
		name string
		bin  []byte
		want string
	}{
		{"empty", nil, "not a wasm binary"},
		{"wrong version", []byte{0, 'a', 's', 'm', 2, 0, 0, 0}, "not a wasm binary"},
		{"truncated", good[:len(good)-3], "bytes past the end"},
		{"no memory", good[:8], "defines no memory"},
		{"long integer", append(append([]byte{}, good[:8]...), 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), "integer too long"},
		{"two memories", append(append([]byte{}, good[:8]...), secMemory, 5, 2, 0, 1, 0, 1), "2 memories"},
		{"shared memory", append(append([]byte{}, good[:8]...), secMemory, 4, 1, 3, 1, 1), "shared or 64-bit"},
		{"mutable f32", append(append([]byte{}, good[:8]...), secGlobal, 9, 1, 0x7d, 1, 0x43, 0, 0, 0, 0, 0x0b), "type 0x7d cannot be captured"},
		{"bad expression", append(append([]byte{}, good[:8]...), secGlobal, 5, 1, valI32, 0, 0x01, 0x0b), "opcode 0x01"},
		{"imported mutable global", append(append([]byte{}, good[:8]...), secImport, 8, 1, 1, 'm', 1, 'g', 3, valI32, 1), "state outside the instance"},
		{"trailing bytes", append(append([]byte{}, good[:8]...), secMemory, 4, 1, 0, 1, 9), "bytes past its content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.bin)
			require.ErrorIs(t, err, ErrBadModule)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// FuzzParseModule feeds the module reader arbitrary bytes: it returns an
// error or a layout, never panics, and a layout's variant reads back with
// the memory minimum it was given.
func FuzzParseModule(f *testing.F) {
	f.Add(tinyModule())
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, bin []byte) {
		m, err := Parse(bin)
		if err != nil {
			require.ErrorIs(t, err, ErrBadModule)
			return
		}
		pages := m.memMin
		globals := make([]uint64, len(m.Mutable))
		v, err := m.Variant(pages, globals)
		if err != nil {
			return
		}
		back, err := Parse(v)
		require.NoError(t, err)
		require.Equal(t, pages, back.memMin)
		require.Equal(t, len(m.Mutable), len(back.Mutable))
	})
}
