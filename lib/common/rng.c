/* rng.c - PCG32 (XSH-RR) as in O'Neill's reference pcg32_random_r. */
#include "common.h"

#define PCG32_MULT 6364136223846793005ULL

uint32_t pcg32_next(struct pcg32 *rng)
{
	uint64_t old = rng->state;
	uint32_t xorshifted, rot;

	rng->state = old * PCG32_MULT + rng->inc;
	xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
	rot = (uint32_t)(old >> 59u);
	return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

void pcg32_seed(struct pcg32 *rng, uint64_t seed, uint64_t stream)
{
	rng->state = 0U;
	rng->inc = (stream << 1u) | 1u;
	pcg32_next(rng);
	rng->state += seed;
	pcg32_next(rng);
}

uint32_t pcg32_bounded(struct pcg32 *rng, uint32_t bound)
{
	/* the reference's rejection method: discard the low (2^32 mod bound) */
	uint32_t threshold, r;

	if (bound == 0)
		return 0;
	threshold = -bound % bound;
	for (;;) {
		r = pcg32_next(rng);
		if (r >= threshold)
			return r % bound;
	}
}

double pcg32_double(struct pcg32 *rng)
{
	uint64_t hi = pcg32_next(rng) >> 5; /* 27 bits */
	uint64_t lo = pcg32_next(rng) >> 6; /* 26 bits */

	return (double)((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}
