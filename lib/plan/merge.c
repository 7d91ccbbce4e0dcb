/* merge.c - index merging (merge.h): groups of indices that move together
 * in every tensor become one index of a new contraction over the same
 * memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/merge.h"

/* A group of original indices that move as one, fastest first. */
struct group {
	int count, id[TCX_MAX_INDICES];
	int64_t size;
	int64_t stride[3]; /* per tensor: the stride of the group's fastest step */
	unsigned mask;     /* bit t: tensor t holds the group */
	bool alive;
};

/* Whether y may follow x (x the faster): the same tensors hold both, and in
 * each, y's step is x's whole extent.  A group of size 1 follows or leads
 * any group of its tensors. */
static bool mergeable(const struct group *x, const struct group *y)
{
	if (x->mask != y->mask)
		return false;
	if (x->size == 1 || y->size == 1)
		return true;
	for (int t = 0; t < 3; t++)
		if ((x->mask >> t & 1) && y->stride[t] != x->stride[t] * x->size)
			return false;
	return true;
}

static void absorb(struct group *x, struct group *y)
{
	if (x->size == 1)
		memcpy(x->stride, y->stride, sizeof(x->stride));
	for (int k = 0; k < y->count; k++)
		x->id[x->count++] = y->id[k];
	x->size *= y->size;
	y->alive = false;
}

/* Whether group a sorts before group b in tensor t: by stride, in A ties
 * by the stride in B, then by the first original id. */
static bool before(const struct group *a, const struct group *b, enum tensor_role t)
{
	if (a->stride[t] != b->stride[t])
		return a->stride[t] < b->stride[t];
	if (t == T_A && a->stride[T_B] != b->stride[T_B])
		return a->stride[T_B] < b->stride[T_B];
	return a->id[0] < b->id[0];
}

/* Sorts group numbers by tensor t's order (at most 16: insertion). */
static void sort_by(const struct group *g, enum tensor_role t, int *list, int n)
{
	for (int i = 1; i < n; i++) {
		int v = list[i], j = i;

		for (; j > 0 && before(&g[v], &g[list[j - 1]], t); j--)
			list[j] = list[j - 1];
		list[j] = v;
	}
}

/* The name of a merged index: its originals' names run together as the
 * expression writes them, made unique among the other names. */
static void group_name(const struct tcx_contraction *c, const struct group *g, char *out,
		       const struct tcx_contraction *done, int ndone)
{
	char base[TCX_INDEX_NAME_MAX];
	size_t len = 0;

	base[0] = '\0';
	for (int k = 0; k < g->count; k++) {
		/* in the order the expression writes them */
		int f = c->layout == LAYOUT_LAST_FASTEST ? g->count - 1 - k : k;
		const char *nm = c->idx[g->id[f]].name;
		size_t l = strlen(nm);

		if (len + l >= sizeof(base))
			break;
		memcpy(base + len, nm, l + 1);
		len += l;
	}
	snprintf(out, TCX_INDEX_NAME_MAX, "%s", base);
	for (int n = 2; n < 100; n++) {
		bool taken = false;

		for (int m = 0; m < ndone && !taken; m++)
			taken = strcmp(done->idx[m].name, out) == 0;
		for (int id = 0; id < c->nidx && !taken; id++)
			taken = g->count > 1 && strcmp(c->idx[id].name, out) == 0;
		if (!taken)
			return;
		snprintf(out, TCX_INDEX_NAME_MAX, "%.12s%d", base, n);
	}
}

static void add_tensor_text(struct strbuf *sb, const struct tcx_contraction *m, enum tensor_role t,
			    const char *label)
{
	strbuf_addf(sb, "%s[", label);
	for (int k = 0; k < m->rank[t]; k++)
		strbuf_addf(sb, "%s%s", k ? "," : "", m->idx[m->written[t][k]].name);
	strbuf_addc(sb, ']');
}

/* The merged contraction's expression, in Tensile's notation (first index
 * fastest), for messages and `tcx parse`. */
static char *merged_text(const struct tcx_contraction *m)
{
	struct strbuf sb = STRBUF_INIT;

	add_tensor_text(&sb, m, T_C, "C");
	strbuf_adds(&sb, " = ");
	if (m->has_alpha)
		strbuf_adds(&sb, "alpha*");
	if (m->conj[T_A])
		strbuf_adds(&sb, "conj(");
	add_tensor_text(&sb, m, T_A, "A");
	strbuf_adds(&sb, m->conj[T_A] ? ") * " : " * ");
	if (m->conj[T_B])
		strbuf_adds(&sb, "conj(");
	add_tensor_text(&sb, m, T_B, "B");
	if (m->conj[T_B])
		strbuf_addc(&sb, ')');
	if (m->use_beta) {
		strbuf_adds(&sb, " + beta*");
		add_tensor_text(&sb, m, T_C, "C");
	}
	if (sb.failed) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

enum tcx_status problem_merge(const struct problem *p, struct tcx_contraction **out,
			      struct problem *mp, struct merge_map *map, struct tcx_error *err)
{
	const struct tcx_contraction *c = p->c;
	struct group g[TCX_MAX_INDICES];
	struct tcx_contraction *m;
	int order[TCX_MAX_INDICES], n = 0, ng = c->nidx;
	int64_t sizes[TCX_MAX_INDICES], want[3][TCX_MAX_INDICES];
	bool merged = false, packed = true;
	enum tcx_status st;

	*out = NULL;
	if (problem_empty_index(p) >= 0)
		return TCX_OK;
	for (int id = 0; id < c->nidx; id++) {
		g[id].count = 1;
		g[id].id[0] = id;
		g[id].size = p->size[id];
		g[id].mask = 0;
		g[id].alive = true;
		for (int t = 0; t < 3; t++) {
			g[id].stride[t] = p->stride[t][id];
			if (c->idx[id].pos[t] >= 0)
				g[id].mask |= 1u << t;
		}
	}
	for (bool again = true; again;) {
		again = false;
		for (int x = 0; x < ng && !again; x++)
			for (int y = 0; y < ng && !again; y++)
				if (x != y && g[x].alive && g[y].alive && mergeable(&g[x], &g[y])) {
					absorb(&g[x], &g[y]);
					merged = again = true;
				}
	}
	if (!merged)
		return TCX_OK;

	m = calloc(1, sizeof(*m));
	if (!m)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	*m = *c;
	m->expr = NULL;
	m->style = NOTATION_TENSILE;
	m->layout = LAYOUT_FIRST_FASTEST;
	m->explicit_sum = false;
	/* Tensile's numbering: C's indices fastest first, then the bound ones
	 * by their strides in A */
	for (int x = 0; x < ng; x++)
		if (g[x].alive && (g[x].mask >> T_C & 1))
			order[n++] = x;
	sort_by(g, T_C, order, n);
	{
		int nb = 0, *bound = order + n;

		for (int x = 0; x < ng; x++)
			if (g[x].alive && !(g[x].mask >> T_C & 1))
				bound[nb++] = x;
		sort_by(g, T_A, bound, nb);
		n += nb;
	}
	m->nidx = n;
	memset(map, 0, sizeof(*map));
	map->n = n;
	for (int k = 0; k < n; k++) {
		const struct group *x = &g[order[k]];

		m->idx[k] = c->idx[x->id[0]];
		group_name(c, x, m->idx[k].name, m, k);
		sizes[k] = x->size;
		map->count[k] = x->count;
		for (int j = 0; j < x->count; j++) {
			map->from[k][j] = x->id[j];
			map->to[x->id[j]] = k;
		}
	}
	for (int t = 0; t < 3; t++) {
		int list[TCX_MAX_INDICES], r = 0;

		for (int k = 0; k < n; k++) {
			m->idx[k].pos[t] = -1;
			if (g[order[k]].mask >> t & 1)
				list[r++] = order[k];
		}
		sort_by(g, (enum tensor_role)t, list, r);
		m->rank[t] = r;
		for (int j = 0; j < r; j++) {
			int id = 0;

			while (order[id] != list[j])
				id++;
			m->written[t][j] = id;
			m->idx[id].pos[t] = j;
			want[t][j] = g[list[j]].stride[t];
		}
	}
	m->expr = merged_text(m);
	if (!m->expr) {
		free(m);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	st = problem_init(mp, m, sizes, err);
	for (int t = 0; t < 3 && !st; t++)
		for (int j = 0; j < m->rank[t]; j++)
			if (sizes[m->written[t][j]] > 1 && mp->stride[t][m->written[t][j]] != want[t][j])
				packed = false;
	for (int t = 0; t < 3 && !st && !packed; t++)
		st = problem_set_strides(mp, (enum tensor_role)t, want[t], m->rank[t], err);
	if (st) {
		free(m->expr);
		free(m);
		return st;
	}
	*out = m;
	return TCX_OK;
}
