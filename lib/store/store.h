/* store.h - the results store: a SQLite database of benchmark measurements,
 * one row per (device, driver, problem, sizes, solution).
 *
 * The database is in WAL mode with synchronous=NORMAL: each store_put is
 * one transaction, a killed process loses nothing it committed, readers do
 * not block the writer, and several processes may write the same store at
 * once (they take turns; a writer waits up to 10 s, or TCX_DB_BUSY_MS
 * milliseconds, for the lock, then fails with TCX_EBUSY).  Users may query
 * the file with the sqlite3 program: table `measurements` has one column
 * per field below (sizes as text, "1024,1024,64"; `sizes_ord` is a blob
 * that sorts the sizes numerically), table `meta` holds the schema version.
 *
 * The default place is $XDG_CACHE_HOME/tcx/results.db; the store does not
 * choose it, the caller passes a path.  A connection must not cross fork().
 */
#ifndef TCX_STORE_H
#define TCX_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/common.h"

#define STORE_MAX_INDICES 16
/* The schema this tcx writes; stores with a newer one are refused. */
#define STORE_SCHEMA_VERSION 1

enum meas_status {
	MEAS_OK = 0,
	MEAS_SKIPPED = 1, /* invalid or over a device limit */
	MEAS_FAILED = 2	  /* build, launch or validation failed */
};

/* One measurement.  Strings are NUL-terminated within their arrays.  The
 * key is (device, driver, problem, sizes[0..nidx), solution); the store
 * treats problem and solution as opaque text.  Times that were not measured
 * may be NaN: they are stored as NULL and read back as NaN. */
struct measurement {
	char device[256]; /* device model name, e.g. "NVIDIA H100 80GB HBM3" */
	char driver[256];
	char backend[16];  /* "opencl", "cuda" */
	/* problem type key, e.g. "Cijk_Ailk_Bjlk_S", or with strides
	 * "Cij_Akj_Bik_S strides A=[1,40]" (tune_problem_key) */
	char problem[256];
	int nidx;	   /* 0 to STORE_MAX_INDICES */
	/* in the order of the problem key's letters: sizes[0] is index i's,
	 * sizes[1] j's, ... (Tensile's numbering, which is also the id order
	 * of the contraction the key came from: model.h).  For 'iml,jml->ij'
	 * (key "Cij_Alkj_Blki_S") that is the expression's j, i, m, l. */
	int64_t sizes[STORE_MAX_INDICES];
	char solution[2048]; /* canonical solution key, opaque text */
	enum meas_status status;
	char reason[512]; /* why it was skipped or failed; "" when ok */
	double median_ms, ci_lo_ms, ci_hi_ms, min_ms, max_ms, gflops;
	int reps;
	char timer[8];	  /* "event" or "wall" */
	double timestamp; /* seconds since the epoch; must be finite */
	char version[32]; /* tcx version that measured it */
};

/* An open store (opaque). */
struct store;

/* Opens the store at `path`.  With `write`, for reading and writing: a
 * missing file is created, with its parent directories (mkdir -p), and the
 * schema is created in a new or empty database.  Without it, read-only: the
 * file must exist and be a tcx results store, and nothing is written to it
 * (store_put and store_merge's output need `write`).  Runs PRAGMA
 * quick_check.  On failure *out is NULL and:
 *   TCX_EIO          the file is missing (write false), is a directory, or
 *                    cannot be opened or created
 *   TCX_ECORRUPT     not a SQLite database, a damaged one, a SQLite
 *                    database that is not a tcx results store, or (write
 *                    false) an empty file or database
 *   TCX_EUNSUPPORTED a store written by a newer tcx (schema version)
 *   TCX_EBUSY        locked by another process past the busy timeout */
enum tcx_status store_open(const char *path, bool write, struct store **out, struct tcx_error *err);

/* Closes the store; NULL is allowed.  A batch not committed with
 * store_commit is rolled back. */
void store_close(struct store *s);

/* Inserts m, or replaces the row with the same key.  Atomic: in its own
 * transaction, or part of the batch when store_begin opened one.
 * TCX_EINVAL for nidx out of range, an unknown status or a timestamp that
 * is not finite. */
enum tcx_status store_put(struct store *s, const struct measurement *m, struct tcx_error *err);

/* Looks up one key.  Sets *found (which must not be NULL); fills *out only
 * when a row was found. */
enum tcx_status store_get(struct store *s, const char *device, const char *driver,
			  const char *problem, int nidx, const int64_t *sizes, const char *solution,
			  struct measurement *out, bool *found, struct tcx_error *err);

/* Which rows store_query and store_count see: NULL (or status -1) matches
 * any value; the strings must match exactly.  A NULL filter matches all. */
struct store_filter {
	const char *device, *problem, *solution;
	int status; /* an enum meas_status, or -1 = any */
};

/* Called once per row; `m` is valid during the call only.  Return non-zero
 * to stop (store_query then returns TCX_OK).  The callback must not write
 * to the same store. */
typedef int (*store_row_fn)(const struct measurement *m, void *ctx);

/* Calls fn for each matching row, ordered by problem, then sizes
 * (numerically, index 0 first), then solution, then device and driver. */
enum tcx_status store_query(struct store *s, const struct store_filter *f, store_row_fn fn,
			    void *ctx, struct tcx_error *err);

/* The number of matching rows. */
enum tcx_status store_count(struct store *s, const struct store_filter *f, int64_t *count,
			    struct tcx_error *err);

/* Merges the stores `inputs[0..n)` into `output`, which is created if
 * missing, else added to.  On a key clash the row with the newer timestamp
 * wins (on a tie the row already in output stays).  Every input is opened
 * read-only and each of its rows read as store_query reads them before
 * anything is written, so that a row the readers would refuse (TCX_ECORRUPT,
 * naming the input) never reaches the output; each input is then merged in
 * one transaction.  An input that is the output file itself is skipped. */
enum tcx_status store_merge(const char *const *inputs, int n, const char *output,
			    struct tcx_error *err);

/* Optional batching: store_begin opens a write transaction (taking the
 * write lock, waiting as store_put does) that later store_put calls join;
 * store_commit makes them durable at once.  Batches do not nest. */
enum tcx_status store_begin(struct store *s, struct tcx_error *err);
enum tcx_status store_commit(struct store *s, struct tcx_error *err);

#endif /* TCX_STORE_H */
