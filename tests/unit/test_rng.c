/* test_rng.c - PCG32 against the reference outputs published with the
 * algorithm (pcg32-demo: seed 42, stream 54), and the fp16/bf16 helpers. */
#include <math.h>

#include "check.h"
#include "common/common.h"

int main(void)
{
	static const uint32_t expected[6] = { 0xa15c02b7u, 0x7b47f409u, 0xba1d3330u,
					      0x83d2f293u, 0xbfa4784bu, 0xcbed606eu };
	struct pcg32 rng, again;

	pcg32_seed(&rng, 42u, 54u);
	/* the state the reference's seeding reaches */
	CHECK(rng.state == 1753877967969059832ULL);
	CHECK(rng.inc == 109u);
	for (int k = 0; k < 6; k++) {
		uint32_t v = pcg32_next(&rng);

		CHECK_MSG(v == expected[k], "output %d: got 0x%08x, want 0x%08x", k, v, expected[k]);
	}
	/* same seed and stream, same sequence; another stream, another one */
	pcg32_seed(&rng, 7, 1);
	pcg32_seed(&again, 7, 1);
	for (int k = 0; k < 100; k++)
		CHECK(pcg32_next(&rng) == pcg32_next(&again));
	pcg32_seed(&again, 7, 2);
	pcg32_seed(&rng, 7, 1);
	CHECK(pcg32_next(&rng) != pcg32_next(&again));

	/* bounded and double draws stay in range */
	for (int k = 0; k < 10000; k++) {
		uint32_t b = pcg32_bounded(&rng, 6);
		double d = pcg32_double(&rng);

		CHECK(b < 6);
		CHECK(d >= 0.0 && d < 1.0);
	}

	/* fp16: exact values, rounding to nearest even, subnormals, inf, nan */
	CHECK(half_from_float(1.0f) == 0x3c00);
	CHECK(half_from_float(-2.0f) == 0xc000);
	CHECK(half_from_float(65504.0f) == 0x7bff);
	CHECK(half_from_float(65536.0f) == 0x7c00);
	CHECK(half_from_float(1.0f + 1.0f / 2048) == 0x3c00); /* tie: to even */
	CHECK(half_from_float(1.0f + 3.0f / 2048) == 0x3c02);
	CHECK(half_from_float(5.9604645e-08f) == 0x0001);
	CHECK(half_to_float(0x0001) == 5.9604645e-08f);
	CHECK(half_to_float(0x3555) == 0.333251953125f);
	CHECK(isnan(half_to_float(half_from_float(NAN))));
	for (uint32_t h = 0; h < 0x7c00; h++)
		CHECK_MSG(half_from_float(half_to_float((uint16_t)h)) == h,
			  "half 0x%04x round trip", h);
	/* bf16 */
	CHECK(bf16_from_float(1.0f) == 0x3f80);
	CHECK(bf16_to_float(0x4049) == 3.140625f);
	CHECK(bf16_from_float(1.00390625f) == 0x3f80); /* tie: to even */
	CHECK(isnan(bf16_to_float(bf16_from_float(NAN))));
	return check_done();
}
