/* fuzz_notation.c - fuzz target: the index-notation parser (notation_parse),
 * then what a parsed contraction feeds: classification, Tensile's names, a
 * problem with small sizes, a kernel plan for a CPU device and its source.
 * The input is the expression text. */
#include "fuzz.h"
#include "gen/gen.h"
#include "notation/notation.h"

static void exercise(const struct tcx_contraction *c)
{
	struct classification cls;
	struct tcx_contraction *copy = NULL;
	struct tcx_error err;
	struct problem p;
	struct kernel_plan k;
	struct solution s;
	struct device_info dev;
	struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
	int64_t sizes[TCX_MAX_INDICES];
	char buf[512];
	enum tcx_status st;

	if (c->nidx < 0 || c->nidx > TCX_MAX_INDICES)
		fuzz_fail("parsed contraction with %d indices", c->nidx);
	model_classify(c, NULL, &cls);
	contraction_tensile_name(c, buf, sizeof(buf));
	model_describe_gemm(c, NULL, &cls, buf, sizeof(buf));
	for (int id = 0; id < c->nidx; id++) {
		if (contraction_find(c, c->idx[id].name) != id)
			fuzz_fail("index '%s' (id %d) not found by name", c->idx[id].name, id);
		sizes[id] = 2 + id % 3;
	}
	st = contraction_clone(c, &copy, &err);
	fuzz_check_error(st, &err, "contraction_clone");
	contraction_free(copy);

	st = problem_init(&p, c, sizes, &err);
	fuzz_check_error(st, &err, "problem_init");
	if (st)
		return;
	model_classify(c, &p, &cls);
	problem_tensile_name(c, &p, buf, sizeof(buf));
	model_describe_gemm(c, &p, &cls, buf, sizeof(buf));

	/* a CPU device as PoCL describes one */
	memset(&dev, 0, sizeof(dev));
	snprintf(dev.id, sizeof(dev.id), "opencl:0:0");
	snprintf(dev.backend, sizeof(dev.backend), "opencl");
	snprintf(dev.lang, sizeof(dev.lang), "opencl");
	dev.type = DEV_CPU;
	dev.compute_units = 2;
	dev.global_mem = dev.max_alloc = (int64_t)1 << 32;
	dev.local_mem = 65536;
	dev.max_wg_size = 4096;
	dev.max_wg_dim[0] = dev.max_wg_dim[1] = dev.max_wg_dim[2] = 4096;
	dev.simd_width = 1;
	dev.pref_vector_float = 16;
	dev.fp64 = true;
	solution_heuristic(c, &dev, &s);
	st = plan_make(c, &p, &s, &dev, &k, &err);
	fuzz_check_error(st, &err, "plan_make");
	if (st == TCX_OK) {
		st = plan_accepts(&k, &p, &err);
		fuzz_check_error(st, &err, "plan_accepts");
		st = plan_source(&k, &src, &opts, &err);
		fuzz_check_error(st, &err, "plan_source");
	}
	strbuf_release(&src);
	strbuf_release(&opts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum tcx_dtype types[] = {TCX_DTYPE_S, TCX_DTYPE_D, TCX_DTYPE_C,
					       TCX_DTYPE_Z, TCX_DTYPE_H, TCX_DTYPE_B};
	char *expr = fuzz_strndup(data, size);

	/* each layout; the element type from the length, so all get their turn */
	for (int layout = LAYOUT_BY_STYLE; layout <= LAYOUT_LAST_FASTEST; layout++) {
		struct tcx_contraction *c = (struct tcx_contraction *)1;
		struct tcx_error err;
		enum tcx_status st;

		memset(&err, 0, sizeof(err));
		st = notation_parse(expr, types[size % ARRAY_SIZE(types)], layout, &c, &err);
		fuzz_check_error(st, &err, "notation_parse");
		if (st != TCX_OK) {
			if (c)
				fuzz_fail("notation_parse failed but left *out set");
			continue;
		}
		if (!c)
			fuzz_fail("notation_parse succeeded without a contraction");
		exercise(c);
		contraction_free(c);
	}
	free(expr);
	return 0;
}
