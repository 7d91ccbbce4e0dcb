/* strategy.c - searches for large spaces: exhaustive, random, simulated
 * annealing and a genetic algorithm over the Cartesian space of every
 * benchmarked parameter of a config group, or over the list of candidates
 * tcx builds for an expression (tune/space.h), which the model strategy
 * measures in the model's order until the budget is spent.  All share the
 * candidate space, the validity rules and the results store; each
 * candidate is evaluated on the final sizes and scored by its summed
 * time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/exec.h"
#include "tune/protocol.h"

#define MAX_DIMS 64
#define EXHAUSTIVE_LIMIT 1000000

/* A space of one dimension without a name is a list of whole candidates
 * (config_group's candidates). */
struct space {
	int ndims;
	const char *name[MAX_DIMS];
	json_t *values[MAX_DIMS]; /* arrays (owned) */
	int64_t size;
	json_t *base; /* initial values and hard-coded singles */
};

struct evaluated {
	int64_t idx;
	double objective; /* summed ms over the final sizes; INFINITY if invalid */
	struct evaluated *next;
};

struct search {
	struct protocol *pc;
	struct space *sp;
	struct evaluated *list; /* in evaluation order */
	struct evaluated **tail;
	int64_t count;
	int64_t limit; /* evaluations planned, for messages */
};

static void space_release(struct space *sp)
{
	for (int d = 0; d < sp->ndims; d++)
		json_decref(sp->values[d]);
	json_decref(sp->base);
}

/* Every multi-valued parameter of the benchmarked phases, values merged by
 * name; single values are hard-coded into the base. */
static enum tcx_status space_build(struct protocol *pc, const struct config_group *g,
				   struct space *sp, struct tcx_error *err)
{
	static const enum phase_id phases[] = { PH_COMMON, PH_FORK, PH_BENCH_FORK, PH_BENCH_JOIN };

	memset(sp, 0, sizeof(*sp));
	sp->base = json_deep_copy(pc->initial);
	sp->size = 1;
	if (g->candidates) {
		sp->ndims = 1;
		sp->name[0] = NULL;
		sp->values[0] = json_incref(g->candidates);
		sp->size = (int64_t)json_array_size(g->candidates);
		return TCX_OK;
	}
	for (size_t f = 0; f < ARRAY_SIZE(phases); f++)
		for (int s = 0; s < g->phase[phases[f]].nsteps; s++) {
			const struct config_step *st = &g->phase[phases[f]].steps[s];

			for (int k = 0; k < st->nparams; k++) {
				const struct config_param *p = &st->params[k];
				int d;

				if (!p->values)
					continue;
				if (json_array_size(p->values) == 1) {
					json_object_set(sp->base, p->name, json_array_get(p->values, 0));
					continue;
				}
				for (d = 0; d < sp->ndims; d++)
					if (strcmp(sp->name[d], p->name) == 0)
						break;
				if (d == sp->ndims) {
					if (sp->ndims == MAX_DIMS)
						return tcx_fail(err, TCX_ERANGE,
								"more than %d benchmarked parameters",
								MAX_DIMS);
					sp->name[d] = p->name;
					sp->values[d] = json_array();
					sp->ndims++;
				}
				{
					size_t i;
					json_t *v;

					json_array_foreach(p->values, i, v)
					{
						bool dup = false;
						size_t q;
						json_t *x;

						json_array_foreach(sp->values[d], q, x) dup |= json_equal(x, v);
						if (!dup)
							json_array_append(sp->values[d], v);
					}
				}
			}
		}
	for (int d = 0; d < sp->ndims; d++) {
		if ((double)sp->size * (double)json_array_size(sp->values[d]) > 9e15)
			return tcx_fail(err, TCX_ERANGE, "the search space is too large");
		sp->size *= (int64_t)json_array_size(sp->values[d]);
	}
	return TCX_OK;
}

static json_t *candidate(const struct space *sp, int64_t idx)
{
	json_t *o = json_object();

	for (int d = 0; d < sp->ndims; d++) {
		int64_t n = (int64_t)json_array_size(sp->values[d]);
		json_t *v = json_array_get(sp->values[d], (size_t)(idx % n));

		if (sp->name[d])
			json_object_set(o, sp->name[d], v);
		else
			json_object_update(o, v);
		idx /= n;
	}
	return o;
}

static int64_t coord(const struct space *sp, int64_t idx, int d)
{
	for (int e = 0; e < d; e++)
		idx /= (int64_t)json_array_size(sp->values[e]);
	return idx % (int64_t)json_array_size(sp->values[d]);
}

static int64_t with_coord(const struct space *sp, int64_t idx, int d, int64_t v)
{
	int64_t mul = 1;

	for (int e = 0; e < d; e++)
		mul *= (int64_t)json_array_size(sp->values[e]);
	return idx - coord(sp, idx, d) * mul + v * mul;
}

static struct evaluated *find(struct search *se, int64_t idx)
{
	for (struct evaluated *e = se->list; e; e = e->next)
		if (e->idx == idx)
			return e;
	return NULL;
}

/* Evaluates candidates idx[0..n) (each once): the summed time over the
 * final sizes, measured as one batch. */
static enum tcx_status evaluate_batch(struct search *se, const int64_t *idx, int n,
				      double *objective, struct tcx_error *err)
{
	struct protocol *pc = se->pc;
	int64_t nsz = (int64_t)pc->final_sizes.count;
	struct task *tasks = calloc((size_t)n * (size_t)(nsz ? nsz : 1), sizeof(*tasks));
	bool *fresh = calloc((size_t)n, sizeof(*fresh));
	enum tcx_status st = TCX_OK;

	if (!tasks || !fresh) {
		free(tasks);
		free(fresh);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	for (int k = 0; k < n && !st; k++) {
		struct evaluated *e = find(se, idx[k]);
		struct solution s;
		json_t *perm, *layers[2];
		bool valid = true;

		for (int j = 0; j < k && !e; j++)
			if (idx[j] == idx[k])
				e = (struct evaluated *)1; /* the same candidate earlier in this batch */
		if (e) {
			for (int64_t z = 0; z < nsz; z++)
				tasks[k * nsz + z].valid = false;
			continue;
		}
		fresh[k] = true;
		perm = candidate(se->sp, idx[k]);
		layers[0] = se->sp->base;
		layers[1] = perm;
		st = protocol_solution_from_layers(layers, 2, &s, err);
		json_decref(perm);
		if (st == TCX_EREJECT) {
			valid = false;
			st = TCX_OK;
		}
		for (int64_t z = 0; z < nsz; z++) {
			tasks[k * nsz + z].sol = s;
			tasks[k * nsz + z].sizes = pc->final_sizes.v + z * (size_t)pc->c->nidx;
			tasks[k * nsz + z].valid = valid;
		}
	}
	if (!st)
		st = protocol_measure(pc, tasks, (int64_t)n * nsz, err);
	for (int k = 0; k < n && !st; k++) {
		struct evaluated *e;
		double total = 0;

		if (!fresh[k]) {
			e = find(se, idx[k]);
			objective[k] = e ? e->objective : INFINITY;
			continue;
		}
		for (int64_t z = 0; z < nsz; z++) {
			const struct task *tk = &tasks[k * nsz + z];

			if (!tk->valid || tk->m.status != MEAS_OK)
				total = INFINITY;
			else
				total += tk->m.median_ms;
		}
		if (pc->dry_run)
			total = 0;
		if (se->sp->ndims == 1 && !se->sp->name[0]) {
			/* a whole solution: its short name */
			char name[256];

			solution_name(&tasks[k * nsz].sol, name, sizeof(name));
			tcx_log(TCX_LOG_INFO, "  %s %lld/%lld: %s at %.4f ms", pc->step_label,
				(long long)se->count + 1, (long long)se->limit, name, total);
		} else {
			json_t *shown = candidate(se->sp, idx[k]);
			char *text = json_dumps(shown, JSON_COMPACT);

			tcx_log(TCX_LOG_INFO, "  %s %lld/%lld: %s at %.4f ms", pc->step_label,
				(long long)se->count + 1, (long long)se->limit, text ? text : "",
				total);
			free(text);
			json_decref(shown);
		}
		e = calloc(1, sizeof(*e));
		if (!e) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			break;
		}
		e->idx = idx[k];
		e->objective = total;
		*se->tail = e;
		se->tail = &e->next;
		se->count++;
		pc->t->sum->evaluations++;
		objective[k] = total;
	}
	free(tasks);
	free(fresh);
	return st;
}

static enum tcx_status evaluate(struct search *se, int64_t idx, double *objective,
				struct tcx_error *err)
{
	return evaluate_batch(se, &idx, 1, objective, err);
}

/* Candidates are measured in batches of this many, so that devices, shards
 * and MPI ranks share each batch. */
#define BATCH 64

static int64_t rand_index(struct pcg32 *rng, int64_t n)
{
	uint64_t r = ((uint64_t)pcg32_next(rng) << 32) | pcg32_next(rng);

	return (int64_t)(r % (uint64_t)n);
}

/* Shards: the batches of exhaustive and random search do not depend on each
 * other's results, so a batch whose other slices are missing does not stop
 * the shard, which goes on to its slice of the next: one round measures
 * them all.  Keeps the first such error in *first; *st becomes TCX_OK. */
static void batch_go_on(const struct search *se, enum tcx_status *st, bool *incomplete,
			struct tcx_error *first, const struct tcx_error *err)
{
	if (*st != TCX_EINCOMPLETE || se->pc->t->shard_n <= 1)
		return;
	if (!*incomplete && err)
		*first = *err;
	*incomplete = true;
	*st = TCX_OK;
}

/* The end of a run of batches: TCX_EINCOMPLETE, with the first batch's
 * error, when batch_go_on let one pass. */
static enum tcx_status batches_end(enum tcx_status st, bool incomplete,
				   const struct tcx_error *first, struct tcx_error *err)
{
	if (st || !incomplete)
		return st;
	if (err)
		*err = *first;
	return TCX_EINCOMPLETE;
}

/* Candidates 0 to want - 1 of the space, in that order, `batch` at a time;
 * with limit_s > 0, until limit_s seconds have passed since the run began
 * (checked before each batch after the first). */
static enum tcx_status run_in_order(struct search *se, int64_t want, int batch, double limit_s,
				    struct tcx_error *err)
{
	const struct tune_ctx *t = se->pc->t;
	struct tcx_error first = { 0 };
	bool incomplete = false;

	for (int64_t i = 0; i < want; i += batch) {
		int64_t idx[BATCH];
		double obj[BATCH];
		int n = 0;
		enum tcx_status st;

		if (limit_s > 0 && i > 0 && !se->pc->dry_run &&
		    common_now_seconds() - t->t_start >= limit_s) {
			tcx_log(TCX_LOG_INFO, "  %s: the budget of %g s is spent after %lld of %lld "
				"candidates",
				se->pc->step_label, limit_s, (long long)i, (long long)se->sp->size);
			break;
		}
		while (n < batch && i + n < want) {
			idx[n] = i + n;
			n++;
		}
		st = evaluate_batch(se, idx, n, obj, err);
		batch_go_on(se, &st, &incomplete, &first, err);
		if (st)
			return st;
	}
	return batches_end(TCX_OK, incomplete, &first, err);
}

static enum tcx_status run_exhaustive(struct search *se, int budget, struct pcg32 *rng,
				      struct tcx_error *err)
{
	if (se->sp->size > EXHAUSTIVE_LIMIT)
		return tcx_fail(err, TCX_ERANGE,
				"the space has %lld candidates; use --strategy random, anneal or "
				"genetic with --budget",
				(long long)se->sp->size);
	(void)budget;
	(void)rng;
	return run_in_order(se, se->sp->size, BATCH, 0, err);
}

static enum tcx_status run_random(struct search *se, int budget, struct pcg32 *rng,
				  struct tcx_error *err)
{
	/* the sample is drawn first (it depends on the seed alone), then
	 * measured in batches */
	int64_t want = budget < se->sp->size ? budget : se->sp->size, n = 0, tries = 0;
	int64_t *idx = malloc((size_t)(want ? want : 1) * sizeof(*idx));
	double *obj = malloc((size_t)(want ? want : 1) * sizeof(*obj));
	enum tcx_status st = TCX_OK;
	struct tcx_error first = { 0 };
	bool incomplete = false;

	if (!idx || !obj) {
		free(idx);
		free(obj);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	while (n < want && tries++ < 100LL * budget) {
		int64_t c = rand_index(rng, se->sp->size);
		bool seen = false;

		for (int64_t j = 0; j < n && !seen; j++)
			seen = idx[j] == c;
		if (!seen)
			idx[n++] = c;
	}
	for (int64_t i = 0; i < n && !st; i += BATCH) {
		st = evaluate_batch(se, idx + i, (int)(n - i < BATCH ? n - i : BATCH), obj + i, err);
		batch_go_on(se, &st, &incomplete, &first, err);
	}
	free(idx);
	free(obj);
	return batches_end(st, incomplete, &first, err);
}

/* The candidates in the order given (tcx builds an expression's space in
 * its model's order, best predicted first), until --budget candidates or
 * seconds: a count takes batches that every shard and MPI rank cuts
 * alike; seconds are checked before each candidate (one per device and
 * compiler thread at a time), since the start of the run, and the first
 * is always measured. */
static enum tcx_status run_model(struct search *se, int budget, struct pcg32 *rng,
				 struct tcx_error *err)
{
	const struct tune_ctx *t = se->pc->t;
	const double limit_s = t->o->budget_s;
	const int per = (t->ndev > 1 ? t->ndev : 1) * (t->o->jobs > 1 ? t->o->jobs : 1);
	const int batch = limit_s > 0 ? (per < BATCH ? per : BATCH) : BATCH;
	const int64_t want = limit_s > 0		? se->sp->size
			     : budget < se->sp->size ? budget
						     : se->sp->size;

	(void)rng;
	return run_in_order(se, want, batch, limit_s, err);
}

/* A random neighbour: one parameter moved to another of its values. */
static int64_t neighbour(const struct space *sp, int64_t idx, struct pcg32 *rng)
{
	int d, tries = 0;
	int64_t n, v;

	do {
		d = (int)pcg32_bounded(rng, (uint32_t)sp->ndims);
		n = (int64_t)json_array_size(sp->values[d]);
	} while (n < 2 && tries++ < 100);
	v = (coord(sp, idx, d) + 1 + rand_index(rng, n - 1)) % n;
	return with_coord(sp, idx, d, v);
}

static enum tcx_status run_anneal(struct search *se, int budget, struct pcg32 *rng,
				  struct tcx_error *err)
{
	int64_t cur = rand_index(rng, se->sp->size);
	double fcur, fnew, temp = 0.5;
	const double cool = pow(0.02 / 0.5, 1.0 / (budget > 1 ? budget : 2));
	int64_t steps = 0;
	enum tcx_status st = evaluate(se, cur, &fcur, err);

	while (!st && se->count < budget && se->count < se->sp->size && steps++ < 50LL * budget) {
		int64_t nxt = se->sp->ndims ? neighbour(se->sp, cur, rng) : cur;
		bool accept;

		st = evaluate(se, nxt, &fnew, err);
		if (st)
			break;
		if (isinf(fcur))
			accept = true;
		else if (fnew <= fcur)
			accept = true;
		else
			accept = !isinf(fnew) && pcg32_double(rng) < exp(-(fnew - fcur) / (temp * fcur));
		if (accept) {
			cur = nxt;
			fcur = fnew;
		}
		temp *= cool;
	}
	return st;
}

static enum tcx_status run_genetic(struct search *se, int budget, struct pcg32 *rng,
				   struct tcx_error *err)
{
	int npop = budget / 4 < 4 ? 4 : budget / 4 > 16 ? 16 : budget / 4;
	int64_t pop[16];
	double fit[16];
	int64_t steps = 0;
	enum tcx_status st = TCX_OK;

	for (int k = 0; k < npop && !st; k++) {
		pop[k] = rand_index(rng, se->sp->size);
		st = evaluate(se, pop[k], &fit[k], err);
	}
	while (!st && se->count < budget && se->count < se->sp->size && steps++ < 50LL * budget) {
		int a, b, worst = 0;
		int64_t child = 0;
		double f;

		/* tournament selection of two parents */
		a = (int)pcg32_bounded(rng, (uint32_t)npop);
		b = (int)pcg32_bounded(rng, (uint32_t)npop);
		int p1 = fit[a] <= fit[b] ? a : b;

		a = (int)pcg32_bounded(rng, (uint32_t)npop);
		b = (int)pcg32_bounded(rng, (uint32_t)npop);
		int p2 = fit[a] <= fit[b] ? a : b;

		/* uniform crossover, then mutation of each gene with 1/ndims */
		child = pop[p1];
		for (int d = 0; d < se->sp->ndims; d++) {
			if (pcg32_bounded(rng, 2))
				child = with_coord(se->sp, child, d, coord(se->sp, pop[p2], d));
			if (pcg32_bounded(rng, (uint32_t)se->sp->ndims) == 0)
				child = with_coord(se->sp, child, d,
						   rand_index(rng, (int64_t)json_array_size(se->sp->values[d])));
		}
		st = evaluate(se, child, &f, err);
		for (int k = 1; k < npop; k++)
			if (fit[k] > fit[worst])
				worst = k;
		if (!st && f < fit[worst]) {
			pop[worst] = child;
			fit[worst] = f;
		}
	}
	return st;
}

/* One row per strategy, in enum tune_strategy's order (the value is the
 * index): its --strategy name and its search over a group's space.  A row
 * without a search is Tensile's protocol (protocol.c).  To add a strategy,
 * add its enum value (tune.h), its run_<name> and a row. */
static const struct strategy {
	const char *name;
	enum tcx_status (*run)(struct search *se, int budget, struct pcg32 *rng,
			       struct tcx_error *err);
	bool whole_space; /* evaluates every candidate, whatever the budget */
} strategies[] = {
	[STRAT_PROTOCOL] = { "protocol", NULL, false },
	[STRAT_EXHAUSTIVE] = { "exhaustive", run_exhaustive, true },
	[STRAT_RANDOM] = { "random", run_random, false },
	[STRAT_ANNEAL] = { "anneal", run_anneal, false },
	[STRAT_GENETIC] = { "genetic", run_genetic, false },
	[STRAT_MODEL] = { "model", run_model, false },
};

bool strategy_parse(const char *s, enum tune_strategy *out)
{
	for (size_t k = 0; k < ARRAY_SIZE(strategies); k++)
		if (strcmp(s, strategies[k].name) == 0) {
			*out = (enum tune_strategy)k;
			return true;
		}
	return false;
}

const char *strategy_name(enum tune_strategy s)
{
	return (size_t)s < ARRAY_SIZE(strategies) ? strategies[s].name : "?";
}

static int cmp_eval(const void *a, const void *b)
{
	const struct evaluated *x = *(struct evaluated *const *)a, *y = *(struct evaluated *const *)b;

	if (x->objective != y->objective)
		return x->objective < y->objective ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

enum tcx_status strategy_run(struct protocol *pc, const struct config_group *g,
			     enum tune_strategy strat, int budget, uint64_t seed,
			     struct tcx_error *err)
{
	const struct strategy *row = (size_t)strat < ARRAY_SIZE(strategies) ? &strategies[strat]
									    : NULL;
	struct space sp;
	struct search se;
	struct pcg32 rng;
	struct solution d;
	enum tcx_status st;
	char label[64];

	if (!row)
		return tcx_fail(err, TCX_EINVAL, "not a search strategy");
	if (!row->run && g->candidates)
		return tcx_fail(err, TCX_EINVAL,
				"the protocol needs a config's steps: an expression is searched by "
				"the model, exhaustive, random, anneal or genetic strategy");
	if (!row->run)
		return protocol_run(pc, g, err);
	if (strat == STRAT_MODEL && !g->candidates)
		return tcx_fail(err, TCX_EINVAL,
				"the model strategy searches the space tcx builds for an expression "
				"(tcx tune EXPR), not a config's");
	solution_default(&d);
	pc->defaults = solution_to_json(&d);
	pc->initial = json_object();
	for (int s = 0; s < g->phase[PH_INITIAL].nsteps; s++)
		for (int k = 0; k < g->phase[PH_INITIAL].steps[s].nparams; k++) {
			const struct config_param *p = &g->phase[PH_INITIAL].steps[s].params[k];

			if (p->values && json_array_size(p->values) > 0)
				json_object_set(pc->initial, p->name, json_array_get(p->values, 0));
		}
	size_list_init(&pc->sizes, pc->c->nidx);
	size_list_init(&pc->final_sizes, pc->c->nidx);
	for (int s = 0; s < g->phase[PH_FINAL].nsteps && !pc->final_sizes.count; s++)
		if (g->phase[PH_FINAL].steps[s].has_sizes) {
			st = protocol_sizes_from_config(&g->phase[PH_FINAL].steps[s].sizes,
							pc->c->nidx, &pc->final_sizes, err);
			if (st)
				return st;
		}
	if (pc->final_sizes.count == 0) {
		struct size_range r;

		st = size_range_parse("[[64,64,64,512],0]", pc->c->nidx, &r, err);
		if (!st)
			st = size_range_expand(&r, pc->c->nidx, &pc->final_sizes, PROTOCOL_MAX_SIZES,
					       err);
		if (st)
			return st;
		size_list_sort_unique(&pc->final_sizes);
	}
	st = space_build(pc, g, &sp, err);
	if (st) {
		space_release(&sp);
		return st;
	}
	memset(&se, 0, sizeof(se));
	se.pc = pc;
	se.sp = &sp;
	se.tail = &se.list;
	pcg32_seed(&rng, seed, 0x7463785475ULL);
	if (budget <= 0)
		budget = 32;
	{
		const bool timed = strat == STRAT_MODEL && pc->t->o->budget_s > 0;
		int64_t evals = row->whole_space || timed ? sp.size
							  : (budget < sp.size ? budget : sp.size);

		se.limit = evals;
		pc->done = 0;
		pc->total = evals * (int64_t)pc->final_sizes.count;
		snprintf(label, sizeof(label), "%s", row->name);
		pc->step_label = label;
		if (g->candidates && timed)
			tcx_log(TCX_LOG_INFO, "  %s: the %lld candidates in the model's order, until "
				"%g s are spent, x %zu sizes",
				label, (long long)sp.size, pc->t->o->budget_s,
				pc->final_sizes.count);
		else if (g->candidates)
			tcx_log(TCX_LOG_INFO, "  %s: %lld of %lld candidates x %zu sizes", label,
				(long long)evals, (long long)sp.size, pc->final_sizes.count);
		else
			tcx_log(TCX_LOG_INFO,
				"  %s: %lld of %lld candidates (%d parameters) x %zu sizes", label,
				(long long)evals, (long long)sp.size, sp.ndims,
				pc->final_sizes.count);
	}
	st = row->run(&se, budget, &rng, err);
	if (!st && !pc->dry_run) {
		/* the evaluated candidates become the final sets, best first */
		struct evaluated **arr = calloc((size_t)(se.count ? se.count : 1), sizeof(*arr));
		int64_t n = 0;

		if (!arr) {
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		} else {
			for (struct evaluated *e = se.list; e; e = e->next)
				arr[n++] = e;
			qsort(arr, (size_t)n, sizeof(*arr), cmp_eval);
			pc->sets = calloc((size_t)(n ? n : 1), sizeof(*pc->sets));
			if (!pc->sets) {
				st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			} else {
				for (int64_t k = 0; k < n; k++) {
					json_t *perm = candidate(&sp, arr[k]->idx);
					const char *name;
					json_t *v;

					pc->sets[k].params = json_deep_copy(sp.base);
					json_object_foreach(perm, name, v)
						json_object_set(pc->sets[k].params, name, v);
					json_decref(perm);
					pc->sets[k].alive = !isinf(arr[k]->objective);
					pc->sets[k].score = arr[k]->objective;
				}
				pc->nsets = (int)n;
				if (n && !isinf(arr[0]->objective))
					tcx_log(TCX_LOG_INFO, "  %s: best summed time %.4f ms after %lld "
						"evaluations",
						label, arr[0]->objective, (long long)n);
				else if (n)
					st = tcx_fail(err, TCX_EREJECT,
						      "%s: none of the %lld candidates evaluated runs on "
						      "this device (see 'tcx tune --explain')",
						      label, (long long)n);
			}
			free(arr);
		}
	}
	while (se.list) {
		struct evaluated *e = se.list;

		se.list = e->next;
		free(e);
	}
	space_release(&sp);
	return st;
}
