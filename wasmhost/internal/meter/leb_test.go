package meter

import (
	"math"
	"strings"
	"testing"
)

func TestU32(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want uint32
		err  string
	}{
		{in: bs(0x00), want: 0},
		{in: bs(0x7f), want: 127},
		{in: bs(0x80, 0x01), want: 128},
		{in: bs(0x80, 0x00), want: 0}, // not minimal, but allowed
		{in: bs(0xe5, 0x8e, 0x26), want: 624485},
		{in: bs(0xff, 0xff, 0xff, 0xff, 0x0f), want: math.MaxUint32},
		{in: bs(0x80, 0x80, 0x80, 0x80, 0x00), want: 0},
		{in: bs(0xff, 0xff, 0xff, 0xff, 0x1f), err: "overflows"},
		{in: bs(0x80, 0x80, 0x80, 0x80, 0x80, 0x00), err: "too long"},
		{in: bs(0x80), err: "unexpected end"},
		{in: nil, err: "unexpected end"},
	} {
		r := &reader{buf: tc.in, end: len(tc.in)}
		got, err := r.u32("x")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("% x: got %d, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || r.pos != len(tc.in) {
			t.Errorf("% x: got %d, %v at %d; want %d", tc.in, got, err, r.pos, tc.want)
		}
	}
}

func TestSigned(t *testing.T) {
	for _, tc := range []struct {
		bits int
		in   []byte
		want int64
		err  string
	}{
		{32, bs(0x00), 0, ""},
		{32, bs(0x7f), -1, ""},
		{32, bs(0x3f), 63, ""},
		{32, bs(0x40), -64, ""},
		{32, bs(0xc0, 0x00), 64, ""},
		{32, bs(0x80, 0x7f), -128, ""},
		{32, bs(0xff, 0xff, 0xff, 0xff, 0x07), math.MaxInt32, ""},
		{32, bs(0x80, 0x80, 0x80, 0x80, 0x78), math.MinInt32, ""},
		{32, bs(0xff, 0xff, 0xff, 0xff, 0x7f), -1, ""}, // not minimal
		{32, bs(0xff, 0xff, 0xff, 0xff, 0x0f), 0, "overflows"},
		{32, bs(0x80, 0x80, 0x80, 0x80, 0x70), 0, "overflows"},
		{32, bs(0x80, 0x80, 0x80, 0x80, 0x80, 0x00), 0, "too long"},
		{33, bs(0xff, 0xff, 0xff, 0xff, 0x0f), math.MaxUint32, ""},
		{33, bs(0x80, 0x80, 0x80, 0x80, 0x70), -1 << 32, ""},
		{33, bs(0xff, 0xff, 0xff, 0xff, 0x1f), 0, "overflows"},
		{64, bs(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00), math.MaxInt64, ""},
		{64, bs(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f), math.MinInt64, ""},
		{64, bs(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 0, "overflows"},
		{64, bs(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), 0, "too long"},
		{64, bs(0x80, 0x80), 0, "unexpected end"},
	} {
		r := &reader{buf: tc.in, end: len(tc.in)}
		got, err := r.signed(tc.bits, "x")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("s%d % x: got %d, %v; want error %q", tc.bits, tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || r.pos != len(tc.in) {
			t.Errorf("s%d % x: got %d, %v at %d; want %d", tc.bits, tc.in, got, err, r.pos, tc.want)
		}
	}
}

// TestEncodeRoundTrip checks appendU32 and appendS32 against the tests'
// encoder and the package's decoder.
func TestEncodeRoundTrip(t *testing.T) {
	for _, v := range []uint32{0, 1, 63, 64, 127, 128, 16383, 16384, 1 << 21, 1<<28 - 1, 1 << 28, math.MaxInt32, math.MaxUint32} {
		b := appendU32(nil, v)
		if string(b) != string(uleb(uint64(v))) || len(b) != sizeU32(v) {
			t.Errorf("appendU32(%d) = % x (size %d), want % x", v, b, sizeU32(v), uleb(uint64(v)))
		}
		r := &reader{buf: b, end: len(b)}
		if got, err := r.u32("x"); err != nil || got != v {
			t.Errorf("u32(% x) = %d, %v", b, got, err)
		}
		s := int32(v)
		b = appendS32(nil, s)
		if string(b) != string(sleb(int64(s))) {
			t.Errorf("appendS32(%d) = % x, want % x", s, b, sleb(int64(s)))
		}
		r = &reader{buf: b, end: len(b)}
		if got, err := r.signed(32, "x"); err != nil || got != int64(s) {
			t.Errorf("s32(% x) = %d, %v", b, got, err)
		}
	}
}
