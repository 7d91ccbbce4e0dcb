/* runtime.h - the tables a library written by tcx export-lib carries, as
 * runtime.c reads them: per problem type its indices and layout, its
 * kernels (one per solution, with what its launch takes, abi.h's struct
 * abi_plan, and the #define prelude of a packed-layout and of a
 * general-strides variant), and one variant of the selection data per
 * logic file (per device).
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

#include "abi.h"
#include "select.h"

#define TL_MAX_INDICES 16

/* One solution's kernel: what a launch needs (from tcx's kernel plan). */
struct tl_kernel {
	const char *name;
	struct abi_plan plan; /* as tcx's plan_abi has it; its slots are the type's */
	long lds_bytes;	      /* local memory the kernel uses (CUDA: dynamic shared memory) */
	/* the #define preludes, [language][layout]: language 0 OpenCL C, 1
	 * CUDA; layout 0 the packed one (unit strides known: vector loads), 1
	 * any strides.  NULL where tcx had no such kernel. */
	const unsigned char *prelude[2][2];
	size_t prelude_len[2][2];
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
	int p_is_a; /* the kernels' P operand is A (else B) */
	int nkernels;
	const struct tl_kernel *kernels;
	int nvariants;
	const struct tl_variant *variants;
};

#endif /* TL_RUNTIME_H */
