/* solution.h - a solution: one set of kernel parameters in Tensile's
 * vocabulary (WorkGroup, ThreadTile, DepthU, ...), with defaults, parsing
 * from text and JSON, a canonical key, and the validity rules that reject
 * a parameter set with a stated reason. */
#ifndef TCX_SOLUTION_H
#define TCX_SOLUTION_H

#include <stdbool.h>

#include <jansson.h>

#include "backend/backend.h"
#include "model/model.h"

enum edge_type { EDGE_BRANCH = 0, EDGE_SHIFTPTR = 1, EDGE_NONE = 2 };

struct solution {
	int wg[3];          /* WorkGroup: [wg0, wg1, LocalSplitU] */
	int tt[2];          /* ThreadTile */
	int depth_u;        /* DepthU (<= 0: pick the first that fits) */
	int vw;             /* VectorWidth (-1: automatic) */
	int gsu;            /* GlobalSplitU */
	bool pgr, plr;      /* PrefetchGlobalRead, PrefetchLocalRead */
	enum edge_type edge;/* EdgeType */
	int wgm;            /* WorkGroupMapping */
	int nlc[2];         /* NumLoadsCoalescedA, B: 1 smallest, -1 largest, else a count */
	bool loop_tail;     /* LoopTail */
	int lds_pad;        /* LdsPad */
	int mt_shape[2];    /* MacroTileShapeMin, MacroTileShapeMax */
	int mt_join[2];     /* MacroTile when given as a join value, else 0 */
	/* tcx's own parameters */
	bool use_lds;       /* UseLDS: stage tiles in local memory */
	bool const_sizes;   /* ConstantSizes: bake the problem sizes into the kernel */
	int mi[4];          /* MatrixInstruction (tensor cores; 0 = none) */
	int occupancy;      /* Occupancy: work-groups per compute unit (0: the compiler's choice) */
	bool tf32x3;        /* TF32x3: fp32 on tensor cores as hi*lo + lo*hi + hi*hi in tf32 */
	bool pack_free;     /* PackFreeIndices: D0, D1 also span the next free index of P, Q */
	/* tcx's role choices, by index name ("" automatic: the rules of
	 * model.h's model_classify): the free index of A (B) that its tiles run
	 * along, and the bound index of the unrolled loop */
	char tile_index[2][TCX_INDEX_NAME_MAX]; /* TileIndexA, TileIndexB */
	char unroll_index[TCX_INDEX_NAME_MAX];  /* UnrollIndex */
	int test_skip_last_u; /* TestSkipLastU: deliberately wrong, for tests */
	/* Tensile v2 parameters, turned into WorkGroup/ThreadTile/DepthU by
	 * solution_finalize; 0 when not given */
	int v2_num_threads, v2_group_shape, v2_tt_elems, v2_tt_shape, v2_split_u;
	int v2_wg_edge, v2_tt_edge, v2_loop_unroll;
	bool v2_group_shape_set, v2_tt_shape_set;
};

/* Tensile's defaults (v3.0), which tcx keeps. */
void solution_default(struct solution *s);

/* What tcx does with a parameter name. */
enum param_use {
	PARAM_HONOURED,  /* a kernel parameter */
	PARAM_IGNORED,   /* a Tensile parameter tcx accepts but cannot honour */
	PARAM_UNKNOWN,
};
enum param_use param_lookup(const char *name);
/* "; did you mean 'ThreadTile'?" in buf for a name close to a parameter's
 * (tcx's or Tensile's), else "". */
const char *param_hint(const char *name, char *buf, size_t len);
/* True for the keys Tensile derives and writes beside a solution's
 * parameters (MacroTile0, LoopUnroll, ...): harmless when read back. */
bool param_derived_key(const char *name);

/* Sets one parameter from a JSON value (Tensile spellings: "Branch", True,
 * [16,16,1]).  Ignored Tensile parameters are accepted and do nothing;
 * unknown names and bad values fail with TCX_EINVAL. */
enum tcx_status solution_set(struct solution *s, const char *name, json_t *value,
			     struct tcx_error *err);
/* Parses "WorkGroup=[16,16,1],ThreadTile=[4,4],DepthU=8" onto s. */
enum tcx_status solution_parse(struct solution *s, const char *text, struct tcx_error *err);
/* Turns Tensile v2 parameters into v3 ones; checks what cannot be done. */
enum tcx_status solution_finalize(struct solution *s, struct tcx_error *err);

/* Every parameter as JSON (Tensile's names), for logic files and reports. */
json_t *solution_to_json(const struct solution *s);
/* Reads a solution back from solution_to_json's form (extra keys, such as
 * Tensile's derived ones, are skipped). */
enum tcx_status solution_from_json(struct solution *s, json_t *obj, struct tcx_error *err);
/* A canonical text key: every parameter, name=value, in a fixed order. */
void solution_key(const struct solution *s, char *buf, size_t len);
/* The key of s in the results store for contraction c: solution_key with
 * the indices it names (TileIndex, UnrollIndex) written as the letters of
 * c's Tensile name (contraction_tensile_name), the store's problem key, so
 * that a row reads the same whatever the expression called its indices. */
void solution_store_key(const struct tcx_contraction *c, const struct solution *s, char *buf,
			size_t len);
/* A short human name: "MT64x64x16_WG16x16x1_TT4x4_VW1_..." */
void solution_name(const struct solution *s, char *buf, size_t len);
bool solution_equal(const struct solution *a, const struct solution *b);

/* The names of the parameters tcx honours and a one-line description,
 * for --help texts and man pages; NULL-terminated. */
struct param_doc {
	const char *name;
	const char *values;
	const char *help;
};
extern const struct param_doc param_docs[];

#endif /* TCX_SOLUTION_H */
