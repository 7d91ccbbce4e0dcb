/* npy.h - NumPy .npy files: tcx's format for tensor data in and out.
 *
 * Reads format versions 1.0, 2.0 and 3.0 (2- or 4-byte header length; 3.0
 * has a UTF-8 header) and writes what numpy.save writes, byte for byte:
 * version 1.0 (2.0 when the header does not fit in 65535 bytes), a header
 * padded with spaces and a final '\n' so that the data starts at a multiple
 * of 64 bytes.
 *
 * Element types, as NumPy spells them (little-endian only):
 *   '<f4' -> TCX_DTYPE_S   '<f8' -> TCX_DTYPE_D   '<f2' -> TCX_DTYPE_H
 *   '<c8' -> TCX_DTYPE_C   '<c16' -> TCX_DTYPE_Z
 * NumPy has no bf16 type, so TCX_DTYPE_B is neither read nor written
 * ('<u2' is an integer type, not bf16).  Big-endian, integer, boolean,
 * object and structured dtypes are refused with a message naming them.
 */
#ifndef TCX_NPY_H
#define TCX_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

#define NPY_MAX_DIMS 32

/* An array as stored in a .npy file.  `data` holds `nbytes` bytes: the
 * elements in C order (last index fastest), or in Fortran order (first index
 * fastest) when `fortran_order` is set.  ndim 0 is a scalar (one element);
 * a zero in shape makes an empty array (nbytes 0). */
struct npy_array {
	enum tcx_dtype dtype;
	int ndim;
	int64_t shape[NPY_MAX_DIMS];
	bool fortran_order;
	void *data;
	size_t nbytes;
};

/* Reads the .npy file `path` ("-" is standard input) into *out.  On success
 * out->data is a heap buffer the caller releases with npy_release (it is
 * never NULL, also for an empty array).  On failure *out is zeroed (so
 * npy_release is harmless) and err says why:
 *   TCX_EIO          the file cannot be opened or read (with strerror)
 *   TCX_EPARSE       not a .npy file, or a header that does not parse
 *   TCX_ECORRUPT     the header or data is truncated, or bytes follow the data
 *   TCX_EUNSUPPORTED a dtype tcx does not read, format version > 3, > 32 dims
 *   TCX_ERANGE       a shape whose byte count overflows
 *   TCX_ENOMEM       out of memory */
enum tcx_status npy_read(const char *path, struct npy_array *out, struct tcx_error *err);

/* As npy_read, from the `len` bytes at `buf` (the whole file).  `name`
 * (NULL allowed) names the source in messages.  The data is copied. */
enum tcx_status npy_read_mem(const void *buf, size_t len, const char *name, struct npy_array *out,
			     struct tcx_error *err);

/* Writes `a` to `path` ("-" is standard output) as numpy.save would.  The
 * file appears whole or not at all: it is written to a temporary file
 * beside `path` and renamed over it (atomic_file_*).  Fails with
 * TCX_EUNSUPPORTED for bf16, TCX_EINVAL when shape, nbytes and data
 * disagree, TCX_EIO when the file cannot be written. */
enum tcx_status npy_write(const char *path, const struct npy_array *a, struct tcx_error *err);

/* Frees a->data and zeroes *a; NULL and a zeroed array are allowed. */
void npy_release(struct npy_array *a);

#endif /* TCX_NPY_H */
