/* test_npy.c - NumPy .npy files: reading files NumPy wrote, writing them
 * byte for byte as numpy.save does, round trips of every dtype and order,
 * and the refusal of damaged, truncated and unsupported files. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "io/npy.h"
#include "model/model.h"

static char tmpdir[256];
static const char *datadir;

static const char *tmp_path(const char *name)
{
	static char buf[4][512];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return p;
}

static const char *ref_path(const char *name)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/npy/%s", datadir, name);
	return buf;
}

static bool write_bytes(const char *path, const void *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");
	bool ok;

	if (!fp)
		return false;
	ok = fwrite(buf, 1, len, fp) == len;
	return fclose(fp) == 0 && ok;
}

static bool same_file(const char *a, const char *b)
{
	char *x = NULL, *y = NULL;
	size_t nx = 0, ny = 0;
	bool same;

	if (common_read_file(a, &x, &nx, NULL) != TCX_OK ||
	    common_read_file(b, &y, &ny, NULL) != TCX_OK) {
		free(x);
		free(y);
		return false;
	}
	same = nx == ny && memcmp(x, y, nx) == 0;
	if (!same)
		fprintf(stderr, "'%s' (%zu bytes) differs from '%s' (%zu bytes)\n", a, nx, b, ny);
	free(x);
	free(y);
	return same;
}

static bool same_array(const struct npy_array *a, const struct npy_array *b)
{
	if (a->dtype != b->dtype || a->ndim != b->ndim || a->fortran_order != b->fortran_order ||
	    a->nbytes != b->nbytes)
		return false;
	for (int k = 0; k < a->ndim; k++)
		if (a->shape[k] != b->shape[k])
			return false;
	return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

/* A .npy image with the given version and header text, no padding added. */
static size_t make_npy(unsigned char *out, size_t cap, int major, const char *hdr, const void *data,
		       size_t dlen)
{
	size_t hl = strlen(hdr), o;

	memcpy(out, "\x93NUMPY", 6);
	out[6] = (unsigned char)major;
	out[7] = 0;
	out[8] = (unsigned char)(hl & 0xff);
	out[9] = (unsigned char)(hl >> 8);
	o = 10;
	if (major != 1) {
		out[10] = (unsigned char)(hl >> 16);
		out[11] = (unsigned char)(hl >> 24);
		o = 12;
	}
	if (o + hl + dlen > cap)
		abort();
	memcpy(out + o, hdr, hl);
	o += hl;
	if (dlen)
		memcpy(out + o, data, dlen);
	return o + dlen;
}

static int expect_mem(const void *buf, size_t len, enum tcx_status want, const char *needle,
		      int line)
{
	struct npy_array a;
	struct tcx_error err = {0};
	enum tcx_status st = npy_read_mem(buf, len, "t.npy", &a, &err);
	bool ok = st == want && (!needle || strstr(err.msg, needle));

	if (!ok)
		fprintf(stderr, "line %d: got %s '%s', wanted %s with '%s'\n", line,
			tcx_status_str(st), err.msg, tcx_status_str(want), needle ? needle : "");
	if (st == TCX_OK)
		npy_release(&a);
	else if (a.data || a.ndim || a.nbytes)
		ok = false;
	return ok;
}

/* A header (dict text) with `dlen` bytes of data, read from memory. */
static int expect_hdr(const char *hdr, size_t dlen, enum tcx_status want, const char *needle,
		      int line)
{
	static unsigned char buf[8192], zero[1024];

	return expect_mem(buf, make_npy(buf, sizeof(buf), 1, hdr, zero, dlen), want, needle, line);
}

#define EXPECT_HDR(hdr, dlen, want, needle) CHECK(expect_hdr(hdr, dlen, want, needle, __LINE__))

/* The reference files: the array tcx builds for the same data must read
 * back equal to NumPy's file and write out byte for byte the same. */
static void check_reference(const char *file, enum tcx_dtype t, int ndim, const int64_t *shape,
			    bool fortran, const void *data, size_t nbytes)
{
	struct npy_array want = {.dtype = t,
				 .ndim = ndim,
				 .fortran_order = fortran,
				 .data = (void *)data,
				 .nbytes = nbytes};
	struct npy_array got;
	struct tcx_error err = {0};
	const char *out = tmp_path(file);

	memcpy(want.shape, shape, sizeof(int64_t) * (size_t)ndim);
	CHECK_MSG(npy_read(ref_path(file), &got, &err) == TCX_OK, "%s: %s", file, err.msg);
	CHECK_MSG(same_array(&got, &want), "%s read back differently", file);
	npy_release(&got);
	CHECK_MSG(npy_write(out, &want, &err) == TCX_OK, "%s: %s", file, err.msg);
	CHECK_MSG(same_file(out, ref_path(file)), "%s not byte-exact", file);
	unlink(out);
}

static void test_references(void)
{
	static const float f4[6] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
	static const double f8[4] = {1.0, 3.0, 2.0, 4.0}; /* [[1,2],[3,4]] in Fortran order */
	static const float c8[6] = {1, 2, -3, 0.5f, 0.25f, -1};
	static const double c16[4] = {1.5, -2, 3, 4};
	static const float f0 = 3.25f, f1 = 7.0f;
	uint16_t f2[4] = {half_from_float(1.0f), half_from_float(-2.0f), half_from_float(0.5f),
			  half_from_float(65504.0f)};
	const int64_t s23[] = {2, 3}, s22[] = {2, 2}, s3[] = {3}, s2[] = {2}, s1[] = {1};
	int64_t grow_shape[15];
	float grow_f4[10];
	static uint16_t grow_f2[2000];
	struct npy_array a, b;
	struct tcx_error err = {0};

	CHECK(f2[0] == 0x3c00 && f2[1] == 0xc000 && f2[2] == 0x3800 && f2[3] == 0x7bff);
	check_reference("f4_c_2x3.npy", TCX_DTYPE_S, 2, s23, false, f4, sizeof(f4));
	check_reference("f8_f_2x2.npy", TCX_DTYPE_D, 2, s22, true, f8, sizeof(f8));
	check_reference("c8_3.npy", TCX_DTYPE_C, 1, s3, false, c8, sizeof(c8));
	check_reference("c16_2.npy", TCX_DTYPE_Z, 1, s2, false, c16, sizeof(c16));
	check_reference("f2_2x2.npy", TCX_DTYPE_H, 2, s22, false, f2, sizeof(f2));
	check_reference("f4_0d.npy", TCX_DTYPE_S, 0, s1, false, &f0, sizeof(f0));
	check_reference("f4_1.npy", TCX_DTYPE_S, 1, s1, false, &f1, sizeof(f1));

	/* headers whose length depends on the growth room numpy.save leaves:
	 * for the first axis in C order, the last in Fortran order */
	for (int k = 0; k < 15; k++)
		grow_shape[k] = k == 14 ? 10 : 1;
	for (int k = 0; k < 10; k++)
		grow_f4[k] = (float)k;
	check_reference("f4_c_grow.npy", TCX_DTYPE_S, 15, grow_shape, false, grow_f4,
			sizeof(grow_f4));
	for (int k = 0; k < 14; k++)
		grow_shape[k] = k == 0 ? 2 : k == 13 ? 1000 : 1;
	for (int k = 0; k < 2000; k++)
		grow_f2[k] = half_from_float((float)k);
	check_reference("f2_f_grow.npy", TCX_DTYPE_H, 14, grow_shape, true, grow_f2,
			sizeof(grow_f2));

	/* format versions 2.0 and 3.0 read as 1.0 does */
	CHECK(npy_read(ref_path("f4_c_2x3.npy"), &a, &err) == TCX_OK);
	CHECK_MSG(npy_read(ref_path("f4_c_2x3_v2.npy"), &b, &err) == TCX_OK, "%s", err.msg);
	CHECK(same_array(&a, &b));
	npy_release(&b);
	CHECK_MSG(npy_read(ref_path("f4_c_2x3_v3.npy"), &b, &err) == TCX_OK, "%s", err.msg);
	CHECK(same_array(&a, &b));
	npy_release(&b);
	npy_release(&a);

	/* refused: big-endian and integer files NumPy wrote */
	CHECK(npy_read(ref_path("f4_be.npy"), &a, &err) == TCX_EUNSUPPORTED);
	CHECK_MSG(strstr(err.msg, "'>f4'") && strstr(err.msg, "big-endian"), "%s", err.msg);
	CHECK(a.data == NULL);
	CHECK(npy_read(ref_path("i4_3.npy"), &a, &err) == TCX_EUNSUPPORTED);
	CHECK_MSG(strstr(err.msg, "'<i4'") && strstr(err.msg, "i4_3.npy"), "%s", err.msg);
}

/* Every dtype, both orders, 0-d, one-element, empty and 2-d arrays. */
static void test_round_trips(void)
{
	static const enum tcx_dtype types[] = {TCX_DTYPE_S, TCX_DTYPE_D, TCX_DTYPE_C, TCX_DTYPE_Z,
					       TCX_DTYPE_H};
	static const struct {
		int ndim;
		int64_t shape[4];
	} shapes[] = {{0, {0}},	      {1, {1}},		 {2, {2, 3}},  {2, {0, 3}},
		      {3, {4, 1, 5}}, {4, {2, 3, 4, 5}}, {1, {100003}}};
	struct pcg32 rng;
	const char *path = tmp_path("rt.npy");

	pcg32_seed(&rng, 42, 7);
	for (size_t t = 0; t < ARRAY_SIZE(types); t++)
		for (size_t s = 0; s < ARRAY_SIZE(shapes); s++)
			for (int f = 0; f < 2; f++) {
				const struct dtype_info *di = dtype_info(types[t]);
				struct npy_array a = {
				    .dtype = types[t], .ndim = shapes[s].ndim, .fortran_order = f};
				struct npy_array b;
				struct tcx_error err = {0};
				size_t n = 1;

				for (int k = 0; k < a.ndim; k++) {
					a.shape[k] = shapes[s].shape[k];
					n *= (size_t)a.shape[k];
				}
				a.nbytes = n * (size_t)di->bytes;
				a.data = malloc(a.nbytes + 1);
				for (size_t k = 0; k < a.nbytes; k++)
					((unsigned char *)a.data)[k] =
					    (unsigned char)pcg32_next(&rng);
				CHECK_MSG(npy_write(path, &a, &err) == TCX_OK, "%s", err.msg);
				CHECK_MSG(npy_read(path, &b, &err) == TCX_OK, "%s", err.msg);
				CHECK_MSG(same_array(&a, &b), "dtype %c ndim %d fortran %d",
					  di->letter, a.ndim, f);
				CHECK(b.data != NULL);
				npy_release(&b);
				free(a.data);
			}
	unlink(path);
}

static void test_header_syntax(void)
{
	unsigned char buf[512];
	size_t len;
	struct npy_array a;
	struct tcx_error err = {0};

	/* accepted: any key order, spaces, no trailing comma, double quotes,
	 * no alignment padding, a Python 2 'L' */
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, TCX_OK, NULL);
	EXPECT_HDR("{'shape':(2,),'descr':'<f4','fortran_order':False}\n", 8, TCX_OK, NULL);
	EXPECT_HDR("  {  \"fortran_order\" :True ,'shape' : ( 2 , 3 , ) ,\"descr\": \"<f8\" ,}  \n",
		   48, TCX_OK, NULL);
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 2L), }\n", 24, TCX_OK,
		   NULL);
	EXPECT_HDR("{'descr': '<c16', 'fortran_order': False, 'shape': (), }\n", 16, TCX_OK, NULL);
	EXPECT_HDR("{'descr': '<f2', 'fortran_order': False, 'shape': (0, 5), }\n", 0, TCX_OK,
		   NULL);
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False,\n 'shape': (2,)}\n\n", 8, TCX_OK,
		   NULL);

	/* the values come through */
	len = make_npy(buf, sizeof(buf), 1,
		       "{'shape': (1, 2, 1,), 'fortran_order': True, 'descr': '<c8'}\n",
		       "abcdefghijklmnop", 16);
	CHECK(npy_read_mem(buf, len, NULL, &a, &err) == TCX_OK);
	CHECK(a.dtype == TCX_DTYPE_C && a.ndim == 3 && a.shape[0] == 1 && a.shape[1] == 2 &&
	      a.shape[2] == 1 && a.fortran_order && a.nbytes == 16 &&
	      memcmp(a.data, "abcdefghijklmnop", 16) == 0);
	npy_release(&a);
	npy_release(&a); /* harmless twice */
	npy_release(NULL);

	/* bad dicts */
	EXPECT_HDR("{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }\n", 8, TCX_EPARSE,
		   "expected ',' or '}'");
	EXPECT_HDR("{'descr': '<f4', 'shape': (2,), }\n", 8, TCX_EPARSE, "no 'fortran_order' key");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", 8,
		   TCX_EPARSE, "unexpected key 'x'");
	EXPECT_HDR("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\n", 8,
		   TCX_EPARSE, "duplicate key 'descr'");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }\n", 8, TCX_EPARSE,
		   "not a tuple");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }\n", 8, TCX_EPARSE,
		   "not a tuple");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (2,,), }\n", 8, TCX_EPARSE,
		   "expected an integer");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }\n", 8, TCX_EPARSE,
		   "not True or False");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,), }\n", 8, TCX_EPARSE,
		   "not True or False");
	EXPECT_HDR("{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }\n", 8, TCX_EPARSE,
		   NULL);
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8, TCX_EPARSE,
		   "does not end with a newline");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x\n", 8, TCX_EPARSE,
		   "unexpected text after");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), \n", 8, TCX_EPARSE,
		   "expected a quoted string");
	EXPECT_HDR("[1, 2]\n", 0, TCX_EPARSE, "expected '{'");
	EXPECT_HDR("\n", 0, TCX_EPARSE, "expected '{'");
	EXPECT_HDR("{}\n", 0, TCX_EPARSE, "no 'descr' key");
	EXPECT_HDR("{'descr': 4, 'fortran_order': False, 'shape': (2,), }\n", 8, TCX_EPARSE,
		   "not a dtype string");
	EXPECT_HDR("{'de\\scr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, TCX_EPARSE,
		   "escape");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\0\n", 8, TCX_EPARSE,
		   NULL);

	/* shapes */
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }\n", 8, TCX_EPARSE,
		   "negative dimension -1");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (-0,), }\n", 0, TCX_OK, NULL);
	EXPECT_HDR(
	    "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }\n", 8,
	    TCX_ERANGE, "too large");
	EXPECT_HDR("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }\n",
		   8, TCX_ERANGE, "too large");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n",
		   8, TCX_ERANGE, "out of range");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807, 0),}\n",
		   0, TCX_OK, NULL);
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }\n", 8,
		   TCX_ECORRUPT, "truncated: expected 4398046511104 bytes of data, found 8");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': "
		   "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }\n",
		   4, TCX_EUNSUPPORTED, "more than 32 dimensions");
	EXPECT_HDR("{'descr': '<f4', 'fortran_order': False, 'shape': "
		   "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2), }\n",
		   8, TCX_OK, NULL);

	/* dtypes */
	EXPECT_HDR("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n", 8,
		   TCX_EUNSUPPORTED, "unsupported dtype '<i4'");
	EXPECT_HDR("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }\n", 2,
		   TCX_EUNSUPPORTED, "'|b1'");
	EXPECT_HDR("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }\n", 16,
		   TCX_EUNSUPPORTED, "'|O'");
	EXPECT_HDR("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }\n", 16,
		   TCX_EUNSUPPORTED, "big-endian dtype '>f8'");
	EXPECT_HDR("{'descr': '>c16', 'fortran_order': False, 'shape': (2,), }\n", 32,
		   TCX_EUNSUPPORTED, "big-endian dtype '>c16'");
	EXPECT_HDR("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }\n", 4,
		   TCX_EUNSUPPORTED, "bf16");
	EXPECT_HDR("{'descr': '|u2', 'fortran_order': False, 'shape': (2,), }\n", 4,
		   TCX_EUNSUPPORTED, "'|u2'");
	EXPECT_HDR("{'descr': '=f4', 'fortran_order': False, 'shape': (2,), }\n", 8,
		   TCX_EUNSUPPORTED, "'=f4'");
	EXPECT_HDR("{'descr': '', 'fortran_order': False, 'shape': (2,), }\n", 8, TCX_EUNSUPPORTED,
		   "''");
	EXPECT_HDR("{'descr': '<f4\x01', 'fortran_order': False, 'shape': (2,), }\n", 8,
		   TCX_EUNSUPPORTED, "'<f4\\x01'");
	EXPECT_HDR("{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (2,), "
		   "}\n",
		   16, TCX_EUNSUPPORTED, "structured dtype");
	EXPECT_HDR(
	    "{'descr': 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'fortran_order': False, 'shape': (2,), }\n",
	    8, TCX_EUNSUPPORTED, "...'");
}

static void test_damaged(void)
{
	unsigned char buf[4096], good[4096];
	char *ref;
	size_t len, n;
	struct npy_array a;
	struct tcx_error err = {0};
	const char *path = tmp_path("bad.npy");

	CHECK(common_read_file(ref_path("f4_c_2x3.npy"), &ref, &len, NULL) == TCX_OK);
	CHECK(len == 152);
	memcpy(good, ref, len);
	free(ref);

	/* magic and version */
	CHECK(expect_mem(good, 0, TCX_EPARSE, "empty", __LINE__));
	memcpy(buf, good, len);
	buf[5] = 'X';
	CHECK(expect_mem(buf, len, TCX_EPARSE, "bad magic", __LINE__));
	CHECK(expect_mem("PK\3\4", 4, TCX_EPARSE, "bad magic", __LINE__));
	memcpy(buf, good, len);
	buf[6] = 4;
	CHECK(expect_mem(buf, len, TCX_EUNSUPPORTED, "version 4.0", __LINE__));
	buf[6] = 1;
	buf[7] = 1;
	CHECK(expect_mem(buf, len, TCX_EUNSUPPORTED, "version 1.1", __LINE__));

	/* truncated header */
	for (n = 1; n < 128; n++)
		CHECK_MSG(expect_mem(good, n, TCX_ECORRUPT, "truncated", __LINE__), "at %zu", n);
	/* header length beyond the file */
	memcpy(buf, good, len);
	buf[8] = 0xff;
	buf[9] = 0x10;
	CHECK(expect_mem(buf, len, TCX_ECORRUPT,
			 "truncated: expected a header of 4351 bytes, found 142", __LINE__));
	/* truncated and overlong data */
	CHECK(expect_mem(good, len - 1, TCX_ECORRUPT,
			 "truncated: expected 24 bytes of data, found 23", __LINE__));
	CHECK(expect_mem(good, 128, TCX_ECORRUPT, "truncated: expected 24 bytes of data, found 0",
			 __LINE__));
	memcpy(buf, good, len);
	buf[len] = 0;
	CHECK(expect_mem(buf, len + 1, TCX_ECORRUPT, "1 bytes after the data", __LINE__));

	/* the same through files */
	CHECK(write_bytes(path, good, len - 4));
	CHECK(npy_read(path, &a, &err) == TCX_ECORRUPT);
	CHECK_MSG(strstr(err.msg, "truncated: expected 24 bytes of data, found 20") &&
		      strstr(err.msg, path),
		  "%s", err.msg);
	CHECK(a.data == NULL);
	CHECK(write_bytes(path, good, 50));
	CHECK(npy_read(path, &a, &err) == TCX_ECORRUPT);
	CHECK(write_bytes(path, good, 7));
	CHECK(npy_read(path, &a, &err) == TCX_ECORRUPT);
	CHECK(write_bytes(path, "", 0));
	CHECK(npy_read(path, &a, &err) == TCX_EPARSE);
	memcpy(buf, good, len);
	memcpy(buf + len, "junk", 4);
	CHECK(write_bytes(path, buf, len + 4));
	CHECK(npy_read(path, &a, &err) == TCX_ECORRUPT);
	CHECK_MSG(strstr(err.msg, "4 bytes after the data"), "%s", err.msg);
	memcpy(buf, good, len);
	buf[0] = 'x';
	CHECK(write_bytes(path, buf, len));
	CHECK(npy_read(path, &a, &err) == TCX_EPARSE);
	unlink(path);

	/* every prefix and every single-byte change: fail cleanly or succeed */
	for (n = 0; n <= len; n++) {
		if (npy_read_mem(good, n, NULL, &a, NULL) == TCX_OK) {
			CHECK(n == len);
			npy_release(&a);
		}
	}
	for (size_t at = 0; at < len; at++)
		for (int v = 0; v < 256; v += 17) {
			memcpy(buf, good, len);
			buf[at] = (unsigned char)v;
			if (npy_read_mem(buf, len, NULL, &a, &err) == TCX_OK)
				npy_release(&a);
			else
				CHECK(a.data == NULL && err.msg[0]);
		}
}

static void test_files(void)
{
	struct npy_array a = {0}, b;
	struct tcx_error err = {0};
	float v[6] = {1, 2, 3, 4, 5, 6};
	const char *path = tmp_path("out.npy");
	DIR *d;
	struct dirent *de;
	int left = 0;

	CHECK(npy_read(tmp_path("missing.npy"), &a, &err) == TCX_EIO);
	CHECK_MSG(strstr(err.msg, "missing.npy") && strstr(err.msg, strerror(ENOENT)), "%s",
		  err.msg);
	CHECK(npy_read(tmpdir, &a, &err) == TCX_EIO);
	CHECK_MSG(strstr(err.msg, strerror(EISDIR)), "%s", err.msg);
	if (geteuid() != 0) {
		CHECK(write_bytes(path, "x", 1));
		chmod(path, 0);
		CHECK(npy_read(path, &a, &err) == TCX_EIO);
		CHECK_MSG(strstr(err.msg, strerror(EACCES)), "%s", err.msg);
		unlink(path);
	}

	/* writing: checks, then replace an existing file */
	a.dtype = TCX_DTYPE_B;
	a.ndim = 1;
	a.shape[0] = 3;
	a.data = v;
	a.nbytes = 6;
	CHECK(npy_write(path, &a, &err) == TCX_EUNSUPPORTED);
	CHECK_MSG(strstr(err.msg, "bf16"), "%s", err.msg);
	a.dtype = TCX_DTYPE_S;
	CHECK(npy_write(path, &a, &err) == TCX_EINVAL); /* 6 bytes for 3 floats */
	a.nbytes = 12;
	a.shape[0] = -3;
	CHECK(npy_write(path, &a, &err) == TCX_EINVAL);
	a.shape[0] = 3;
	a.ndim = 33;
	CHECK(npy_write(path, &a, &err) == TCX_EINVAL);
	a.ndim = 1;
	a.data = NULL;
	CHECK(npy_write(path, &a, &err) == TCX_EINVAL);
	a.data = v;
	CHECK(npy_write(tmp_path("no/such/dir.npy"), &a, &err) == TCX_EIO);
	CHECK(npy_write(path, &a, &err) == TCX_OK);
	a.shape[0] = 6;
	a.nbytes = 24;
	CHECK(npy_write(path, &a, &err) == TCX_OK);
	CHECK(npy_read(path, &b, &err) == TCX_OK);
	CHECK(same_array(&a, &b));
	npy_release(&b);
	unlink(path);

	/* no temporary files left behind */
	d = opendir(tmpdir);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			fprintf(stderr, "left behind: %s\n", de->d_name);
			left++;
		}
	if (d)
		closedir(d);
	CHECK(left == 0);
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	datadir = getenv("TCX_TEST_DATA");
	if (!datadir)
		SKIP("TCX_TEST_DATA is not set (ctest sets it)");
	snprintf(tmpdir, sizeof(tmpdir), "%s/tcx-npy-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror(tmpdir);
		return 1;
	}
	test_references();
	test_round_trips();
	test_header_syntax();
	test_damaged();
	test_files();
	rmdir(tmpdir);
	return check_done();
}
