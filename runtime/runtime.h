/* runtime.h - the tables a library written by tcx export-lib carries, as
 * runtime.c reads them: per problem type its indices and layout, the slots
 * of the kernel's arguments, its kernels (one per solution, with the
 * #define prelude of a packed-layout and of a general-strides variant),
 * and one variant of the selection data per logic file (per device).
 *
 * This file is a template: tcx copies it unchanged into the library's
 * src/ directory.  The generated src/<prefix>.c includes config.h, the
 * public header, this file, the generated tables and runtime.c, in that
 * order, as one translation unit.  C99.
 */
#ifndef TL_RUNTIME_H
#define TL_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "select.h"

#define TL_MAX_INDICES 16
#define TL_MAX_SLOTS   (TL_MAX_INDICES + 3)

/* One solution's kernel: what a launch needs (from tcx's kernel plan). */
struct tl_kernel {
	const char *name;
	int wg[3];	/* WorkGroup: the work-group shape */
	int mt0, mt1;	/* macro tile along D0 and D1 */
	int gsu;	/* GlobalSplitU */
	long lds_bytes; /* local memory the kernel uses (CUDA: dynamic shared memory) */
	/* the #define preludes, [language][layout]: language 0 OpenCL C, 1
	 * CUDA; layout 0 the packed one (unit strides known: vector loads), 1
	 * any strides.  NULL where tcx had no such kernel. */
	const unsigned char *prelude[2][2];
	size_t prelude_len[2][2];
	/* the warpgroup kernel (CUDA, Hopper): a block of this many threads in
	 * one dimension, and three more arguments (0: none of that) */
	int threads;
	/* PackFreeIndices: the folded slot D0 (D1) also spans, as the outer part
	 * of its work-groups' rows (-1: none) */
	int pack[2];
};

/* One logic file of a problem type: a device's selection data. */
struct tl_variant {
	const char *logic;		 /* the logic file it came from */
	const char *device_name;	 /* the device it was tuned on (NULL: unknown) */
	const char *architecture;	 /* NULL: unknown */
	const char *vendor;		 /* NULL: unknown */
	const char *const *device_names; /* Tensile's DeviceNames */
	int ndevice_names;
	int is_default; /* DeviceNames is [default] */
	int kind;	/* the selector: enum sel_kind */
	struct sel_table sel;
	const int *kernel_of; /* per solution of the logic: the type's kernel */
};

/* One problem type. */
struct tl_type {
	struct TL(problem_info) info;
	int nslots;		/* kernel argument slots: D0, D1, DU, folded, outer bound */
	int slot[TL_MAX_SLOTS]; /* index id per slot; -1 for a size-1 stand-in */
	int nf2, nb;		/* folded dimension-2 slots, outer bound slots */
	int p_is_a;		/* the kernel's P operand is A (else B) */
	int conj_p, conj_q;	/* complex conjugation of P and Q */
	int nkernels;
	const struct tl_kernel *kernels;
	int nvariants;
	const struct tl_variant *variants;
};

#endif /* TL_RUNTIME_H */
