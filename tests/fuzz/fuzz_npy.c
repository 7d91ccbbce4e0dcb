/* fuzz_npy.c - fuzz target: the NumPy .npy reader (npy_read_mem,
 * lib/io/npy.c).  The input is the file's bytes; what reads must agree with
 * itself (shape, byte count) and write back out (npy_write to a temporary
 * directory). */
#include <unistd.h>

#include "fuzz.h"
#include "io/npy.h"
#include "model/model.h"

/* Where what was read is written back: a file in a private temporary
 * directory (never a device such as /dev/null, which an atomic rename
 * would replace when run as root). */
static char path[4096], dir[4000];

static void remove_out(void)
{
	unlink(path);
	rmdir(dir);
}

static const char *out_path(void)
{
	if (!path[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/tcx-fuzz-npy.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/out.npy", dir);
		atexit(remove_out);
	}
	return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npy_array a;
	struct tcx_error err;
	enum tcx_status st;
	int64_t n = 1;

	memset(&err, 0, sizeof(err));
	st = npy_read_mem(data, size, "fuzz.npy", &a, &err);
	fuzz_check_error(st, &err, "npy_read_mem");
	if (st) {
		if (a.data || a.nbytes || a.ndim)
			fuzz_fail("npy_read_mem failed but left the array set");
		npy_release(&a);
		return 0;
	}
	if (!a.data)
		fuzz_fail("npy_read_mem succeeded with no data buffer");
	if (a.ndim < 0 || a.ndim > NPY_MAX_DIMS)
		fuzz_fail("%d dimensions", a.ndim);
	for (int d = 0; d < a.ndim; d++) {
		if (a.shape[d] < 0)
			fuzz_fail("negative extent %lld", (long long)a.shape[d]);
		if (common_mul_overflows_i64(n, a.shape[d], &n))
			fuzz_fail("shape overflows yet was accepted");
	}
	if (common_mul_overflows_i64(n, dtype_info(a.dtype)->bytes, &n) || (uint64_t)n != a.nbytes)
		fuzz_fail("nbytes %zu for %lld elements", a.nbytes, (long long)n);
	/* touch every byte, so that ASan sees a short buffer */
	{
		volatile unsigned char sum = 0;

		for (size_t k = 0; k < a.nbytes; k++)
			sum ^= ((const unsigned char *)a.data)[k];
		(void)sum;
	}
	st = npy_write(out_path(), &a, &err);
	if (st && st != TCX_EIO)
		fuzz_check_error(st, &err, "npy_write");
	npy_release(&a);
	return 0;
}
