/* test_svg.c - the SVG plot writer: XML escaping (markup, control bytes,
 * broken UTF-8), one group per series, log x only past 8x, points that
 * cannot be drawn left out, and an error when nothing can be. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/svg.h"
#include "check.h"

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void test_escape(void)
{
	struct strbuf sb = STRBUF_INIT;

	svg_escape(&sb, "C[ij]=A<ik>&B\"'");
	CHECK(strcmp(strbuf_str(&sb), "C[ij]=A&lt;ik&gt;&amp;B&quot;&apos;") == 0);
	strbuf_reset(&sb);
	svg_escape(&sb, "a\x01" "b\tc");
	CHECK(strcmp(strbuf_str(&sb), "a?b\tc") == 0);
	strbuf_reset(&sb);
	svg_escape(&sb, "\xc3\xa9 \xff \xe2\x82");   /* é, a stray byte, a cut sequence */
	CHECK_MSG(strcmp(strbuf_str(&sb), "\xc3\xa9 ? ??") == 0, "'%s'", strbuf_str(&sb));
	strbuf_reset(&sb);
	svg_escape(&sb, "\xed\xa0\x80");             /* a UTF-16 surrogate */
	CHECK(strcmp(strbuf_str(&sb), "???") == 0);
	strbuf_release(&sb);
}

static void test_plot(struct pcg32 *rng)
{
	double x[6], y[6], x2[3] = { 100, 200, 400 }, y2[3] = { 1, NAN, 3 };
	struct svg_series s[2] = {
		{ .name = "first <a&b>", .n = 6, .x = x, .y = y },
		{ .name = "second", .n = 3, .x = x2, .y = y2 },
	};
	struct svg_plot p = { .title = "C[ij]=A[ik]*B[jk] on dev & co", .subtitle = "sub",
			      .xlabel = "size", .ylabel = "GFLOP/s", .nseries = 2, .series = s };
	struct strbuf sb = STRBUF_INIT;
	bool logx = false;

	/* out of order: the line is drawn sorted by x */
	for (int i = 0; i < 6; i++) {
		x[i] = 64.0 * (1 << ((i * 5) % 6));
		y[i] = 10 + 50 * pcg32_double(rng);
	}
	CHECK(svg_plot_write(&p, &sb, &logx, NULL) == TCX_OK);
	CHECK_MSG(logx, "64..2048 spans more than 8x: log x");
	CHECK(count(strbuf_str(&sb), "<g class=\"series\">") == 2);
	CHECK(count(strbuf_str(&sb), "<polyline") == 2);
	/* 6 + 2 markers (the NaN point is left out) + 2 in the legend */
	CHECK_MSG(count(strbuf_str(&sb), "<circle") == 10, "%d circles",
		  count(strbuf_str(&sb), "<circle"));
	CHECK(strstr(strbuf_str(&sb), "first &lt;a&amp;b&gt;") != NULL);
	/* the title is in the <title> element and in the drawn text, escaped both times */
	CHECK(count(strbuf_str(&sb), "dev &amp; co") == 2);
	CHECK(strstr(strbuf_str(&sb), "dev & co") == NULL);
	CHECK(count(strbuf_str(&sb), "first &lt;a&amp;b&gt;") == 2);
	CHECK(strstr(strbuf_str(&sb), "(log scale)") != NULL);
	CHECK(strstr(strbuf_str(&sb), "<first") == NULL);
	{
		/* the polyline's x coordinates increase */
		const char *pl = strstr(strbuf_str(&sb), "points=\"");
		double last = -1, px, py;
		int n = 0, used;

		for (pl += 8; sscanf(pl, "%lf,%lf%n", &px, &py, &used) == 2; pl += used, n++) {
			CHECK(px > last);
			last = px;
			while (pl[used] == ' ')
				used++;
		}
		CHECK(n == 6);
	}
	strbuf_reset(&sb);

	/* within 8x: linear */
	s[0].n = 3;
	x[0] = 100, x[1] = 300, x[2] = 800;
	p.nseries = 1;
	CHECK(svg_plot_write(&p, &sb, &logx, NULL) == TCX_OK);
	CHECK(!logx);
	CHECK(strstr(strbuf_str(&sb), "(log scale)") == NULL);
	CHECK(count(strbuf_str(&sb), "<g class=\"series\">") == 1);
	strbuf_reset(&sb);

	/* nothing to draw */
	s[0].n = 1;
	y[0] = NAN;
	CHECK(svg_plot_write(&p, &sb, &logx, NULL) == TCX_EINVAL);
	strbuf_release(&sb);
}

int main(void)
{
	const char *s = getenv("TCX_TEST_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 10) : (uint64_t)(common_now_seconds() * 1e6);
	struct pcg32 rng;

	fprintf(stderr, "seed %" PRIu64 " (set TCX_TEST_SEED to repeat)\n", seed);
	pcg32_seed(&rng, seed, 9);
	test_escape();
	test_plot(&rng);
	return check_done();
}
