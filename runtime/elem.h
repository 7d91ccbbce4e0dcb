/* elem.h - element types as tensors store them: fp16 and bf16 by bit
 * manipulation (no compiler support for _Float16 needed), an element's
 * bytes, and element off of an array as (re, im) and back, rounded to
 * nearest even.  One source for tcx (lib/common/half.c,
 * lib/backend/host/reference.c) and the libraries tcx export-lib writes
 * (runtime.c, client.c), as select.c is, so that all of them read and
 * write fp16 and bf16 alike.  Everything is static inline: include this
 * file; the includer supplies <stdint.h>, <stddef.h> and <string.h>.  A
 * template: tcx export-lib copies it unchanged.  C99.
 *
 * Element types are Tensile's letters in lowercase: s, d, c, z, h, b.
 */
#ifndef TL_ELEM_H
#define TL_ELEM_H

static inline float tl_half_to_float(uint16_t h)
{
	uint32_t e = (h >> 10) & 31, m = h & 1023, x;
	float f;

	if (e == 0) { /* zero or subnormal: a multiple of 2^-24 */
		f = (float)m * 0x1p-24f;
		return h & 0x8000 ? -f : f;
	}
	/* infinity and NaN (its payload kept), else rebiased */
	x = (uint32_t)(h & 0x8000) << 16 | (e == 31 ? 0x7f800000u : (e + 112) << 23) | m << 13;
	memcpy(&f, &x, sizeof(f));
	return f;
}

static inline uint16_t tl_half_from_float(float f)
{
	uint32_t x, a;
	uint16_t sign;

	memcpy(&x, &f, sizeof(x));
	sign = (uint16_t)((x >> 16) & 0x8000);
	a = x & 0x7fffffffu;
	if (a > 0x7f800000u) /* a quiet NaN, its payload's high bits kept */
		return (uint16_t)(sign | 0x7e00 | ((a & 0x7fffff) >> 13));
	if (a >= 0x477ff000u)
		return (uint16_t)(sign | 0x7c00); /* 65520 and up round to infinity */
	if (a < 0x38800000u) {		  /* below 2^-14: a multiple of 2^-24 */
		uint32_t m = (a & 0x7fffff) | 0x800000, shift = 126 - (a >> 23), half, r;

		if (a <= 0x33000000u) /* at most half of 2^-24: zero */
			return sign;
		half = 1u << (shift - 1);
		r = m >> shift;
		m &= 2 * half - 1;
		return (uint16_t)(sign | (r + (m > half || (m == half && (r & 1)))));
	}
	a += 0xfffu + ((a >> 13) & 1); /* round the mantissa to 10 bits, to nearest even */
	return (uint16_t)(sign | ((a - 0x38000000u) >> 13));
}

static inline float tl_bf16_to_float(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;

	memcpy(&f, &x, sizeof(f));
	return f;
}

static inline uint16_t tl_bf16_from_float(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40); /* a quiet NaN */
	return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

/* Bytes of one element in memory (abi.c has those of a value, in the
 * GlobalSplitU workspace). */
static inline size_t tl_elem_bytes(char t)
{
	return t == 'd' || t == 'c' ? 8 : t == 'z' ? 16 : t == 'h' || t == 'b' ? 2 : 4;
}

static inline void tl_elem_get(char t, const void *buf, int64_t off, double *re, double *im)
{
	*im = 0;
	switch (t) {
	case 'd':
		*re = ((const double *)buf)[off];
		break;
	case 'c':
		*re = ((const float *)buf)[2 * off];
		*im = ((const float *)buf)[2 * off + 1];
		break;
	case 'z':
		*re = ((const double *)buf)[2 * off];
		*im = ((const double *)buf)[2 * off + 1];
		break;
	case 'h':
		*re = tl_half_to_float(((const uint16_t *)buf)[off]);
		break;
	case 'b':
		*re = tl_bf16_to_float(((const uint16_t *)buf)[off]);
		break;
	default:
		*re = ((const float *)buf)[off];
		break;
	}
}

static inline void tl_elem_set(char t, void *buf, int64_t off, double re, double im)
{
	switch (t) {
	case 'd':
		((double *)buf)[off] = re;
		break;
	case 'c':
		((float *)buf)[2 * off] = (float)re;
		((float *)buf)[2 * off + 1] = (float)im;
		break;
	case 'z':
		((double *)buf)[2 * off] = re;
		((double *)buf)[2 * off + 1] = im;
		break;
	case 'h':
		((uint16_t *)buf)[off] = tl_half_from_float((float)re);
		break;
	case 'b':
		((uint16_t *)buf)[off] = tl_bf16_from_float((float)re);
		break;
	default:
		((float *)buf)[off] = (float)re;
		break;
	}
}

#endif /* TL_ELEM_H */
