// fmod.c: the C library's fmod, with a fast path for the operands
// JavaScript's % meets most once a value leaves int32: integers of
// magnitude at most 2^53, as in (s + i * i) % m once i * i passes 2^31.
// QuickJS takes every % that is not of two non-negative int32 values to
// fmod, and wasi-libc's fmod (musl's) is a loop over the operands' bits;
// for those integers the remainder is exact in 64-bit integer arithmetic,
// one i64.rem_s. Everything else (NaN, infinities, fractions, magnitudes
// past 2^53, a zero divisor) goes to the C library's fmod. The linker
// sends every call of fmod here (-Wl,--wrap=fmod in build.sh), so the
// result is the same everywhere: fmod is exact, and so is this.
#include <math.h>
#include <stdint.h>

double __real_fmod(double x, double y);
double __wrap_fmod(double x, double y);

// exactInt is 2^53: every integer of at most this magnitude is a double,
// and converts to int64_t and back unchanged.
#define exactInt 0x1p53

double __wrap_fmod(double x, double y) {
	// The comparisons are false for NaN, so NaN takes the slow path.
	if (fabs(x) <= exactInt && fabs(y) <= exactInt && y != 0) {
		int64_t ix = (int64_t)x, iy = (int64_t)y;
		if ((double)ix == x && (double)iy == y) {
			// C's % truncates toward zero, so a remainder that is not
			// zero has the dividend's sign, as fmod's; copysign gives a
			// zero remainder that sign too (fmod(-4, 2) is -0).
			return copysign((double)(ix % iy), x);
		}
	}
	return __real_fmod(x, y);
}
