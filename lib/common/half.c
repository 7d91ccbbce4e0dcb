/* half.c - IEEE fp16 and bfloat16 conversions by bit manipulation, so that
 * host code needs no compiler support for _Float16; and a small hash. */
#include <string.h>

#include "common.h"

float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	float f;

	if (exp == 0) {
		if (man == 0) {
			bits = sign;
		} else { /* subnormal: normalise */
			int e = -1;

			do {
				e++;
				man <<= 1;
			} while (!(man & 0x400));
			bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
		}
	} else if (exp == 31) {
		bits = sign | 0x7f800000u | (man << 13);
	} else {
		bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t half_from_float(float f)
{
	uint32_t x, sign, man;
	int32_t exp;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	exp = (int32_t)((x >> 23) & 0xff);
	man = x & 0x7fffff;
	if (exp == 0xff) /* inf or nan (keep nan quiet and non-zero) */
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
	exp = exp - 127 + 15;
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) { /* subnormal or zero */
		uint32_t m, shift, r, half_ulp;

		if (exp < -10)
			return (uint16_t)sign;
		m = man | 0x800000;
		shift = (uint32_t)(14 - exp);
		r = m >> shift;
		half_ulp = 1u << (shift - 1);
		if ((m & ((half_ulp << 1) - 1)) > half_ulp ||
		    ((m & ((half_ulp << 1) - 1)) == half_ulp && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t r = ((uint32_t)exp << 10) | (man >> 13);
		uint32_t rest = man & 0x1fff;

		if (rest > 0x1000 || (rest == 0x1000 && (r & 1)))
			r++; /* may carry into the exponent: still right, up to inf */
		return (uint16_t)(sign | r);
	}
}

float bf16_to_float(uint16_t b)
{
	uint32_t bits = (uint32_t)b << 16;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t bf16_from_float(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffff))
		return (uint16_t)((x >> 16) | 0x40); /* quiet nan */
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

uint64_t common_hash64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = 1469598103934665603ULL ^ seed;

	for (size_t k = 0; k < len; k++) {
		h ^= p[k];
		h *= 1099511628211ULL;
	}
	return h;
}
