/* notation.c - parses index notation into a struct tcx_contraction.
 *
 * Two surface forms share one checker: Tensile style, where tensors are
 * named and indices bracketed ("C[i,j] = alpha*Sum[k] A[i,k]*B[k,j] +
 * beta*C[i,j]"), and NumPy's einsum style ("ik,kj->ij", or "ik,kj" with the
 * implicit output).  Every error names the rule broken and the 1-based
 * column of the offending token.  One input ("ij->ji", "C[ik]=A[ijk]") is
 * a transpose or a reduction: B becomes ones over the summed indices
 * (implicit_b), and the two-operand rules apply to what results.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "notation/notation.h"

#define MAX_REF_INDICES 32 /* parse more than allowed, to say "too many" */

struct tref {
	char name[TCX_INDEX_NAME_MAX];
	unsigned col;
	int n;
	char idx[MAX_REF_INDICES][TCX_INDEX_NAME_MAX];
	unsigned icol[MAX_REF_INDICES];
	bool conj;
};

struct parsed {
	enum notation_style style;
	int ninputs;
	struct tref t[3]; /* C, A, B */
	bool has_alpha, has_beta, has_sum, implicit_out;
	struct tref sum;  /* the Sum[...] list, when given */
	struct tref beta; /* the tensor after beta*, when given */
};

struct cursor {
	const char *s;
	size_t i;
	struct tcx_error *err;
};

static unsigned col_of(const struct cursor *cur)
{
	return (unsigned)cur->i + 1;
}

static void skip_ws(struct cursor *cur)
{
	while (cur->s[cur->i] == ' ' || cur->s[cur->i] == '\t' || cur->s[cur->i] == '\n' ||
	       cur->s[cur->i] == '\r')
		cur->i++;
}

static bool at_end(struct cursor *cur)
{
	skip_ws(cur);
	return cur->s[cur->i] == '\0';
}

static enum tcx_status unexpected(struct cursor *cur, const char *wanted)
{
	unsigned col = col_of(cur);
	char c = cur->s[cur->i];

	if (c == '\0')
		return tcx_fail_at(cur->err, TCX_EPARSE, 1, col,
				   "truncated expression: expected %s", wanted);
	if (strncmp(cur->s + cur->i, "...", 3) == 0)
		return tcx_fail_at(cur->err, TCX_EPARSE, 1, col,
				   "ellipsis ('...') is not supported: name every index");
	if (c == ']' || c == ')')
		return tcx_fail_at(cur->err, TCX_EPARSE, 1, col,
				   "unbalanced brackets: '%c' has no opening partner", c);
	if (isprint((unsigned char)c))
		return tcx_fail_at(cur->err, TCX_EPARSE, 1, col,
				   "unexpected character '%c', expected %s", c, wanted);
	return tcx_fail_at(cur->err, TCX_EPARSE, 1, col,
			   "unknown character (byte 0x%02x), expected %s", (unsigned char)c,
			   wanted);
}

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* An identifier at the cursor (after blanks): copied into buf. */
static enum tcx_status parse_ident(struct cursor *cur, char *buf, unsigned *col,
				   const char *wanted)
{
	size_t n = 0;

	skip_ws(cur);
	*col = col_of(cur);
	if (!is_ident_start(cur->s[cur->i]))
		return unexpected(cur, wanted);
	while (is_ident_char(cur->s[cur->i])) {
		if (n + 1 >= TCX_INDEX_NAME_MAX)
			return tcx_fail_at(cur->err, TCX_EPARSE, 1, *col,
					   "name too long (more than %d characters)",
					   TCX_INDEX_NAME_MAX - 1);
		buf[n++] = cur->s[cur->i++];
	}
	buf[n] = '\0';
	return TCX_OK;
}

static bool peek_word(struct cursor *cur, const char *word)
{
	size_t n = strlen(word);

	skip_ws(cur);
	return strncmp(cur->s + cur->i, word, n) == 0 && !is_ident_char(cur->s[cur->i + n]);
}

static bool accept(struct cursor *cur, char c)
{
	skip_ws(cur);
	if (cur->s[cur->i] != c)
		return false;
	cur->i++;
	return true;
}

static enum tcx_status add_index(struct cursor *cur, struct tref *t, const char *name,
				 unsigned col)
{
	if (t->n >= MAX_REF_INDICES)
		return tcx_fail_at(cur->err, TCX_EPARSE, 1, col,
				   "more than %d indices in one tensor", TCX_MAX_INDICES);
	snprintf(t->idx[t->n], TCX_INDEX_NAME_MAX, "%s", name);
	t->icol[t->n] = col;
	t->n++;
	return TCX_OK;
}

/* "[ijk]" (one letter per index) or "[i, j, k]" / "[m1,n1]" (comma
 * separated names), "[]" for a scalar. */
static enum tcx_status parse_index_list(struct cursor *cur, struct tref *t)
{
	size_t open, close, k;
	bool commas = false;
	enum tcx_status st;

	skip_ws(cur);
	open = cur->i;
	if (cur->s[open] != '[')
		return unexpected(cur, "'[' and a list of indices");
	for (close = open + 1; cur->s[close] && cur->s[close] != ']'; close++) {
		char c = cur->s[close];

		if (c == '[' || c == '=' || c == '*' || c == '+' || c == '(' || c == ')')
			break;
		if (c == ',')
			commas = true;
	}
	if (cur->s[close] != ']')
		return tcx_fail_at(cur->err, TCX_EPARSE, 1, (unsigned)open + 1,
				   "unbalanced brackets: '[' has no closing ']'");
	if (close - open >= 4 && strstr(cur->s + open, "...") &&
	    (size_t)(strstr(cur->s + open, "...") - cur->s) < close)
		return tcx_fail_at(cur->err, TCX_EPARSE, 1,
				   (unsigned)(strstr(cur->s + open, "...") - cur->s) + 1,
				   "ellipsis ('...') is not supported: name every index");
	cur->i = open + 1;
	if (commas) {
		for (;;) {
			char name[TCX_INDEX_NAME_MAX];
			unsigned col;

			st = parse_ident(cur, name, &col, "an index name");
			if (st)
				return st;
			st = add_index(cur, t, name, col);
			if (st)
				return st;
			skip_ws(cur);
			if (cur->s[cur->i] == ',') {
				cur->i++;
				continue;
			}
			if (cur->s[cur->i] == ']')
				break;
			return unexpected(cur, "',' or ']'");
		}
	} else {
		for (k = open + 1; k < close; k++) {
			char c = cur->s[k], name[2] = { c, 0 };

			if (c == ' ' || c == '\t')
				continue;
			cur->i = k;
			if (!isalpha((unsigned char)c))
				return isprint((unsigned char)c)
					       ? tcx_fail_at(cur->err, TCX_EPARSE, 1, (unsigned)k + 1,
							     "unknown character '%c' in an index list "
							     "(indices are letters; separate longer "
							     "names with commas)",
							     c)
					       : unexpected(cur, "an index letter");
			st = add_index(cur, t, name, (unsigned)k + 1);
			if (st)
				return st;
		}
	}
	cur->i = close + 1;
	return TCX_OK;
}

static enum tcx_status parse_tensor(struct cursor *cur, struct tref *t, const char *wanted)
{
	enum tcx_status st;

	memset(t, 0, sizeof(*t));
	st = parse_ident(cur, t->name, &t->col, wanted);
	if (st)
		return st;
	return parse_index_list(cur, t);
}

/* A[...] or conj(A[...]) */
static enum tcx_status parse_operand(struct cursor *cur, struct tref *t)
{
	enum tcx_status st;
	bool conj = false;
	unsigned open_col = 0;

	if (peek_word(cur, "conj")) {
		size_t save = cur->i;

		cur->i += 4;
		skip_ws(cur);
		if (cur->s[cur->i] == '(') {
			open_col = col_of(cur);
			cur->i++;
			conj = true;
		} else {
			cur->i = save;
		}
	}
	st = parse_tensor(cur, t, "an input tensor such as A[ik]");
	if (st)
		return st;
	if (conj) {
		if (!accept(cur, ')'))
			return cur->s[cur->i] == '\0'
				       ? tcx_fail_at(cur->err, TCX_EPARSE, 1, open_col,
						     "unbalanced brackets: '(' has no closing ')'")
				       : unexpected(cur, "')' closing conj(");
		t->conj = true;
	}
	return TCX_OK;
}

static enum tcx_status parse_tensile(struct cursor *cur, struct parsed *p)
{
	enum tcx_status st;
	char word[TCX_INDEX_NAME_MAX];
	unsigned col;

	p->style = NOTATION_TENSILE;
	st = parse_tensor(cur, &p->t[T_C], "the output tensor, such as C[ij]");
	if (st)
		return st;
	if (!accept(cur, '='))
		return unexpected(cur, "'=' after the output tensor");
	if (peek_word(cur, "alpha")) {
		st = parse_ident(cur, word, &col, "alpha");
		if (st)
			return st;
		if (!accept(cur, '*'))
			return unexpected(cur, "'*' after alpha");
		p->has_alpha = true;
	}
	if (peek_word(cur, "Sum") || peek_word(cur, "sum")) {
		st = parse_ident(cur, word, &col, "Sum");
		if (st)
			return st;
		p->sum.col = col;
		snprintf(p->sum.name, sizeof(p->sum.name), "%s", word);
		st = parse_index_list(cur, &p->sum);
		if (st)
			return st;
		p->has_sum = true;
	}
	st = parse_operand(cur, &p->t[T_A]);
	if (st)
		return st;
	p->ninputs = 1;
	if (accept(cur, '*')) {
		st = parse_operand(cur, &p->t[T_B]);
		if (st)
			return st;
		p->ninputs = 2;
	}
	skip_ws(cur);
	if (p->ninputs == 2 && cur->s[cur->i] == '*') {
		struct tref extra;
		unsigned c3 = col_of(cur) + 1;

		cur->i++;
		skip_ws(cur);
		c3 = col_of(cur);
		if (parse_operand(cur, &extra) == TCX_OK || is_ident_start(cur->s[c3 - 1]))
			return tcx_fail_at(cur->err, TCX_EPARSE, 1, c3,
					   "more than two input tensors: tcx contracts two at a "
					   "time");
		return unexpected(cur, "an input tensor");
	}
	if (accept(cur, '+')) {
		if (!peek_word(cur, "beta"))
			return unexpected(cur, "'beta*' and the output tensor");
		st = parse_ident(cur, word, &col, "beta");
		if (st)
			return st;
		if (!accept(cur, '*'))
			return unexpected(cur, "'*' after beta");
		st = parse_tensor(cur, &p->beta, "the output tensor after beta*");
		if (st)
			return st;
		p->has_beta = true;
	}
	if (!at_end(cur)) {
		const char *next = p->has_beta	       ? "the end of the expression"
				   : p->ninputs == 2 ? "'+ beta*' or the end of the expression"
						     : "'*' and a second input, '+ beta*' or "
						       "the end of the expression";

		return unexpected(cur, next);
	}
	return TCX_OK;
}

/* einsum: "ik,kj->ij" or "ik,kj" (implicit output). */
static enum tcx_status parse_einsum(struct cursor *cur, struct parsed *p)
{
	enum tcx_status st;
	int t = T_A;
	bool arrow = false;

	p->style = NOTATION_EINSUM;
	snprintf(p->t[T_A].name, TCX_INDEX_NAME_MAX, "A");
	snprintf(p->t[T_B].name, TCX_INDEX_NAME_MAX, "B");
	snprintf(p->t[T_C].name, TCX_INDEX_NAME_MAX, "C");
	p->t[T_A].col = 1;
	p->ninputs = 1;
	for (;;) {
		char c;

		skip_ws(cur);
		c = cur->s[cur->i];
		if (c == '\0')
			break;
		if (strncmp(cur->s + cur->i, "...", 3) == 0)
			return unexpected(cur, "");
		if (isalpha((unsigned char)c)) {
			char name[2] = { c, 0 };

			if (t > T_B) {
				cur->i++;
				continue; /* counted below */
			}
			st = add_index(cur, &p->t[t], name, col_of(cur));
			if (st)
				return st;
			cur->i++;
			continue;
		}
		if (c == ',' && !arrow) {
			cur->i++;
			p->ninputs++;
			if (p->ninputs > 2)
				return tcx_fail_at(cur->err, TCX_EPARSE, 1, col_of(cur),
						   "more than two input tensors: tcx contracts two "
						   "at a time");
			t = T_B;
			p->t[T_B].col = col_of(cur);
			continue;
		}
		if (c == '-' && cur->s[cur->i + 1] == '>' && !arrow) {
			cur->i += 2;
			arrow = true;
			t = T_C;
			p->t[T_C].col = col_of(cur);
			continue;
		}
		if (c == '-' && !arrow)
			return unexpected(cur, "'->'");
		return unexpected(cur, arrow ? "an output index letter" : "an index letter, ',' or '->'");
	}
	p->implicit_out = !arrow;
	return TCX_OK;
}

static int ref_find(const struct tref *t, const char *name)
{
	for (int k = 0; k < t->n; k++)
		if (strcmp(t->idx[k], name) == 0)
			return k;
	return -1;
}

static int cmp_char(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* numpy's implicit output: the indices that appear once, in sorted order. */
static void implicit_output(struct parsed *p)
{
	char names[2 * MAX_REF_INDICES][TCX_INDEX_NAME_MAX];
	int n = 0;

	for (int t = T_A; t <= T_B; t++)
		for (int k = 0; k < p->t[t].n; k++) {
			const char *nm = p->t[t].idx[k];
			int count = 0;

			for (int u = T_A; u <= T_B; u++)
				for (int j = 0; j < p->t[u].n; j++)
					count += strcmp(p->t[u].idx[j], nm) == 0;
			if (count == 1)
				snprintf(names[n++], TCX_INDEX_NAME_MAX, "%s", nm);
		}
	qsort(names, (size_t)n, sizeof(names[0]), cmp_char);
	p->t[T_C].n = 0;
	for (int k = 0; k < n; k++) {
		snprintf(p->t[T_C].idx[k], TCX_INDEX_NAME_MAX, "%s", names[k]);
		p->t[T_C].icol[k] = 0;
		p->t[T_C].n++;
	}
}

/* A one-operand expression: B is ones over A's summed indices, in the
 * order A writes them (model.h's implicit_b).  Runs after the output is
 * known; a repeated index in A is left to check_refs, which names A. */
static void implicit_b(struct parsed *p)
{
	struct tref *a = &p->t[T_A], *b = &p->t[T_B];

	snprintf(b->name, TCX_INDEX_NAME_MAX, "B");
	b->n = 0;
	for (int k = 0; k < a->n; k++) {
		if (ref_find(&p->t[T_C], a->idx[k]) >= 0 || ref_find(b, a->idx[k]) >= 0)
			continue;
		snprintf(b->idx[b->n], TCX_INDEX_NAME_MAX, "%s", a->idx[k]);
		b->icol[b->n++] = a->icol[k];
	}
}

static const char *const role_name[3] = { "the output", "A", "B" };

static enum tcx_status check_refs(const struct parsed *p, struct tcx_error *err)
{
	for (int t = 0; t < 3; t++) {
		const struct tref *r = &p->t[t];

		if (r->n > TCX_MAX_INDICES)
			return tcx_fail_at(err, TCX_EPARSE, 1, r->icol[TCX_MAX_INDICES],
					   "more than %d indices in %s", TCX_MAX_INDICES,
					   t == T_C ? "the output" : r->name);
		for (int k = 0; k < r->n; k++)
			for (int j = 0; j < k; j++)
				if (strcmp(r->idx[j], r->idx[k]) == 0) {
					if (t == T_C)
						return tcx_fail_at(err, TCX_EPARSE, 1, r->icol[k],
								   "index '%s' repeated in the "
								   "output",
								   r->idx[k]);
					return tcx_fail_at(err, TCX_EPARSE, 1, r->icol[k],
							   "index '%s' repeated in %s: diagonals "
							   "are not supported",
							   r->idx[k], role_name[t]);
				}
	}
	for (int k = 0; k < p->t[T_C].n; k++) {
		const char *nm = p->t[T_C].idx[k];

		if (ref_find(&p->t[T_A], nm) < 0 && ref_find(&p->t[T_B], nm) < 0)
			return tcx_fail_at(err, TCX_EPARSE, 1, p->t[T_C].icol[k],
					   "output index '%s' appears in no input", nm);
	}
	for (int t = T_A; t <= T_B; t++) {
		const struct tref *r = &p->t[t];
		const struct tref *o = &p->t[t == T_A ? T_B : T_A];

		for (int k = 0; k < r->n; k++) {
			const char *nm = r->idx[k];

			if (ref_find(&p->t[T_C], nm) >= 0 || ref_find(o, nm) >= 0)
				continue;
			return tcx_fail_at(err, TCX_EPARSE, 1, r->icol[k],
					   "bound index '%s' appears only in %s: summing over one "
					   "input is a pre-reduction tcx does not do",
					   nm, role_name[t]);
		}
	}
	if (p->has_sum) {
		for (int k = 0; k < p->sum.n; k++) {
			const char *nm = p->sum.idx[k];

			for (int j = 0; j < k; j++)
				if (strcmp(p->sum.idx[j], nm) == 0)
					return tcx_fail_at(err, TCX_EPARSE, 1, p->sum.icol[k],
							   "index '%s' repeated in Sum[...]", nm);
			if (ref_find(&p->t[T_C], nm) >= 0)
				return tcx_fail_at(err, TCX_EPARSE, 1, p->sum.icol[k],
						   "summed index '%s' also appears in the output",
						   nm);
			if (ref_find(&p->t[T_A], nm) < 0 || ref_find(&p->t[T_B], nm) < 0)
				return tcx_fail_at(err, TCX_EPARSE, 1, p->sum.icol[k],
						   p->ninputs == 1
							   ? "summed index '%s' must appear in "
							     "the input"
							   : "summed index '%s' must appear in "
							     "both inputs",
						   nm);
		}
		for (int t = T_A; t <= T_B; t++)
			for (int k = 0; k < p->t[t].n; k++) {
				const char *nm = p->t[t].idx[k];

				if (ref_find(&p->t[T_C], nm) < 0 && ref_find(&p->sum, nm) < 0)
					return tcx_fail_at(err, TCX_EPARSE, 1, p->t[t].icol[k],
							   "index '%s' is summed over but not "
							   "listed in Sum[...]",
							   nm);
			}
	}
	if (p->has_beta) {
		const struct tref *b = &p->beta, *c = &p->t[T_C];
		bool same = b->n == c->n;

		/* beta scales the output as it was: beta*D[ij] is no term tcx
		 * computes, and must not be read as beta*C[ij] */
		if (strcmp(b->name, c->name) != 0)
			return tcx_fail_at(err, TCX_EPARSE, 1, b->col,
					   "beta term must name the output tensor '%s', not '%s'",
					   c->name, b->name);

		for (int k = 0; same && k < c->n; k++)
			same = strcmp(b->idx[k], c->idx[k]) == 0;
		if (!same)
			return tcx_fail_at(err, TCX_EPARSE, 1, b->col,
					   "beta term must repeat the output's indices in the same "
					   "order");
	}
	return TCX_OK;
}

void contraction_free(struct tcx_contraction *c)
{
	if (!c)
		return;
	free(c->expr);
	free(c);
}

static void add_distinct(struct tcx_contraction *c, const char *name, unsigned col, int *order,
			 int *n)
{
	for (int k = 0; k < *n; k++)
		if (strcmp(c->idx[order[k]].name, name) == 0)
			return;
	order[*n] = *n;
	snprintf(c->idx[*n].name, TCX_INDEX_NAME_MAX, "%s", name);
	c->idx[*n].col = col;
	(*n)++;
}

/* Assigns Tensile ids for the layout: C's indices fastest first, then the
 * bound ones (Sum order, else first appearance in A as written). */
static void number_indices(struct tcx_contraction *c, const struct parsed *p)
{
	struct index_info old[TCX_MAX_INDICES];
	int map[TCX_MAX_INDICES], n = 0, nc = p->t[T_C].n;

	memcpy(old, c->idx, sizeof(old));
	for (int k = 0; k < nc; k++) {
		int w = c->layout == LAYOUT_FIRST_FASTEST ? k : nc - 1 - k;

		for (int j = 0; j < c->nidx; j++)
			if (strcmp(old[j].name, p->t[T_C].idx[w]) == 0)
				map[n++] = j;
	}
	if (p->has_sum) {
		for (int k = 0; k < p->sum.n; k++)
			for (int j = 0; j < c->nidx; j++)
				if (strcmp(old[j].name, p->sum.idx[k]) == 0)
					map[n++] = j;
	} else {
		for (int k = 0; k < p->t[T_A].n; k++) {
			if (ref_find(&p->t[T_C], p->t[T_A].idx[k]) >= 0)
				continue;
			for (int j = 0; j < c->nidx; j++)
				if (strcmp(old[j].name, p->t[T_A].idx[k]) == 0)
					map[n++] = j;
		}
	}
	for (int id = 0; id < c->nidx; id++)
		c->idx[id] = old[map[id]];
	for (int t = 0; t < 3; t++) {
		c->rank[t] = p->t[t].n;
		for (int k = 0; k < p->t[t].n; k++) {
			int id = contraction_find(c, p->t[t].idx[k]);

			c->written[t][k] = id;
			c->idx[id].pos[t] = k;
		}
	}
}

static enum tcx_status build(const struct parsed *p, const char *expr, enum tcx_dtype dtype,
			     int layout, struct tcx_contraction **out, struct tcx_error *err)
{
	struct tcx_contraction *c;
	int order[3 * MAX_REF_INDICES], n = 0;

	c = calloc(1, sizeof(*c));
	if (!c)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	c->expr = strdup(expr);
	if (!c->expr) {
		free(c);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	for (int t = 0; t < 3; t++)
		for (int k = 0; k < p->t[t].n; k++) {
			if (n == TCX_MAX_INDICES && contraction_find(c, p->t[t].idx[k]) < 0) {
				unsigned col = p->t[t].icol[k];

				contraction_free(c);
				return tcx_fail_at(err, TCX_EPARSE, 1, col,
						   "more than %d distinct indices",
						   TCX_MAX_INDICES);
			}
			add_distinct(c, p->t[t].idx[k], p->t[t].icol[k], order, &n);
			c->nidx = n;
		}
	c->nidx = n;
	for (int id = 0; id < n; id++)
		for (int t = 0; t < 3; t++)
			c->idx[id].pos[t] = -1;
	c->style = p->style;
	c->layout = layout == LAYOUT_BY_STYLE
			    ? (p->style == NOTATION_EINSUM ? LAYOUT_LAST_FASTEST : LAYOUT_FIRST_FASTEST)
			    : (enum layout)layout;
	c->dtype = dtype;
	c->has_alpha = p->has_alpha;
	c->use_beta = p->has_beta;
	c->explicit_sum = p->has_sum;
	c->conj[T_A] = p->t[T_A].conj;
	c->conj[T_B] = p->t[T_B].conj;
	c->implicit_b = p->ninputs == 1;
	for (int t = 0; t < 3; t++)
		snprintf(c->tensor_name[t], TCX_INDEX_NAME_MAX, "%s", p->t[t].name);
	number_indices(c, p);
	for (int id = 0; id < c->nidx; id++) {
		struct index_info *x = &c->idx[id];
		bool inc = x->pos[T_C] >= 0, ina = x->pos[T_A] >= 0, inb = x->pos[T_B] >= 0;

		x->cls = inc ? (ina && inb ? IDX_BATCH : ina ? IDX_FREE_A : IDX_FREE_B) : IDX_BOUND;
	}
	*out = c;
	return TCX_OK;
}

enum tcx_status notation_parse(const char *expr, enum tcx_dtype dtype, int layout,
			       struct tcx_contraction **out, struct tcx_error *err)
{
	struct parsed *p;
	struct cursor cur = { expr, 0, err };
	enum tcx_status st;

	*out = NULL;
	if (!expr || !*expr || at_end(&cur))
		return tcx_fail_at(err, TCX_EPARSE, 1, 1, "empty expression");
	if (!dtype_info(dtype))
		return tcx_fail(err, TCX_EINVAL, "unknown element type %d", (int)dtype);
	p = calloc(1, sizeof(*p));
	if (!p)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	cur.i = 0;
	if (strstr(expr, "->") || (!strchr(expr, '[') && !strchr(expr, '=')))
		st = parse_einsum(&cur, p);
	else
		st = parse_tensile(&cur, p);
	if (st == TCX_OK && p->implicit_out)
		implicit_output(p);
	if (st == TCX_OK && p->ninputs == 1)
		implicit_b(p);
	if (st == TCX_OK)
		st = check_refs(p, err);
	if (st == TCX_OK)
		st = build(p, expr, dtype, layout, out, err);
	free(p);
	return st;
}
