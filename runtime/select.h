/* select.h - the data the selectors of select.c read: a problem type's
 * solutions (the features the model uses), Tensile's exact and range logic,
 * and measurements at the tuned sizes.  Shared by tcx (lib/logic/selector.h)
 * and the libraries `tcx export-lib` writes.  C99; the includer supplies
 * <stdint.h>. */
#ifndef SEL_SELECT_H
#define SEL_SELECT_H

#define SEL_MAX_INDICES 16

/* The selectors, in the order reports list them. */
enum sel_kind { SEL_LOGIC = 0, SEL_NEAREST = 1, SEL_MODEL = 2, SEL_KINDS = 3 };

/* What the selectors need of a solution (resolved parameters). */
struct sel_solution {
	int mt0, mt1;  /* macro tile along D0 and D1: WorkGroup x ThreadTile */
	int depth_u;   /* DepthU */
	int gsu;       /* GlobalSplitU */
	int edge_none; /* EdgeType None: D0, D1 sizes must be multiples of the tile */
	int loop_tail; /* LoopTail; without it the DU size must be a multiple of DepthU */
	/* PackFreeIndices: the index D0 (D1) spans too, or -1; D0's (D1's)
	 * own size must then be a multiple of vw0 (vw1), and the packed
	 * extents below 2^31 */
	int pack0, pack1, vw0, vw1;
};

/* Tensile's range tree, flattened: node k tests size[index]; its rules are
 * rules[first .. first + nrules); a rule applies when its threshold is -1 or
 * at least the size; it names a solution (last level) or a child node. */
struct sel_rule {
	int64_t threshold;
	int sol;   /* last level: the solution, else -1 */
	int child; /* other levels: the child node, else -1 */
};
struct sel_node {
	int index;
	int nrules;
	int first;
};

/* Everything one choice reads: a problem type on one device. */
struct sel_table {
	int nidx;
	int d0, d1, du;	  /* the index ids of D0, D1, DU; -1 for a size-1 stand-in */
	const int *bound; /* nidx flags: 1 for bound (summation) indices */
	int compute_units;
	int nsol;
	const struct sel_solution *sols;
	int nexact;
	const int64_t *exact_sizes; /* nexact x nidx */
	const int *exact_sol;
	int nnodes; /* 0: no range rules; else node 0 is the root */
	const struct sel_node *nodes;
	const struct sel_rule *rules;
	int npoints;		    /* tuned sizes with measurements */
	const int64_t *point_sizes; /* npoints x nidx */
	const double *point_gflops; /* npoints x nsol; <= 0 where not measured */
	/* the model's two parameters, fitted to the measurements (tcx's
	 * selector.c): how much padding costs (0: nothing, 1: as much as
	 * useful work) and the width, in octaves of size, over which measured
	 * rates are averaged (0: the nearest tuned size alone) */
	double pad_exp;
	double bandwidth;
};

#endif /* SEL_SELECT_H */
