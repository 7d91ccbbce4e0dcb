/* store.c - the results store on SQLite: opening and checking the file,
 * the schema, puts, lookups, ordered queries and merges.  Every value
 * reaches SQLite through a bound parameter; the SQL text is constant. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fault.h"
#include "store/store.h"

#define STORE_BUSY_MS_DEFAULT 10000

#define STR_(x) #x
#define STR(x)	STR_(x)

struct store {
	sqlite3 *db;
	char *path;
	bool batch; /* store_begin opened a transaction */
	int sys;    /* the system errno of the last step that failed, taken
		     * before sqlite3_reset could replace it (0: none) */
	sqlite3_stmt *put, *merge_put, *get, *begin, *commit, *rollback;
};

/* The schema, version STORE_SCHEMA_VERSION.  sizes is the key ("64,32,16",
 * index 0 first); sizes_ord holds the same numbers as 8-byte big-endian
 * offset-binary values, so that ORDER BY sizes_ord is numeric order. */
static const char schema_sql[] = "BEGIN IMMEDIATE;\n"
				 "CREATE TABLE IF NOT EXISTS meta (\n"
				 "  key TEXT PRIMARY KEY NOT NULL,\n"
				 "  value TEXT NOT NULL\n"
				 ");\n"
				 "INSERT OR IGNORE INTO meta (key, value)\n"
				 "  VALUES ('schema_version', '1');\n"
				 "CREATE TABLE IF NOT EXISTS measurements (\n"
				 "  device TEXT NOT NULL,\n"
				 "  driver TEXT NOT NULL,\n"
				 "  problem TEXT NOT NULL,\n"
				 "  sizes TEXT NOT NULL,     -- '1024,1024,64'\n"
				 "  solution TEXT NOT NULL,\n"
				 "  nidx INTEGER NOT NULL,\n"
				 "  sizes_ord BLOB NOT NULL, -- sizes, sortable\n"
				 "  backend TEXT NOT NULL,\n"
				 "  status INTEGER NOT NULL, -- 0 ok, 1 skipped, 2 failed\n"
				 "  reason TEXT NOT NULL,\n"
				 "  median_ms REAL,\n"
				 "  ci_lo_ms REAL,\n"
				 "  ci_hi_ms REAL,\n"
				 "  min_ms REAL,\n"
				 "  max_ms REAL,\n"
				 "  gflops REAL,\n"
				 "  reps INTEGER NOT NULL,\n"
				 "  timer TEXT NOT NULL,     -- 'event' or 'wall'\n"
				 "  timestamp REAL NOT NULL, -- seconds since the epoch\n"
				 "  version TEXT NOT NULL,   -- tcx version that measured it\n"
				 "  PRIMARY KEY (device, driver, problem, sizes, solution)\n"
				 ");\n"
				 "CREATE INDEX IF NOT EXISTS measurements_order\n"
				 "  ON measurements (problem, sizes_ord);\n"
				 "COMMIT;\n";
_Static_assert(STORE_SCHEMA_VERSION == 1, "schema_sql creates schema version 1");

#define ALL_COLUMNS                                                                                \
	"device, driver, problem, sizes, solution, nidx, sizes_ord, backend, status, "             \
	"reason, median_ms, ci_lo_ms, ci_hi_ms, min_ms, max_ms, gflops, reps, timer, "             \
	"timestamp, version"
#define KEY_COLUMNS "device, driver, problem, sizes, solution"
#define UPDATE_SET                                                                                 \
	"nidx = excluded.nidx, sizes_ord = excluded.sizes_ord, backend = excluded.backend, "       \
	"status = excluded.status, reason = excluded.reason, "                                     \
	"median_ms = excluded.median_ms, ci_lo_ms = excluded.ci_lo_ms, "                           \
	"ci_hi_ms = excluded.ci_hi_ms, min_ms = excluded.min_ms, "                                 \
	"max_ms = excluded.max_ms, gflops = excluded.gflops, reps = excluded.reps, "               \
	"timer = excluded.timer, timestamp = excluded.timestamp, version = excluded.version"

static const char put_sql[] =
    "INSERT INTO measurements (" ALL_COLUMNS ") "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
    "?18, ?19, ?20) "
    "ON CONFLICT (" KEY_COLUMNS ") DO UPDATE SET " UPDATE_SET;

/* The columns read back into a struct measurement, in read_row's order. */
#define ROW_COLUMNS                                                                                \
	"device, driver, problem, sizes, solution, nidx, backend, status, reason, "                \
	"median_ms, ci_lo_ms, ci_hi_ms, min_ms, max_ms, gflops, reps, timer, timestamp, "          \
	"version"

static const char get_sql[] =
    "SELECT " ROW_COLUMNS " FROM measurements "
    "WHERE device = ?1 AND driver = ?2 AND problem = ?3 AND sizes = ?4 AND solution = ?5";

#define FILTER_WHERE                                                                               \
	" WHERE (?1 IS NULL OR device = ?1) AND (?2 IS NULL OR problem = ?2) "                     \
	"AND (?3 IS NULL OR solution = ?3) AND (?4 < 0 OR status = ?4)"

static const char query_sql[] = "SELECT " ROW_COLUMNS " FROM measurements" FILTER_WHERE
				" ORDER BY problem, sizes_ord, solution, device, driver";
static const char count_sql[] = "SELECT count(*) FROM measurements" FILTER_WHERE;

/* A merged row: newer rows win; on a tie the row already there stays. */
static const char merge_put_sql[] =
    "INSERT INTO measurements (" ALL_COLUMNS ") "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
    "?18, ?19, ?20) "
    "ON CONFLICT (" KEY_COLUMNS ") DO UPDATE SET " UPDATE_SET
    " WHERE excluded.timestamp > measurements.timestamp";

/* Maps a SQLite result code to a status and a message naming the store and,
 * for an I/O error, the system's reason (errno `sys`, 0: none known). */
static enum tcx_status sys_fail(sqlite3 *db, const char *path, int rc, int sys, const char *what,
				struct tcx_error *err)
{
	const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
	enum tcx_status st;

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		st = tcx_fail(err, TCX_EBUSY, "results store '%s' is locked by another process",
			      path);
		break;
	case SQLITE_NOTADB:
		st = tcx_fail(err, TCX_ECORRUPT, "results store '%s' is not a SQLite database",
			      path);
		break;
	case SQLITE_CORRUPT:
		st = tcx_fail(err, TCX_ECORRUPT, "results store '%s' is damaged: %s", path, msg);
		break;
	case SQLITE_NOMEM:
		st = tcx_fail(err, TCX_ENOMEM, "out of memory in results store '%s'", path);
		break;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_ERROR:
		st = tcx_fail(err, TCX_ECORRUPT, "cannot %s results store '%s': %s", what, path,
			      msg);
		break;
	default:
		if (sys && (rc & 0xff) != SQLITE_FULL)
			st = tcx_fail(err, TCX_EIO, "cannot %s results store '%s': %s (%s)", what,
				      path, msg, strerror(sys));
		else
			st = tcx_fail(err, TCX_EIO, "cannot %s results store '%s': %s", what, path,
				      msg);
		break;
	}
	if (err)
		err->native = rc;
	return st;
}

static enum tcx_status db_fail(sqlite3 *db, const char *path, int rc, const char *what,
			       struct tcx_error *err)
{
	return sys_fail(db, path, rc, db ? sqlite3_system_errno(db) : 0, what, err);
}

/* db_fail for a step of s that failed: with the errno that step saw. */
static enum tcx_status step_fail(struct store *s, int rc, const char *what, struct tcx_error *err)
{
	int sys = s->sys ? s->sys : sqlite3_system_errno(s->db);

	s->sys = 0;
	return sys_fail(s->db, s->path, rc, sys, what, err);
}

/* sqlite3_step, keeping the errno of a failure in s->sys: SQLite's own
 * record of it, or (SQLite leaves that 0 when a write fails as a
 * transaction commits) errno as the failed step left it. */
static int step(struct store *s, sqlite3_stmt *st)
{
	int rc, sys;

	s->sys = 0;
	errno = 0;
	rc = sqlite3_step(st);
	sys = errno;
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return rc;
	s->sys = sqlite3_system_errno(s->db);
	if (!s->sys && (rc & 0xff) == SQLITE_IOERR && rc != SQLITE_IOERR_SHORT_READ)
		s->sys = sys;
	return rc;
}

static int prepare(struct store *s, sqlite3_stmt **stmt, const char *sql)
{
	if (*stmt)
		return SQLITE_OK;
	return sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL);
}

/* Runs a cached statement that returns no rows. */
static int run_cached(struct store *s, sqlite3_stmt **stmt, const char *sql)
{
	int rc = prepare(s, stmt, sql);

	if (rc != SQLITE_OK)
		return rc;
	rc = step(s, *stmt);
	sqlite3_reset(*stmt);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static void rollback(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		run_cached(s, &s->rollback, "ROLLBACK");
}

/* ---- keys --------------------------------------------------------------- */

/* "1024,1024,64" into buf (room for STORE_MAX_INDICES int64s). */
static void sizes_text(int nidx, const int64_t *sizes, char *buf, size_t cap)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int k = 0; k < nidx && o < cap; k++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, k ? "," : "", sizes[k]);
}

/* Each size as 8 big-endian bytes with the sign bit flipped: memcmp order
 * (SQLite's BLOB order) is then numeric order, a shorter prefix first. */
static void sizes_ord(int nidx, const int64_t *sizes, unsigned char *buf)
{
	for (int k = 0; k < nidx; k++) {
		uint64_t u = (uint64_t)sizes[k] ^ UINT64_C(0x8000000000000000);

		for (int b = 0; b < 8; b++)
			buf[8 * k + b] = (unsigned char)(u >> (56 - 8 * b));
	}
}

static bool parse_sizes(const char *s, int nidx, int64_t *sizes)
{
	char *end;
	int n = 0;

	if (!*s)
		return nidx == 0;
	for (;;) {
		long long v;

		if (n == STORE_MAX_INDICES || !(*s == '-' || (*s >= '0' && *s <= '9')))
			return false;
		errno = 0;
		v = strtoll(s, &end, 10);
		if (errno || end == s)
			return false;
		sizes[n++] = (int64_t)v;
		if (*end == '\0')
			break;
		if (*end != ',')
			return false;
		s = end + 1;
	}
	return n == nidx;
}

/* ---- rows --------------------------------------------------------------- */

static int bind_field(sqlite3_stmt *st, int col, const char *field, size_t cap)
{
	/* a field without its NUL is cut to what read_row can read back */
	return sqlite3_bind_text(st, col, field, (int)strnlen(field, cap - 1), SQLITE_TRANSIENT);
}

#define BIND_FIELD(st, col, m, name) bind_field(st, col, (m)->name, sizeof((m)->name))

static int bind_real(sqlite3_stmt *st, int col, double v)
{
	return isnan(v) ? sqlite3_bind_null(st, col) : sqlite3_bind_double(st, col, v);
}

static enum tcx_status copy_text(const struct store *s, sqlite3_stmt *st, int col, char *dst,
				 size_t cap, struct tcx_error *err)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	int n = sqlite3_column_bytes(st, col);

	if (!t && sqlite3_errcode(s->db) == SQLITE_NOMEM)
		return tcx_fail(err, TCX_ENOMEM, "out of memory in results store '%s'", s->path);
	if ((size_t)n >= cap)
		return tcx_fail(err, TCX_ECORRUPT,
				"results store '%s' has a %s of %d bytes, longer than tcx reads",
				s->path, sqlite3_column_name(st, col), n);
	if (n)
		memcpy(dst, t, (size_t)n);
	dst[n] = '\0';
	return TCX_OK;
}

static double column_real(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

/* Reads the current row (ROW_COLUMNS) into m. */
static enum tcx_status read_row(const struct store *s, sqlite3_stmt *st, struct measurement *m,
				struct tcx_error *err)
{
	char sizes[512];
	enum tcx_status rc;
	sqlite3_int64 nidx, status, reps;

	memset(m, 0, sizeof(*m));
	if ((rc = copy_text(s, st, 0, m->device, sizeof(m->device), err)) ||
	    (rc = copy_text(s, st, 1, m->driver, sizeof(m->driver), err)) ||
	    (rc = copy_text(s, st, 2, m->problem, sizeof(m->problem), err)) ||
	    (rc = copy_text(s, st, 3, sizes, sizeof(sizes), err)) ||
	    (rc = copy_text(s, st, 4, m->solution, sizeof(m->solution), err)) ||
	    (rc = copy_text(s, st, 6, m->backend, sizeof(m->backend), err)) ||
	    (rc = copy_text(s, st, 8, m->reason, sizeof(m->reason), err)) ||
	    (rc = copy_text(s, st, 16, m->timer, sizeof(m->timer), err)) ||
	    (rc = copy_text(s, st, 18, m->version, sizeof(m->version), err)))
		return rc;
	nidx = sqlite3_column_int64(st, 5);
	status = sqlite3_column_int64(st, 7);
	reps = sqlite3_column_int64(st, 15);
	if (nidx < 0 || nidx > STORE_MAX_INDICES || !parse_sizes(sizes, (int)nidx, m->sizes))
		return tcx_fail(err, TCX_ECORRUPT, "results store '%s' has bad sizes '%s'", s->path,
				sizes);
	if (status < MEAS_OK || status > MEAS_FAILED)
		return tcx_fail(err, TCX_ECORRUPT, "results store '%s' has an unknown status %lld",
				s->path, (long long)status);
	m->nidx = (int)nidx;
	m->status = (enum meas_status)status;
	m->reps = reps < INT_MIN ? INT_MIN : reps > INT_MAX ? INT_MAX : (int)reps;
	m->median_ms = column_real(st, 9);
	m->ci_lo_ms = column_real(st, 10);
	m->ci_hi_ms = column_real(st, 11);
	m->min_ms = column_real(st, 12);
	m->max_ms = column_real(st, 13);
	m->gflops = column_real(st, 14);
	m->timestamp = sqlite3_column_double(st, 17);
	return TCX_OK;
}

/* ---- opening ------------------------------------------------------------ */

/* mkdir -p of the directory part of path. */
static enum tcx_status make_parents(const char *path, struct tcx_error *err)
{
	char *dir = strdup(path), *slash, *p;
	enum tcx_status st = TCX_OK;
	struct stat sb;

	if (!dir)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		goto out_free_dir;
	*slash = '\0';
	for (p = dir + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
			st = tcx_fail(err, TCX_EIO, "cannot create directory '%s': %s", dir,
				      strerror(errno));
			goto out_free_dir;
		}
		if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			st = tcx_fail(err, TCX_EIO, "cannot create directory '%s': %s", dir,
				      strerror(ENOTDIR));
			goto out_free_dir;
		}
		*p = c;
		if (c == '\0')
			break;
	}
out_free_dir:
	free(dir);
	return st;
}

static int busy_ms(void)
{
	const char *env = getenv("TCX_DB_BUSY_MS");
	int64_t v;

	if (!env || !*env)
		return STORE_BUSY_MS_DEFAULT;
	if (!common_parse_i64(env, &v) || v < 0 || v > INT_MAX) {
		tcx_log(TCX_LOG_WARN, "ignoring TCX_DB_BUSY_MS='%s': not a number of milliseconds",
			env);
		return STORE_BUSY_MS_DEFAULT;
	}
	return (int)v;
}

/* Runs a statement and copies the text of its first row's first column. */
static int first_text(sqlite3 *db, const char *sql, char *buf, size_t cap)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	buf[0] = '\0';
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);

		snprintf(buf, cap, "%s", t ? (const char *)t : "");
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Switches to WAL (a no-op when the file is in WAL mode already).  SQLite
 * answers SQLITE_BUSY at once, without its busy handler, while another
 * process switches the same new file, so wait here as the handler would. */
static int set_wal(sqlite3 *db, int timeout_ms, char *buf, size_t cap)
{
	int waited = 0, rc;

	for (;;) {
		rc = first_text(db, "PRAGMA journal_mode = WAL", buf, cap);
		if ((rc & 0xff) != SQLITE_BUSY || waited >= timeout_ms)
			return rc;
		sqlite3_sleep(5);
		waited += 5;
	}
}

/* What the file holds: 0 nothing (an empty database), 1 a tcx store
 * (schema version in *version), -1 something else. */
static int schema_state(struct store *s, int *version, int *rc_out)
{
	char buf[64];
	int64_t v;
	int rc, tables;

	*version = 0;
	rc = first_text(s->db, "SELECT count(*) FROM sqlite_master", buf, sizeof(buf));
	if (rc != SQLITE_OK)
		goto out_failed;
	tables = atoi(buf);
	rc = first_text(s->db,
			"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
			buf, sizeof(buf));
	if (rc != SQLITE_OK)
		goto out_failed;
	if (atoi(buf) == 0)
		return tables == 0 ? 0 : -1;
	rc = first_text(s->db, "SELECT value FROM meta WHERE key = 'schema_version'", buf,
			sizeof(buf));
	if (rc != SQLITE_OK)
		goto out_failed;
	if (!common_parse_i64(buf, &v) || v < 1 || v > INT_MAX)
		return -1;
	*version = (int)v;
	rc = first_text(s->db,
			"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
			"name = 'measurements'",
			buf, sizeof(buf));
	if (rc != SQLITE_OK)
		goto out_failed;
	if (atoi(buf) == 0 && v <= STORE_SCHEMA_VERSION)
		return -1;
	return 1;
out_failed:
	*rc_out = rc;
	return -2;
}

static enum tcx_status check_schema(struct store *s, struct tcx_error *err)
{
	int version, rc = SQLITE_OK, state;
	char *msg = NULL;

	state = schema_state(s, &version, &rc);
	if (state == 0) {
		rc = sqlite3_exec(s->db, schema_sql, NULL, NULL, &msg);
		sqlite3_free(msg);
		if (rc != SQLITE_OK) {
			enum tcx_status st = db_fail(s->db, s->path, rc, "create", err);

			rollback(s);
			return st;
		}
		state = schema_state(s, &version, &rc);
	}
	if (state == -2)
		return db_fail(s->db, s->path, rc, "read", err);
	if (state < 0)
		return tcx_fail(err, TCX_ECORRUPT,
				"'%s' is a SQLite database but not a tcx results store", s->path);
	if (version > STORE_SCHEMA_VERSION)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"results store '%s' has schema version %d, newer than this tcx "
				"reads (%d): use a newer tcx",
				s->path, version, STORE_SCHEMA_VERSION);
	return TCX_OK;
}

enum tcx_status store_open(const char *path, bool write, struct store **out, struct tcx_error *err)
{
	struct store *s;
	struct stat sb;
	enum tcx_status st;
	char buf[256];
	int rc, flags, busy;

	*out = NULL;
	if (!path || !*path)
		return tcx_fail(err, TCX_EINVAL, "no results store path given");
	if (stat(path, &sb) == 0) {
		if (S_ISDIR(sb.st_mode))
			return tcx_fail(err, TCX_EIO, "cannot open results store '%s': %s", path,
					strerror(EISDIR));
	} else if (errno != ENOENT || !write) {
		return tcx_fail(err, TCX_EIO, "cannot open results store '%s': %s", path,
				strerror(errno));
	} else if ((st = make_parents(path, err))) {
		return st;
	}

	s = calloc(1, sizeof(*s));
	if (!s)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	/* a reader opens the file read-only: whatever it is, it stays as it
	 * was (an empty file or another program's database is refused, not
	 * made into a store) */
	flags = write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
	rc = sqlite3_open_v2(path, &s->db, flags, NULL);
	if (rc != SQLITE_OK) {
		st = db_fail(s->db, path, rc, "open", err);
		goto out_close;
	}
	sqlite3_extended_result_codes(s->db, 1);
	busy = busy_ms();
	sqlite3_busy_timeout(s->db, busy);

	/* check before anything writes to the file */
	rc = first_text(s->db, "PRAGMA quick_check", buf, sizeof(buf));
	if (rc != SQLITE_OK) {
		st = db_fail(s->db, path, rc, "read", err);
		goto out_close;
	}
	if (strcmp(buf, "ok") != 0) {
		st = tcx_fail(err, TCX_ECORRUPT, "results store '%s' is damaged: %s", path, buf);
		goto out_close;
	}
	{
		/* another program's database: refuse it before WAL mode rewrites
		 * its header; a reader also refuses an empty one */
		int version, src = SQLITE_OK, state = schema_state(s, &version, &src);

		if (state == -1) {
			st = tcx_fail(err, TCX_ECORRUPT,
				      "'%s' is a SQLite database but not a tcx results store",
				      path);
			goto out_close;
		}
		if (state == 0 && !write) {
			st = tcx_fail(err, TCX_ECORRUPT,
				      "'%s' is not a tcx results store: it is empty (tcx tune "
				      "makes a store)",
				      path);
			goto out_close;
		}
	}
	if (!write) {
		if ((st = check_schema(s, err)))
			goto out_close;
		*out = s;
		return TCX_OK;
	}
	rc = set_wal(s->db, busy, buf, sizeof(buf));
	if (rc != SQLITE_OK) {
		st = db_fail(s->db, path, rc, "open", err);
		goto out_close;
	}
	if (strcmp(buf, "wal") != 0)
		tcx_log(TCX_LOG_WARN, "results store '%s' is in journal mode '%s', not WAL", path,
			buf);
	rc = sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		st = db_fail(s->db, path, rc, "open", err);
		goto out_close;
	}
	if ((st = check_schema(s, err)))
		goto out_close;
	*out = s;
	return TCX_OK;
out_close:
	store_close(s);
	return st;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->db && s->batch)
		rollback(s);
	sqlite3_finalize(s->put);
	sqlite3_finalize(s->merge_put);
	sqlite3_finalize(s->get);
	sqlite3_finalize(s->begin);
	sqlite3_finalize(s->commit);
	sqlite3_finalize(s->rollback);
	sqlite3_close_v2(s->db);
	free(s->path);
	free(s);
}

/* ---- writing ------------------------------------------------------------ */

enum tcx_status store_begin(struct store *s, struct tcx_error *err)
{
	int rc;

	if (s->batch)
		return tcx_fail(err, TCX_EINVAL, "a batch is already open on results store '%s'",
				s->path);
	rc = run_cached(s, &s->begin, "BEGIN IMMEDIATE");
	if (rc != SQLITE_OK)
		return step_fail(s, rc, "write", err);
	s->batch = true;
	return TCX_OK;
}

enum tcx_status store_commit(struct store *s, struct tcx_error *err)
{
	enum tcx_status st;
	int rc;

	if (!s->batch)
		return tcx_fail(err, TCX_EINVAL, "no batch is open on results store '%s'", s->path);
	s->batch = false;
	if (sqlite3_get_autocommit(s->db))
		return tcx_fail(err, TCX_EIO,
				"cannot write results store '%s': the batch was rolled back "
				"after an earlier error",
				s->path);
	rc = run_cached(s, &s->commit, "COMMIT");
	if (rc == SQLITE_OK)
		return TCX_OK;
	st = step_fail(s, rc, "write", err);
	rollback(s);
	return st;
}

/* Writes m with the cached statement *stmt (sql), in its own transaction
 * or the open batch. */
static enum tcx_status put_row(struct store *s, sqlite3_stmt **stmt, const char *sql,
			       const struct measurement *m, struct tcx_error *err)
{
	char sizes[512];
	unsigned char ord[8 * STORE_MAX_INDICES];
	sqlite3_stmt *st;
	bool own = !s->batch;
	enum tcx_status ret;
	int rc;

	if (m->nidx < 0 || m->nidx > STORE_MAX_INDICES)
		return tcx_fail(err, TCX_EINVAL, "cannot store a measurement with %d indices",
				m->nidx);
	if ((int)m->status < MEAS_OK || (int)m->status > MEAS_FAILED)
		return tcx_fail(err, TCX_EINVAL, "cannot store a measurement with status %d",
				(int)m->status);
	if (!isfinite(m->timestamp))
		return tcx_fail(err, TCX_EINVAL, "cannot store a measurement without a timestamp");
	if (s->batch && sqlite3_get_autocommit(s->db))
		return tcx_fail(err, TCX_EIO,
				"cannot write results store '%s': the batch was rolled back "
				"after an earlier error",
				s->path);
	sizes_text(m->nidx, m->sizes, sizes, sizeof(sizes));
	sizes_ord(m->nidx, m->sizes, ord);

	if ((rc = prepare(s, stmt, sql)) != SQLITE_OK)
		return db_fail(s->db, s->path, rc, "write", err);
	if (fault_hit(FAULT_WRITE)) /* TCX_FAULT=write:N: as a full disk */
		return db_fail(NULL, s->path, SQLITE_FULL, "write", err);
	if (own && (rc = run_cached(s, &s->begin, "BEGIN IMMEDIATE")) != SQLITE_OK)
		return step_fail(s, rc, "write", err);
	st = *stmt;
	if ((rc = BIND_FIELD(st, 1, m, device)) || (rc = BIND_FIELD(st, 2, m, driver)) ||
	    (rc = BIND_FIELD(st, 3, m, problem)) ||
	    (rc = sqlite3_bind_text(st, 4, sizes, -1, SQLITE_TRANSIENT)) ||
	    (rc = BIND_FIELD(st, 5, m, solution)) || (rc = sqlite3_bind_int(st, 6, m->nidx)) ||
	    (rc = sqlite3_bind_blob(st, 7, ord, 8 * m->nidx, SQLITE_TRANSIENT)) ||
	    (rc = BIND_FIELD(st, 8, m, backend)) || (rc = sqlite3_bind_int(st, 9, m->status)) ||
	    (rc = BIND_FIELD(st, 10, m, reason)) || (rc = bind_real(st, 11, m->median_ms)) ||
	    (rc = bind_real(st, 12, m->ci_lo_ms)) || (rc = bind_real(st, 13, m->ci_hi_ms)) ||
	    (rc = bind_real(st, 14, m->min_ms)) || (rc = bind_real(st, 15, m->max_ms)) ||
	    (rc = bind_real(st, 16, m->gflops)) || (rc = sqlite3_bind_int(st, 17, m->reps)) ||
	    (rc = BIND_FIELD(st, 18, m, timer)) ||
	    (rc = sqlite3_bind_double(st, 19, m->timestamp)) ||
	    (rc = BIND_FIELD(st, 20, m, version)))
		goto out_rollback;
	rc = step(s, st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		goto out_rollback;
	if (own && (rc = run_cached(s, &s->commit, "COMMIT")) != SQLITE_OK)
		goto out_rollback;
	return TCX_OK;
out_rollback:
	ret = step_fail(s, rc, "write", err);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (own)
		rollback(s);
	return ret;
}

enum tcx_status store_put(struct store *s, const struct measurement *m, struct tcx_error *err)
{
	return put_row(s, &s->put, put_sql, m, err);
}

/* ---- reading ------------------------------------------------------------ */

enum tcx_status store_get(struct store *s, const char *device, const char *driver,
			  const char *problem, int nidx, const int64_t *sizes, const char *solution,
			  struct measurement *out, bool *found, struct tcx_error *err)
{
	char text[512];
	sqlite3_stmt *st;
	enum tcx_status ret = TCX_OK;
	int rc;

	if (!found)
		return tcx_fail(err, TCX_EINVAL, "store_get needs a place for 'found'");
	*found = false;
	if (nidx < 0 || nidx > STORE_MAX_INDICES)
		return tcx_fail(err, TCX_EINVAL, "cannot look up a measurement with %d indices",
				nidx);
	sizes_text(nidx, sizes, text, sizeof(text));
	if ((rc = prepare(s, &s->get, get_sql)) != SQLITE_OK)
		return db_fail(s->db, s->path, rc, "read", err);
	st = s->get;
	if ((rc = sqlite3_bind_text(st, 1, device, -1, SQLITE_TRANSIENT)) ||
	    (rc = sqlite3_bind_text(st, 2, driver, -1, SQLITE_TRANSIENT)) ||
	    (rc = sqlite3_bind_text(st, 3, problem, -1, SQLITE_TRANSIENT)) ||
	    (rc = sqlite3_bind_text(st, 4, text, -1, SQLITE_TRANSIENT)) ||
	    (rc = sqlite3_bind_text(st, 5, solution, -1, SQLITE_TRANSIENT))) {
		ret = db_fail(s->db, s->path, rc, "read", err);
		goto out_reset;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		struct measurement m;

		ret = read_row(s, st, &m, err);
		if (ret == TCX_OK) {
			*out = m;
			*found = true;
		}
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(s->db, s->path, rc, "read", err);
	}
out_reset:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

static int bind_filter(sqlite3_stmt *st, const struct store_filter *f)
{
	static const struct store_filter any = {NULL, NULL, NULL, -1};
	int rc;

	if (!f)
		f = &any;
	if ((rc = sqlite3_bind_text(st, 1, f->device, -1, SQLITE_TRANSIENT)) ||
	    (rc = sqlite3_bind_text(st, 2, f->problem, -1, SQLITE_TRANSIENT)) ||
	    (rc = sqlite3_bind_text(st, 3, f->solution, -1, SQLITE_TRANSIENT)) ||
	    (rc = sqlite3_bind_int(st, 4, f->status < 0 ? -1 : f->status)))
		return rc;
	return SQLITE_OK;
}

enum tcx_status store_query(struct store *s, const struct store_filter *f, store_row_fn fn,
			    void *ctx, struct tcx_error *err)
{
	struct measurement *m;
	sqlite3_stmt *st;
	enum tcx_status ret = TCX_OK;
	int rc;

	m = malloc(sizeof(*m));
	if (!m)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	/* a statement of its own: a callback may look rows up meanwhile */
	rc = sqlite3_prepare_v2(s->db, query_sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		ret = db_fail(s->db, s->path, rc, "read", err);
		goto out_free_m;
	}
	if ((rc = bind_filter(st, f)) != SQLITE_OK) {
		ret = db_fail(s->db, s->path, rc, "read", err);
		goto out_finalize;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((ret = read_row(s, st, m, err)))
			goto out_finalize;
		if (fn && fn(m, ctx))
			goto out_finalize;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(s->db, s->path, rc, "read", err);
out_finalize:
	sqlite3_finalize(st);
out_free_m:
	free(m);
	return ret;
}

enum tcx_status store_count(struct store *s, const struct store_filter *f, int64_t *count,
			    struct tcx_error *err)
{
	sqlite3_stmt *st;
	enum tcx_status ret = TCX_OK;
	int rc;

	*count = 0;
	rc = sqlite3_prepare_v2(s->db, count_sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(s->db, s->path, rc, "read", err);
	if ((rc = bind_filter(st, f)) != SQLITE_OK) {
		ret = db_fail(s->db, s->path, rc, "read", err);
		goto out_finalize;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*count = sqlite3_column_int64(st, 0);
	else
		ret = db_fail(s->db, s->path, rc, "read", err);
out_finalize:
	sqlite3_finalize(st);
	return ret;
}

/* ---- merging ------------------------------------------------------------ */

struct merge_ctx {
	struct store *out;
	enum tcx_status st;
	struct tcx_error *err;
};

/* store_query's callback: one row of an input, as the readers read it,
 * into the output (a newer row wins). */
static int merge_row(const struct measurement *m, void *arg)
{
	struct merge_ctx *x = arg;

	x->st = put_row(x->out, &x->out->merge_put, merge_put_sql, m, x->err);
	return x->st != TCX_OK;
}

/* Merges one input into o in one transaction.  Every row goes through
 * read_row and put_row, so the output holds only rows that tcx reads back
 * as it reads its own. */
static enum tcx_status merge_one(struct store *o, const char *input, struct tcx_error *err)
{
	struct merge_ctx x = { o, TCX_OK, err };
	struct store *in;
	enum tcx_status st;

	if ((st = store_open(input, false, &in, err)))
		return st;
	st = store_begin(o, err);
	if (!st)
		st = store_query(in, NULL, merge_row, &x, err);
	if (!st)
		st = x.st;
	if (st) {
		if (o->batch) {
			o->batch = false;
			rollback(o);
		}
	} else {
		st = store_commit(o, err);
	}
	if (st)
		tcx_error_prefix(err, "merging '%s'", input);
	store_close(in);
	return st;
}

enum tcx_status store_merge(const char *const *inputs, int n, const char *output,
			    struct tcx_error *err)
{
	struct store *o, *in;
	struct stat so, si;
	enum tcx_status st;

	if (n < 0 || (n > 0 && !inputs))
		return tcx_fail(err, TCX_EINVAL, "no results stores to merge");
	/* every row of every input read as the readers read it, before
	 * anything is written: a row tcx would refuse is refused here */
	for (int k = 0; k < n; k++) {
		if ((st = store_open(inputs[k], false, &in, err)))
			return st;
		st = store_query(in, NULL, NULL, NULL, err);
		store_close(in);
		if (st)
			return st;
	}
	if ((st = store_open(output, true, &o, err)))
		return st;
	if (stat(output, &so) != 0) {
		st = tcx_fail(err, TCX_EIO, "cannot open results store '%s': %s", output,
			      strerror(errno));
		goto out_close;
	}
	for (int k = 0; k < n; k++) {
		if (stat(inputs[k], &si) != 0) {
			st = tcx_fail(err, TCX_EIO, "cannot open results store '%s': %s", inputs[k],
				      strerror(errno));
			goto out_close;
		}
		if (si.st_dev == so.st_dev && si.st_ino == so.st_ino)
			continue;
		if ((st = merge_one(o, inputs[k], err)))
			goto out_close;
	}
out_close:
	store_close(o);
	return st;
}
