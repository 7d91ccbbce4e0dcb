/* half.c - IEEE fp16 and bfloat16 conversions, runtime/elem.h's (the
 * exported libraries convert with the same code); and a small hash. */
#include <string.h>

#include "common.h"
#include "runtime/elem.h"

float half_to_float(uint16_t h)
{
	return tl_half_to_float(h);
}

uint16_t half_from_float(float f)
{
	return tl_half_from_float(f);
}

float bf16_to_float(uint16_t b)
{
	return tl_bf16_to_float(b);
}

uint16_t bf16_from_float(float f)
{
	return tl_bf16_from_float(f);
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
