/* config.h - the tuning-config loader: a Tensile v2.x or v3.x config (or
 * tcx's extension of v3, docs/tensile-compat.md sections 1-5) read into a
 * generic in-memory model for the tuner.
 *
 * The loader checks the grammar and the problem types; it does not know what
 * the solution parameters mean.  It keeps each parameter's name and its
 * candidate values as jansson values, in the order written, and leaves
 * defaults, validity and the benchmark protocol to the tuner.
 *
 * What it accepts:
 *   - a mapping with GlobalParameters, BenchmarkProblems, LibraryLogic and
 *     LibraryClient; any other top-level key is logged as a warning
 *     ("FILE:LINE:COL: unknown key 'Foo' ignored") and skipped;
 *   - BenchmarkProblems entries in either form, decided per entry: a mapping
 *     (v2.x: ProblemType plus phase keys, one group) or a list (v3.x:
 *     [ProblemType, group, group, ...]; ProblemType alone = one group with
 *     every phase absent);
 *   - ProblemType as tcx's {Expression: "C[ijk]=A[ilk]*B[jlk]", DataType: s},
 *     or Tensile's OperationType GEMM (TransposeA/B, Batched) or
 *     TensorContraction (NumIndicesC, IndexAssignmentsA/B), read by
 *     logic/ptype.h as a mapping a person wrote;
 *   - phases as lists of steps, each step a mapping of parameter names to
 *     lists of candidate values; JoinParameters as a list of names;
 *     ProblemSizes in a step of the Common, BenchmarkFork, BenchmarkJoin and
 *     Final phases, in the v3 form (a list of Range/Exact) or the v2 form
 *     (one Range).
 * Scalars become JSON values as lib/yaml types them (YAML 1.2's core schema:
 * plain true/True/TRUE, false/..., null/Null/NULL/~/empty, decimal
 * integers, decimal floats); anything quoted, and every other plain scalar
 * (EdgeType None, .inf), stays a string.
 *
 * What it rejects, with TCX_EPARSE and "FILE:LINE:COL: ..." (1-based, also
 * in err->line and err->col): what lib/yaml refuses in any document
 * (malformed YAML, more than one document, aliases (*name), keys that are
 * not scalars, duplicate keys, NUL characters, nesting deeper than
 * YDOC_MAX_DEPTH: yaml/ydoc.h), an empty document, a top level that is not
 * a mapping, a list or mapping where the other (or a scalar) is expected,
 * more than CONFIG_MAX_NODES nodes and files larger than CONFIG_MAX_BYTES
 * (a hostile file cannot exhaust memory).  Size specs that
 * size_range_parse rejects keep its status code (TCX_ERANGE, TCX_EINVAL)
 * with the place added.
 */
#ifndef TCX_TUNE_CONFIG_H
#define TCX_TUNE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/common.h"
#include "model/model.h"

#define CONFIG_MAX_BYTES (16u << 20) /* larger files are refused */
#define CONFIG_MAX_NODES 1000000     /* scalars, lists and mappings in all */

/* The seven phases of Tensile's benchmark protocol, in protocol order. */
enum phase_id {
	PH_INITIAL,    /* InitialSolutionParameters */
	PH_COMMON,     /* BenchmarkCommonParameters */
	PH_FORK,       /* ForkParameters */
	PH_BENCH_FORK, /* BenchmarkForkParameters */
	PH_JOIN,       /* JoinParameters */
	PH_BENCH_JOIN, /* BenchmarkJoinParameters */
	PH_FINAL,      /* BenchmarkFinalParameters */
	PH_COUNT
};
/* The YAML key of each phase: config_phase_key[PH_FORK] is "ForkParameters". */
extern const char *const config_phase_key[PH_COUNT];
/* The phase whose key is `key`, or -1. */
int config_phase_id(const char *key);

/* One parameter of a step.  `values` is a JSON array of the candidate
 * values as written (scalars or lists, e.g. ThreadTile [[4,4],[8,8]]); a
 * scalar written instead of a list is stored as a one-value array.  For a
 * JoinParameters name, `values` is NULL.  line and col give the place of the
 * name (1-based). */
struct config_param {
	char *name;
	json_t *values;
	unsigned line, col;
};

/* A step's ProblemSizes: the union of its Range and Exact entries, in the
 * order written.  Each range is parsed for the problem type's nidx
 * indices; `exact` holds nexact rows of nidx sizes. */
struct config_sizes {
	int nranges;
	struct size_range *ranges;
	int nexact;
	int64_t *exact; /* nexact * nidx */
	unsigned line;	/* of the ProblemSizes key */
};

/* One step: the parameters benchmarked jointly (one mapping of a phase
 * list).  A step may hold only ProblemSizes (nparams 0, has_sizes). */
struct config_step {
	int nparams;
	struct config_param *params;
	bool has_sizes;
	struct config_sizes sizes;
	unsigned line;
};

/* One phase of a group.  An absent key and a key with no steps differ in
 * Tensile (defaults are filled in only for absent ones): `present` says the
 * key appeared; `empty` says it appeared with a null value or an empty
 * list (nsteps is then 0).  JoinParameters, when given names, is one step
 * whose params are the names (values NULL). */
struct config_phase {
	bool present;
	bool empty;
	int nsteps;
	struct config_step *steps;
};

/* A size group (v3.x) or the phases of a v2.x entry.  `candidates` is
 * NULL in a config read from a file; in one tcx makes for an expression
 * (tune/space.h) it is the search space itself: a JSON array of whole
 * solutions (solution_to_json), in the order the model strategy measures
 * them. */
struct config_group {
	struct config_phase phase[PH_COUNT];
	unsigned line;
	json_t *candidates;
};

/* One entry of BenchmarkProblems.  `type` is the parsed contraction, with
 * Tensile's index ids preserved (tensile-compat.md section 2).
 * `problem_type` is the ProblemType mapping as written, plus the derived
 * keys that were not written: Expression (the tcx expression parsed),
 * Name (Tensile's problem type name, e.g. "Cijk_Ailk_Bjlk_SB"),
 * NumIndicesC, IndexAssignmentsA, IndexAssignmentsB, TotalIndices,
 * IndicesFree, IndicesBatch and IndicesSummation. */
struct config_problem {
	struct tcx_contraction *type;
	json_t *problem_type;
	int ngroups;
	struct config_group *groups;
	int form; /* 2 or 3: the form this entry was written in */
	unsigned line;
};

/* A loaded config.  Everything in it is owned by it and released by
 * config_free. */
struct config {
	char *path;	/* the name used in messages */
	int form;	/* 2 = v2.x list of mappings, 3 = v3.x list of lists (of
			   the first entry; 3 when there is none) */
	json_t *global; /* GlobalParameters as given ({} if null), NULL if absent */
	int nproblems;
	struct config_problem *problems;
	json_t *library_logic; /* NULL if absent, {} if empty */
	bool library_client;   /* the LibraryClient key appeared */
};

/* Loads the config file at `path` ("-" is stdin).  On success *out is the
 * caller's to release with config_free; on failure *out is NULL and err
 * says why: TCX_EIO (unreadable), TCX_EPARSE (the rules above), TCX_ERANGE
 * or TCX_EINVAL (a size spec), TCX_ENOMEM.  Warnings go to tcx_log. */
enum tcx_status config_load(const char *path, struct config **out, struct tcx_error *err);

/* The same for `len` bytes of YAML text, `name` standing for the file name
 * in messages (NULL: "<string>").  The text need not be NUL-terminated.
 * For tests and fuzzing. */
enum tcx_status config_load_string(const char *text, size_t len, const char *name,
				   struct config **out, struct tcx_error *err);

/* Releases c and everything it owns.  NULL allowed. */
void config_free(struct config *c);

/* The parameter called `name` in step s, or NULL. */
const struct config_param *config_step_find(const struct config_step *s, const char *name);

#endif /* TCX_TUNE_CONFIG_H */
