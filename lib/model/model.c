/* model.c - element types, index bookkeeping, problem instances (sizes and
 * strides), and the D0/D1/DU classification. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/model.h"

static const struct dtype_info dtypes[] = {
	{ TCX_DTYPE_S, 'S', "fp32", "float", 4, false, 4, 5.9604644775390625e-08, 0 },
	{ TCX_DTYPE_D, 'D', "fp64", "double", 8, false, 8, 1.1102230246251565e-16, 1 },
	{ TCX_DTYPE_C, 'C', "complex fp32", "float2", 8, true, 4, 5.9604644775390625e-08, 2 },
	{ TCX_DTYPE_Z, 'Z', "complex fp64", "double2", 16, true, 8, 1.1102230246251565e-16, 3 },
	{ TCX_DTYPE_H, 'H', "fp16", "half", 2, false, 2, 4.8828125e-04, 4 },
	{ TCX_DTYPE_B, 'B', "bf16", "ushort", 2, false, 2, 3.90625e-03, 7 },
};

const struct dtype_info *dtype_info(enum tcx_dtype t)
{
	for (size_t k = 0; k < ARRAY_SIZE(dtypes); k++)
		if (dtypes[k].dtype == t)
			return &dtypes[k];
	return NULL;
}

bool dtype_parse(const char *s, enum tcx_dtype *out)
{
	static const struct {
		const char *name;
		enum tcx_dtype t;
	} names[] = {
		{ "s", TCX_DTYPE_S },	   { "fp32", TCX_DTYPE_S },    { "float", TCX_DTYPE_S },
		{ "float32", TCX_DTYPE_S }, { "single", TCX_DTYPE_S },  { "d", TCX_DTYPE_D },
		{ "fp64", TCX_DTYPE_D },    { "double", TCX_DTYPE_D },  { "float64", TCX_DTYPE_D },
		{ "c", TCX_DTYPE_C },	   { "complex64", TCX_DTYPE_C }, { "cfp32", TCX_DTYPE_C },
		{ "z", TCX_DTYPE_Z },	   { "complex128", TCX_DTYPE_Z }, { "cfp64", TCX_DTYPE_Z },
		{ "h", TCX_DTYPE_H },	   { "fp16", TCX_DTYPE_H },    { "half", TCX_DTYPE_H },
		{ "float16", TCX_DTYPE_H }, { "b", TCX_DTYPE_B },	{ "bf16", TCX_DTYPE_B },
		{ "bfloat16", TCX_DTYPE_B },
	};
	int64_t num;

	if (!s)
		return false;
	for (size_t k = 0; k < ARRAY_SIZE(names); k++)
		if (strcasecmp(s, names[k].name) == 0) {
			*out = names[k].t;
			return true;
		}
	if (common_parse_i64(s, &num))
		for (size_t k = 0; k < ARRAY_SIZE(dtypes); k++)
			if (dtypes[k].tensile_number == num) {
				*out = dtypes[k].dtype;
				return true;
			}
	return false;
}

int contraction_dims(const struct tcx_contraction *c, enum tensor_role t, int *ids)
{
	int n = c->rank[t];

	for (int k = 0; k < n; k++)
		ids[k] = c->written[t][c->layout == LAYOUT_FIRST_FASTEST ? k : n - 1 - k];
	return n;
}

int contraction_positional_order(const struct tcx_contraction *c, int *ids)
{
	int n = 0;

	if (c->style != NOTATION_EINSUM) {
		for (int id = 0; id < c->nidx; id++)
			ids[id] = id;
		return c->nidx;
	}
	for (int k = 0; k < c->rank[T_C]; k++)
		ids[n++] = c->written[T_C][k];
	/* the bound ids follow C's, numbered by first appearance in A (every
	 * bound index is in A and B) */
	for (int id = 0; id < c->nidx; id++)
		if (c->idx[id].cls == IDX_BOUND)
			ids[n++] = id;
	return n;
}

static const char index_chars[] = "ijklmnopqrstuvwxyz";

void problem_tensile_name(const struct tcx_contraction *c, const struct problem *p, char *buf,
			  size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	int ids[TCX_MAX_INDICES], tid[TCX_MAX_INDICES];
	static const char prefix[3] = { 'C', 'A', 'B' };

	model_tensile_ids(c, p, tid);
	for (int t = 0; t < 3; t++) {
		int n = model_memory_order(c, p, (enum tensor_role)t, ids);

		if (t)
			strbuf_addc(&sb, '_');
		strbuf_addc(&sb, prefix[t]);
		for (int k = 0; k < n; k++)
			strbuf_addc(&sb, index_chars[tid[ids[k]]]);
		if (t && c->conj[t])
			strbuf_addc(&sb, 'C');
	}
	strbuf_addf(&sb, "_%c", dtype_info(c->dtype)->letter);
	if (c->use_beta)
		strbuf_addc(&sb, 'B');
	if (c->hpa)
		strbuf_addc(&sb, 'H');
	snprintf(buf, len, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
}

void contraction_tensile_name(const struct tcx_contraction *c, char *buf, size_t len)
{
	problem_tensile_name(c, NULL, buf, len);
}

int contraction_find(const struct tcx_contraction *c, const char *name)
{
	for (int id = 0; id < c->nidx; id++)
		if (strcmp(c->idx[id].name, name) == 0)
			return id;
	return -1;
}

const char *index_class_name(enum index_class k)
{
	switch (k) {
	case IDX_FREE_A:
		return "free-A";
	case IDX_FREE_B:
		return "free-B";
	case IDX_BATCH:
		return "batch";
	case IDX_BOUND:
		return "bound";
	}
	return "?";
}

int contraction_count(const struct tcx_contraction *c, enum index_class k)
{
	int n = 0;

	for (int id = 0; id < c->nidx; id++)
		n += c->idx[id].cls == k;
	return n;
}

enum tcx_status contraction_clone(const struct tcx_contraction *c, struct tcx_contraction **out,
				  struct tcx_error *err)
{
	struct tcx_contraction *d = malloc(sizeof(*d));

	*out = NULL;
	if (!d)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	*d = *c;
	d->expr = strdup(c->expr);
	if (!d->expr) {
		free(d);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	*out = d;
	return TCX_OK;
}

static const char *const tensor_label[3] = { "C", "A", "B" };

static enum tcx_status compute_extent(struct problem *p, enum tensor_role t,
				      struct tcx_error *err)
{
	const struct tcx_contraction *c = p->c;
	int64_t ext = 1, bytes;

	for (int k = 0; k < c->rank[t]; k++)
		if (p->size[c->written[t][k]] == 0) {
			p->extent[t] = 0; /* no elements */
			return TCX_OK;
		}
	for (int k = 0; k < c->rank[t]; k++) {
		int id = c->written[t][k];
		int64_t span;

		if (common_mul_overflows_i64(p->size[id] - 1, p->stride[t][id], &span) ||
		    common_add_overflows_i64(ext, span, &ext))
			return tcx_fail(err, TCX_ERANGE,
					"tensor %s is too large: its element count overflows 64 bits",
					tensor_label[t]);
	}
	if (common_mul_overflows_i64(ext, dtype_info(c->dtype)->bytes, &bytes))
		return tcx_fail(err, TCX_ERANGE,
				"tensor %s is too large: its byte count overflows 64 bits",
				tensor_label[t]);
	p->extent[t] = ext;
	return TCX_OK;
}

enum tcx_status problem_init(struct problem *p, const struct tcx_contraction *c,
			     const int64_t *sizes, struct tcx_error *err)
{
	enum tcx_status st;
	int ids[TCX_MAX_INDICES];

	memset(p, 0, sizeof(*p));
	p->c = c;
	for (int id = 0; id < c->nidx; id++) {
		if (sizes[id] < 0)
			return tcx_fail(err, TCX_ERANGE,
					"size of index '%s' must be at least 0 (got %lld)",
					c->idx[id].name, (long long)sizes[id]);
		p->size[id] = sizes[id];
	}
	for (int t = 0; t < 3; t++) {
		int64_t s = 1;
		int n = contraction_dims(c, (enum tensor_role)t, ids);

		for (int k = 0; k < n; k++) {
			p->stride[t][ids[k]] = s;
			if (common_mul_overflows_i64(s, p->size[ids[k]] ? p->size[ids[k]] : 1, &s))
				return tcx_fail(err, TCX_ERANGE,
						"tensor %s is too large: its element count "
						"overflows 64 bits",
						tensor_label[t]);
		}
		st = compute_extent(p, (enum tensor_role)t, err);
		if (st)
			return st;
	}
	return TCX_OK;
}

int problem_empty_index(const struct problem *p)
{
	int bound = -1;

	for (int id = 0; id < p->c->nidx; id++)
		if (p->size[id] == 0) {
			if (p->c->idx[id].cls != IDX_BOUND)
				return id;
			if (bound < 0)
				bound = id;
		}
	return bound;
}

enum tcx_status problem_set_strides(struct problem *p, enum tensor_role t, const int64_t *written,
				    int n, struct tcx_error *err)
{
	const struct tcx_contraction *c = p->c;

	if (n != c->rank[t])
		return tcx_fail(err, TCX_EINVAL, "tensor %s has %d indices but %d strides were given",
				tensor_label[t], c->rank[t], n);
	for (int k = 0; k < n; k++) {
		if (written[k] < 0 || (t == T_C && written[k] == 0 && p->size[c->written[t][k]] > 1))
			return tcx_fail(err, TCX_EINVAL,
					"stride %lld of index '%s' in %s is not allowed (%s)",
					(long long)written[k], c->idx[c->written[t][k]].name,
					tensor_label[t],
					written[k] < 0 ? "negative strides are not supported"
						       : "two output elements would share an address");
		p->stride[t][c->written[t][k]] = written[k];
	}
	p->explicit_strides = true;
	return compute_extent(p, t, err);
}

static enum tcx_status parse_stride_list(const char *s, size_t len, int64_t *out, int *n,
					 struct tcx_error *err)
{
	char buf[512];
	char *tok, *save = NULL;

	*n = 0;
	if (len >= sizeof(buf))
		return tcx_fail(err, TCX_EPARSE, "stride list too long");
	memcpy(buf, s, len);
	buf[len] = '\0';
	for (tok = strtok_r(buf, ",: []", &save); tok; tok = strtok_r(NULL, ",: []", &save)) {
		if (*n >= TCX_MAX_INDICES)
			return tcx_fail(err, TCX_EPARSE, "more than %d strides", TCX_MAX_INDICES);
		if (!common_parse_i64(tok, &out[*n]))
			return tcx_fail(err, TCX_EPARSE, "stride '%s' is not an integer", tok);
		(*n)++;
	}
	return TCX_OK;
}

/* The next "TENSOR=[s0,s1,...]" of spec at *s: its tensor role and its
 * strides in written order; moves *s past it. */
static enum tcx_status next_strides(const struct tcx_contraction *c, const char *spec,
				    const char **s, int *t, int64_t *v, int *n,
				    struct tcx_error *err)
{
	const char *eq = strchr(*s, '='), *end;
	char name[TCX_INDEX_NAME_MAX];
	int depth = 0;
	enum tcx_status st;

	if (!eq || eq == *s || (size_t)(eq - *s) >= sizeof(name))
		return tcx_fail(err, TCX_EPARSE,
				"cannot parse strides '%s': expected TENSOR=[s0,s1,...]", spec);
	memcpy(name, *s, (size_t)(eq - *s));
	name[eq - *s] = '\0';
	*t = -1;
	for (int k = 0; k < 3; k++)
		if (strcmp(name, tensor_label[k]) == 0 || strcmp(name, c->tensor_name[k]) == 0)
			*t = k;
	if (*t < 0)
		return tcx_fail(err, TCX_EINVAL,
				"unknown tensor '%s' in strides (expected A, B or C)", name);
	/* the list runs to a ';', or to a ',' that starts "NAME=" */
	for (end = eq + 1; *end; end++) {
		if (*end == '[')
			depth++;
		else if (*end == ']')
			depth--;
		if (depth != 0)
			continue;
		if (*end == ';')
			break;
		if (*end == ',') {
			const char *q = end + 1;

			while (*q == ' ')
				q++;
			while (*q && (isalnum((unsigned char)*q) || *q == '_'))
				q++;
			if (*q == '=')
				break;
		}
	}
	if (depth != 0)
		return tcx_fail(err, TCX_EPARSE, "unbalanced brackets in strides '%s'", spec);
	st = parse_stride_list(eq + 1, (size_t)(end - eq - 1), v, n, err);
	*s = *end ? end + 1 : end;
	return st;
}

enum tcx_status problem_parse_strides(struct problem *p, const char *spec,
				      struct tcx_error *err)
{
	const char *s = spec;
	enum tcx_status st;

	while (*s) {
		int64_t v[TCX_MAX_INDICES];
		int n, t;

		st = next_strides(p->c, spec, &s, &t, v, &n, err);
		if (st)
			return st;
		st = problem_set_strides(p, (enum tensor_role)t, v, n, err);
		if (st)
			return st;
	}
	return problem_check_alias(p, err);
}

enum tcx_status problem_strides_key(const struct tcx_contraction *c, const char *spec,
				    char *buf, size_t len, struct tcx_error *err)
{
	static const int order[3] = { T_A, T_B, T_C };
	int64_t v[3][TCX_MAX_INDICES];
	bool given[3] = { false, false, false };
	struct strbuf sb = STRBUF_INIT;
	const char *s = spec;
	enum tcx_status st = TCX_OK;

	while (*s && !st) {
		int64_t w[TCX_MAX_INDICES];
		int n, t;

		st = next_strides(c, spec, &s, &t, w, &n, err);
		if (!st && n != c->rank[t])
			st = tcx_fail(err, TCX_EINVAL,
				      "tensor %s has %d indices but %d strides were given",
				      tensor_label[t], c->rank[t], n);
		if (st)
			break;
		/* in the order of the key's letters: the tensor's dimensions
		 * from the fastest outward, as the layout has them */
		for (int k = 0; k < n; k++)
			v[t][k] = w[c->layout == LAYOUT_FIRST_FASTEST ? k : n - 1 - k];
		given[t] = true;
	}
	for (int k = 0; k < 3 && !st; k++) {
		int t = order[k];

		if (!given[t])
			continue;
		strbuf_addf(&sb, "%s%s=[", sb.len ? "," : "", tensor_label[t]);
		for (int j = 0; j < c->rank[t]; j++)
			strbuf_addf(&sb, "%s%lld", j ? "," : "", (long long)v[t][j]);
		strbuf_addc(&sb, ']');
	}
	if (!st)
		st = strbuf_status(&sb, err);
	if (!st && sb.len >= len)
		st = tcx_fail(err, TCX_ERANGE, "strides '%s' are too long for a key", spec);
	if (!st)
		snprintf(buf, len, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
	return st;
}

struct dimsort {
	int64_t stride, size;
	int id;
};

static int cmp_dimsort(const void *a, const void *b)
{
	const struct dimsort *x = a, *y = b;

	return x->stride < y->stride ? -1 : x->stride > y->stride;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

enum tcx_status problem_check_alias(const struct problem *p, struct tcx_error *err)
{
	const struct tcx_contraction *c = p->c;
	struct dimsort d[TCX_MAX_INDICES];
	int n = 0;
	bool nested = true;
	int64_t count = 1;

	for (int k = 0; k < c->rank[T_C]; k++) {
		int id = c->written[T_C][k];

		if (p->size[id] == 0)
			return TCX_OK; /* no elements to share an address */
		if (p->size[id] == 1)
			continue;
		d[n].stride = p->stride[T_C][id];
		d[n].size = p->size[id];
		d[n].id = id;
		count *= d[n].size;
		n++;
	}
	qsort(d, (size_t)n, sizeof(d[0]), cmp_dimsort);
	for (int k = 0; k < n; k++) {
		if (d[k].stride <= 0)
			nested = false;
		if (k > 0) {
			int64_t need;

			if (common_mul_overflows_i64(d[k - 1].stride, d[k - 1].size, &need) ||
			    d[k].stride < need)
				nested = false;
		}
	}
	if (nested)
		return TCX_OK;
	/* Not nested: decide exactly by listing the offsets, when few enough. */
	if (count <= (1 << 22)) {
		int64_t *off = malloc((size_t)count * sizeof(*off)), idx[TCX_MAX_INDICES] = { 0 };
		bool dup = false;

		if (!off)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		for (int64_t e = 0; e < count; e++) {
			int64_t o = 0;

			for (int k = 0; k < n; k++)
				o += idx[k] * d[k].stride;
			off[e] = o;
			for (int k = 0; k < n; k++) {
				if (++idx[k] < d[k].size)
					break;
				idx[k] = 0;
			}
		}
		qsort(off, (size_t)count, sizeof(*off), cmp_i64);
		for (int64_t e = 1; e < count && !dup; e++)
			dup = off[e] == off[e - 1];
		free(off);
		if (!dup)
			return TCX_OK;
		return tcx_fail(err, TCX_EINVAL,
				"strides of C alias: two output elements share an address");
	}
	return tcx_fail(err, TCX_EINVAL,
			"strides of C alias or overlap: each stride must be at least the span of "
			"the faster indices");
}

int64_t problem_count(const struct problem *p, enum tensor_role t)
{
	int64_t n = 1;

	for (int k = 0; k < p->c->rank[t]; k++)
		n *= p->size[p->c->written[t][k]];
	return n;
}

double problem_flops(const struct problem *p)
{
	bool cplx = dtype_info(p->c->dtype)->complex;
	double f = cplx ? 8.0 : 2.0;

	/* one input: an addition (2 real ones for complex) per element of A
	 * summed; a transpose or a copy sums nothing */
	if (p->c->implicit_b)
		f = contraction_count(p->c, IDX_BOUND) ? (cplx ? 2.0 : 1.0) : 0.0;
	for (int id = 0; id < p->c->nidx; id++)
		f *= (double)p->size[id];
	return f;
}

double problem_min_bytes(const struct problem *p, bool read_c)
{
	double b = (double)dtype_info(p->c->dtype)->bytes;
	double nb = p->c->implicit_b ? 0.0 : (double)problem_count(p, T_B);

	return b * ((double)problem_count(p, T_A) + nb +
		    (double)problem_count(p, T_C) * (read_c ? 2.0 : 1.0));
}

int64_t problem_bound_volume(const struct problem *p)
{
	int64_t v = 1;

	for (int id = 0; id < p->c->nidx; id++)
		if (p->c->idx[id].cls == IDX_BOUND)
			v *= p->size[id];
	return v;
}

static enum tcx_status parse_assign(const struct tcx_contraction *c, const char *spec,
				    int64_t min, int64_t *sizes, struct tcx_error *err)
{
	char buf[1024], *tok, *save = NULL;
	bool given[TCX_MAX_INDICES] = { false };
	int order[TCX_MAX_INDICES], pos = 0, named = -1;

	if (strlen(spec) >= sizeof(buf))
		return tcx_fail(err, TCX_EPARSE, "size list too long");
	snprintf(buf, sizeof(buf), "%s", spec);
	contraction_positional_order(c, order);
	for (tok = strtok_r(buf, ", []", &save); tok; tok = strtok_r(NULL, ", []", &save)) {
		char *eq = strchr(tok, '=');
		int64_t v;
		int id;

		if (named == -1)
			named = eq != NULL;
		if ((eq != NULL) != named)
			return tcx_fail(err, TCX_EPARSE,
					"cannot mix 'name=size' and plain sizes in '%s'", spec);
		if (eq) {
			*eq = '\0';
			id = contraction_find(c, tok);
			if (id < 0)
				return tcx_fail(err, TCX_EINVAL,
						"size given for unknown index '%s'", tok);
			if (given[id])
				return tcx_fail(err, TCX_EINVAL,
						"size of index '%s' given twice", tok);
			tok = eq + 1;
		} else {
			if (pos >= c->nidx)
				return tcx_fail(err, TCX_EINVAL,
						"too many sizes in '%s': the contraction has %d "
						"indices",
						spec, c->nidx);
			id = order[pos++];
		}
		if (!common_parse_i64(tok, &v))
			return tcx_fail(err, strspn(tok, "0123456789") == strlen(tok) && *tok
						     ? TCX_ERANGE
						     : TCX_EPARSE,
					strspn(tok, "0123456789") == strlen(tok) && *tok
						? "size '%s' of index '%s' is too large"
						: "size '%s' of index '%s' is not a whole number",
					tok, c->idx[id].name);
		if (v < min)
			return tcx_fail(err, TCX_ERANGE,
					"size of index '%s' must be at least %lld (got %lld)",
					c->idx[id].name, (long long)min, (long long)v);
		sizes[id] = v;
		given[id] = true;
	}
	for (int id = 0; id < c->nidx; id++)
		if (!given[id])
			return tcx_fail(err, TCX_EINVAL, "no size given for index '%s'",
					c->idx[id].name);
	return TCX_OK;
}

enum tcx_status sizes_parse_assign(const struct tcx_contraction *c, const char *spec,
				   int64_t *sizes, struct tcx_error *err)
{
	return parse_assign(c, spec, 1, sizes, err);
}

enum tcx_status sizes_parse_assign_zero(const struct tcx_contraction *c, const char *spec,
					int64_t *sizes, struct tcx_error *err)
{
	return parse_assign(c, spec, 0, sizes, err);
}

int model_memory_order(const struct tcx_contraction *c, const struct problem *p, enum tensor_role t,
		       int *ids)
{
	int n = contraction_dims(c, t, ids);

	if (p && p->explicit_strides)
		for (int a = 1; a < n; a++)
			for (int b = a; b > 0 && p->stride[t][ids[b]] < p->stride[t][ids[b - 1]]; b--) {
				int x = ids[b];

				ids[b] = ids[b - 1];
				ids[b - 1] = x;
			}
	return n;
}

char model_tensile_char(int tid)
{
	return tid >= 0 && tid < (int)sizeof(index_chars) - 1 ? index_chars[tid] : '?';
}

void model_tensile_ids(const struct tcx_contraction *c, const struct problem *p, int *tid)
{
	int ids[TCX_MAX_INDICES], n = model_memory_order(c, p, T_C, ids);

	for (int k = 0; k < n; k++)
		tid[ids[k]] = k;
	for (int id = 0; id < c->nidx; id++)
		if (c->idx[id].cls == IDX_BOUND)
			tid[id] = n++;
}

/* Strides for classification: real ones from p, or with all sizes equal
 * (N = 2^10, exact in double) from the parsed layout. */
static double cls_stride(const struct tcx_contraction *c, const struct problem *p,
			 enum tensor_role t, int id)
{
	int ids[TCX_MAX_INDICES], n;

	if (id < 0 || c->idx[id].pos[t] < 0)
		return 0;
	if (p)
		return (double)p->stride[t][id];
	n = contraction_dims(c, t, ids);
	for (int k = 0; k < n; k++)
		if (ids[k] == id)
			return ldexp(1.0, 10 * k);
	return 0;
}

/* The free index of class k with the smallest stride in tensor t. */
static int pick_free(const struct tcx_contraction *c, const struct problem *p,
		     enum index_class k, enum tensor_role t, enum rule_kind *why)
{
	int best = IDX_VIRTUAL, count = 0;
	bool tie = false;

	for (int id = 0; id < c->nidx; id++) {
		double s;

		if (c->idx[id].cls != k)
			continue;
		count++;
		s = cls_stride(c, p, t, id);
		if (best == IDX_VIRTUAL || s < cls_stride(c, p, t, best)) {
			best = id;
			tie = false;
		} else if (s == cls_stride(c, p, t, best)) {
			tie = true;
		}
	}
	*why = count == 0 ? RULE_VIRTUAL : count == 1 ? RULE_ONLY : tie ? RULE_TIE : RULE_STRIDE;
	return best;
}

void model_classify(const struct tcx_contraction *c, const struct problem *p,
		    struct classification *out)
{
	int fa, fb, ids[TCX_MAX_INDICES], n, count = 0;
	bool tie = false;

	memset(out, 0, sizeof(*out));
	fa = pick_free(c, p, IDX_FREE_A, T_A, &out->why_d01[T_A]);
	fb = pick_free(c, p, IDX_FREE_B, T_B, &out->why_d01[T_B]);
	out->free01[T_A] = fa;
	out->free01[T_B] = fb;
	if (fa == IDX_VIRTUAL && fb != IDX_VIRTUAL)
		out->d0_from_a = false;
	else if (fb == IDX_VIRTUAL)
		out->d0_from_a = true;
	else {
		double sa = cls_stride(c, p, T_C, fa), sb = cls_stride(c, p, T_C, fb);

		out->d0_from_a = sa < sb || (sa == sb && fa < fb);
	}
	out->d0 = out->d0_from_a ? fa : fb;
	out->d1 = out->d0_from_a ? fb : fa;

	/* DU: smallest stride in A plus stride in B; ties go to the highest id,
	 * which is Tensile's position rule. */
	out->du = IDX_VIRTUAL;
	for (int id = 0; id < c->nidx; id++) {
		double s, b;

		if (c->idx[id].cls != IDX_BOUND)
			continue;
		count++;
		s = cls_stride(c, p, T_A, id) + cls_stride(c, p, T_B, id);
		b = out->du == IDX_VIRTUAL ? 0
					   : cls_stride(c, p, T_A, out->du) +
						     cls_stride(c, p, T_B, out->du);
		if (out->du == IDX_VIRTUAL || s < b) {
			out->du = id;
			tie = false;
		} else if (s == b) {
			out->du = id;
			tie = true;
		}
	}
	out->why_du = count == 0 ? RULE_VIRTUAL : count == 1 ? RULE_ONLY : tie ? RULE_TIE : RULE_STRIDE;

	/* Tensile v3.2+, on Tensile's numbering for these strides: Index01A =
	 * the first free id in A's list (fastest first); D0 = the one of
	 * Index01A/B with the smaller id; DU = the highest-numbered summation id. */
	{
		int ta = IDX_VIRTUAL, tb = IDX_VIRTUAL, *tid = out->tid;

		model_tensile_ids(c, p, tid);
		n = model_memory_order(c, p, T_A, ids);
		for (int k = 0; k < n && ta == IDX_VIRTUAL; k++)
			if (c->idx[ids[k]].cls == IDX_FREE_A)
				ta = ids[k];
		n = model_memory_order(c, p, T_B, ids);
		for (int k = 0; k < n && tb == IDX_VIRTUAL; k++)
			if (c->idx[ids[k]].cls == IDX_FREE_B)
				tb = ids[k];
		if (ta == IDX_VIRTUAL || (tb != IDX_VIRTUAL && tid[tb] < tid[ta])) {
			out->tensile_d0 = tb;
			out->tensile_d1 = ta;
		} else {
			out->tensile_d0 = ta;
			out->tensile_d1 = tb;
		}
		out->tensile_du = IDX_VIRTUAL;
		for (int id = 0; id < c->nidx; id++)
			if (c->idx[id].cls == IDX_BOUND &&
			    (out->tensile_du == IDX_VIRTUAL || tid[id] > tid[out->tensile_du]))
				out->tensile_du = id;
	}
	out->tlu[T_A] = fa != IDX_VIRTUAL && out->du != IDX_VIRTUAL &&
			cls_stride(c, p, T_A, fa) < cls_stride(c, p, T_A, out->du);
	out->tlu[T_B] = fb != IDX_VIRTUAL && out->du != IDX_VIRTUAL &&
			cls_stride(c, p, T_B, fb) < cls_stride(c, p, T_B, out->du);
}

/* Position of id among the tensor's dims sorted by stride (0 fastest). */
static int mem_rank(const struct tcx_contraction *c, const struct problem *p, enum tensor_role t,
		    int id)
{
	int ids[TCX_MAX_INDICES], n = model_memory_order(c, p, t, ids);

	for (int k = 0; k < n; k++)
		if (ids[k] == id)
			return k;
	return -1;
}

void model_describe_gemm(const struct tcx_contraction *c, const struct problem *p,
			 const struct classification *cls, char *buf, size_t len)
{
	int nfa = contraction_count(c, IDX_FREE_A), nfb = contraction_count(c, IDX_FREE_B);
	int nbatch = contraction_count(c, IDX_BATCH), nbound = contraction_count(c, IDX_BOUND);
	const char *batched = nbatch ? "batched " : "";
	bool ta, tb, outer = true;
	int i, j, k;

	if (c->implicit_b) {
		int ia[TCX_MAX_INDICES], ic[TCX_MAX_INDICES];
		int na = model_memory_order(c, p, T_A, ia), nc = model_memory_order(c, p, T_C, ic);

		if (nbound)
			snprintf(buf, len, "a reduction: A summed over %d index%s (one input; "
				 "B is ones)", nbound, nbound == 1 ? "" : "es");
		else if (na == nc && memcmp(ia, ic, sizeof(int) * (size_t)na) == 0)
			snprintf(buf, len, "a copy (one input, the same layout; nothing is summed)");
		else
			snprintf(buf, len, "a transpose (one input, its indices permuted in C)");
		return;
	}
	if (nfa > 1 || nfb > 1 || nbound > 1) {
		snprintf(buf, len,
			 "a tensor contraction, not a single GEMM (%d free index%s in A, %d in B, "
			 "%d bound)",
			 nfa, nfa == 1 ? "" : "es", nfb, nbound);
		return;
	}
	if (nbound == 0) {
		snprintf(buf, len, "%s%s", batched,
			 nfa && nfb ? "outer product (no bound index; DU is a size-1 stand-in)"
			 : nfa || nfb ? "scaling by a vector (no bound index; size-1 stand-ins)"
				      : "elementwise product (no free or bound index)");
		return;
	}
	if (nfa == 0 && nfb == 0) {
		snprintf(buf, len, "%sdot product (no free index; D0 and D1 are size-1 stand-ins)",
			 batched);
		return;
	}
	if (nfa == 0 || nfb == 0) {
		snprintf(buf, len, "%smatrix-vector product, GEMV (no free index in %s; a size-1 "
			 "stand-in)", batched, nfa == 0 ? "A" : "B");
		return;
	}
	/* One free index each and one bound: a GEMM in some layout. */
	i = cls->d0; /* C's fastest: BLAS m */
	j = cls->d1;
	k = cls->du;
	for (int id = 0; id < c->nidx; id++)
		if (c->idx[id].cls == IDX_BATCH)
			for (int t = 0; t < 3; t++) {
				int r = mem_rank(c, p, (enum tensor_role)t, id);

				if ((c->idx[i].pos[t] >= 0 && r < mem_rank(c, p, (enum tensor_role)t, i)) ||
				    (c->idx[j].pos[t] >= 0 && r < mem_rank(c, p, (enum tensor_role)t, j)) ||
				    (c->idx[k].pos[t] >= 0 && r < mem_rank(c, p, (enum tensor_role)t, k)))
					outer = false;
			}
	{
		enum tensor_role first = cls->d0_from_a ? T_A : T_B;
		enum tensor_role second = cls->d0_from_a ? T_B : T_A;

		const char *fn = cls->d0_from_a ? "A" : "B", *sn = cls->d0_from_a ? "B" : "A";
		char what[64];

		ta = mem_rank(c, p, first, k) < mem_rank(c, p, first, i);
		tb = mem_rank(c, p, second, j) < mem_rank(c, p, second, k);
		if (!ta && !tb)
			snprintf(what, sizeof(what), "%s and %s as stored", fn, sn);
		else if (ta && tb)
			snprintf(what, sizeof(what), "%s and %s transposed", fn, sn);
		else
			snprintf(what, sizeof(what), "%s transposed", ta ? fn : sn);
		snprintf(buf, len, "%sGEMM %c%c (%s)%s%s", batched, ta ? 'T' : 'N', tb ? 'T' : 'N',
			 what,
			 cls->d0_from_a ? "" : "; operands swapped, as C's fastest index is B's",
			 nbatch && !outer ? "; a batch index is not outermost, so not one strided "
					    "batched BLAS call"
					  : "");
	}
}
