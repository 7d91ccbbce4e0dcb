/* fuzz_config.c - fuzz target: the tuning-config loader (config_load_string,
 * lib/tune/config.c): Tensile v2.x/v3.x configs and tcx's extension.  The
 * input is the YAML text; what loads is walked end to end. */
#include "fuzz.h"
#include "tune/config.h"

static void walk(const struct config *cfg)
{
	for (int p = 0; p < cfg->nproblems; p++) {
		const struct config_problem *cp = &cfg->problems[p];

		if (!cp->type || cp->type->nidx < 0 || cp->type->nidx > TCX_MAX_INDICES)
			fuzz_fail("problem %d without a valid type", p);
		for (int g = 0; g < cp->ngroups; g++)
			for (int ph = 0; ph < PH_COUNT; ph++) {
				const struct config_phase *f = &cp->groups[g].phase[ph];

				for (int s = 0; s < f->nsteps; s++) {
					const struct config_step *st = &f->steps[s];

					for (int k = 0; k < st->nparams; k++)
						if (config_step_find(st, st->params[k].name) ==
						    NULL)
							fuzz_fail("parameter '%s' not found",
								  st->params[k].name);
					for (int e = 0; e < st->sizes.nexact; e++)
						for (int id = 0; id < cp->type->nidx; id++)
							if (st->sizes
								.exact[e * cp->type->nidx + id] < 0)
								fuzz_fail("negative exact size");
				}
			}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *cfg = (struct config *)1;
	struct tcx_error err;
	enum tcx_status st;

	memset(&err, 0, sizeof(err));
	st = config_load_string((const char *)data, size, "fuzz.yaml", &cfg, &err);
	fuzz_check_error(st, &err, "config_load_string");
	if (st) {
		if (cfg)
			fuzz_fail("config_load_string failed but left *out set");
		return 0;
	}
	if (!cfg)
		fuzz_fail("config_load_string succeeded without a config");
	walk(cfg);
	config_free(cfg);
	return 0;
}
