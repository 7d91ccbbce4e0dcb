/* fit.c - the planner's model fitted from the results store, saved and
 * found again (fit.h). */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "backend/kcache.h"
#include "notation/notation.h"
#include "plan/fit.h"
#include "store/store.h"

#define MODEL_FORMAT 1

/* The rates the fit adjusts, by name in a model file. */
#define P(f) { #f, offsetof(struct plan_device, f) }
static const struct {
	const char *name;
	size_t off;
} params[] = {
	P(simt_flops),	  P(mma_flops),	    P(wgmma_flops),   P(mem_eff),	 P(uncoalesced),
	P(reread),	  P(launch_s),	    P(group_s),	      P(simt_iter_s),	 P(wg_group_s),
	P(wg_iter_s),	  P(eff_wg_wide),   P(eff_wg_square), P(eff_wg_one),	 P(eff_wg_small),
	P(eff_pack),	  P(eff_gather),    P(eff_mma),	      P(eff_simt_mid),	 P(eff_simt_small),
	P(gsu_bytes),	  P(gsu_launch_s),  P(eff_pack_simt), P(eff_simt_gather), P(eff_wg_near),
	P(eff_simt_ragged), P(eff_simt96_c), P(eff_ttm),	 P(eff_ttm_mem),
	P(eff_ttv_mem),
	P(eff_perm_tile), P(eff_cpu_wide), P(eff_cpu_line), P(eff_cpu_cols), P(cpu_cache_bw),
	P(cpu_group_s),
	P(eff_wg_copy),	  P(eff_wg_copy1),
};
#undef P

#define NPARAM ((int)ARRAY_SIZE(params))

static double *param(struct plan_device *m, int i)
{
	return (double *)((char *)m + params[i].off);
}

/* ---- the measurements ------------------------------------------------------ */

struct fit_prob {
	struct tcx_contraction *c; /* owned */
	struct problem p;
	int first, n;              /* its rows */
	int fold;
};

struct fit_row {
	struct kernel_plan k;
	double s; /* measured seconds */
};

struct fit_set {
	const struct device_info *dev;
	enum tcx_dtype t;
	struct fit_prob *probs;
	struct fit_row *rows;
	int np, nr, cap_p, cap_r;
	int skipped;
	char key[300];   /* the problem key and sizes of the last problem */
	bool key_bad;    /* that problem could not be read: skip its rows */
};

/* "Cijk_Ajli_Blk_S" (tune_problem_key: contraction_tensile_name, and
 * " strides SPEC" when the problem had explicit ones) back into a
 * contraction in Tensile notation whose index ids are the key's letters,
 * i = 0, j = 1, ...: the order of the store's sizes (store.h).  The
 * summed letters are listed in Sum[...] in that order, since without it
 * the notation would number them as A first names them ("Cij_Alkj_Blki_S"
 * from 'iml,jml->ij' would make l id 2).  False for what it cannot read,
 * or for a key that does not come back the same from the contraction. */
static bool key_contraction(const char *key, enum tcx_dtype t, struct tcx_contraction **c,
			    const char **strides)
{
	char name[256], expr[320], back[256], *tok[4], *save = NULL, *x;
	char sum[TCX_MAX_INDICES + 1] = "";
	const char *sp = strstr(key, " strides ");
	struct strbuf sb = STRBUF_INIT;
	size_t n = sp ? (size_t)(sp - key) : strlen(key);
	int nt = 0, ns = 0;
	bool ok;

	*c = NULL;
	*strides = sp ? sp + 9 : NULL;
	if (n >= sizeof(name))
		return false;
	memcpy(name, key, n);
	name[n] = '\0';
	for (x = strtok_r(name, "_", &save); x && nt < 4; x = strtok_r(NULL, "_", &save))
		tok[nt++] = x;
	if (nt != 4 || x || tok[0][0] != 'C' || tok[1][0] != 'A' || tok[2][0] != 'B' ||
	    tok[3][0] != dtype_info(t)->letter)
		return false;
	/* the letters of A and B that C lacks, in alphabetical order */
	for (char l = 'a'; l <= 'z'; l++)
		if (!strchr(tok[0] + 1, l) && (strchr(tok[1] + 1, l) || strchr(tok[2] + 1, l))) {
			if (ns == TCX_MAX_INDICES)
				return false;
			sum[ns++] = l;
		}
	for (int k = 0; k < 3; k++) {
		const char *ix = tok[k] + 1;
		size_t len = strlen(ix);
		bool conj = k > 0 && len > 0 && ix[len - 1] == 'C';

		if (conj)
			len--;
		strbuf_adds(&sb, k == 0 ? "" : k == 1 ? "=" : "*");
		for (int j = 0; k == 1 && j < ns; j++)
			strbuf_addf(&sb, "%s%c%s", j ? "," : "Sum[", sum[j],
				    j == ns - 1 ? "] " : "");
		strbuf_addf(&sb, "%s%s[", conj ? "conj(" : "", k == 0 ? "C" : k == 1 ? "A" : "B");
		for (size_t j = 0; j < len; j++)
			strbuf_addf(&sb, "%s%c", j ? "," : "", ix[j]);
		strbuf_addf(&sb, "]%s", conj ? ")" : "");
	}
	ok = strbuf_status(&sb, NULL) == TCX_OK && sb.len < sizeof(expr);
	if (ok)
		snprintf(expr, sizeof(expr), "%s", strbuf_str(&sb));
	strbuf_release(&sb);
	if (!ok || notation_parse(expr, t, LAYOUT_BY_STYLE, c, NULL) != TCX_OK)
		return false;
	(*c)->use_beta = strchr(tok[3] + 1, 'B') != NULL;
	(*c)->hpa = strchr(tok[3] + 1, 'H') != NULL;
	contraction_tensile_name(*c, back, sizeof(back));
	if (strlen(back) != n || strncmp(back, key, n) != 0) {
		contraction_free(*c);
		*c = NULL;
		return false;
	}
	return true;
}

static bool grow(void **v, int *cap, int need, size_t size)
{
	void *nv;
	int nc;

	if (need <= *cap)
		return true;
	nc = *cap ? *cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	nv = realloc(*v, (size_t)nc * size);
	if (!nv)
		return false;
	*v = nv;
	*cap = nc;
	return true;
}

/* A problem's fold: a hash of its key, so that the folds do not depend
 * on the order of the store. */
static int fold_of(const char *key, int folds)
{
	return (int)(common_hash64(key, strlen(key), 0) % (uint64_t)folds);
}

#define FOLDS 4

/* store_query's callback: rows come ordered by problem, then sizes. */
static int add_row(const struct measurement *mr, void *ctx)
{
	struct fit_set *fs = ctx;
	char key[300];
	struct fit_prob *pb;
	struct fit_row *r;
	struct solution s;
	json_t *o;
	int len;

	len = snprintf(key, sizeof(key), "%s|", mr->problem);
	for (int k = 0; k < mr->nidx && len < (int)sizeof(key); k++)
		len += snprintf(key + len, sizeof(key) - (size_t)len, "%lld,", (long long)mr->sizes[k]);
	if (strcmp(key, fs->key) != 0) {
		struct tcx_contraction *c;
		const char *strides;

		snprintf(fs->key, sizeof(fs->key), "%s", key);
		fs->key_bad = true;
		if (!key_contraction(mr->problem, fs->t, &c, &strides))
			return 0; /* another type, or a key this tcx cannot read */
		if (!grow((void **)&fs->probs, &fs->cap_p, fs->np + 1, sizeof(*fs->probs))) {
			contraction_free(c);
			return 1;
		}
		pb = &fs->probs[fs->np];
		memset(pb, 0, sizeof(*pb));
		pb->c = c;
		if (c->nidx != mr->nidx || problem_init(&pb->p, c, mr->sizes, NULL) != TCX_OK ||
		    (strides && problem_parse_strides(&pb->p, strides, NULL) != TCX_OK)) {
			contraction_free(c);
			fs->skipped++;
			return 0;
		}
		pb->first = fs->nr;
		pb->fold = fold_of(key, FOLDS);
		fs->np++;
		fs->key_bad = false;
	}
	if (fs->key_bad)
		return 0;
	pb = &fs->probs[fs->np - 1];
	o = json_loads(mr->solution, 0, NULL);
	if (!o || solution_from_json(&s, o, NULL) != TCX_OK || !(mr->median_ms > 0)) {
		json_decref(o);
		fs->skipped++;
		return 0;
	}
	json_decref(o);
	if (!grow((void **)&fs->rows, &fs->cap_r, fs->nr + 1, sizeof(*fs->rows)))
		return 1;
	r = &fs->rows[fs->nr];
	if (plan_make(pb->c, &pb->p, &s, fs->dev, &r->k, NULL) != TCX_OK ||
	    plan_accepts(&r->k, &pb->p, NULL) != TCX_OK) {
		fs->skipped++;
		return 0;
	}
	r->s = mr->median_ms * 1e-3;
	fs->nr++;
	pb->n++;
	return 0;
}

static void fit_set_free(struct fit_set *fs)
{
	for (int k = 0; k < fs->np; k++)
		contraction_free(fs->probs[k].c);
	free(fs->probs);
	free(fs->rows);
}

/* ---- the loss ---------------------------------------------------------------- */

/* Which problems a pass looks at: all, one fold only, or all but one. */
struct subset {
	int fold;     /* -1: all */
	bool exclude; /* all but fold */
};

static bool in_subset(const struct fit_prob *pb, struct subset sub)
{
	return sub.fold < 0 || (pb->fold == sub.fold) != sub.exclude;
}

/* For each problem of the subset with two or more rows: the share of the
 * best time that the model's first choice reaches, into shares (when
 * not NULL); returns the loss: the mean -log(share), plus half the
 * mean squared log error of the predictions. */
static double evaluate(const struct plan_device *m, const struct fit_set *fs, struct subset sub,
		       double *shares, int *nshares)
{
	double regret = 0, sq = 0;
	int np = 0, nr = 0;

	for (int k = 0; k < fs->np; k++) {
		const struct fit_prob *pb = &fs->probs[k];
		double best = INFINITY, pick_t = INFINITY, pick_s = 0;

		if (!in_subset(pb, sub) || pb->n < 2)
			continue;
		for (int j = pb->first; j < pb->first + pb->n; j++) {
			const struct fit_row *r = &fs->rows[j];
			struct plan_choice ch;
			double e;

			plan_predict(m, &pb->p, &r->k, &ch);
			if (r->s < best)
				best = r->s;
			if (ch.time_s < pick_t) {
				pick_t = ch.time_s;
				pick_s = r->s;
			}
			e = log(ch.time_s / r->s);
			sq += isfinite(e) ? e * e : 100;
			nr++;
		}
		if (shares)
			shares[np] = best / pick_s;
		regret += log(pick_s / best);
		np++;
	}
	if (nshares)
		*nshares = np;
	return np ? regret / np + 0.5 * sq / nr : 0;
}

static int cmp_detail(const void *a, const void *b)
{
	const double x = ((const struct fit_detail *)a)->share,
		     y = ((const struct fit_detail *)b)->share;

	return x < y ? -1 : x > y;
}

/* Each problem's first choice under m and its fastest candidate, least
 * share first. */
static enum tcx_status details(const struct plan_device *m, const struct fit_set *fs,
			       struct fit_report *rep, struct tcx_error *err)
{
	rep->details = calloc((size_t)fs->np, sizeof(*rep->details));
	if (!rep->details)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (int k = 0; k < fs->np; k++) {
		const struct fit_prob *pb = &fs->probs[k];
		struct fit_detail *d = &rep->details[rep->ndetails];
		double pick_t = INFINITY;

		if (pb->n < 2)
			continue;
		contraction_tensile_name(pb->c, d->problem, sizeof(d->problem));
		d->nidx = pb->c->nidx;
		memcpy(d->sizes, pb->p.size, sizeof(int64_t) * (size_t)d->nidx);
		d->rows = pb->n;
		d->best_s = INFINITY;
		for (int j = pb->first; j < pb->first + pb->n; j++) {
			const struct fit_row *r = &fs->rows[j];
			struct plan_choice ch;

			plan_predict(m, &pb->p, &r->k, &ch);
			if (r->s < d->best_s) {
				d->best_s = r->s;
				d->best_pred_s = ch.time_s;
				d->best = r->k.sol;
			}
			if (ch.time_s < pick_t) {
				pick_t = ch.time_s;
				d->pick_s = r->s;
				d->pick_pred_s = ch.time_s;
				d->pick = r->k.sol;
			}
		}
		d->share = d->best_s / d->pick_s;
		rep->ndetails++;
	}
	qsort(rep->details, (size_t)rep->ndetails, sizeof(*rep->details), cmp_detail);
	return TCX_OK;
}

void plan_fit_report_free(struct fit_report *rep)
{
	if (!rep)
		return;
	free(rep->details);
	rep->details = NULL;
	rep->ndetails = 0;
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void quality(double *shares, int n, struct fit_quality *q)
{
	double sum = 0;

	q->problems = n;
	q->mean = q->p10 = 0;
	if (n == 0)
		return;
	qsort(shares, (size_t)n, sizeof(*shares), cmp_double);
	for (int k = 0; k < n; k++)
		sum += shares[k];
	q->mean = sum / n;
	q->p10 = shares[(int)ceil(0.1 * n) - 1];
}

/* Coordinate descent over the logarithms of the rates, on the problems of
 * sub: each rate in turn tried at 2^(j/4) times its value, j = -8..8,
 * keeping the best, until a sweep improves nothing.  A pull towards the
 * built-in values (which measurements of other problems set: the planner's
 * tests hold some) keeps the rates the store says little about near them:
 * on an H200's store of 38 problems a weak pull (0.002 a squared log)
 * fitted its own problems better but chose worse on problems it had not
 * seen than this one (0.1). */
static void descend(struct plan_device *m, const struct plan_device *base,
		    const struct fit_set *fs, struct subset sub)
{
	double cur;

	cur = evaluate(m, fs, sub, NULL, NULL);
	for (int sweep = 0; sweep < 8; sweep++) {
		bool moved = false;

		for (int i = 0; i < NPARAM; i++) {
			const double v0 = *param(m, i), b = *param((struct plan_device *)base, i);
			double best_v = v0, best = cur;

			if (!(v0 > 0) || !(b > 0))
				continue;
			for (int j = -8; j <= 8; j++) {
				const double v = v0 * pow(2.0, j / 4.0), d = log(v / b);
				double l;

				if (j == 0)
					continue;
				*param(m, i) = v;
				l = evaluate(m, fs, sub, NULL, NULL) + 0.1 * d * d;
				if (l < best - 1e-9) {
					best = l;
					best_v = v;
				}
			}
			*param(m, i) = best_v;
			if (best_v != v0) {
				cur = best;
				moved = true;
			}
		}
		if (!moved)
			break;
	}
}

enum tcx_status plan_fit(const char *db, const struct device_info *dev, enum tcx_dtype t,
			 struct plan_device *m, struct fit_report *rep, struct tcx_error *err)
{
	struct store_filter f = { dev->name, NULL, NULL, MEAS_OK };
	struct fit_set fs = { 0 };
	struct plan_device base;
	struct store *s = NULL;
	double *held_b = NULL, *held_f = NULL, *all = NULL;
	int nheld = 0, n;
	enum tcx_status st;

	memset(rep, 0, sizeof(*rep));
	plan_device_defaults(dev, t, &base);
	*m = base;
	fs.dev = dev;
	fs.t = t;
	st = store_open(db, false, &s, err);
	if (st)
		return st;
	st = store_query(s, &f, add_row, &fs, err);
	store_close(s);
	if (st)
		goto out;
	if (fs.np < 3) {
		st = tcx_fail(err, TCX_EINVAL,
			      "'%s' holds measurements of %d problem%s of '%s' in %s: the fit needs 3 "
			      "or more (measure some with 'tcx tune EXPR --db %s' or 'tcx bench EXPR "
			      "--db %s')",
			      db, fs.np, fs.np == 1 ? "" : "s", dev->name, dtype_info(t)->name, db, db);
		goto out;
	}
	held_b = calloc((size_t)fs.np, sizeof(*held_b));
	held_f = calloc((size_t)fs.np, sizeof(*held_f));
	all = calloc((size_t)fs.np, sizeof(*all));
	if (!held_b || !held_f || !all) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		goto out;
	}
	rep->rows = fs.nr;
	rep->problems = fs.np;
	rep->skipped = fs.skipped;
	/* held out: each fold's problems chosen by a model fitted on the others */
	if (fs.np >= 2 * FOLDS) {
		rep->folds = FOLDS;
		for (int k = 0; k < FOLDS; k++) {
			struct plan_device fm = base;
			const struct subset train = { k, true }, test = { k, false };

			descend(&fm, &base, &fs, train);
			evaluate(&base, &fs, test, held_b + nheld, &n);
			evaluate(&fm, &fs, test, held_f + nheld, &n);
			nheld += n;
		}
		quality(held_b, nheld, &rep->builtin_held);
		quality(held_f, nheld, &rep->fitted_held);
	}
	{
		const struct subset every = { -1, false };

		evaluate(&base, &fs, every, all, &n);
		quality(all, n, &rep->builtin_all);
		descend(m, &base, &fs, every);
		evaluate(m, &fs, every, all, &n);
		quality(all, n, &rep->fitted_all);
		st = details(m, &fs, rep, err);
	}
	m->fit_rows = fs.nr;
	m->fit_problems = fs.np;
out:
	free(held_b);
	free(held_f);
	free(all);
	fit_set_free(&fs);
	return st;
}

/* ---- model files ------------------------------------------------------------- */

void plan_model_name(const char *device, enum tcx_dtype t, char *buf, size_t len)
{
	size_t n = 0;
	bool dash = false;

	for (const char *s = device; *s && n + 8 < len; s++) {
		const char ch = *s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
			if (dash && n > 0)
				buf[n++] = '-';
			buf[n++] = ch;
			dash = false;
		} else if (ch >= 'A' && ch <= 'Z') {
			if (dash && n > 0)
				buf[n++] = '-';
			buf[n++] = (char)(ch - 'A' + 'a');
			dash = false;
		} else {
			dash = true;
		}
	}
	snprintf(buf + n, len - n, "-%c.json", dtype_info(t)->letter + ('a' - 'A'));
}

json_t *plan_fit_quality_json(const struct fit_quality *q)
{
	json_t *o = json_object();

	json_object_set_new(o, "problems", json_integer(q->problems));
	json_object_set_new(o, "mean", json_real(q->mean));
	json_object_set_new(o, "p10", json_real(q->p10));
	return o;
}

enum tcx_status plan_model_write(const char *path, const struct plan_device *m, enum tcx_dtype t,
				 const struct fit_report *rep, struct tcx_error *err)
{
	json_t *o = json_object(), *ps = json_object(), *held = json_object();
	struct atomic_file af;
	enum tcx_status st;
	char letter[2] = { (char)(dtype_info(t)->letter + ('a' - 'A')), '\0' };

	json_object_set_new(o, "tcx_model", json_integer(MODEL_FORMAT));
	json_object_set_new(o, "device", json_string(m->name));
	json_object_set_new(o, "type", json_string(letter));
	json_object_set_new(o, "measurements", json_integer(rep->rows));
	json_object_set_new(o, "problems", json_integer(rep->problems));
	json_object_set_new(held, "folds", json_integer(rep->folds));
	json_object_set_new(held, "builtin", plan_fit_quality_json(&rep->builtin_held));
	json_object_set_new(held, "fitted", plan_fit_quality_json(&rep->fitted_held));
	json_object_set_new(o, "held_out", held);
	for (int i = 0; i < NPARAM; i++)
		json_object_set_new(ps, params[i].name,
				    json_real(*param((struct plan_device *)m, i)));
	json_object_set_new(o, "params", ps);
	st = atomic_file_open(&af, path, err);
	if (!st) {
		if (json_dumpf(o, af.fp, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) != 0 ||
		    fputc('\n', af.fp) == EOF) {
			atomic_file_abort(&af);
			st = tcx_fail(err, TCX_EIO, "cannot write '%s': %s", path, strerror(errno));
		} else {
			st = atomic_file_commit(&af, err);
		}
	}
	json_decref(o);
	return st;
}

/* Applies model text (from `where`, a file of the given origin) to m.
 * *match: it is for dev and t; when not, m is left as it is. */
static enum tcx_status apply_model(const char *text, size_t len, const char *where,
				   enum plan_model_origin origin, const struct device_info *dev,
				   enum tcx_dtype t, struct plan_device *m, bool *match,
				   struct tcx_error *err)
{
	const char letter = (char)(dtype_info(t)->letter + ('a' - 'A'));
	json_error_t je;
	json_t *o = json_loadb(text, len, 0, &je), *ps, *v;
	struct plan_device x = *m;
	const char *dn, *tn, *key;
	enum tcx_status st = TCX_OK;

	*match = false;
	if (!o)
		return tcx_fail(err, TCX_ECORRUPT, "model '%s': line %d: %s", where, je.line, je.text);
	dn = json_string_value(json_object_get(o, "device"));
	tn = json_string_value(json_object_get(o, "type"));
	ps = json_object_get(o, "params");
	if (json_integer_value(json_object_get(o, "tcx_model")) != MODEL_FORMAT || !dn || !tn ||
	    !json_is_object(ps)) {
		st = tcx_fail(err, TCX_ECORRUPT,
			      "model '%s' is not a tcx model of format %d (tcx_model, device, type "
			      "and params are needed)",
			      where, MODEL_FORMAT);
		goto out;
	}
	if (strcmp(dn, dev->name) != 0 || tn[0] != letter || tn[1])
		goto out;
	json_object_foreach(ps, key, v)
	{
		int i = 0;

		while (i < NPARAM && strcmp(params[i].name, key) != 0)
			i++;
		if (i == NPARAM)
			continue; /* a rate a newer tcx fits */
		if (!json_is_number(v) || !(json_number_value(v) >= 0) ||
		    !isfinite(json_number_value(v))) {
			st = tcx_fail(err, TCX_ECORRUPT, "model '%s': '%s' must be a number >= 0",
				      where, key);
			goto out;
		}
		*param(&x, i) = json_number_value(v);
	}
	snprintf(x.source, sizeof(x.source), "%s", where);
	x.origin = origin;
	x.fit_rows = (int)json_integer_value(json_object_get(o, "measurements"));
	x.fit_problems = (int)json_integer_value(json_object_get(o, "problems"));
	*m = x;
	*match = true;
out:
	json_decref(o);
	return st;
}

static enum tcx_status apply_file(const char *path, enum plan_model_origin origin,
				  const struct device_info *dev, enum tcx_dtype t,
				  struct plan_device *m, bool *match, struct tcx_error *err)
{
	char *text = NULL;
	size_t len = 0;
	enum tcx_status st = common_read_file(path, &text, &len, err);

	if (!st)
		st = apply_model(text, len, path, origin, dev, t, m, match, err);
	free(text);
	return st;
}

/* Applies the model file `name` in folder dir (which gets the name
 * appended) where there is one; none there is no error. */
static enum tcx_status apply_found(struct strbuf *dir, const char *name,
				   enum plan_model_origin origin, const struct device_info *dev,
				   enum tcx_dtype t, struct plan_device *m, bool *match,
				   struct tcx_error *err)
{
	struct stat sb;
	enum tcx_status st;

	strbuf_addf(dir, "/%s", name);
	st = strbuf_status(dir, err);
	if (st || stat(strbuf_str(dir), &sb) != 0)
		return st;
	return apply_file(strbuf_str(dir), origin, dev, t, m, match, err);
}

/* The folder of the file this code was loaded from, appended to out:
 * libtcx's (*in_lib) when it runs as the shared library, else the
 * program's, into which tcxcore is linked.  False when the system cannot
 * say. */
static bool code_dir(struct strbuf *out, bool *in_lib)
{
	const char *file = "/proc/self/exe";
	char *path, *slash;

	*in_lib = false;
#ifdef __GLIBC__ /* dladdr1 and RTLD_DL_LINKMAP (an enum, not a macro) */
	{
		struct link_map *lm = NULL;
		Dl_info info;

		/* the program's own link map is the one with no name */
		if (dladdr1((void *)&plan_model_find, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm &&
		    lm->l_name && lm->l_name[0]) {
			file = lm->l_name;
			*in_lib = true;
		}
	}
#endif
	path = realpath(file, NULL);
	if (!path)
		return false;
	slash = strrchr(path, '/');
	strbuf_add(out, path, slash ? (size_t)(slash - path) : 0);
	free(path);
	return true;
}

/* The folder of the models shipped with tcx, appended to out (nothing
 * when there is none): $TCX_MODELS_DIR; else share/tcx/models of the
 * installation this code runs from, found from the place of the program
 * or of libtcx, so that it moves with the prefix an install chose
 * (`cmake --install --prefix`, the Debian package's /usr); else, for a
 * program run from its build tree (which has no such folder beside it),
 * the source tree's share/models.  lib/CMakeLists.txt defines the
 * places. */
static void shipped_dir(struct strbuf *out)
{
	const char *env = getenv("TCX_MODELS_DIR");
	struct stat sb;

	if (env && *env) {
		strbuf_adds(out, env);
		return;
	}
#if defined(TCX_MODELS_FROM_BIN) && defined(TCX_MODELS_FROM_LIB)
	bool in_lib;

	/* absolute: install folders that do not move with the prefix */
	if (TCX_MODELS_FROM_BIN[0] == '/') {
		strbuf_adds(out, TCX_MODELS_FROM_BIN);
	} else if (code_dir(out, &in_lib)) {
		/* named without the "bin/../" */
		char *dir;

		strbuf_addf(out, "/%s", in_lib ? TCX_MODELS_FROM_LIB : TCX_MODELS_FROM_BIN);
		dir = realpath(strbuf_str(out), NULL);
		strbuf_reset(out);
		if (dir)
			strbuf_adds(out, dir);
		free(dir);
	}
	if (strbuf_str(out)[0] && stat(strbuf_str(out), &sb) == 0 && S_ISDIR(sb.st_mode))
		return;
	strbuf_reset(out);
#endif
#ifdef TCX_MODELS_SOURCE_DIR
	if (stat(TCX_MODELS_SOURCE_DIR, &sb) == 0 && S_ISDIR(sb.st_mode))
		strbuf_adds(out, TCX_MODELS_SOURCE_DIR);
#endif
}

enum tcx_status plan_model_find(const struct device_info *dev, enum tcx_dtype t,
				struct plan_device *m, struct tcx_error *err)
{
	const char *env = getenv("TCX_MODEL");
	struct strbuf path = STRBUF_INIT;
	char name[160];
	enum tcx_status st = TCX_OK;
	bool match = false;

	if (env && *env) {
		if (strcmp(env, "none") == 0)
			return TCX_OK;
		st = apply_file(env, PLAN_MODEL_ENV, dev, t, m, &match, err);
		if (!st && !match)
			st = tcx_fail(err, TCX_EINVAL,
				      "model '%s' (TCX_MODEL) is not one of '%s' in %s", env,
				      dev->name, dtype_info(t)->name);
		return st;
	}
	/* the user's own fitted model, else the shipped one: either is passed
	 * over where it is for another device or type */
	plan_model_name(dev->name, t, name, sizeof(name));
	if (tcx_cache_path("models", &path, NULL) == TCX_OK)
		st = apply_found(&path, name, PLAN_MODEL_FITTED, dev, t, m, &match, err);
	if (!st && !match) {
		strbuf_reset(&path);
		shipped_dir(&path);
		if (strbuf_str(&path)[0])
			st = apply_found(&path, name, PLAN_MODEL_SHIPPED, dev, t, m, &match, err);
	}
	strbuf_release(&path);
	return st;
}
