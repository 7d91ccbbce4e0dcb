/* fuzz_logic.c - fuzz target: the library-logic loader (logic_load_string,
 * lib/logic/logic.c and tensile.c): tcx's format and Tensile's list forms.
 * What loads must pass logic_check, answer lookups, and write back out in
 * every format tcx writes. */
#include "fuzz.h"
#include "logic/logic.h"

static void exercise(const struct logic *l)
{
	struct tcx_error err;
	struct strbuf why = STRBUF_INIT;
	int64_t sizes[TCX_MAX_INDICES];
	enum tcx_status st;
	int nidx;

	st = logic_check(l, "fuzz.yaml", &err);
	if (st)
		fuzz_fail("a loaded logic fails logic_check: %s", err.msg);
	if (!l->type)
		fuzz_fail("a loaded logic without a problem type");
	nidx = l->type->nidx;
	for (int probe = 0; probe < 4; probe++) {
		int s;

		for (int id = 0; id < nidx; id++)
			sizes[id] = probe == 0	 ? 1
				    : probe == 1 ? 64
				    : probe == 2 ? 1000 + id
						 : 1 << 20;
		s = logic_lookup(l, sizes, &why);
		if (s < -1 || s >= l->nsol)
			fuzz_fail("logic_lookup gave solution %d of %d", s, l->nsol);
		strbuf_reset(&why);
	}
	for (int e = 0; e < l->nexact; e++) {
		int s = logic_lookup(l, l->exact[e].sizes, NULL);

		if (s < 0 || s >= l->nsol)
			fuzz_fail("exact size %d looks up solution %d of %d", e, s, l->nsol);
	}
	strbuf_release(&why);
	{
		static const int formats[] = {LOGIC_TCX, LOGIC_TENSILE_V3, LOGIC_TENSILE_V4};

		for (size_t f = 0; f < ARRAY_SIZE(formats); f++) {
			json_t *doc = NULL;

			st = logic_to_json(l, formats[f], &doc, &err);
			fuzz_check_error(st, &err, "logic_to_json");
			json_decref(doc);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct logic *l = (struct logic *)1;
	struct tcx_error err;
	enum tcx_status st;

	memset(&err, 0, sizeof(err));
	st = logic_load_string((const char *)data, size, "fuzz.yaml", &l, &err);
	fuzz_check_error(st, &err, "logic_load_string");
	if (st) {
		if (l)
			fuzz_fail("logic_load_string failed but left *out set");
		return 0;
	}
	if (!l)
		fuzz_fail("logic_load_string succeeded without a logic");
	exercise(l);
	logic_free(l);
	return 0;
}
