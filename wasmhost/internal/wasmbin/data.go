package wasmbin

import (
	"bytes"
	"fmt"
)

// dataBlock is the granularity of the image's data segments: a host page.
const dataBlock = 4096

// WithData returns the module bin with active data segments added
// that write memory's non-zero blocks at their offsets, after its own
// segments (which variant emptied).
func WithData(bin, memory []byte) ([]byte, error) {
	if len(memory)%dataBlock != 0 {
		return nil, fmt.Errorf("%w: an image of %d bytes is not whole pages", ErrBadModule, len(memory))
	}
	layout, err := Parse(bin)
	if err != nil {
		return nil, err
	}
	var segs []byte
	var count uint32
	zero := make([]byte, dataBlock)
	nonZero := func(at int) bool { return !bytes.Equal(memory[at:at+dataBlock], zero) }
	for at := 0; at < len(memory); {
		if !nonZero(at) {
			at += dataBlock
			continue
		}
		end := at + dataBlock
		for end < len(memory) && nonZero(end) {
			end += dataBlock
		}
		segs = append(segs, 0, 0x41) // active, memory 0, at i32.const
		segs = appendS64(segs, int64(int32(uint32(at))))
		segs = append(segs, 0x0b)
		segs = appendU32(segs, uint32(end-at))
		segs = append(segs, memory[at:end]...)
		count++
		at = end
	}
	out := make([]byte, 0, len(bin)+len(segs)+16)
	out = append(out, bin[:8]...)
	found := false
	for _, sec := range layout.sections {
		content := bin[sec.start:sec.end]
		if sec.id == secData {
			found = true
			s := &wasmReader{b: content}
			n := s.u32()
			if s.err != nil {
				return nil, s.err
			}
			c := appendU32(nil, n+count)
			c = append(c, content[s.pos:]...)
			content = append(c, segs...)
		}
		out = append(out, sec.id)
		out = appendU32(out, uint32(len(content)))
		out = append(out, content...)
	}
	if !found {
		return nil, fmt.Errorf("%w: the module has no data section to hold the image", ErrBadModule)
	}
	return out, nil
}
