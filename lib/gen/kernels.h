/* kernels.h - the kernel templates embedded at build time, by path under
 * kernels/ ("opencl/contract.cl").  TCX_KERNEL_DIR, when set, makes
 * kernel_source read them from that directory instead (for development). */
#ifndef TCX_GEN_KERNELS_H
#define TCX_GEN_KERNELS_H

#include <stddef.h>

struct embedded_kernel {
	const char *path;
	const unsigned char *data;
	size_t len;
};

/* Terminated by an entry with path NULL. */
extern const struct embedded_kernel embedded_kernels[];

#endif /* TCX_GEN_KERNELS_H */
