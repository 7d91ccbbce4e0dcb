/* test_kcache.c - the on-disk kernel cache: keys, entries that round-trip,
 * damaged entries (truncated, flipped, padded, foreign) detected and
 * removed, and, on an OpenCL device, device_build compiling once, loading
 * from disk the second time, and rebuilding over a damaged entry. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/kcache.h"
#include "check.h"

static uint64_t seed;
static struct pcg32 rng;
static char tmpdir[] = "/tmp/tcx-kcache.XXXXXX";

static void random_bytes(unsigned char *p, size_t n)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (unsigned char)pcg32_next(&rng);
}

static void dev_info(struct device_info *di, const char *driver)
{
	memset(di, 0, sizeof(*di));
	snprintf(di->backend, sizeof(di->backend), "opencl");
	snprintf(di->name, sizeof(di->name), "test device");
	snprintf(di->arch, sizeof(di->arch), "x");
	snprintf(di->driver, sizeof(di->driver), "%s", driver);
}

static bool key_eq(const struct kcache_key *a, const struct kcache_key *b)
{
	return memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

static void test_keys(void)
{
	struct device_info d1, d2;
	struct kcache_key k0, k1, k2, k3, k4;
	char hex[33];

	dev_info(&d1, "1.0");
	dev_info(&d2, "1.1");
	kcache_key_make(&d1, "abc", 3, "-O2", &k0);
	kcache_key_make(&d1, "abc", 3, "-O2", &k1);
	CHECK(key_eq(&k0, &k1));
	kcache_key_make(&d2, "abc", 3, "-O2", &k2);
	CHECK_MSG(!key_eq(&k0, &k2), "the driver is part of the key");
	kcache_key_make(&d1, "abd", 3, "-O2", &k3);
	CHECK_MSG(!key_eq(&k0, &k3), "the source is part of the key");
	kcache_key_make(&d1, "abc", 3, "-O3", &k4);
	CHECK_MSG(!key_eq(&k0, &k4), "the options are part of the key");
	/* moving a byte from the options to the source is another key */
	kcache_key_make(&d1, "Oabc", 4, "-", &k4);
	kcache_key_make(&d1, "abc", 3, "-O", &k3);
	CHECK(!key_eq(&k3, &k4));
	kcache_key_hex(&k0, hex);
	CHECK(strlen(hex) == 32 && strspn(hex, "0123456789abcdef") == 32);
}

/* Rewrites the entry file through `edit`, which gets the bytes. */
static void edit_entry(const char *dir, const struct kcache_key *k,
		       void (*edit)(unsigned char *d, size_t *n))
{
	struct strbuf path = STRBUF_INIT;
	char *data = NULL;
	size_t n = 0;
	FILE *fp;

	kcache_entry_path(dir, k, &path);
	CHECK(common_read_file(strbuf_str(&path), &data, &n, NULL) == TCX_OK);
	if (data) {
		unsigned char *big = malloc(n + 16);

		memcpy(big, data, n);
		edit(big, &n);
		fp = fopen(strbuf_str(&path), "wb");
		CHECK(fp != NULL);
		if (fp) {
			CHECK(fwrite(big, 1, n, fp) == n);
			fclose(fp);
		}
		free(big);
	}
	free(data);
	strbuf_release(&path);
}

static void truncate_binary(unsigned char *d, size_t *n)
{
	(void)d;
	*n -= 7;
}

static void truncate_header(unsigned char *d, size_t *n)
{
	(void)d;
	*n = 20;
}

static void flip_byte(unsigned char *d, size_t *n)
{
	d[KCACHE_HEADER_SIZE + (*n - KCACHE_HEADER_SIZE) / 2] ^= 0x10;
}

static void add_trailing(unsigned char *d, size_t *n)
{
	d[(*n)++] = 'x';
}

static void bad_magic(unsigned char *d, size_t *n)
{
	(void)n;
	d[0] = 'X';
}

static void other_version(unsigned char *d, size_t *n)
{
	(void)n;
	d[8] = KCACHE_VERSION + 1;
}

static bool entry_exists(const char *dir, const struct kcache_key *k)
{
	struct strbuf path = STRBUF_INIT;
	bool there;

	kcache_entry_path(dir, k, &path);
	there = access(strbuf_str(&path), F_OK) == 0;
	strbuf_release(&path);
	return there;
}

static void test_entries(const char *dir)
{
	static void (*const edits[])(unsigned char *, size_t *) = {
		truncate_binary, truncate_header, flip_byte, add_trailing, bad_magic, other_version,
	};
	static const char *const names[] = {
		"truncated binary", "truncated header", "flipped byte", "trailing bytes",
		"bad magic", "other version",
	};
	struct device_info di;
	struct kcache_key k;
	unsigned char bin[3001], *got = NULL;
	size_t len = 0;
	struct tcx_error err = { 0 };
	enum tcx_status st;

	dev_info(&di, "1.0");
	random_bytes(bin, sizeof(bin));
	kcache_key_make(&di, (const char *)bin, 64, "", &k);

	st = kcache_load(dir, &k, &got, &len, &err);
	CHECK_MSG(st == TCX_OK && got == NULL, "a missing entry is no entry (%s)", err.msg);

	CHECK(kcache_store(dir, &k, bin, sizeof(bin), &err) == TCX_OK);
	st = kcache_load(dir, &k, &got, &len, &err);
	CHECK_MSG(st == TCX_OK && got && len == sizeof(bin) && memcmp(got, bin, len) == 0,
		  "round trip (seed %" PRIu64 "): %s", seed, err.msg);
	free(got);
	got = NULL;

	for (size_t e = 0; e < ARRAY_SIZE(edits); e++) {
		CHECK(kcache_store(dir, &k, bin, sizeof(bin), &err) == TCX_OK);
		edit_entry(dir, &k, edits[e]);
		memset(&err, 0, sizeof(err));
		st = kcache_load(dir, &k, &got, &len, &err);
		CHECK_MSG(st == TCX_ECORRUPT && got == NULL, "%s: status %d", names[e], (int)st);
		CHECK_MSG(strstr(err.msg, "damaged kernel cache entry") != NULL, "%s: '%s'",
			  names[e], err.msg);
		CHECK_MSG(!entry_exists(dir, &k), "%s: the entry is removed", names[e]);
		free(got);
		got = NULL;
		/* and it is gone for good: the next load finds nothing */
		st = kcache_load(dir, &k, &got, &len, &err);
		CHECK(st == TCX_OK && got == NULL);
	}

	/* an entry under another key's name is refused */
	{
		struct kcache_key k2 = k;
		struct strbuf p1 = STRBUF_INIT, p2 = STRBUF_INIT;

		k2.b[0] ^= 1;
		CHECK(kcache_store(dir, &k, bin, sizeof(bin), &err) == TCX_OK);
		kcache_entry_path(dir, &k, &p1);
		kcache_entry_path(dir, &k2, &p2);
		CHECK(rename(strbuf_str(&p1), strbuf_str(&p2)) == 0);
		st = kcache_load(dir, &k2, &got, &len, &err);
		CHECK_MSG(st == TCX_ECORRUPT && strstr(err.msg, "key"), "foreign key: %s", err.msg);
		free(got);
		got = NULL;
		strbuf_release(&p1);
		strbuf_release(&p2);
	}

	CHECK(kcache_store(dir, &k, bin, 0, &err) == TCX_EINVAL);
	CHECK(kcache_remove(dir, &k, &err) == TCX_OK);
}

static void test_paths(void)
{
	struct strbuf sb = STRBUF_INIT;
	char *xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

	setenv("XDG_CACHE_HOME", "/x/y", 1);
	CHECK(tcx_cache_path("kernels", &sb, NULL) == TCX_OK);
	CHECK(strcmp(strbuf_str(&sb), "/x/y/tcx/kernels") == 0);
	strbuf_reset(&sb);
	setenv("XDG_CACHE_HOME", "relative", 1);
	setenv("HOME", "/home/u", 1);
	CHECK(tcx_cache_path("kernels", &sb, NULL) == TCX_OK);
	CHECK_MSG(strcmp(strbuf_str(&sb), "/home/u/.cache/tcx/kernels") == 0, "%s",
		  strbuf_str(&sb));
	strbuf_release(&sb);
	if (xdg)
		setenv("XDG_CACHE_HOME", xdg, 1);
	else
		unsetenv("XDG_CACHE_HOME");
	if (home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	free(xdg);
	free(home);
}

/* ---- through device_build on an OpenCL device -------------------------- */

#define N 777

static const char scale_src[] =
	"__kernel void axpb(__global const float *x, __global float *y, float a, float b, int n)\n"
	"{\n"
	"	int i = (int)get_global_id(0);\n"
	"	if (i < n)\n"
	"		y[i] = a * x[i] + b;\n"
	"}\n";

/* Builds the kernel on a freshly opened device and runs it on random data;
 * returns the counters of that device. */
static void build_and_run(const char *id, bool disk, struct device_cache_stats *counters)
{
	struct device *dev = NULL;
	struct program *prog = NULL;
	struct buffer *bx = NULL, *by = NULL;
	struct tcx_error err = { 0 };
	struct launch l;
	float x[N], y[N], a = (float)pcg32_double(&rng) + 0.5f, b = (float)pcg32_double(&rng);
	int n = N, wrong = 0;
	enum tcx_status st;

	memset(counters, 0, sizeof(*counters));
	st = device_open(id, &dev, &err);
	CHECK_MSG(st == TCX_OK, "open %s: %s", id, err.msg);
	if (st)
		return;
	if (!disk)
		device_set_disk_cache(dev, false);
	st = device_build(dev, scale_src, strlen(scale_src), NULL, &prog, NULL, NULL, &err);
	CHECK_MSG(st == TCX_OK, "build: %s", err.msg);
	for (int i = 0; i < N; i++)
		x[i] = (float)pcg32_double(&rng) * 2 - 1;
	if (!st)
		st = buffer_alloc(dev, sizeof(x), &bx, &err);
	if (!st)
		st = buffer_alloc(dev, sizeof(y), &by, &err);
	if (!st)
		st = buffer_write(dev, bx, 0, x, sizeof(x), &err);
	if (!st) {
		launch_init(&l, "axpb");
		l.global[0] = 784;
		l.local[0] = 16;
		launch_arg_buffer(&l, bx);
		launch_arg_buffer(&l, by);
		launch_arg_bytes(&l, &a, sizeof(a));
		launch_arg_bytes(&l, &b, sizeof(b));
		launch_arg_bytes(&l, &n, sizeof(n));
		st = device_launch(dev, prog, &l, NULL, &err);
	}
	if (!st)
		st = buffer_read(dev, by, 0, y, sizeof(y), &err);
	CHECK_MSG(st == TCX_OK, "run: %s", err.msg);
	for (int i = 0; i < N && !st; i++)
		wrong += fabs((double)y[i] - ((double)a * x[i] + b)) > 1e-5;
	CHECK_MSG(wrong == 0, "%d of %d wrong (seed %" PRIu64 ")", wrong, N, seed);
	device_cache_stats(dev, counters);
	buffer_free(dev, bx);
	buffer_free(dev, by);
	device_close(dev);
}

static int count_entries(const char *dir)
{
	struct strbuf cmd = STRBUF_INIT;
	char line[64];
	int n = -1;
	FILE *p;

	strbuf_addf(&cmd, "ls '%s' 2>/dev/null | grep -c '\\.bin$'", dir);
	p = popen(strbuf_str(&cmd), "r");
	if (p) {
		if (fgets(line, sizeof(line), p))
			n = atoi(line);
		pclose(p);
	}
	strbuf_release(&cmd);
	return n;
}

static void truncate_only_entry(const char *dir)
{
	struct strbuf cmd = STRBUF_INIT;

	strbuf_addf(&cmd, "for f in '%s'/*.bin; do truncate -s -100 \"$f\"; done", dir);
	CHECK(system(strbuf_str(&cmd)) == 0);
	strbuf_release(&cmd);
}

static void garble_only_entry(const char *dir)
{
	/* a valid header and checksum over a binary the driver cannot load */
	struct strbuf cmd = STRBUF_INIT;
	char *name = NULL;
	FILE *p;
	char line[4096];

	strbuf_addf(&cmd, "ls '%s'/*.bin", dir);
	p = popen(strbuf_str(&cmd), "r");
	if (p && fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		name = strdup(line);
	}
	if (p)
		pclose(p);
	strbuf_release(&cmd);
	CHECK(name != NULL);
	if (name) {
		const char *base = strrchr(name, '/') + 1;
		struct kcache_key k;
		unsigned char junk[512];

		for (int i = 0; i < 16; i++) {
			unsigned v;

			sscanf(base + 2 * i, "%2x", &v);
			k.b[i] = (uint8_t)v;
		}
		random_bytes(junk, sizeof(junk));
		CHECK(kcache_store(dir, &k, junk, sizeof(junk), NULL) == TCX_OK);
	}
	free(name);
}

static int test_device(void)
{
	struct device_info *infos = NULL;
	struct tcx_error err = { 0 };
	struct strbuf dir = STRBUF_INIT;
	struct device_cache_stats c;
	int n = 0;
	const char *id = NULL;

	if (!backend_find("opencl"))
		return 77;
	if (devices_list(&infos, &n, NULL, &err) != TCX_OK)
		return 77;
	for (int k = 0; k < n && !id; k++)
		if (strcmp(infos[k].backend, "opencl") == 0)
			id = infos[k].id;
	if (!id) {
		free(infos);
		return 77;
	}
	setenv("XDG_CACHE_HOME", tmpdir, 1);
	unsetenv("TCX_NO_KERNEL_CACHE");
	/* on PoCL tcx leaves caching to PoCL's own cache unless it is off */
	setenv("POCL_KERNEL_CACHE", "0", 1);
	tcx_cache_path("kernels", &dir, NULL);

	build_and_run(id, true, &c);
	CHECK_MSG(c.builds == 1 && c.disk_hits == 0 && c.disk_stores == 1,
		  "first run compiles and stores: builds %lu disk_hits %lu stores %lu", c.builds,
		  c.disk_hits, c.disk_stores);
	CHECK(count_entries(strbuf_str(&dir)) == 1);

	build_and_run(id, true, &c);
	CHECK_MSG(c.builds == 0 && c.disk_hits == 1,
		  "second run loads from disk: builds %lu disk_hits %lu", c.builds, c.disk_hits);

	build_and_run(id, false, &c);
	CHECK_MSG(c.builds == 1 && c.disk_hits == 0 && c.disk_stores == 0,
		  "cache off for the device: builds %lu disk_hits %lu", c.builds, c.disk_hits);

	setenv("TCX_NO_KERNEL_CACHE", "1", 1);
	build_and_run(id, true, &c);
	CHECK_MSG(c.builds == 1 && c.disk_hits == 0, "TCX_NO_KERNEL_CACHE=1: builds %lu hits %lu",
		  c.builds, c.disk_hits);
	unsetenv("TCX_NO_KERNEL_CACHE");

	truncate_only_entry(strbuf_str(&dir));
	build_and_run(id, true, &c);
	CHECK_MSG(c.builds == 1 && c.disk_hits == 0 && c.disk_rebuilt == 1 && c.disk_stores == 1,
		  "truncated entry rebuilt: builds %lu hits %lu corrupt %lu stores %lu", c.builds,
		  c.disk_hits, c.disk_rebuilt, c.disk_stores);
	build_and_run(id, true, &c);
	CHECK_MSG(c.disk_hits == 1 && c.builds == 0, "the rebuilt entry is good");

	garble_only_entry(strbuf_str(&dir));
	build_and_run(id, true, &c);
	CHECK_MSG(c.builds == 1 && c.disk_hits == 0 && c.disk_rebuilt == 1,
		  "a binary the driver refuses is rebuilt: builds %lu hits %lu corrupt %lu",
		  c.builds, c.disk_hits, c.disk_rebuilt);
	build_and_run(id, true, &c);
	CHECK_MSG(c.disk_hits == 1 && c.builds == 0, "and then loads");

	strbuf_release(&dir);
	free(infos);
	return 0;
}

int main(void)
{
	const char *s = getenv("TCX_TEST_SEED");
	int dev_rc;

	seed = s ? strtoull(s, NULL, 10) : (uint64_t)(common_now_seconds() * 1e6);
	fprintf(stderr, "seed %" PRIu64 " (set TCX_TEST_SEED to repeat)\n", seed);
	pcg32_seed(&rng, seed, 3);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_keys();
	test_paths();
	{
		struct strbuf d = STRBUF_INIT;

		strbuf_addf(&d, "%s/files/kernels", tmpdir);
		test_entries(strbuf_str(&d));
		strbuf_release(&d);
	}
	dev_rc = test_device();
	{
		struct strbuf cmd = STRBUF_INIT;

		strbuf_addf(&cmd, "rm -rf '%s'", tmpdir);
		if (system(strbuf_str(&cmd)) != 0)
			fprintf(stderr, "cannot remove %s\n", tmpdir);
		strbuf_release(&cmd);
	}
	if (dev_rc == 77 && check_failures == 0)
		fprintf(stderr, "no OpenCL device: the device part was skipped\n");
	return check_done();
}
