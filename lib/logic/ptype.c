/* ptype.c - Tensile's ProblemType mapping read into a contraction, and
 * Tensile's derived mapping and index order for a contraction (ptype.h). */
#include <string.h>
#include <strings.h>

#include "logic/ptype.h"
#include "notation/notation.h"

/* Tensile's index characters, by id. */
static const char index_chars[] = "ijklmnopqrstuvwxyz";

struct ids {
	int n;
	int id[TCX_MAX_INDICES];
};

static int pos_of(const struct ids *a, int id)
{
	for (int k = 0; k < a->n; k++)
		if (a->id[k] == id)
			return k;
	return -1;
}

/* ---- reading ------------------------------------------------------------ */

/* What a read needs: the file for messages and the error. */
struct ptread {
	const char *name;
	enum ptype_origin origin;
	struct tcx_error *err;
};

enum tcx_status ptype_bool(const struct ynode *pt, const char *key, bool def, const char *name,
			   bool *out, struct tcx_error *err)
{
	const struct ynode *v = ymap_get(pt, key);
	int64_t i;
	int b;

	*out = def;
	if (!v)
		return TCX_OK;
	if ((b = ynode_bool(v)) >= 0) {
		*out = b;
		return TCX_OK;
	}
	/* as Python reads them */
	if (ynode_int(v, &i) && (i == 0 || i == 1)) {
		*out = i == 1;
		return TCX_OK;
	}
	if (v->kind == YNODE_SCALAR && !ynode_is_null(v))
		return ynode_fail(err, name, v, "'%s' must be True or False, found '%s'", key,
				  v->text);
	return ynode_fail(err, name, v, "'%s' must be True or False, found %s", key, ynode_what(v));
}

enum tcx_status ptype_dtype(const struct ynode *pt, const char *name, enum tcx_dtype *out,
			    struct tcx_error *err)
{
	const struct ynode *dt = ymap_get(pt, "DataType");

	if (!dt)
		return ynode_fail(err, name, pt,
				  "ProblemType has no 'DataType' (s, d, c, z, h or b)");
	if (dt->kind != YNODE_SCALAR)
		return ynode_fail(err, name, dt,
				  "'DataType' must be a letter or a number, found %s",
				  ynode_what(dt));
	if (!dtype_parse(dt->text, out))
		return ynode_fail(
		    err, name, dt,
		    "unknown DataType '%s': expected s, d, c, z, h, b or Tensile's number",
		    dt->text);
	return TCX_OK;
}

static enum tcx_status read_bool(struct ptread *r, const struct ynode *pt, const char *key,
				 bool def, bool *out)
{
	return ptype_bool(pt, key, def, r->name, out, r->err);
}

static enum tcx_status read_ids(struct ptread *r, const struct ynode *pt, const char *key,
				struct ids *a)
{
	const struct ynode *v = ymap_get(pt, key);

	a->n = 0;
	if (!v)
		return ynode_fail(r->err, r->name, pt,
				  "ProblemType of a TensorContraction has no '%s'", key);
	if (v->kind != YNODE_SEQ)
		return ynode_fail(r->err, r->name, v,
				  "'%s' must be a list of index ids such as [0, 3, 2], found %s",
				  key, ynode_what(v));
	if (v->n > TCX_MAX_INDICES)
		return ynode_fail(r->err, r->name, v,
				  "'%s' has %zu ids: tcx handles at most %d indices", key, v->n,
				  TCX_MAX_INDICES);
	for (size_t k = 0; k < v->n; k++) {
		const struct ynode *x = v->kid[k];
		int64_t id;

		if (!ynode_int(x, &id))
			return ynode_fail(r->err, r->name, x,
					  "'%s' holds %s where an index id (0, 1, 2 ...) belongs",
					  key, ynode_what(x));
		if (id < 0 || id >= TCX_MAX_INDICES)
			return ynode_fail(
			    r->err, r->name, x,
			    "index id %lld in '%s' is out of range: ids run from 0 to %d",
			    (long long)id, key, TCX_MAX_INDICES - 1);
		if (pos_of(a, (int)id) >= 0)
			return ynode_fail(r->err, r->name, x, "index id %lld appears twice in '%s'",
					  (long long)id, key);
		a->id[a->n++] = (int)id;
	}
	return TCX_OK;
}

static void add_tensor(struct strbuf *sb, const char *name, const struct ids *a, bool conj)
{
	if (conj)
		strbuf_adds(sb, "conj(");
	strbuf_adds(sb, name);
	strbuf_addc(sb, '[');
	for (int k = 0; k < a->n; k++)
		strbuf_addc(sb, index_chars[a->id[k]]);
	strbuf_addc(sb, ']');
	if (conj)
		strbuf_addc(sb, ')');
}

/* Checks Tensile's index assignments (tensile-compat.md section 2) and writes
 * the expression that keeps the ids: C as ids 0..nc-1, A and B as assigned,
 * the summation ids in a Sum[...] in increasing order. */
static enum tcx_status tensile_expression(struct ptread *r, const struct ynode *pt, int nc,
					  const struct ids *a, const struct ids *b, bool beta,
					  bool conja, bool conjb, struct strbuf *sb)
{
	struct ids c = {0}, sum = {0};
	int total = nc;

	for (int k = 0; k < a->n; k++)
		total = TCX_MAX(total, a->id[k] + 1);
	for (int k = 0; k < b->n; k++)
		total = TCX_MAX(total, b->id[k] + 1);
	for (int id = 0; id < total; id++) {
		bool ina = pos_of(a, id) >= 0, inb = pos_of(b, id) >= 0;

		if (id < nc) {
			if (!ina && !inb)
				return ynode_fail(
				    r->err, r->name, pt,
				    "index %d ('%c') of C is in neither IndexAssignmentsA "
				    "nor IndexAssignmentsB",
				    id, index_chars[id]);
			c.id[c.n++] = id;
		} else if (!ina || !inb) {
			return ynode_fail(
			    r->err, r->name, pt,
			    "summation index %d ('%c') must be in both IndexAssignmentsA "
			    "and IndexAssignmentsB, but %s",
			    id, index_chars[id],
			    ina	  ? "is only in IndexAssignmentsA"
			    : inb ? "is only in IndexAssignmentsB"
				  : "is in neither");
		} else {
			sum.id[sum.n++] = id;
		}
	}
	add_tensor(sb, "C", &c, false);
	strbuf_adds(sb, " = ");
	if (sum.n) {
		add_tensor(sb, "Sum", &sum, false);
		strbuf_addc(sb, ' ');
	}
	add_tensor(sb, "A", a, conja);
	strbuf_adds(sb, " * ");
	add_tensor(sb, "B", b, conjb);
	if (beta) {
		strbuf_adds(sb, " + beta*");
		add_tensor(sb, "C", &c, false);
	}
	return strbuf_status(sb, r->err);
}

static bool key_in(const char *key, const char *const *list, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (strcmp(key, list[k]) == 0)
			return true;
	return false;
}

static const char *const gemm_keys[] = {"TransposeA", "TransposeB", "Batched"};
static const char *const contraction_keys[] = {"NumIndicesC", "NumDimensionsC", "IndexAssignmentsA",
					       "IndexAssignmentsB"};
static const char *const common_keys[] = {
    "OperationType",	       "DataType",	    "UseBeta",		 "UseInitialStrides",
    "HighPrecisionAccumulate", "ComplexConjugateA", "ComplexConjugateB", "Expression"};

/* Warns about the keys of a written mapping that do not apply to it. */
static void warn_keys(struct ptread *r, const struct ynode *pt, bool expression, bool gemm)
{
	if (r->origin != PTYPE_WRITTEN)
		return;
	for (size_t k = 0; k < ymap_size(pt); k++) {
		const struct ynode *key = ymap_key(pt, k);
		const char *s = key->text;
		bool g = key_in(s, gemm_keys, ARRAY_SIZE(gemm_keys));
		bool c = key_in(s, contraction_keys, ARRAY_SIZE(contraction_keys));

		if (expression) {
			if (g || c || strcmp(s, "UseBeta") == 0 ||
			    strncmp(s, "ComplexConjugate", 16) == 0)
				ynode_warn(r->name, key,
					   "'%s' ignored: 'Expression' defines the contraction", s);
		} else if (g && !gemm) {
			ynode_warn(r->name, key,
				   "'%s' ignored: it applies to OperationType GEMM only", s);
		} else if (c && gemm) {
			ynode_warn(r->name, key,
				   "'%s' ignored: it applies to OperationType "
				   "TensorContraction only",
				   s);
		}
		if (!g && !c && !key_in(s, common_keys, ARRAY_SIZE(common_keys)))
			ynode_warn(r->name, key, "unknown key '%s' in ProblemType ignored", s);
	}
}

/* Tensile's OperationType GEMM or TensorContraction: the expression that
 * keeps its index ids. */
static enum tcx_status tensile_problem(struct ptread *r, const struct ynode *pt, struct strbuf *sb)
{
	const struct ynode *op = ymap_get(pt, "OperationType"), *v;
	struct ids a, b;
	bool gemm = true, beta, conja, conjb;
	int64_t nc;
	enum tcx_status st;

	if (r->origin == PTYPE_DERIVED &&
	    (ymap_get(pt, "IndexAssignmentsA") || ymap_get(pt, "IndexAssignmentsB"))) {
		/* Tensile derives them for every OperationType: they say it all */
		gemm = false;
	} else if (op && op->kind != YNODE_SCALAR) {
		return ynode_fail(r->err, r->name, op,
				  "'OperationType' must be GEMM or TensorContraction, found %s",
				  ynode_what(op));
	} else if (op && strcasecmp(op->text, "TensorContraction") == 0) {
		gemm = false;
	} else if (op && strcasecmp(op->text, "GEMM") != 0) {
		return ynode_fail(r->err, r->name, op,
				  "unknown OperationType '%s': expected GEMM or TensorContraction",
				  op->text);
	}
	warn_keys(r, pt, false, gemm);
	if ((st = read_bool(r, pt, "UseBeta", true, &beta)) ||
	    (st = read_bool(r, pt, "ComplexConjugateA", false, &conja)) ||
	    (st = read_bool(r, pt, "ComplexConjugateB", false, &conjb)))
		return st;
	if (gemm) {
		bool ta, tb, batched;
		int s;

		if ((st = read_bool(r, pt, "TransposeA", false, &ta)) ||
		    (st = read_bool(r, pt, "TransposeB", true, &tb)) ||
		    (st = read_bool(r, pt, "Batched", false, &batched)))
			return st;
		/* tensile-compat.md section 2, "GEMM -> indices" */
		s = batched ? 3 : 2;
		a = (struct ids){2, {ta ? s : 0, ta ? 0 : s}};
		b = (struct ids){2, {tb ? 1 : s, tb ? s : 1}};
		if (batched) {
			a.id[a.n++] = 2;
			b.id[b.n++] = 2;
		}
		return tensile_expression(r, pt, batched ? 3 : 2, &a, &b, beta, conja, conjb, sb);
	}
	v = ymap_get(pt, "NumIndicesC");
	if (!v && (v = ymap_get(pt, "NumDimensionsC"))) {
		if (r->origin == PTYPE_WRITTEN)
			ynode_warn(r->name, v,
				   "'NumDimensionsC' read as 'NumIndicesC', the name Tensile's "
				   "code uses");
	} else if (v && ymap_get(pt, "NumDimensionsC") && r->origin == PTYPE_WRITTEN) {
		ynode_warn(r->name, ymap_get(pt, "NumDimensionsC"),
			   "'NumDimensionsC' ignored: 'NumIndicesC' is given");
	}
	if (!v)
		return ynode_fail(r->err, r->name, pt,
				  "ProblemType of a TensorContraction has no 'NumIndicesC'");
	if (!ynode_int(v, &nc) || nc < 0 || nc > TCX_MAX_INDICES)
		return ynode_fail(r->err, r->name, v,
				  "'NumIndicesC' must be a whole number from 0 to %d",
				  TCX_MAX_INDICES);
	if ((st = read_ids(r, pt, "IndexAssignmentsA", &a)) ||
	    (st = read_ids(r, pt, "IndexAssignmentsB", &b)))
		return st;
	return tensile_expression(r, pt, (int)nc, &a, &b, beta, conja, conjb, sb);
}

enum tcx_status ptype_read(const struct ynode *pt, const char *name, enum ptype_origin origin,
			   struct tcx_contraction **out, struct tcx_error *err)
{
	struct ptread r = {name, origin, err};
	const struct ynode *ex;
	struct strbuf sb = STRBUF_INIT;
	struct tcx_error perr;
	enum tcx_dtype dtype;
	bool hpa, strides;
	const char *text;
	enum tcx_status st;

	*out = NULL;
	if (pt->kind != YNODE_MAP)
		return ynode_fail(err, name, pt, "ProblemType must be a mapping, found %s",
				  ynode_what(pt));
	if ((st = ptype_dtype(pt, name, &dtype, err)) ||
	    (st = read_bool(&r, pt, "HighPrecisionAccumulate", false, &hpa)) ||
	    (st = read_bool(&r, pt, "UseInitialStrides", false, &strides)))
		return st;
	if (strides && origin == PTYPE_WRITTEN)
		ynode_warn(name, ymap_get(pt, "UseInitialStrides"),
			   "'UseInitialStrides' ignored: tcx takes strides per problem instance");
	ex = ymap_get(pt, "Expression");
	if (ex) {
		if (ymap_get(pt, "OperationType"))
			return ynode_fail(err, name, ymap_get(pt, "OperationType"),
					  "ProblemType has both 'Expression' and 'OperationType': "
					  "give one");
		if (ex->kind != YNODE_SCALAR || ynode_is_null(ex))
			return ynode_fail(err, name, ex,
					  "'Expression' must be text such as "
					  "\"C[ijk]=A[ilk]*B[jlk]\", found %s",
					  ynode_what(ex));
		warn_keys(&r, pt, true, false);
		text = ex->text;
	} else {
		st = tensile_problem(&r, pt, &sb);
		if (st)
			goto out_release_sb;
		text = strbuf_str(&sb);
	}
	st = notation_parse(text, dtype, LAYOUT_BY_STYLE, out, &perr);
	if (st) {
		if (ex)
			st = ydoc_fail(err, st, name, ex->line, ynode_text_col(ex, perr.col),
				       "cannot parse Expression '%s': %s", text, perr.msg);
		else
			st = ydoc_fail(err, st, name, pt->line, pt->col,
				       "ProblemType gives '%s': %s", text, perr.msg);
		goto out_release_sb;
	}
	if ((*out)->implicit_b) {
		contraction_free(*out);
		*out = NULL;
		st = ydoc_fail(err, TCX_EUNSUPPORTED, name, ex ? ex->line : pt->line,
			       ex ? ex->col : pt->col,
			       "Expression '%s' has one input tensor: tuning and library logic "
			       "take two (tcx run, validate and bench compute it)",
			       text);
		goto out_release_sb;
	}
	(*out)->hpa = hpa;
	/* Tensile's ids must survive the round trip through the notation */
	for (int id = 0; !ex && id < (*out)->nidx; id++)
		if ((*out)->idx[id].name[0] != index_chars[id]) {
			contraction_free(*out);
			*out = NULL;
			st = ynode_fail(err, name, pt,
					"internal error: ProblemType ids not preserved in '%s'",
					text);
			goto out_release_sb;
		}
out_release_sb:
	strbuf_release(&sb);
	return st;
}

/* ---- deriving ----------------------------------------------------------- */

/* Tensile's derived keys (v3.2+ rules, tensile-compat.md section 6). */
struct derived {
	struct ids a, b, free, batch, sum;
	int i01a, i01b, i0, i1, iu;
	bool d0_from_a;
};

static void derive(const struct tcx_contraction *c, struct derived *d)
{
	memset(d, 0, sizeof(*d));
	d->a.n = contraction_dims(c, T_A, d->a.id);
	d->b.n = contraction_dims(c, T_B, d->b.id);
	for (int id = 0; id < c->nidx; id++) {
		struct ids *s = c->idx[id].cls == IDX_BOUND   ? &d->sum
				: c->idx[id].cls == IDX_BATCH ? &d->batch
							      : &d->free;

		s->id[s->n++] = id;
	}
	d->i01a = d->i01b = d->iu = -1;
	for (int k = 0; k < d->a.n && d->i01a < 0; k++)
		if (c->idx[d->a.id[k]].cls == IDX_FREE_A)
			d->i01a = d->a.id[k];
	for (int k = 0; k < d->b.n && d->i01b < 0; k++)
		if (c->idx[d->b.id[k]].cls == IDX_FREE_B)
			d->i01b = d->b.id[k];
	for (int k = 0; k < d->sum.n; k++)
		d->iu = TCX_MAX(d->iu, d->sum.id[k]);
	d->d0_from_a = d->i01a >= 0 && (d->i01b < 0 || d->i01a < d->i01b);
	d->i0 = d->d0_from_a ? d->i01a : d->i01b;
	d->i1 = d->d0_from_a ? d->i01b : d->i01a;
}

int ptype_index_order(const struct tcx_contraction *c, int *order)
{
	struct derived d;
	int n = 0, last[3];

	derive(c, &d);
	last[0] = d.iu;
	last[1] = d.i0;
	last[2] = d.i1;
	for (int id = 0; id < c->nidx; id++)
		if (id != d.iu && id != d.i0 && id != d.i1)
			order[n++] = id;
	for (int k = 0; k < 3; k++)
		if (last[k] >= 0)
			order[n++] = last[k];
	return n;
}

/* Sets key to v (taking it); false when either failed to allocate. */
static bool set_new(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0;
}

static json_t *ids_json(const struct ids *a)
{
	json_t *arr = json_array();

	for (int k = 0; arr && k < a->n; k++)
		if (json_array_append_new(arr, json_integer(a->id[k]))) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

json_t *ptype_derive(const struct tcx_contraction *c)
{
	struct derived d;
	json_t *o = json_object();
	int pa, pb, ua, ub;
	bool ok;

	if (!o)
		return NULL;
	derive(c, &d);
	pa = d.i01a >= 0 ? pos_of(&d.a, d.i01a) : -1;
	pb = d.i01b >= 0 ? pos_of(&d.b, d.i01b) : -1;
	ua = d.iu >= 0 ? pos_of(&d.a, d.iu) : -1;
	ub = d.iu >= 0 ? pos_of(&d.b, d.iu) : -1;
	/* in Tensile's (Python's) sorted key order */
	ok = set_new(o, "AssignedDerivedParameters", json_true()) &&
	     set_new(o, "Batched", json_boolean(d.batch.n > 0)) &&
	     set_new(o, "ComplexConjugateA", json_boolean(c->conj[T_A])) &&
	     set_new(o, "ComplexConjugateB", json_boolean(c->conj[T_B])) &&
	     set_new(o, "DataType", json_integer(dtype_info(c->dtype)->tensile_number)) &&
	     set_new(o, "HighPrecisionAccumulate", json_boolean(c->hpa)) &&
	     set_new(o, "Index0", json_integer(d.i0)) &&
	     set_new(o, "Index01A", json_integer(d.i01a)) &&
	     set_new(o, "Index01B", json_integer(d.i01b)) &&
	     set_new(o, "Index1", json_integer(d.i1)) &&
	     set_new(o, "IndexAssignmentsA", ids_json(&d.a)) &&
	     set_new(o, "IndexAssignmentsB", ids_json(&d.b)) &&
	     set_new(o, "IndexUnroll", json_integer(d.iu)) &&
	     set_new(o, "IndexUnrollA", json_integer(ua)) &&
	     set_new(o, "IndexUnrollB", json_integer(ub)) &&
	     set_new(o, "IndicesBatch", ids_json(&d.batch)) &&
	     set_new(o, "IndicesFree", ids_json(&d.free)) &&
	     set_new(o, "IndicesSummation", ids_json(&d.sum)) &&
	     set_new(o, "NumIndicesBatch", json_integer(d.batch.n)) &&
	     set_new(o, "NumIndicesC", json_integer(c->rank[T_C])) &&
	     set_new(o, "NumIndicesFree", json_integer(d.free.n)) &&
	     set_new(o, "NumIndicesSummation", json_integer(d.sum.n)) &&
	     set_new(o, "OperationType", json_string("TensorContraction")) &&
	     set_new(o, "TLUA", json_boolean(pa >= 0 && ua >= 0 && pa < ua)) &&
	     set_new(o, "TLUB", json_boolean(pb >= 0 && ub >= 0 && pb < ub)) &&
	     set_new(o, "Tensor0", json_integer(d.d0_from_a ? 0 : 1)) &&
	     set_new(o, "Tensor1", json_integer(d.d0_from_a ? 1 : 0)) &&
	     set_new(o, "TileA", json_integer(d.d0_from_a ? 0 : 1)) &&
	     set_new(o, "TileB", json_integer(d.d0_from_a ? 1 : 0)) &&
	     set_new(o, "TotalIndices", json_integer(c->nidx)) &&
	     set_new(o, "UseBeta", json_boolean(c->use_beta)) &&
	     set_new(o, "UseInitialStrides", json_false());
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
