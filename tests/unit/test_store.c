/* test_store.c - the results store: round trips, replacement, filtered and
 * ordered queries, merges, damaged files, locking, two writers at once, and
 * a writer killed with SIGKILL. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "store/store.h"

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
	static char buf[8][512];
	static int next;
	char *p = buf[next++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return p;
}

/* A measurement whose every field follows from i (and the device name and
 * a timestamp offset), so that a row read back can be checked whole. */
static void fill(struct measurement *m, const char *device, int i, double ts)
{
	size_t len;

	memset(m, 0, sizeof(*m));
	snprintf(m->device, sizeof(m->device), "%s", device);
	snprintf(m->driver, sizeof(m->driver), "driver 535.%d", i % 3);
	snprintf(m->backend, sizeof(m->backend), "%s", i % 2 ? "cuda" : "opencl");
	snprintf(m->problem, sizeof(m->problem), "P%06d Cijk_Ailk_Bjlk_S C[ijk]=A[ilk]*B[jlk]", i);
	m->nidx = 3 + i % 4;
	for (int k = 0; k < m->nidx; k++)
		m->sizes[k] = 16 * (int64_t)(i + k + 1);
	len = 100 + (size_t)(i * 37) % 1900;
	for (size_t k = 0; k < len; k++)
		m->solution[k] = (char)('a' + (i + (int)k) % 26);
	m->status = (enum meas_status)(i % 3);
	if (m->status != MEAS_OK)
		snprintf(m->reason, sizeof(m->reason), "reason %d: 'quoted' \"text\"; --", i);
	m->median_ms = i + 0.5;
	m->ci_lo_ms = i + 0.25;
	m->ci_hi_ms = i + 0.75;
	m->min_ms = i;
	m->max_ms = i + 1;
	m->gflops = 1000.0 / (i + 1);
	m->reps = 10 + i;
	snprintf(m->timer, sizeof(m->timer), "%s", i % 2 ? "event" : "wall");
	m->timestamp = 1.7e9 + i + ts;
	snprintf(m->version, sizeof(m->version), "0.1.%d", i % 7);
}

static bool same_double(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

static bool same_meas(const struct measurement *a, const struct measurement *b)
{
	if (strcmp(a->device, b->device) || strcmp(a->driver, b->driver) ||
	    strcmp(a->backend, b->backend) || strcmp(a->problem, b->problem) ||
	    a->nidx != b->nidx || strcmp(a->solution, b->solution) || a->status != b->status ||
	    strcmp(a->reason, b->reason) || !same_double(a->median_ms, b->median_ms) ||
	    !same_double(a->ci_lo_ms, b->ci_lo_ms) || !same_double(a->ci_hi_ms, b->ci_hi_ms) ||
	    !same_double(a->min_ms, b->min_ms) || !same_double(a->max_ms, b->max_ms) ||
	    !same_double(a->gflops, b->gflops) || a->reps != b->reps ||
	    strcmp(a->timer, b->timer) || a->timestamp != b->timestamp ||
	    strcmp(a->version, b->version))
		return false;
	for (int k = 0; k < a->nidx; k++)
		if (a->sizes[k] != b->sizes[k])
			return false;
	return true;
}

/* A row is whole when it equals what fill() makes for the i in its problem. */
static bool row_is_whole(const struct measurement *m, double ts)
{
	struct measurement want;
	int i;

	if (sscanf(m->problem, "P%d", &i) != 1)
		return false;
	fill(&want, m->device, i, ts);
	return same_meas(m, &want);
}

static bool get_row(struct store *s, const struct measurement *key, struct measurement *out)
{
	struct tcx_error err = {0};
	bool found = false;

	if (store_get(s, key->device, key->driver, key->problem, key->nidx, key->sizes,
		      key->solution, out, &found, &err) != TCX_OK) {
		fprintf(stderr, "store_get: %s\n", err.msg);
		return false;
	}
	return found;
}

static int64_t count(struct store *s, const struct store_filter *f)
{
	int64_t n = -1;
	struct tcx_error err = {0};

	if (store_count(s, f, &n, &err) != TCX_OK)
		fprintf(stderr, "store_count: %s\n", err.msg);
	return n;
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

/* PRAGMA integrity_check through a connection of our own. */
static bool integrity_ok(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	bool ok = false;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		ok = strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ok;
}

static bool raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc == SQLITE_OK;
}

static long long file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* The bytes of a file, to compare before and after (NULL: unreadable). */
static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL;
	struct tcx_error err = {0};

	if (common_read_file(path, &buf, len, &err) != TCX_OK)
		return NULL;
	return buf;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void test_open_errors(void)
{
	struct store *s = (struct store *)&s;
	struct tcx_error err = {0};
	const char *p = tmp_path("missing.db");
	unsigned char junk[4096];

	CHECK(store_open(p, false, &s, &err) == TCX_EIO);
	CHECK(s == NULL);
	CHECK_MSG(strstr(err.msg, p) && strstr(err.msg, strerror(ENOENT)), "%s", err.msg);
	CHECK(access(p, F_OK) != 0);
	CHECK(store_open(tmpdir, true, &s, &err) == TCX_EIO);
	CHECK_MSG(strstr(err.msg, strerror(EISDIR)), "%s", err.msg);
	CHECK(store_open("", true, &s, &err) == TCX_EINVAL);

	/* garbage */
	for (size_t k = 0; k < sizeof(junk); k++)
		junk[k] = (unsigned char)(k * 131 + 7);
	p = tmp_path("junk.db");
	CHECK(write_bytes(p, junk, sizeof(junk)));
	CHECK(store_open(p, true, &s, &err) == TCX_ECORRUPT);
	CHECK_MSG(strstr(err.msg, p) && strstr(err.msg, "not a SQLite database"), "%s", err.msg);
	CHECK(s == NULL);
	CHECK(write_bytes(p, "hello", 5));
	CHECK(store_open(p, false, &s, &err) == TCX_ECORRUPT);
	unlink(p);

	/* a SQLite database of something else */
	p = tmp_path("other.db");
	CHECK(raw_exec(p, "CREATE TABLE t (x); INSERT INTO t VALUES (1);"));
	CHECK(store_open(p, false, &s, &err) == TCX_ECORRUPT);
	CHECK_MSG(strstr(err.msg, "not a tcx results store"), "%s", err.msg);
	unlink(p);

	/* a parent that is a file */
	p = tmp_path("afile");
	CHECK(write_bytes(p, "x", 1));
	CHECK(store_open(tmp_path("afile/sub/r.db"), true, &s, &err) == TCX_EIO);
	unlink(p);
	store_close(NULL);
}

static void test_round_trip(void)
{
	struct store *s;
	struct tcx_error err = {0};
	struct measurement m, got, key;
	const char *p = tmp_path("a/b/c/results.db");
	struct stat sb;

	CHECK_MSG(store_open(p, true, &s, &err) == TCX_OK, "%s", err.msg);
	CHECK(stat(p, &sb) == 0 && S_ISREG(sb.st_mode));
	CHECK(count(s, NULL) == 0);

	for (int i = 0; i < 12; i++) {
		fill(&m, "NVIDIA H100 80GB HBM3", i, 0);
		CHECK_MSG(store_put(s, &m, &err) == TCX_OK, "%s", err.msg);
		CHECK(get_row(s, &m, &got) && same_meas(&m, &got));
	}
	CHECK(count(s, NULL) == 12);

	/* extremes: every index, huge and negative sizes, NaN and infinities,
	 * the longest strings, bytes SQL would care about */
	fill(&m, "dev 'x'; DROP TABLE measurements; --", 99, 0);
	m.nidx = STORE_MAX_INDICES;
	for (int k = 0; k < m.nidx; k++)
		m.sizes[k] = k % 2 ? INT64_MAX - k : INT64_MIN + k;
	memset(m.solution, 'z', sizeof(m.solution) - 1);
	memset(m.reason, 'r', sizeof(m.reason) - 1);
	memset(m.driver, 'd', sizeof(m.driver) - 1);
	snprintf(m.backend, sizeof(m.backend), "123456789012345");
	snprintf(m.version, sizeof(m.version), "0.1.0-dirty \xc3\xa9");
	m.gflops = NAN;
	m.median_ms = INFINITY;
	m.min_ms = -0.0;
	m.max_ms = 1e-300;
	m.reps = -5;
	CHECK_MSG(store_put(s, &m, &err) == TCX_OK, "%s", err.msg);
	CHECK(get_row(s, &m, &got) && same_meas(&m, &got));
	CHECK(isnan(got.gflops) && isinf(got.median_ms) && got.max_ms == 1e-300);
	CHECK(count(s, NULL) == 13);

	/* no indices at all */
	fill(&m, "dev", 5, 0);
	m.nidx = 0;
	CHECK(store_put(s, &m, &err) == TCX_OK);
	CHECK(get_row(s, &m, &got) && same_meas(&m, &got) && got.nidx == 0);

	/* a key that differs in any one part is another key */
	fill(&key, "NVIDIA H100 80GB HBM3", 3, 0);
	CHECK(get_row(s, &key, &got));
	key.sizes[2]++;
	CHECK(!get_row(s, &key, &got));
	fill(&key, "NVIDIA H100 80GB HBM3", 3, 0);
	key.nidx--;
	CHECK(!get_row(s, &key, &got));
	fill(&key, "NVIDIA H100 80GB HBM3", 3, 0);
	key.solution[5] ^= 1;
	CHECK(!get_row(s, &key, &got));
	fill(&key, "NVIDIA H100 80GB HBM3", 3, 0);
	snprintf(key.driver, sizeof(key.driver), "other");
	CHECK(!get_row(s, &key, &got));

	/* replace on the same key: newer values, same count */
	fill(&m, "NVIDIA H100 80GB HBM3", 4, 0);
	m.median_ms = 123.25;
	m.status = MEAS_FAILED;
	snprintf(m.reason, sizeof(m.reason), "validation failed");
	m.timestamp += 1000;
	CHECK(store_put(s, &m, &err) == TCX_OK);
	CHECK(count(s, NULL) == 14);
	CHECK(get_row(s, &m, &got) && same_meas(&m, &got) && got.median_ms == 123.25);

	/* refused */
	m.nidx = STORE_MAX_INDICES + 1;
	CHECK(store_put(s, &m, &err) == TCX_EINVAL);
	m.nidx = -1;
	CHECK(store_put(s, &m, &err) == TCX_EINVAL);
	m.nidx = 3;
	m.status = (enum meas_status)7;
	CHECK(store_put(s, &m, &err) == TCX_EINVAL);
	m.status = MEAS_OK;
	m.timestamp = NAN;
	CHECK(store_put(s, &m, &err) == TCX_EINVAL);
	CHECK(store_get(s, "a", "b", "c", 0, NULL, "d", &got, NULL, &err) == TCX_EINVAL);
	CHECK(count(s, NULL) == 14);
	store_close(s);

	/* it all survives closing */
	CHECK(store_open(p, false, &s, &err) == TCX_OK);
	CHECK(count(s, NULL) == 14);
	fill(&m, "NVIDIA H100 80GB HBM3", 7, 0);
	CHECK(get_row(s, &m, &got) && same_meas(&m, &got));
	store_close(s);
	CHECK(integrity_ok(p));
}

struct collect {
	int n, stop_after;
	char problem[64][256];
	int64_t size0[64];
	int nidx[64];
	char sol[64][8];
	char device[64][16];
};

static int collect_row(const struct measurement *m, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < 64) {
		snprintf(c->problem[c->n], sizeof(c->problem[0]), "%s", m->problem);
		c->size0[c->n] = m->nidx ? m->sizes[m->nidx - 1] : -1;
		c->nidx[c->n] = m->nidx;
		snprintf(c->sol[c->n], sizeof(c->sol[0]), "%s", m->solution);
		snprintf(c->device[c->n], sizeof(c->device[0]), "%s", m->device);
	}
	c->n++;
	return c->stop_after && c->n >= c->stop_after;
}

static void put_simple(struct store *s, const char *device, const char *problem, int nidx,
		       const int64_t *sizes, const char *sol, enum meas_status status)
{
	struct measurement m;
	struct tcx_error err = {0};

	fill(&m, device, 1, 0);
	snprintf(m.problem, sizeof(m.problem), "%s", problem);
	m.nidx = nidx;
	memcpy(m.sizes, sizes, sizeof(int64_t) * (size_t)nidx);
	snprintf(m.solution, sizeof(m.solution), "%s", sol);
	m.status = status;
	CHECK_MSG(store_put(s, &m, &err) == TCX_OK, "%s", err.msg);
}

static void test_query(void)
{
	struct store *s;
	struct tcx_error err = {0};
	struct collect *c = calloc(1, sizeof(*c));
	struct store_filter f = {NULL, NULL, NULL, -1};
	const int64_t s1024[] = {64, 1024}, s128[] = {64, 128}, s64[] = {64, 64}, s9[] = {64, 9},
		      s64_1[] = {64, 64, 1}, sneg[] = {64, -5};

	CHECK(store_open(tmp_path("q.db"), true, &s, &err) == TCX_OK);
	/* put out of order */
	put_simple(s, "devB", "P2", 2, s1024, "s1", MEAS_OK);
	put_simple(s, "devA", "P1", 2, s128, "s2", MEAS_OK);
	put_simple(s, "devA", "P1", 2, s1024, "s1", MEAS_FAILED);
	put_simple(s, "devA", "P1", 3, s64_1, "s1", MEAS_OK);
	put_simple(s, "devA", "P1", 2, s64, "s1", MEAS_SKIPPED);
	put_simple(s, "devA", "P1", 2, s128, "s1", MEAS_OK);
	put_simple(s, "devB", "P1", 2, s128, "s1", MEAS_OK);
	put_simple(s, "devA", "P1", 2, s9, "s1", MEAS_OK);
	put_simple(s, "devA", "P1", 2, sneg, "s1", MEAS_OK);
	put_simple(s, "devA", "P0", 0, s9, "s1", MEAS_OK);

	CHECK(store_query(s, NULL, collect_row, c, &err) == TCX_OK);
	CHECK(c->n == 10);
	/* problem, then sizes numerically (a prefix first), then solution, device */
	CHECK(strcmp(c->problem[0], "P0") == 0 && c->nidx[0] == 0);
	CHECK(c->size0[1] == -5);
	CHECK(c->size0[2] == 9);
	CHECK(c->size0[3] == 64 && c->nidx[3] == 2);
	CHECK(c->size0[4] == 1 && c->nidx[4] == 3);
	CHECK(c->size0[5] == 128 && strcmp(c->sol[5], "s1") == 0 && !strcmp(c->device[5], "devA"));
	CHECK(c->size0[6] == 128 && strcmp(c->sol[6], "s1") == 0 && !strcmp(c->device[6], "devB"));
	CHECK(c->size0[7] == 128 && strcmp(c->sol[7], "s2") == 0);
	CHECK(c->size0[8] == 1024 && strcmp(c->problem[8], "P1") == 0);
	CHECK(strcmp(c->problem[9], "P2") == 0);

	/* filters */
	CHECK(count(s, &f) == 10);
	f.device = "devB";
	CHECK(count(s, &f) == 2);
	f.problem = "P1";
	CHECK(count(s, &f) == 1);
	f.device = NULL;
	f.solution = "s1";
	CHECK(count(s, &f) == 7);
	f.status = MEAS_OK;
	CHECK(count(s, &f) == 5);
	f.status = MEAS_FAILED;
	memset(c, 0, sizeof(*c));
	CHECK(store_query(s, &f, collect_row, c, &err) == TCX_OK);
	CHECK(c->n == 1 && c->size0[0] == 1024);
	f.problem = "P1' OR '1'='1";
	CHECK(count(s, &f) == 0);

	/* stopping early */
	memset(c, 0, sizeof(*c));
	c->stop_after = 3;
	CHECK(store_query(s, NULL, collect_row, c, &err) == TCX_OK);
	CHECK(c->n == 3);
	store_close(s);
	free(c);
}

static void test_batch(void)
{
	struct store *s;
	struct tcx_error err = {0};
	struct measurement m;
	const char *p = tmp_path("batch.db");

	CHECK(store_open(p, true, &s, &err) == TCX_OK);
	CHECK(store_commit(s, &err) == TCX_EINVAL);
	CHECK(store_begin(s, &err) == TCX_OK);
	CHECK(store_begin(s, &err) == TCX_EINVAL);
	for (int i = 0; i < 100; i++) {
		fill(&m, "dev", i, 0);
		CHECK(store_put(s, &m, &err) == TCX_OK);
	}
	CHECK(count(s, NULL) == 100);
	CHECK(store_commit(s, &err) == TCX_OK);
	/* a batch left open is rolled back */
	CHECK(store_begin(s, &err) == TCX_OK);
	for (int i = 100; i < 150; i++) {
		fill(&m, "dev", i, 0);
		CHECK(store_put(s, &m, &err) == TCX_OK);
	}
	store_close(s);
	CHECK(store_open(p, false, &s, &err) == TCX_OK);
	CHECK(count(s, NULL) == 100);
	store_close(s);
}

static void test_merge(void)
{
	struct store *a, *b, *o;
	struct tcx_error err = {0};
	struct measurement m, got;
	const char *pa = tmp_path("ma.db"), *pb = tmp_path("mb.db"), *po = tmp_path("m/out.db");
	const char *junk = tmp_path("mjunk.db");
	const char *in[3];

	CHECK(store_open(pa, true, &a, &err) == TCX_OK);
	CHECK(store_open(pb, true, &b, &err) == TCX_OK);
	for (int i = 0; i < 10; i++) {
		fill(&m, "dev", i, 100);
		snprintf(m.reason, sizeof(m.reason), "from a");
		CHECK(store_put(a, &m, &err) == TCX_OK);
	}
	for (int i = 5; i < 15; i++) {
		/* 5-7 newer in b, 8-9 older in b, 10-14 only in b */
		fill(&m, "dev", i, i < 8 ? 200 : i < 10 ? 50 : 0);
		snprintf(m.reason, sizeof(m.reason), "from b");
		CHECK(store_put(b, &m, &err) == TCX_OK);
	}
	store_close(a);
	store_close(b);

	in[0] = pa;
	in[1] = pb;
	CHECK_MSG(store_merge(in, 2, po, &err) == TCX_OK, "%s", err.msg);
	CHECK(store_open(po, false, &o, &err) == TCX_OK);
	CHECK(count(o, NULL) == 15);
	for (int i = 0; i < 15; i++) {
		const char *want = i < 5 || i == 8 || i == 9 ? "from a" : "from b";
		double ts = i < 5 || i == 8 || i == 9 ? 100 : i < 8 ? 200 : 0;

		fill(&m, "dev", i, ts);
		snprintf(m.reason, sizeof(m.reason), "%s", want);
		CHECK_MSG(get_row(o, &m, &got) && same_meas(&m, &got), "row %d", i);
	}
	store_close(o);

	/* again, in the other order, and with the output itself: no change */
	in[0] = pb;
	in[1] = pa;
	in[2] = po;
	CHECK_MSG(store_merge(in, 3, po, &err) == TCX_OK, "%s", err.msg);
	CHECK(store_open(po, false, &o, &err) == TCX_OK);
	CHECK(count(o, NULL) == 15);
	fill(&m, "dev", 9, 100);
	snprintf(m.reason, sizeof(m.reason), "from a");
	CHECK(get_row(o, &m, &got) && same_meas(&m, &got));
	store_close(o);

	/* a bad input: nothing is written, the output is not created */
	CHECK(write_bytes(junk, "this is not a database, not at all, no no no", 44));
	in[0] = pa;
	in[1] = junk;
	CHECK(store_merge(in, 2, tmp_path("m/new.db"), &err) == TCX_ECORRUPT);
	CHECK_MSG(strstr(err.msg, junk), "%s", err.msg);
	CHECK(access(tmp_path("m/new.db"), F_OK) != 0);
	in[1] = tmp_path("nothere.db");
	CHECK(store_merge(in, 2, po, &err) == TCX_EIO);
	CHECK(store_merge(NULL, 0, tmp_path("m/empty.db"), &err) == TCX_OK);
	CHECK(store_open(tmp_path("m/empty.db"), false, &o, &err) == TCX_OK);
	CHECK(count(o, NULL) == 0);
	store_close(o);
	CHECK(integrity_ok(po));
	unlink(junk);
}

/* A reader opens read-only: what it is given stays as it was, and what is
 * not a tcx store (an empty database of another program) is refused. */
static void test_read_only(void)
{
	struct store *s;
	struct tcx_error err = {0};
	struct measurement m;
	const char *p = tmp_path("ro.db"), *e = tmp_path("ro-empty.db");
	char *before, *after;
	size_t blen, alen;

	/* another program's database without tables: not made a store */
	CHECK(raw_exec(e, "PRAGMA user_version = 7;"));
	CHECK((before = slurp(e, &blen)) != NULL);
	s = (struct store *)&s;
	CHECK(store_open(e, false, &s, &err) == TCX_ECORRUPT);
	CHECK(s == NULL);
	CHECK_MSG(strstr(err.msg, e) && strstr(err.msg, "not a tcx results store"), "%s", err.msg);
	CHECK((after = slurp(e, &alen)) != NULL);
	CHECK(before && after && alen == blen && memcmp(before, after, blen) == 0);
	free(before);
	free(after);
	unlink(e);

	/* a store: read, never written */
	CHECK(store_open(p, true, &s, &err) == TCX_OK);
	for (int i = 0; i < 5; i++) {
		fill(&m, "dev", i, 0);
		CHECK(store_put(s, &m, &err) == TCX_OK);
	}
	store_close(s); /* checkpoints: the whole store is in the file */
	CHECK((before = slurp(p, &blen)) != NULL);
	CHECK_MSG(store_open(p, false, &s, &err) == TCX_OK, "%s", err.msg);
	if (s) {
		CHECK(count(s, NULL) == 5);
		fill(&m, "dev", 9, 0);
		CHECK(store_put(s, &m, &err) != TCX_OK);
		CHECK(count(s, NULL) == 5);
		store_close(s);
	}
	CHECK((after = slurp(p, &alen)) != NULL);
	CHECK(before && after && alen == blen && memcmp(before, after, blen) == 0);
	free(before);
	free(after);
	CHECK(integrity_ok(p));
}

/* A merge checks every row of every input as the readers read them: an
 * input with a row `tcx results` would refuse is refused, naming it, and the
 * output is left as it was. */
static void test_merge_bad_rows(void)
{
	static const char *const damage[] = {
	    "UPDATE measurements SET status = 7 WHERE rowid = 2",
	    "UPDATE measurements SET sizes = '16,x,48' WHERE rowid = 2",
	    "UPDATE measurements SET nidx = 17 WHERE rowid = 2",
	    "UPDATE measurements SET reason = printf('%.600c', 'x') WHERE rowid = 2",
	    "UPDATE measurements SET timer = 'stopwatch!' WHERE rowid = 2",
	};
	struct store *s;
	struct tcx_error err = {0};
	struct measurement m;
	const char *good = tmp_path("mg-good.db"), *out = tmp_path("mg-out.db");
	const char *bad = tmp_path("mg-bad.db");
	const char *in[2] = {good, bad};

	CHECK(store_open(good, true, &s, &err) == TCX_OK);
	for (int i = 0; i < 4; i++) {
		fill(&m, "good", i, 0);
		CHECK(store_put(s, &m, &err) == TCX_OK);
	}
	store_close(s);
	CHECK(store_open(out, true, &s, &err) == TCX_OK);
	fill(&m, "out", 0, 0);
	CHECK(store_put(s, &m, &err) == TCX_OK);
	store_close(s);

	for (size_t k = 0; k < ARRAY_SIZE(damage); k++) {
		unlink(bad);
		CHECK(store_open(bad, true, &s, &err) == TCX_OK);
		for (int i = 0; i < 3; i++) {
			fill(&m, "bad", i, 0);
			CHECK(store_put(s, &m, &err) == TCX_OK);
		}
		store_close(s);
		CHECK(raw_exec(bad, damage[k]));
		CHECK_MSG(store_merge(in, 2, out, &err) == TCX_ECORRUPT, "%s: %s", damage[k],
			  err.msg);
		CHECK_MSG(strstr(err.msg, bad), "%s: %s", damage[k], err.msg);
		/* the output is as it was, and readable */
		CHECK(store_open(out, false, &s, &err) == TCX_OK);
		if (s) {
			CHECK_MSG(count(s, NULL) == 1, "%s", damage[k]);
			CHECK(store_query(s, NULL, NULL, NULL, &err) == TCX_OK);
			store_close(s);
		}
	}
	/* the good input alone merges */
	CHECK_MSG(store_merge(in, 1, out, &err) == TCX_OK, "%s", err.msg);
	CHECK(store_open(out, false, &s, &err) == TCX_OK);
	if (s) {
		CHECK(count(s, NULL) == 5);
		CHECK(store_query(s, NULL, NULL, NULL, &err) == TCX_OK);
		store_close(s);
	}
	CHECK(integrity_ok(out));
}

/* A write that fails says why: under a file-size limit (SIGXFSZ ignored,
 * as tcx does) the store's log cannot grow, and the message gives the
 * system's reason, which SQLite itself does not keep for a failed commit. */
static void test_write_reason(void)
{
	const char *p = tmp_path("fsize.db");
	int status = -1;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		struct rlimit lim = {64 << 10, 64 << 10};
		struct store *s;
		struct tcx_error err = {0};
		struct measurement m;
		enum tcx_status st = TCX_OK;
		int i;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &lim) != 0 || store_open(p, true, &s, &err) != TCX_OK)
			_exit(2);
		for (i = 0; i < 1000 && st == TCX_OK; i++) {
			fill(&m, "fsize", i, 0);
			st = store_put(s, &m, &err);
		}
		store_close(s);
		if (st != TCX_EIO || !strstr(err.msg, p) || !strstr(err.msg, strerror(EFBIG))) {
			fprintf(stderr, "after %d rows: status %d: %s\n", i, (int)st, err.msg);
			_exit(1);
		}
		_exit(0);
	}
	CHECK(pid > 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	CHECK(integrity_ok(p));
}

static void test_damage(void)
{
	struct store *s;
	struct tcx_error err = {0};
	struct measurement m;
	const char *p = tmp_path("big.db"), *t = tmp_path("trunc.db");
	char *buf;
	size_t len;
	static const double cuts[] = {0.9, 0.75, 0.5, 0.3, 0.1};

	CHECK(store_open(p, true, &s, &err) == TCX_OK);
	CHECK(store_begin(s, &err) == TCX_OK);
	for (int i = 0; i < 600; i++) {
		fill(&m, "dev", i, 0);
		CHECK(store_put(s, &m, &err) == TCX_OK);
	}
	CHECK(store_commit(s, &err) == TCX_OK);
	store_close(s); /* checkpoints: the whole store is in the file */
	CHECK(common_read_file(p, &buf, &len, &err) == TCX_OK);
	CHECK(len > 100000);

	/* cut short anywhere: damaged, and the message names the file */
	for (size_t k = 0; k < ARRAY_SIZE(cuts); k++) {
		size_t n = (size_t)(cuts[k] * (double)len);

		CHECK(write_bytes(t, buf, n));
		s = NULL;
		CHECK_MSG(store_open(t, false, &s, &err) == TCX_ECORRUPT, "cut at %zu: %s", n,
			  err.msg);
		CHECK_MSG(strstr(err.msg, t), "%s", err.msg);
		store_close(s);
		unlink(t);
	}
	/* a page overwritten with garbage */
	memset(buf + len / 2, 0x5a, 4096);
	CHECK(write_bytes(t, buf, len));
	CHECK(store_open(t, false, &s, &err) == TCX_ECORRUPT);
	unlink(t);
	/* a file that was never written: a reader refuses it and leaves it
	 * empty; a writer makes it an empty store */
	CHECK(write_bytes(t, buf, 0));
	s = (struct store *)&s;
	CHECK(store_open(t, false, &s, &err) == TCX_ECORRUPT);
	CHECK(s == NULL);
	CHECK_MSG(strstr(err.msg, t) && strstr(err.msg, "not a tcx results store"), "%s", err.msg);
	CHECK(file_size(t) == 0);
	CHECK(store_open(t, true, &s, &err) == TCX_OK);
	CHECK(count(s, NULL) == 0);
	store_close(s);
	unlink(t);
	free(buf);

	/* a newer schema is refused */
	CHECK(raw_exec(p, "UPDATE meta SET value = '99' WHERE key = 'schema_version'"));
	CHECK(store_open(p, false, &s, &err) == TCX_EUNSUPPORTED);
	CHECK_MSG(strstr(err.msg, "schema version 99") && strstr(err.msg, p), "%s", err.msg);
	CHECK(raw_exec(p, "UPDATE meta SET value = '1' WHERE key = 'schema_version'"));
	CHECK(store_open(p, false, &s, &err) == TCX_OK);
	store_close(s);
}

static void test_busy(void)
{
	struct store *s;
	struct tcx_error err = {0};
	struct measurement m;
	const char *p = tmp_path("busy.db");
	sqlite3 *db;
	double t0;

	setenv("TCX_DB_BUSY_MS", "200", 1);
	CHECK(store_open(p, true, &s, &err) == TCX_OK);
	CHECK(sqlite3_open(p, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK);
	fill(&m, "dev", 1, 0);
	t0 = common_now_seconds();
	CHECK(store_put(s, &m, &err) == TCX_EBUSY);
	CHECK(common_now_seconds() - t0 >= 0.15);
	CHECK_MSG(strstr(err.msg, "results store '") && strstr(err.msg, p) &&
		      strstr(err.msg, "' is locked by another process"),
		  "%s", err.msg);
	CHECK(store_begin(s, &err) == TCX_EBUSY);
	/* readers are not blocked by the writer */
	CHECK(count(s, NULL) == 0);
	CHECK(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK(store_put(s, &m, &err) == TCX_OK);
	CHECK(count(s, NULL) == 1);
	store_close(s);
	unsetenv("TCX_DB_BUSY_MS");
}

/* Two processes create and fill one store at the same time. */
static void test_concurrent(void)
{
	const char *p = tmp_path("conc/results.db");
	pid_t pid[2];
	struct store *s;
	struct tcx_error err = {0};

	for (int c = 0; c < 2; c++) {
		pid[c] = fork();
		if (pid[c] == 0) {
			char dev[32];
			struct measurement m;
			int bad = 0;

			snprintf(dev, sizeof(dev), "child%d", c);
			if (store_open(p, true, &s, &err) != TCX_OK) {
				fprintf(stderr, "child %d: %s\n", c, err.msg);
				exit(2);
			}
			for (int i = 0; i < 200; i++) {
				fill(&m, dev, i, 0);
				if (store_put(s, &m, &err) != TCX_OK) {
					fprintf(stderr, "child %d: %s\n", c, err.msg);
					bad++;
				}
			}
			store_close(s);
			exit(bad ? 3 : 0);
		}
		CHECK(pid[c] > 0);
	}
	for (int c = 0; c < 2; c++) {
		int status = -1;

		CHECK(waitpid(pid[c], &status, 0) == pid[c]);
		CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d status %d", c,
			  status);
	}
	CHECK_MSG(store_open(p, false, &s, &err) == TCX_OK, "%s", err.msg);
	if (!s)
		return;
	CHECK(count(s, NULL) == 400);
	{
		struct store_filter f = {"child1", NULL, NULL, -1};

		CHECK(count(s, &f) == 200);
	}
	store_close(s);
	CHECK(integrity_ok(p));
}

static int check_whole(const struct measurement *m, void *ctx)
{
	int *bad = ctx;

	if (!row_is_whole(m, 0)) {
		fprintf(stderr, "half a row: %.40s\n", m->problem);
		(*bad)++;
	}
	return 0;
}

/* A writer killed with SIGKILL in the middle of its puts loses nothing it
 * committed and leaves no half row. */
static void test_sigkill(int delay_ms)
{
	const char *p = tmp_path("kill.db");
	struct store *s;
	struct tcx_error err = {0};
	struct measurement m;
	int fd[2], last = -1, v, bad = 0, status;
	int64_t rows;
	pid_t pid;

	unlink(p);
	CHECK(store_open(p, true, &s, &err) == TCX_OK);
	store_close(s);
	CHECK(pipe(fd) == 0);
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		if (store_open(p, true, &s, &err) != TCX_OK)
			_exit(2);
		for (int i = 0;; i++) {
			fill(&m, "killed", i, 0);
			if (store_put(s, &m, &err) != TCX_OK)
				_exit(3);
			if (write(fd[1], &i, sizeof(i)) != sizeof(i))
				_exit(4);
		}
	}
	close(fd[1]);
	/* wait for the first row, then let it run */
	CHECK(read(fd[0], &v, sizeof(v)) == sizeof(v));
	sleep_ms(delay_ms);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	while (read(fd[0], &v, sizeof(v)) == sizeof(v))
		last = v;
	close(fd[0]);

	CHECK_MSG(store_open(p, false, &s, &err) == TCX_OK, "%s", err.msg);
	if (!s)
		return;
	rows = count(s, NULL);
	CHECK_MSG(rows >= last + 1 && rows > 0, "%lld rows, %d committed", (long long)rows,
		  last + 1);
	CHECK(store_query(s, NULL, check_whole, &bad, &err) == TCX_OK);
	CHECK(bad == 0);
	store_close(s);
	/* and it takes writes again */
	CHECK_MSG(store_open(p, true, &s, &err) == TCX_OK, "%s", err.msg);
	if (!s)
		return;
	fill(&m, "after", 1, 0);
	CHECK(store_put(s, &m, &err) == TCX_OK);
	store_close(s);
	CHECK(integrity_ok(p));
	fprintf(stderr, "sigkill after %d ms: %lld rows whole\n", delay_ms, (long long)rows);
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void remove_tree(const char *dir)
{
	if (nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	unsetenv("TCX_DB_BUSY_MS");
	snprintf(tmpdir, sizeof(tmpdir), "%s/tcx-store-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror(tmpdir);
		return 1;
	}
	test_open_errors();
	test_round_trip();
	test_query();
	test_batch();
	test_merge();
	test_write_reason();
	test_read_only();
	test_merge_bad_rows();
	test_damage();
	test_busy();
	test_concurrent();
	test_sigkill(20);
	test_sigkill(50);
	test_sigkill(120);
	if (!check_failures)
		remove_tree(tmpdir);
	else
		fprintf(stderr, "files kept in %s\n", tmpdir);
	return check_done();
}
