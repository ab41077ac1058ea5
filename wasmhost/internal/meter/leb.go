package meter

import "unicode/utf8"

// reader decodes the binary format from buf, keeping absolute offsets so that
// errors can say where the module is malformed. Every read checks bounds: a
// truncated or malformed input yields an error, never a panic.
type reader struct {
	buf []byte
	pos int // offset in buf of the next byte to read
	end int // offset in buf just past the readable region
}

// errorf returns an error saying the module is malformed at offset off.
func (r *reader) errorf(off int, format string, args ...any) error {
	return malformed(off, format, args...)
}

// byte reads one byte; what names it in the error.
func (r *reader) byte(what string) (byte, error) {
	if r.pos >= r.end {
		return 0, r.errorf(r.pos, "unexpected end reading %s", what)
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

// bytes returns the next n bytes, without copying.
func (r *reader) bytes(n uint32, what string) ([]byte, error) {
	if uint64(n) > uint64(r.end-r.pos) {
		return nil, r.errorf(r.pos, "%s of %d bytes runs past the end (%d bytes left)", what, n, r.end-r.pos)
	}
	b := r.buf[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, nil
}

// skip advances past n bytes.
func (r *reader) skip(n uint32, what string) error {
	_, err := r.bytes(n, what)
	return err
}

// u32 reads an unsigned LEB128 number of at most 32 bits (at most 5 bytes,
// unused bits of the last byte zero).
func (r *reader) u32(what string) (uint32, error) {
	start := r.pos
	var v uint32
	for i := 0; ; i++ {
		if r.pos >= r.end {
			return 0, r.errorf(start, "unexpected end reading %s", what)
		}
		b := r.buf[r.pos]
		r.pos++
		if i == 4 {
			if b&0xf0 != 0 {
				return 0, r.errorf(start, "%s: u32 LEB128 is too long or overflows", what)
			}
			return v | uint32(b)<<28, nil
		}
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v, nil
		}
	}
}

// signed reads a signed LEB128 number of at most bits bits (32, 33 or 64):
// at most ceil(bits/7) bytes, the unused bits of the last byte a sign
// extension of its last used bit.
func (r *reader) signed(bits int, what string) (int64, error) {
	start := r.pos
	maxBytes := (bits + 6) / 7
	var v int64
	for i := 0; ; i++ {
		if r.pos >= r.end {
			return 0, r.errorf(start, "unexpected end reading %s", what)
		}
		b := r.buf[r.pos]
		r.pos++
		shift := 7 * i
		if i == maxBytes-1 {
			if b&0x80 != 0 {
				return 0, r.errorf(start, "%s: s%d LEB128 is too long", what, bits)
			}
			// Bits of b at and above used are sign bits: all equal to bit used-1.
			used := bits - shift // value bits held by this byte, 1..7
			if used < 7 {
				sign := b >> (used - 1) & 0x7f
				if sign != 0 && sign != 0x7f>>(used-1) {
					return 0, r.errorf(start, "%s: s%d LEB128 overflows", what, bits)
				}
			}
		}
		v |= int64(b&0x7f) << shift
		if b&0x80 == 0 {
			if shift+7 < 64 && b&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			return v, nil
		}
	}
}

// name reads a name: a u32 length and that many bytes of UTF-8.
func (r *reader) name(what string) (string, error) {
	start := r.pos
	n, err := r.u32(what + " length")
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n, what)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", r.errorf(start, "%s is not valid UTF-8", what)
	}
	return string(b), nil
}

// appendU32 appends v as unsigned LEB128, in the shortest form.
func appendU32(dst []byte, v uint32) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// appendS32 appends v as signed LEB128, in the shortest form.
func appendS32(dst []byte, v int32) []byte {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(dst, b)
		}
		dst = append(dst, b|0x80)
	}
}

// sizeU32 is the length of the shortest unsigned LEB128 encoding of v.
func sizeU32(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
