/* protocol.c - Tensile's incremental benchmark protocol (v2.x-v3.x,
 * tensile-compat.md section 4) over a config group:
 *
 *   InitialSolutionParameters  the starting values of every parameter
 *   BenchmarkCommonParameters  steps; one winner for the (single) set
 *   ForkParameters             every set x every fork permutation
 *   BenchmarkForkParameters    steps; one winner per set
 *   JoinParameters             sets merged by the distinct values of the
 *                              joined names (MacroTile: WG x TT)
 *   BenchmarkJoinParameters    steps; one winner per set
 *   BenchmarkFinalParameters   the surviving sets over the final sizes
 *
 * A parameter with a single value in Common/Fork/BenchmarkFork/
 * BenchmarkJoin is hard-coded into every set.  A step's winner is the
 * candidate with the highest GFLOP/s over the step's sizes (Tensile's max);
 * tcx treats candidates whose confidence intervals overlap the winner's as
 * ties and keeps the simplest, saying so in the log. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/exec.h"
#include "tune/protocol.h"

/* Tensile v3's default sizes: common Range [[2880],0,0], final
 * Range [[64,64,64,512],0,0] (short lists pad with 0: same as index 0). */
static const char *const default_common_sizes = "[[2880],0]";
static const char *const default_final_sizes = "[[64,64,64,512],0]";

enum tcx_status protocol_sizes_from_config(const struct config_sizes *cs, int nidx,
					   struct size_list *out, struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;

	for (int k = 0; k < cs->nranges && !st; k++)
		st = size_range_expand(&cs->ranges[k], nidx, out, PROTOCOL_MAX_SIZES, err);
	for (int k = 0; k < cs->nexact && !st; k++)
		st = size_list_add(out, cs->exact + (size_t)k * (size_t)nidx, err);
	if (!st)
		size_list_sort_unique(out);
	return st;
}

static enum tcx_status sizes_default(const char *spec, int nidx, struct size_list *out,
				     struct tcx_error *err)
{
	struct size_range r;
	enum tcx_status st = size_range_parse(spec, nidx, &r, err);

	if (!st)
		st = size_range_expand(&r, nidx, out, PROTOCOL_MAX_SIZES, err);
	if (!st)
		size_list_sort_unique(out);
	return st;
}

/* Applies the name -> value pairs of objects (in order) on the defaults. */
enum tcx_status protocol_solution_from_layers(json_t *const *layers, int n, struct solution *s,
					      struct tcx_error *err)
{
	solution_default(s);
	for (int k = 0; k < n; k++) {
		const char *name;
		json_t *v;

		if (!layers[k])
			continue;
		json_object_foreach(layers[k], name, v)
		{
			enum tcx_status st = solution_set(s, name, v, err);

			if (st)
				return st;
		}
	}
	return solution_finalize(s, err);
}

/* How simple a solution is: smaller is simpler (fewer splits, smaller
 * tiles, less unrolling, fewer features). */
static double complexity(const struct solution *s)
{
	double x = 0;

	x += (double)(s->gsu - 1) * 1e12;
	x += (double)(s->wg[2] - 1) * 1e10;
	x += (double)s->wg[0] * s->tt[0] * s->wg[1] * s->tt[1] * 1e4;
	x += (double)s->depth_u * 10;
	x += s->vw + s->pgr + s->plr + s->wgm + s->lds_pad + (s->edge != EDGE_BRANCH);
	return x;
}

/* One candidate's score over sizes: Tensile's max GFLOP/s, with the CI of
 * that measurement. */
struct score {
	bool valid;
	double gflops, lo, hi;
	int64_t at; /* size index of the max */
	char reason[256];
};

/* Called by the workers after each measurement (under the exec lock). */
static void on_measured(struct tune_ctx *t, const struct measured *m)
{
	struct protocol *pc = t->progress_state;
	struct tune_progress pg = { 0 };
	double per = t->nmeasure ? t->measure_s / (double)t->nmeasure : -1;

	if (!pc)
		return;
	pc->done++;
	if (m->status == MEAS_OK && m->gflops > pc->best_gflops)
		pc->best_gflops = m->gflops;
	if (!t->o->progress)
		return;
	pg.problem = pc->name;
	pg.group = pc->group;
	pg.ngroups = pc->ngroups;
	pg.step = pc->step_label;
	pg.done = pc->done;
	pg.total = pc->total;
	pg.best_gflops = pc->best_gflops;
	pg.eta_s = per >= 0 ? per * (double)(pc->total - pc->done) / (t->ndev > 1 ? t->ndev : 1) : -1;
	t->o->progress(&pg, t->o->progress_ctx);
}

enum tcx_status protocol_measure(struct protocol *pc, struct task *v, int64_t n,
				 struct tcx_error *err)
{
	enum tcx_status st;

	if (pc->dry_run) {
		for (int64_t i = 0; i < n; i++) {
			v[i].have = true;
			v[i].m.status = v[i].valid ? MEAS_OK : MEAS_SKIPPED;
		}
		return TCX_OK;
	}
	pc->t->progress_state = pc;
	pc->t->progress_fn = on_measured;
	st = exec_tasks_run(pc->t, pc->c, v, n, err);
	pc->t->progress_state = NULL;
	/* which step lacks measurements: what a user running shards in rounds
	 * needs to know */
	if (st == TCX_EINCOMPLETE)
		tcx_error_prefix(err, "%s group %02d, %s", pc->name, pc->group, pc->step_label);
	return st;
}

/* The score of a candidate from its tasks (one per size). */
static void score_of(const struct task *v, int64_t nsizes, bool dry_run, struct score *sc)
{
	memset(sc, 0, sizeof(*sc));
	for (int64_t z = 0; z < nsizes; z++) {
		const struct measured *m = &v[z].m;

		if (dry_run) {
			sc->valid = true;
			continue;
		}
		if (m->status != MEAS_OK) {
			snprintf(sc->reason, sizeof(sc->reason), "%s", m->reason);
			continue;
		}
		if (!sc->valid || m->gflops > sc->gflops) {
			sc->valid = true;
			sc->gflops = m->gflops;
			sc->lo = m->gflops_lo;
			sc->hi = m->gflops_hi;
			sc->at = z;
		}
	}
}

/* The values of the parameters of a step with more than one value. */
struct bench_params {
	int n;
	const struct config_param *p[64];
	int64_t count; /* permutations */
};

static void step_params(const struct config_step *st, struct bench_params *bp)
{
	bp->n = 0;
	bp->count = 1;
	for (int k = 0; k < st->nparams && bp->n < 64; k++) {
		const struct config_param *p = &st->params[k];

		if (!p->values || json_array_size(p->values) < 2)
			continue; /* single values are hard-coded */
		bp->p[bp->n++] = p;
		bp->count *= (int64_t)json_array_size(p->values);
	}
}

/* Permutation `idx` of a step's parameters (first parameter fastest). */
static json_t *permutation(const struct bench_params *bp, int64_t idx)
{
	json_t *o = json_object();

	for (int k = 0; k < bp->n; k++) {
		size_t n = json_array_size(bp->p[k]->values);

		json_object_set(o, bp->p[k]->name, json_array_get(bp->p[k]->values, (size_t)(idx % (int64_t)n)));
		idx /= (int64_t)n;
	}
	return o;
}

static void step_label(const struct bench_params *bp, const char *phase, int num, char *buf,
		       size_t len)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s %02d", phase, num);
	for (int k = 0; k < bp->n; k++)
		strbuf_addf(&sb, "%s%s", k ? ", " : " (", bp->p[k]->name);
	if (bp->n)
		strbuf_addc(&sb, ')');
	snprintf(buf, len, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
}

static void set_free(struct pset *s)
{
	json_decref(s->params);
	s->params = NULL;
}

/* The benchmark of one step for every live set: each set keeps its best
 * permutation.  Sets without a valid candidate die.  All of the step's
 * measurements are taken as one batch, so that several devices, shards or
 * MPI ranks can share them. */
static enum tcx_status bench_step(struct protocol *pc, const struct config_step *cs,
				  const char *phase, int num, struct tcx_error *err)
{
	struct bench_params bp;
	char label[256];
	int alive = 0;
	int64_t ncand, nsz = (int64_t)pc->sizes.count, ntask;
	struct solution *sols = NULL;
	struct task *tasks = NULL;
	int64_t *dup = NULL;
	char (*why)[256] = NULL;
	enum tcx_status st = TCX_OK;

	step_params(cs, &bp);
	if (bp.n == 0 && !pc->dummy_step)
		return TCX_OK;
	step_label(&bp, phase, num, label, sizeof(label));
	pc->step_label = label;
	pc->done = 0;
	ncand = (int64_t)pc->nsets * bp.count;
	ntask = ncand * nsz;
	if (pc->dry_run)
		tcx_log(TCX_LOG_INFO, "  %s: %lld candidate%s x %d set%s x %lld size%s", label,
			(long long)bp.count, bp.count == 1 ? "" : "s", pc->nsets,
			pc->nsets == 1 ? "" : "s", (long long)nsz, nsz == 1 ? "" : "s");
	sols = calloc((size_t)(ncand ? ncand : 1), sizeof(*sols));
	dup = calloc((size_t)(ncand ? ncand : 1), sizeof(*dup));
	why = calloc((size_t)(ncand ? ncand : 1), sizeof(*why));
	tasks = calloc((size_t)(ntask ? ntask : 1), sizeof(*tasks));
	if (!sols || !dup || !why || !tasks) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out;
	}
	/* every candidate of every live set, duplicates within a set marked */
	pc->total = 0;
	for (int s = 0; s < pc->nsets && !st; s++)
		for (int64_t k = 0; k < bp.count && !st; k++) {
			int64_t c = (int64_t)s * bp.count + k;
			json_t *perm = permutation(&bp, k);
			json_t *layers[3] = { pc->initial, pc->sets[s].params, perm };
			bool valid = pc->sets[s].alive;

			dup[c] = -1;
			if (valid) {
				st = protocol_solution_from_layers(layers, 3, &sols[c], err);
				if (st == TCX_EREJECT) {
					/* a v2 shape that does not split: not a candidate */
					snprintf(why[c], sizeof(why[c]), "%s", err->msg);
					valid = false;
					st = TCX_OK;
				}
			}
			json_decref(perm);
			for (int64_t j = (int64_t)s * bp.count; valid && !st && j < c; j++)
				if (dup[j] < 0 && tasks[j * nsz].valid &&
				    solution_equal(&sols[j], &sols[c])) {
					dup[c] = j;
					break;
				}
			for (int64_t z = 0; z < nsz; z++) {
				struct task *tk = &tasks[c * nsz + z];

				tk->sol = sols[c];
				tk->sizes = pc->sizes.v + z * (size_t)pc->c->nidx;
				tk->valid = valid && dup[c] < 0;
				pc->total += tk->valid;
			}
		}
	if (!st)
		st = protocol_measure(pc, tasks, ntask, err);
	if (st)
		goto out;
	/* each set's winner */
	for (int s = 0; s < pc->nsets; s++) {
		struct pset *set = &pc->sets[s];
		int64_t best = -1, pick, c0 = (int64_t)s * bp.count;
		struct score *sc;

		if (!set->alive)
			continue;
		sc = calloc((size_t)bp.count, sizeof(*sc));
		if (!sc) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			goto out;
		}
		for (int64_t k = 0; k < bp.count; k++) {
			int64_t c = c0 + k, src = dup[c] >= 0 ? dup[c] : c;

			if (!tasks[src * nsz].valid) {
				snprintf(sc[k].reason, sizeof(sc[k].reason), "%s", why[c]);
				continue;
			}
			score_of(&tasks[src * nsz], nsz, pc->dry_run, &sc[k]);
			if (sc[k].valid && (best < 0 || sc[k].gflops > sc[best].gflops))
				best = k;
		}
		if (best < 0) {
			tcx_log(TCX_LOG_INFO, "%s: set %d has no valid candidate (%s); dropped", label,
				s, sc[0].reason[0] ? sc[0].reason : "none measured");
			set->alive = false;
			free(sc);
			continue;
		}
		/* ties inside the confidence intervals go to the simplest */
		pick = best;
		for (int64_t k = 0; k < bp.count && !pc->dry_run; k++)
			if (k != pick && sc[k].valid && sc[k].hi >= sc[best].lo &&
			    complexity(&sols[c0 + k]) < complexity(&sols[c0 + pick]))
				pick = k;
		{
			json_t *perm = permutation(&bp, pick);
			const char *name;
			json_t *v;
			char *text = json_dumps(perm, JSON_COMPACT);

			if (pick != best) {
				json_t *bperm = permutation(&bp, best);
				char *bt = json_dumps(bperm, JSON_COMPACT);

				tcx_log(TCX_LOG_INFO,
					"%s: %s (%.2f GFLOP/s) and %s (%.2f GFLOP/s) tie within their "
					"confidence intervals; keeping the simpler %s",
					label, bt, sc[best].gflops, text, sc[pick].gflops, text);
				free(bt);
				json_decref(bperm);
			}
			if (!pc->dry_run)
				tcx_log(TCX_LOG_INFO, "%s: set %d winner %s at %.2f GFLOP/s", label, s,
					text ? text : "", sc[pick].gflops);
			json_object_foreach(perm, name, v) json_object_set(set->params, name, v);
			set->score = sc[pick].gflops;
			free(text);
			json_decref(perm);
		}
		alive++;
		free(sc);
	}
	if (alive == 0)
		st = tcx_fail(err, TCX_EREJECT,
			      "%s: no candidate of any set is valid on this device (see 'tcx tune "
			      "--explain')",
			      label);
out:
	free(sols);
	free(dup);
	free(why);
	free(tasks);
	return st;
}

/* Moves the single-valued parameters of every benchmarked phase into the
 * hard-coded set. */
static void hard_code(struct protocol *pc, const struct config_group *g, json_t *hard)
{
	static const enum phase_id phases[] = { PH_COMMON, PH_FORK, PH_BENCH_FORK, PH_BENCH_JOIN };

	for (size_t f = 0; f < ARRAY_SIZE(phases); f++) {
		const struct config_phase *ph = &g->phase[phases[f]];

		for (int s = 0; s < ph->nsteps; s++)
			for (int k = 0; k < ph->steps[s].nparams; k++) {
				const struct config_param *p = &ph->steps[s].params[k];

				if (p->values && json_array_size(p->values) == 1)
					json_object_set(hard, p->name, json_array_get(p->values, 0));
			}
	}
	(void)pc;
}

static enum tcx_status fork_sets(struct protocol *pc, const struct config_phase *fork,
				 struct tcx_error *err)
{
	struct config_step all;
	struct config_param params[64];
	struct bench_params bp;
	struct pset *sets;
	int n = 0, ns;

	memset(&all, 0, sizeof(all));
	for (int s = 0; s < fork->nsteps; s++)
		for (int k = 0; k < fork->steps[s].nparams && all.nparams < 64; k++)
			params[all.nparams++] = fork->steps[s].params[k];
	all.params = params;
	step_params(&all, &bp);
	if (bp.n == 0)
		return TCX_OK;
	ns = pc->nsets * (int)bp.count;
	if (bp.count > PROTOCOL_MAX_SETS || ns > PROTOCOL_MAX_SETS)
		return tcx_fail(err, TCX_ERANGE, "ForkParameters make %lld sets, more than %d",
				(long long)ns, PROTOCOL_MAX_SETS);
	sets = calloc((size_t)ns, sizeof(*sets));
	if (!sets)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (int s = 0; s < pc->nsets; s++) {
		if (!pc->sets[s].alive)
			continue;
		for (int64_t k = 0; k < bp.count; k++) {
			json_t *perm = permutation(&bp, k);
			const char *name;
			json_t *v;

			sets[n].params = json_deep_copy(pc->sets[s].params);
			json_object_foreach(perm, name, v) json_object_set(sets[n].params, name, v);
			json_decref(perm);
			sets[n].alive = true;
			n++;
		}
	}
	for (int s = 0; s < pc->nsets; s++)
		set_free(&pc->sets[s]);
	free(pc->sets);
	pc->sets = sets;
	pc->nsets = n;
	tcx_log(TCX_LOG_INFO, "  fork: %d set%s", n, n == 1 ? "" : "s");
	return TCX_OK;
}

/* The value of parameter `name` in a set (the initial value, or the
 * default as solution_to_json spells it). */
static json_t *set_value(struct protocol *pc, const struct pset *s, const char *name)
{
	json_t *v = json_object_get(s->params, name);

	if (!v)
		v = json_object_get(pc->initial, name);
	if (!v)
		v = json_object_get(pc->defaults, name);
	return v;
}

static bool set_macro_tile(struct protocol *pc, const struct pset *s, int mt[2])
{
	struct solution sol;
	json_t *layers[2] = { pc->initial, s->params };
	struct tcx_error e;

	if (protocol_solution_from_layers(layers, 2, &sol, &e))
		return false;
	mt[0] = sol.wg[0] * sol.tt[0];
	mt[1] = sol.wg[1] * sol.tt[1];
	return true;
}

/* Every MacroTile the WorkGroup and ThreadTile values anywhere can make. */
static json_t *macro_tiles(struct protocol *pc, const struct config_group *g)
{
	json_t *wgs = json_array(), *tts = json_array(), *mts = json_array();
	size_t i, j;
	json_t *a, *b;

	for (int f = 0; f < PH_COUNT; f++)
		for (int s = 0; s < g->phase[f].nsteps; s++) {
			const struct config_param *p;

			p = config_step_find(&g->phase[f].steps[s], "WorkGroup");
			if (p && p->values)
				json_array_extend(wgs, p->values);
			p = config_step_find(&g->phase[f].steps[s], "ThreadTile");
			if (p && p->values)
				json_array_extend(tts, p->values);
		}
	if (json_array_size(wgs) == 0)
		json_array_append(wgs, json_object_get(pc->defaults, "WorkGroup"));
	if (json_array_size(tts) == 0)
		json_array_append(tts, json_object_get(pc->defaults, "ThreadTile"));
	json_array_foreach(wgs, i, a) json_array_foreach(tts, j, b)
	{
		json_t *mt;
		bool dup = false;
		size_t q;
		json_t *x;

		if (!json_is_array(a) || !json_is_array(b) || json_array_size(a) < 2 ||
		    json_array_size(b) < 2)
			continue;
		mt = json_pack("[II]",
			       json_integer_value(json_array_get(a, 0)) *
				       json_integer_value(json_array_get(b, 0)),
			       json_integer_value(json_array_get(a, 1)) *
				       json_integer_value(json_array_get(b, 1)));
		json_array_foreach(mts, q, x) dup |= json_equal(x, mt);
		if (dup)
			json_decref(mt);
		else
			json_array_append_new(mts, mt);
	}
	json_decref(wgs);
	json_decref(tts);
	return mts;
}

static enum tcx_status join_sets(struct protocol *pc, const struct config_group *g,
				 struct tcx_error *err)
{
	const struct config_phase *jp = &g->phase[PH_JOIN];
	const char *names[16];
	json_t *values[16];
	int nn = 0, n = 0;
	int64_t combos = 1;
	struct pset *sets;

	for (int s = 0; s < jp->nsteps; s++)
		for (int k = 0; k < jp->steps[s].nparams && nn < 16; k++)
			names[nn++] = jp->steps[s].params[k].name;
	if (nn == 0)
		return TCX_OK; /* an empty join: every fork survives */
	for (int k = 0; k < nn; k++) {
		if (strcmp(names[k], "MacroTile") == 0) {
			values[k] = macro_tiles(pc, g);
		} else {
			values[k] = json_array();
			for (int s = 0; s < pc->nsets; s++) {
				json_t *v = pc->sets[s].alive ? set_value(pc, &pc->sets[s], names[k]) : NULL;
				bool dup = false;
				size_t q;
				json_t *x;

				if (!v)
					continue;
				json_array_foreach(values[k], q, x) dup |= json_equal(x, v);
				if (!dup)
					json_array_append(values[k], v);
			}
		}
		combos *= json_array_size(values[k]) ? (int64_t)json_array_size(values[k]) : 1;
	}
	if (combos > PROTOCOL_MAX_SETS) {
		for (int k = 0; k < nn; k++)
			json_decref(values[k]);
		return tcx_fail(err, TCX_ERANGE, "JoinParameters make %lld sets, more than %d",
				(long long)combos, PROTOCOL_MAX_SETS);
	}
	sets = calloc((size_t)combos, sizeof(*sets));
	if (!sets) {
		for (int k = 0; k < nn; k++)
			json_decref(values[k]);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	for (int64_t c = 0; c < combos; c++) {
		int64_t idx = c;
		int inherit = -1;
		json_t *want[16];

		for (int k = 0; k < nn; k++) {
			size_t m = json_array_size(values[k]);

			want[k] = m ? json_array_get(values[k], (size_t)(idx % (int64_t)m)) : NULL;
			idx /= m ? (int64_t)m : 1;
		}
		/* the compatible old set with the highest score */
		for (int s = 0; s < pc->nsets; s++) {
			bool ok = pc->sets[s].alive;

			for (int k = 0; ok && k < nn; k++) {
				if (!want[k])
					continue;
				if (strcmp(names[k], "MacroTile") == 0) {
					int mt[2];

					ok = set_macro_tile(pc, &pc->sets[s], mt) &&
					     mt[0] == json_integer_value(json_array_get(want[k], 0)) &&
					     mt[1] == json_integer_value(json_array_get(want[k], 1));
				} else {
					json_t *v = set_value(pc, &pc->sets[s], names[k]);

					ok = v && json_equal(v, want[k]);
				}
			}
			if (ok && (inherit < 0 || pc->sets[s].score > pc->sets[inherit].score))
				inherit = s;
		}
		if (inherit < 0)
			continue;
		sets[n].params = json_deep_copy(pc->sets[inherit].params);
		for (int k = 0; k < nn; k++)
			if (want[k] && strcmp(names[k], "MacroTile") == 0)
				json_object_set(sets[n].params, "MacroTile", want[k]);
		sets[n].score = pc->sets[inherit].score;
		sets[n].alive = true;
		n++;
	}
	for (int k = 0; k < nn; k++)
		json_decref(values[k]);
	for (int s = 0; s < pc->nsets; s++)
		set_free(&pc->sets[s]);
	free(pc->sets);
	pc->sets = sets;
	pc->nsets = n;
	tcx_log(TCX_LOG_INFO, "  join: %d set%s", n, n == 1 ? "" : "s");
	if (n == 0)
		return tcx_fail(err, TCX_EREJECT, "JoinParameters left no set");
	return TCX_OK;
}

static enum tcx_status bench_phase(struct protocol *pc, const struct config_group *g,
				   enum phase_id ph, const char *label, struct tcx_error *err)
{
	const struct config_phase *p = &g->phase[ph];

	for (int s = 0; s < p->nsteps; s++) {
		enum tcx_status st;

		if (p->steps[s].has_sizes) {
			size_list_release(&pc->sizes);
			size_list_init(&pc->sizes, pc->c->nidx);
			st = protocol_sizes_from_config(&p->steps[s].sizes, pc->c->nidx, &pc->sizes,
							err);
			if (st)
				return st;
		}
		st = bench_step(pc, &p->steps[s], label, s + 1, err);
		if (st)
			return st;
	}
	return TCX_OK;
}

void protocol_release(struct protocol *pc)
{
	for (int s = 0; s < pc->nsets; s++)
		set_free(&pc->sets[s]);
	free(pc->sets);
	pc->sets = NULL;
	pc->nsets = 0;
	json_decref(pc->initial);
	json_decref(pc->defaults);
	pc->initial = pc->defaults = NULL;
	size_list_release(&pc->sizes);
	size_list_release(&pc->final_sizes);
}

enum tcx_status protocol_run(struct protocol *pc, const struct config_group *g,
			     struct tcx_error *err)
{
	enum tcx_status st;
	json_t *hard = json_object();
	struct solution d;

	solution_default(&d);
	pc->defaults = solution_to_json(&d);
	/* initial values: defaults <- InitialSolutionParameters (first values) */
	pc->initial = json_object();
	for (int s = 0; s < g->phase[PH_INITIAL].nsteps; s++)
		for (int k = 0; k < g->phase[PH_INITIAL].steps[s].nparams; k++) {
			const struct config_param *p = &g->phase[PH_INITIAL].steps[s].params[k];

			if (p->values && json_array_size(p->values) > 0)
				json_object_set(pc->initial, p->name, json_array_get(p->values, 0));
		}
	hard_code(pc, g, hard);
	pc->sets = calloc(1, sizeof(*pc->sets));
	if (!pc->sets) {
		json_decref(hard);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	pc->sets[0].params = hard;
	pc->sets[0].alive = true;
	pc->nsets = 1;

	size_list_init(&pc->sizes, pc->c->nidx);
	st = sizes_default(default_common_sizes, pc->c->nidx, &pc->sizes, err);
	if (!st)
		st = bench_phase(pc, g, PH_COMMON, "common", err);
	if (!st)
		st = fork_sets(pc, &g->phase[PH_FORK], err);
	if (!st) {
		bool forks = false, joins = false, real = false;
		const struct config_phase *bf = &g->phase[PH_BENCH_FORK];

		for (int s = 0; s < g->phase[PH_FORK].nsteps; s++)
			for (int k = 0; k < g->phase[PH_FORK].steps[s].nparams; k++)
				forks |= json_array_size(g->phase[PH_FORK].steps[s].params[k].values) > 1;
		joins = g->phase[PH_JOIN].nsteps > 0 && g->phase[PH_JOIN].steps[0].nparams > 0;
		for (int s = 0; s < bf->nsteps; s++) {
			struct bench_params bp;

			step_params(&bf->steps[s], &bp);
			real |= bp.n > 0;
		}
		st = bench_phase(pc, g, PH_BENCH_FORK, "fork", err);
		if (!st && forks && joins && !real) {
			/* Tensile's dummy step: every fork gets a score to join by */
			struct config_step dummy;

			memset(&dummy, 0, sizeof(dummy));
			pc->dummy_step = true;
			st = bench_step(pc, &dummy, "fork", 0, err);
			pc->dummy_step = false;
		}
	}
	if (!st)
		st = join_sets(pc, g, err);
	if (!st)
		st = bench_phase(pc, g, PH_BENCH_JOIN, "join", err);
	if (st)
		return st;
	/* final sizes: BenchmarkFinalParameters' ProblemSizes, or the default */
	size_list_init(&pc->final_sizes, pc->c->nidx);
	for (int s = 0; s < g->phase[PH_FINAL].nsteps && !pc->final_sizes.count; s++)
		if (g->phase[PH_FINAL].steps[s].has_sizes)
			st = protocol_sizes_from_config(&g->phase[PH_FINAL].steps[s].sizes,
							pc->c->nidx, &pc->final_sizes, err);
	if (!st && pc->final_sizes.count == 0)
		st = sizes_default(default_final_sizes, pc->c->nidx, &pc->final_sizes, err);
	return st;
}
