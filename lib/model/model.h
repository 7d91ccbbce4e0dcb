/* model.h - the problem model: a parsed contraction (problem type), its
 * indices and their classes, element types, problem instances (sizes and
 * strides), the D0/D1/DU choice and Tensile's ProblemSizes expansion. */
#ifndef TCX_MODEL_H
#define TCX_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/common.h"

#define TCX_MAX_INDICES 16
#define TCX_INDEX_NAME_MAX 16

/* The three tensors, in the order every per-tensor array uses. */
enum tensor_role { T_C = 0, T_A = 1, T_B = 2 };

/* Tensile's classes: free (in C and one input), batch (in all three),
 * bound (summed: in A and B, not in C). */
enum index_class { IDX_FREE_A, IDX_FREE_B, IDX_BATCH, IDX_BOUND };

enum layout { LAYOUT_FIRST_FASTEST, LAYOUT_LAST_FASTEST };
enum notation_style { NOTATION_TENSILE, NOTATION_EINSUM };

struct index_info {
	char name[TCX_INDEX_NAME_MAX];
	enum index_class cls;
	int pos[3];     /* position in each tensor as written, -1 if absent */
	unsigned col;   /* column of its first appearance in the expression */
};

/* A parsed contraction: the problem type.  Index ids follow Tensile's
 * numbering: C's indices from the fastest-moving outward are 0..nc-1, the
 * bound indices follow (in Sum[...] order when given, else in order of
 * first appearance in A). */
struct tcx_contraction {
	char *expr;                 /* the text parsed (owned) */
	enum notation_style style;
	enum layout layout;
	int nidx;
	struct index_info idx[TCX_MAX_INDICES];
	int rank[3];
	int written[3][TCX_MAX_INDICES]; /* ids in the order written */
	char tensor_name[3][TCX_INDEX_NAME_MAX];
	enum tcx_dtype dtype;
	bool conj[3];               /* conj[T_A], conj[T_B] */
	bool has_alpha, use_beta, explicit_sum;
	bool hpa;                   /* HighPrecisionAccumulate (fp16: accumulate in fp32) */
	/* A one-operand expression ("ij->ji", "ijk->ik", "C[ji]=A[ij]"): B is
	 * no user's tensor but ones over the summed indices, in the order A
	 * writes them (a single element 1 when nothing is summed), so that
	 * C = alpha * A*B + beta * C is the transpose or reduction asked for
	 * and every stage computes it as a two-operand contraction.  Its data
	 * comes from run_make_tensor (run/run.h), never from the user. */
	bool implicit_b;
};

struct problem;

/* Element types. */
struct dtype_info {
	enum tcx_dtype dtype;
	char letter;            /* Tensile's letter: S D C Z H B */
	const char *name;       /* "fp32" */
	const char *cl_type;    /* storage type in OpenCL C */
	int bytes;              /* bytes per element */
	bool complex;
	int real_bytes;         /* bytes of one real component */
	double unit_roundoff;   /* of the storage type, 2^-p */
	int tensile_number;     /* Tensile's DataType integer */
};
const struct dtype_info *dtype_info(enum tcx_dtype t);
/* Parses "s", "S", "fp32", "float", "single" ... or a Tensile integer. */
bool dtype_parse(const char *s, enum tcx_dtype *out);

/* Index id in a tensor's memory order (fastest first), for the tensor's
 * layout as parsed: what Tensile calls IndexAssignments. */
int contraction_dims(const struct tcx_contraction *c, enum tensor_role t, int *ids);
/* The ids in the order positional sizes ("100,200,300") are given: the
 * notation's own order.  einsum ("ij,jk->ik"): the output's letters as
 * written, then the summed ones in order of first appearance (i, k, j).
 * Tensile notation: Tensile's numbering, the ids themselves (C's indices,
 * then the bound ones), as Tensile's configs and logic files use.  Returns
 * nidx. */
int contraction_positional_order(const struct tcx_contraction *c, int *ids);
/* Tensile's problem type name, e.g. "Cijk_Ailk_Bjlk_SB". */
void contraction_tensile_name(const struct tcx_contraction *c, char *buf, size_t len);
/* The same for an instance whose explicit strides may reorder the indices. */
void problem_tensile_name(const struct tcx_contraction *c, const struct problem *p, char *buf,
			  size_t len);
/* Looks an index up by name; -1 if none. */
int contraction_find(const struct tcx_contraction *c, const char *name);
const char *index_class_name(enum index_class k);
int contraction_count(const struct tcx_contraction *c, enum index_class k);
/* Deep copy (for problems that outlive their parse). */
enum tcx_status contraction_clone(const struct tcx_contraction *c, struct tcx_contraction **out,
				  struct tcx_error *err);

/* A problem instance: a contraction with sizes and strides.  Strides are in
 * elements, per tensor and per index id; 0 where the tensor lacks the
 * index.  `extent` is the number of elements each tensor spans. */
struct problem {
	const struct tcx_contraction *c;
	int64_t size[TCX_MAX_INDICES];
	int64_t stride[3][TCX_MAX_INDICES];
	int64_t extent[3];
	bool explicit_strides;
};

/* Fills p with packed strides for the contraction's layout.  A size may
 * be 0, as in NumPy: the problem is empty (problem_empty_index), a tensor
 * with that index has no elements (extent 0), and the packed strides step
 * over it as over a size of 1.  Fails with TCX_ERANGE when a size is
 * negative or a tensor's element count (or byte count) overflows. */
enum tcx_status problem_init(struct problem *p, const struct tcx_contraction *c,
			     const int64_t *sizes, struct tcx_error *err);
/* The id of an index of size 0, a free or batch one first (then C has no
 * elements; a bound one alone leaves C = beta * C), or -1 when there is
 * none.  An empty problem has nothing for a kernel to do: tcx never
 * launches one for it (run/run.h). */
int problem_empty_index(const struct problem *p);
/* Replaces the strides of tensor t (given in written order); checks them
 * (positive, C without aliasing) and recomputes the extent. */
enum tcx_status problem_set_strides(struct problem *p, enum tensor_role t, const int64_t *written,
				    int n, struct tcx_error *err);
/* Parses "A=[1,64],B=[..],C=[..]" (or colons: A=1:64) into p's strides. */
enum tcx_status problem_parse_strides(struct problem *p, const char *spec,
				      struct tcx_error *err);
/* The strides of spec (read as problem_parse_strides reads them) as the
 * results store's problem key names them: the tensors spec gives, as A,
 * B, C, each with its strides in the order of the key's letters, which is
 * its dimensions from the fastest outward as the layout has them
 * ("ik,kj->ij" with "A=[40,1]" gives "A=[1,40]").  TCX_EPARSE or
 * TCX_EINVAL for a spec problem_parse_strides refuses for its form or
 * its counts; the values are not checked. */
enum tcx_status problem_strides_key(const struct tcx_contraction *c, const char *spec,
				    char *buf, size_t len, struct tcx_error *err);
/* Checks that no two elements of C share an address. */
enum tcx_status problem_check_alias(const struct problem *p, struct tcx_error *err);
/* The flop count: 2 (8 complex) * product of all sizes, a multiply and an
 * add per product.  One input (implicit_b): 1 (2 complex) * product of all
 * sizes, an add per element of A summed, when an index is summed; 0 for a
 * transpose or a copy, which only moves data (min_bytes measures it). */
double problem_flops(const struct problem *p);
/* Bytes moved at minimum: read A and B once, write C (and read it if beta).
 * One input: B, which tcx makes, is not counted. */
double problem_min_bytes(const struct problem *p, bool read_c);
/* Product of the bound sizes: the number of products summed per element. */
int64_t problem_bound_volume(const struct problem *p);
int64_t problem_count(const struct problem *p, enum tensor_role t);

/* Parses a size assignment: "i=64,j=32" by name, or "64,32,16" in the
 * notation's order (contraction_positional_order).
 * Every index must be given, each at least 1. */
enum tcx_status sizes_parse_assign(const struct tcx_contraction *c, const char *spec,
				   int64_t *sizes, struct tcx_error *err);
/* The same where a size may be 0: an empty problem, which tcx run and tcx
 * validate compute as NumPy does.  Timing and tuning (bench, tune, logic)
 * keep sizes_parse_assign: an empty problem has nothing to time. */
enum tcx_status sizes_parse_assign_zero(const struct tcx_contraction *c, const char *spec,
					int64_t *sizes, struct tcx_error *err);

/* The special index number for a size-1 stand-in: a contraction with no free
 * index in A (or B) or no bound index maps that role to a virtual size-1
 * index. */
#define IDX_VIRTUAL (-1)

enum rule_kind { RULE_STRIDE, RULE_ONLY, RULE_VIRTUAL, RULE_TIE };

/* How D0, D1, DU were chosen, and what Tensile's position rule picks. */
struct classification {
	int d0, d1, du;             /* ids, or IDX_VIRTUAL */
	bool d0_from_a;             /* Tensile's TileA/Tensor0: D0 is A's free index */
	int free01[3];              /* Index01A (free01[T_A]) and Index01B: smallest-stride free ids */
	enum rule_kind why_d01[3];  /* how free01[T_A], free01[T_B] were chosen */
	enum rule_kind why_du;
	int tensile_d0, tensile_d1, tensile_du; /* Tensile v3.2+ position rule */
	bool tlu[3];                /* TLUA / TLUB: D0/D1 moves faster than DU there */
	int tid[TCX_MAX_INDICES];   /* Tensile's numbering of each index for these strides */
};
/* A tensor's index ids from its fastest dimension outward: by stride when p
 * has explicit strides, else by the parsed layout. */
int model_memory_order(const struct tcx_contraction *c, const struct problem *p, enum tensor_role t,
		       int *ids);
/* Tensile's numbering for these strides: C's indices by C stride (fastest
 * 0), then the bound ones in tcx's order.  tid[id] = Tensile's id. */
void model_tensile_ids(const struct tcx_contraction *c, const struct problem *p, int *tid);
/* The letter of Tensile id tid in problem_tensile_name ('i', 'j', ...). */
char model_tensile_char(int tid);

/* Classifies with strides from p, or with all sizes equal when p is NULL. */
void model_classify(const struct tcx_contraction *c, const struct problem *p,
		    struct classification *out);

/* The GEMM a contraction is equivalent to, e.g. "batched GEMM, A transposed",
 * or NULL-equivalent text "not a GEMM: ..." (writes into buf). */
void model_describe_gemm(const struct tcx_contraction *c, const struct problem *p,
			 const struct classification *cls, char *buf, size_t len);

/* Tensile's ProblemSizes.  One per-index entry: */
struct size_entry {
	bool is_map;      /* a bare integer: copy index `map`'s size */
	int map;
	int64_t min, step, incr, max; /* normalised [min, step, incr, max] */
};
struct size_range {
	int n;
	struct size_entry e[TCX_MAX_INDICES];
};
/* A list of problem sizes (each nidx wide). */
struct size_list {
	int nidx;
	size_t count, alloc;
	int64_t *v; /* count * nidx */
};
void size_list_init(struct size_list *l, int nidx);
void size_list_release(struct size_list *l);
enum tcx_status size_list_add(struct size_list *l, const int64_t *sizes, struct tcx_error *err);
/* Sorts lexicographically (index 0 slowest) and removes duplicates (v3). */
void size_list_sort_unique(struct size_list *l);

/* Parses a Range spec: "[16,1968],0,0", "[[16,1968],0,0]", entries padded
 * with 0 and extra entries ignored as Tensile does (a warning is logged). */
enum tcx_status size_range_parse(const char *spec, int nidx, struct size_range *r,
				 struct tcx_error *err);
/* Parses an Exact spec: "1024,1024,1024" or "[1024,1024,1024]"; exactly
 * nidx integers, each at least 1: Exact and Range describe what to time and
 * tune (bench, tune, logic eval), and an empty problem has nothing to time
 * (in a Range, 0 is not a size but a copy of index 0's). */
enum tcx_status size_exact_parse(const char *spec, int nidx, int64_t *sizes,
				 struct tcx_error *err);
/* size_range_parse and size_exact_parse for an expression: the entries in
 * the notation's order (contraction_positional_order), a bare integer
 * copying the size of the entry at that position; the results in id order
 * as size_range_expand and problem_init take them.  An exact size may name
 * its indices instead (i=1024,j=512,...: every index once). */
enum tcx_status size_range_parse_for(const struct tcx_contraction *c, const char *spec,
				     struct size_range *r, struct tcx_error *err);
enum tcx_status size_exact_parse_for(const struct tcx_contraction *c, const char *spec,
				     int64_t *sizes, struct tcx_error *err);
/* Expands a range into l (appending), the way Tensile v3's code does.  A
 * limit on the number of problems guards against runaway specs. */
enum tcx_status size_range_expand(const struct size_range *r, int nidx, struct size_list *l,
				  size_t limit, struct tcx_error *err);
/* The values one entry expands to (for messages and tests). */
size_t size_entry_count(const struct size_entry *e);

#endif /* TCX_MODEL_H */
