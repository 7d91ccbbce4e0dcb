/* tree.c - the source tree export-lib writes, put in place as a whole:
 * every file is written in full first, as an atomic file that has no name
 * yet (an unnamed file where Linux allows, as atomic_file_open makes it);
 * only when all are written do they take their names, one by one, the
 * earlier files kept aside (hard links in a directory of their own) until
 * the last is in place, so that a failure at any step puts the earlier
 * tree back as it was.  A manifest lists the files tcx wrote, so that the
 * next export removes the ones it no longer writes and leaves every other
 * file (a build directory, the user's own) alone. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fault.h"
#include "export/export.h"

/* The directory the earlier files wait in while the new ones go in. */
#define ASIDE_PREFIX ".tcx-export.old."

/* One change to the output directory, undone in reverse order on failure. */
enum step_kind {
	STEP_MKDIR,   /* rel was created as a directory */
	STEP_KEPT,    /* rel's earlier file is linked aside */
	STEP_MOVED,   /* rel's earlier file is moved aside (no hard links here) */
	STEP_PLACED,  /* the new rel is in place */
	STEP_REMOVED, /* rel, a file of the earlier tree only, is moved aside */
};

struct step {
	char *rel;
	enum step_kind kind;
};

/* A file of the new tree, written but not yet named. */
struct entry {
	char *rel;
	struct atomic_file af;
	bool pending; /* af is open: written, not committed */
};

struct export_tree {
	char *dir; /* the output directory */
	struct entry *files;
	int nfiles;
	struct step *steps;
	int nsteps;
	char *aside;  /* dir/.tcx-export.old.XXXXXX, once an earlier file is set aside */
	int aside_fd; /* its descriptor, locked while this export runs */
	char **made;  /* directories created for dir itself, outermost first */
	int nmade;
	bool committed;
};

static char *path_join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", a, b);
	return p;
}

static enum tcx_status add_step(struct export_tree *t, const char *rel, enum step_kind kind,
				struct tcx_error *err)
{
	struct step *s = realloc(t->steps, (size_t)(t->nsteps + 1) * sizeof(*s));

	if (!s)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	t->steps = s;
	s[t->nsteps].rel = strdup(rel);
	if (!s[t->nsteps].rel)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	s[t->nsteps].kind = kind;
	t->nsteps++;
	return TCX_OK;
}

/* Forgets the last step (recorded before a change that then failed). */
static void drop_step(struct export_tree *t)
{
	t->nsteps--;
	free(t->steps[t->nsteps].rel);
}

/* Creates dir and its missing parents, recording those it created. */
static enum tcx_status make_root(struct export_tree *t, const char *dir, struct tcx_error *err)
{
	char *buf = strdup(dir);
	enum tcx_status st = TCX_OK;
	size_t n;

	if (!buf)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	n = strlen(buf);
	for (size_t k = 1; k <= n && !st; k++) {
		if (buf[k] != '/' && buf[k] != '\0')
			continue;
		buf[k] = '\0';
		if (mkdir(buf, 0777) == 0) {
			char **m = realloc(t->made, (size_t)(t->nmade + 1) * sizeof(*m));

			if (m) {
				t->made = m;
				m[t->nmade] = strdup(buf);
			}
			if (!m || !m[t->nmade]) {
				rmdir(buf);
				st = tcx_fail(err, TCX_ENOMEM, "out of memory");
			} else {
				t->nmade++;
			}
		} else if (errno != EEXIST) {
			st = tcx_fail(err, TCX_EIO, "cannot create '%s': %s", buf, strerror(errno));
		}
		if (k < n)
			buf[k] = '/';
	}
	if (!st) {
		struct stat sb;

		if (stat(dir, &sb) != 0)
			st = tcx_fail(err, TCX_EIO, "cannot create '%s': %s", dir, strerror(errno));
		else if (!S_ISDIR(sb.st_mode))
			st = tcx_fail(err, TCX_EIO, "cannot create '%s': %s", dir,
				      strerror(ENOTDIR));
	}
	free(buf);
	return st;
}

/* Creates the directories of rel's parents under base ("a/b/c": base/a,
 * base/a/b); where `t` is given (the output directory), records those it
 * created as steps. */
static enum tcx_status make_parents(struct export_tree *t, const char *base, const char *rel,
				    struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;
	char *part = strdup(rel);

	if (!part)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (char *slash = strchr(part, '/'); slash && !st; slash = strchr(slash + 1, '/')) {
		char *full;

		*slash = '\0';
		full = path_join(base, part);
		if (!full)
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		else if (t)
			st = add_step(t, part, STEP_MKDIR, err);
		if (!st && mkdir(full, 0777) != 0) {
			int e = errno;

			if (t)
				drop_step(t);
			if (e != EEXIST)
				st = tcx_fail(err, TCX_EIO, "cannot create '%s/%s': %s", base, part,
					      strerror(e));
		}
		free(full);
		*slash = '/';
	}
	free(part);
	return st;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

/* Removes a directory and all in it, without following links. */
static void remove_all(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Removes the directories of earlier files left by an export that was
 * killed while it put its tree in place (their lock is free: no export
 * holds them). */
static void remove_stale_aside(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *path;
		int fd;

		if (strncmp(de->d_name, ASIDE_PREFIX, strlen(ASIDE_PREFIX)) != 0)
			continue;
		path = path_join(dir, de->d_name);
		fd = path ? open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
			tcx_log(TCX_LOG_INFO, "removing '%s', left by an export that was stopped",
				path);
			remove_all(path);
		}
		if (fd >= 0)
			close(fd);
		free(path);
	}
	closedir(d);
}

enum tcx_status export_dir_check(const char *dir, struct tcx_error *err)
{
	char *man = path_join(dir, EXPORT_MANIFEST);
	enum tcx_status st = TCX_OK;
	struct dirent *de;
	struct stat sb;
	DIR *d;

	if (!man)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	/* tcx's own tree: its manifest says which files are tcx's */
	if (lstat(man, &sb) == 0 && S_ISREG(sb.st_mode)) {
		free(man);
		return TCX_OK;
	}
	free(man);
	d = opendir(dir);
	if (!d)
		return TCX_OK; /* missing (made later) or no directory (refused then) */
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			st = tcx_fail(err, TCX_EINVAL,
				      "'%s' is not empty and tcx export-lib did not write it (it "
				      "has no %s): choose another directory, or give --force to "
				      "write into it",
				      dir, EXPORT_MANIFEST);
			break;
		}
	closedir(d);
	return st;
}

enum tcx_status export_tree_create(const char *dir, struct export_tree **out, struct tcx_error *err)
{
	struct export_tree *t = calloc(1, sizeof(*t));
	enum tcx_status st;

	*out = NULL;
	if (!t)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	t->aside_fd = -1;
	t->dir = strdup(dir);
	if (!t->dir) {
		export_tree_destroy(t);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	st = make_root(t, dir, err);
	if (st) {
		export_tree_destroy(t);
		return st;
	}
	remove_stale_aside(dir);
	*out = t;
	return TCX_OK;
}

enum tcx_status export_tree_write(struct export_tree *t, const char *rel, const char *data,
				  size_t len, struct tcx_error *err)
{
	struct entry *files = realloc(t->files, (size_t)(t->nfiles + 1) * sizeof(*files)), *e;
	enum tcx_status st;
	char *path;
	bool bad;

	if (!files)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	t->files = files;
	e = &files[t->nfiles];
	memset(e, 0, sizeof(*e));
	e->rel = strdup(rel);
	path = path_join(t->dir, rel);
	if (!e->rel || !path) {
		free(e->rel);
		free(path);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	t->nfiles++;
	st = make_parents(t, t->dir, rel, err);
	if (!st)
		st = atomic_file_open(&e->af, path, err);
	if (st)
		goto out;
	e->pending = true;
	/* written in full now, so that a full disk or a file-size limit
	 * shows before any file takes its name */
	bad = (len && fwrite(data, 1, len, e->af.fp) != len) || fflush(e->af.fp) != 0 ||
	      fsync(fileno(e->af.fp)) != 0;
	if (!bad && fault_hit(FAULT_WRITE)) {
		errno = ENOSPC; /* TCX_FAULT=write:N: as a full disk */
		bad = true;
	}
	if (bad) {
		st = tcx_fail(err, TCX_EIO, "cannot write '%s': %s", path, strerror(errno));
		atomic_file_abort(&e->af);
		e->pending = false;
	}
out:
	free(path);
	return st;
}

/* Whether a manifest line is a path tcx could have written: relative,
 * components of letters, digits, '_', '-' and '.', none starting with '.'. */
static bool manifest_path_ok(const char *rel)
{
	static const char ok[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.";
	const char *p = rel;

	for (;;) {
		if (*p == '.' || *p == '/' || *p == '\0')
			return false;
		for (; *p && *p != '/'; p++)
			if (!strchr(ok, *p))
				return false;
		if (!*p)
			return true;
		p++;
	}
}

static void free_list(char **list, int n)
{
	for (int k = 0; k < n; k++)
		free(list[k]);
	free(list);
}

/* The files the manifest of the earlier tree lists (none without one, or
 * with one that is not tcx's). */
static enum tcx_status old_files(struct export_tree *t, char ***out, int *n, struct tcx_error *err)
{
	char *path = path_join(t->dir, EXPORT_MANIFEST), *text = NULL, *line, *save = NULL;
	struct tcx_error e2 = {0};
	enum tcx_status st;
	struct stat sb;

	*out = NULL;
	*n = 0;
	if (!path)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	if (lstat(path, &sb) != 0 && errno == ENOENT) {
		free(path);
		return TCX_OK;
	}
	st = common_read_file(path, &text, NULL, &e2);
	if (st) {
		st = tcx_fail(err, st, "%s", e2.msg);
		free(path);
		return st;
	}
	for (line = strtok_r(text, "\n", &save); line && !st; line = strtok_r(NULL, "\n", &save)) {
		char **more;

		if (line[0] == '#')
			continue;
		if (!manifest_path_ok(line)) {
			tcx_log(TCX_LOG_WARN,
				"%s: '%s' is not a file tcx writes: the manifest is ignored, "
				"no file of the earlier tree is removed",
				path, line);
			free_list(*out, *n);
			*out = NULL;
			*n = 0;
			break;
		}
		more = realloc(*out, (size_t)(*n + 1) * sizeof(*more));
		if (more)
			*out = more;
		if (!more || !(more[*n] = strdup(line)))
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		else
			(*n)++;
	}
	free(text);
	free(path);
	return st;
}

/* The path rel has in the directory of earlier files (made, and locked,
 * when first needed, with rel's parents in it). */
static enum tcx_status aside_path(struct export_tree *t, const char *rel, char **out,
				  struct tcx_error *err)
{
	*out = NULL;
	if (!t->aside) {
		t->aside = path_join(t->dir, ASIDE_PREFIX "XXXXXX");
		if (!t->aside)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		if (!mkdtemp(t->aside)) {
			int e = errno;

			free(t->aside);
			t->aside = NULL;
			return tcx_fail(err, TCX_EIO, "cannot write into '%s': %s", t->dir,
					strerror(e));
		}
		t->aside_fd = open(t->aside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (t->aside_fd >= 0)
			flock(t->aside_fd, LOCK_EX | LOCK_NB);
	}
	if (make_parents(NULL, t->aside, rel, err))
		return err ? err->code : TCX_EIO;
	*out = path_join(t->aside, rel);
	return *out ? TCX_OK : tcx_fail(err, TCX_ENOMEM, "out of memory");
}

/* Puts back what the steps changed, last first; the first failure to do so
 * is added to err's message.  Forgets the steps. */
static void roll_back(struct export_tree *t, struct tcx_error *err)
{
	bool reported = false;

	for (int k = t->nsteps - 1; k >= 0; k--) {
		struct step *s = &t->steps[k];
		char *cur = path_join(t->dir, s->rel);
		char *old = t->aside ? path_join(t->aside, s->rel) : NULL;
		bool had = false;
		int r = 0;

		if (s->kind == STEP_PLACED)
			/* the earlier file, linked or moved aside, goes back over it */
			had = k > 0 && strcmp(t->steps[k - 1].rel, s->rel) == 0 &&
			      (t->steps[k - 1].kind == STEP_KEPT ||
			       t->steps[k - 1].kind == STEP_MOVED);
		if (!cur || (!old && (had || s->kind == STEP_MOVED || s->kind == STEP_REMOVED)))
			r = -1;
		else if (s->kind == STEP_MKDIR)
			r = rmdir(cur);
		else if (s->kind == STEP_MOVED || s->kind == STEP_REMOVED || had)
			r = rename(old, cur);
		else if (s->kind == STEP_PLACED)
			r = unlink(cur);
		if (had)
			k--; /* its KEPT or MOVED step is undone with it */
		if (r != 0 && !reported && err) {
			size_t len = strlen(err->msg);

			snprintf(err->msg + len, sizeof(err->msg) - len,
				 "; '%s' of the earlier tree could not be put back: %s", s->rel,
				 strerror(errno));
			reported = true;
		}
		free(cur);
		free(old);
	}
	for (int k = 0; k < t->nsteps; k++)
		free(t->steps[k].rel);
	t->nsteps = 0;
}

/* Takes rel out of the output directory into the directory of earlier
 * files (kind STEP_KEPT: a hard link, the file stays; STEP_MOVED or
 * STEP_REMOVED: renamed). */
static enum tcx_status set_aside(struct export_tree *t, const char *rel, enum step_kind kind,
				 struct tcx_error *err)
{
	char *cur = path_join(t->dir, rel), *old = NULL;
	enum tcx_status st =
	    cur ? aside_path(t, rel, &old, err) : tcx_fail(err, TCX_ENOMEM, "out of memory");

	if (st)
		goto out;
	if (kind == STEP_KEPT && link(cur, old) != 0)
		kind = STEP_MOVED; /* no hard links here: moved aside for a moment */
	st = add_step(t, rel, kind, err);
	if (!st && kind != STEP_KEPT && rename(cur, old) != 0) {
		int e = errno;

		drop_step(t);
		st = tcx_fail(err, TCX_EIO, "cannot replace '%s': %s", cur, strerror(e));
	}
out:
	free(cur);
	free(old);
	return st;
}

/* Gives the new file its name, the earlier file of that name set aside. */
static enum tcx_status place(struct export_tree *t, struct entry *e, struct tcx_error *err)
{
	char *cur = path_join(t->dir, e->rel);
	enum tcx_status st = TCX_OK;
	struct stat sb;

	if (!cur)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	if (lstat(cur, &sb) == 0 && !S_ISDIR(sb.st_mode))
		st = set_aside(t, e->rel, STEP_KEPT, err);
	if (!st)
		st = add_step(t, e->rel, STEP_PLACED, err);
	if (!st) {
		/* atomic_file_commit counts a TCX_FAULT=write:N write of its own */
		e->pending = false;
		st = atomic_file_commit(&e->af, err);
		if (st)
			drop_step(t);
	}
	free(cur);
	return st;
}

static bool listed(const struct export_tree *t, const char *rel)
{
	for (int k = 0; k < t->nfiles; k++)
		if (strcmp(t->files[k].rel, rel) == 0)
			return true;
	return false;
}

/* Removes the directories of rel's parents in the output directory that
 * are empty now (those of a file the earlier tree had, not this one). */
static void remove_empty_parents(struct export_tree *t, const char *rel)
{
	char *part = strdup(rel), *slash;

	while (part && (slash = strrchr(part, '/'))) {
		char *full;
		int r;

		*slash = '\0';
		full = path_join(t->dir, part);
		r = full ? rmdir(full) : -1;
		free(full);
		if (r != 0)
			break;
	}
	free(part);
}

/* Aborts the files not yet named. */
static void abort_pending(struct export_tree *t)
{
	for (int k = 0; k < t->nfiles; k++)
		if (t->files[k].pending) {
			atomic_file_abort(&t->files[k].af);
			t->files[k].pending = false;
		}
}

/* Removes the directory of earlier files and releases its lock. */
static void drop_aside(struct export_tree *t)
{
	if (t->aside)
		remove_all(t->aside);
	if (t->aside_fd >= 0)
		close(t->aside_fd);
	t->aside_fd = -1;
	free(t->aside);
	t->aside = NULL;
}

enum tcx_status export_tree_commit(struct export_tree *t, struct tcx_error *err)
{
	struct strbuf man = STRBUF_INIT;
	char **old = NULL, **removed = NULL;
	int nold = 0, nremoved = 0, nfiles = t->nfiles;
	enum tcx_status st;

	strbuf_addf(&man,
		    "# written by tcx %s export-lib: the files it wrote here, which it replaces "
		    "or removes\n# when it writes this directory again; it leaves all others "
		    "alone\n",
		    tcx_version());
	for (int k = 0; k < nfiles; k++)
		strbuf_addf(&man, "%s\n", t->files[k].rel);
	st = strbuf_status(&man, err);
	if (!st)
		st = old_files(t, &old, &nold, err);
	/* the manifest goes in last: until then the earlier one stands */
	if (!st)
		st = export_tree_write(t, EXPORT_MANIFEST, man.buf, man.len, err);
	for (int k = 0; k < t->nfiles && !st; k++)
		st = place(t, &t->files[k], err);
	for (int k = 0; k < nold && !st; k++) {
		char *cur = path_join(t->dir, old[k]);
		struct stat sb;

		if (!cur)
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		else if (!listed(t, old[k]) && lstat(cur, &sb) == 0 &&
			 (S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode)))
			st = set_aside(t, old[k], STEP_REMOVED, err);
		free(cur);
	}
	if (st) {
		abort_pending(t);
		roll_back(t, err);
	} else {
		t->committed = true;
		removed = old;
		nremoved = nold;
		old = NULL;
		nold = 0;
	}
	drop_aside(t);
	for (int k = 0; k < nremoved; k++)
		if (!listed(t, removed[k]))
			remove_empty_parents(t, removed[k]);
	free_list(old, nold);
	free_list(removed, nremoved);
	strbuf_release(&man);
	return st;
}

void export_tree_destroy(struct export_tree *t)
{
	if (!t)
		return;
	if (!t->committed) {
		/* what was written goes, and the directories made for it */
		abort_pending(t);
		roll_back(t, NULL);
		for (int k = t->nmade - 1; k >= 0; k--)
			rmdir(t->made[k]);
	}
	drop_aside(t);
	for (int k = 0; k < t->nmade; k++)
		free(t->made[k]);
	for (int k = 0; k < t->nfiles; k++)
		free(t->files[k].rel);
	for (int k = 0; k < t->nsteps; k++)
		free(t->steps[k].rel);
	free(t->made);
	free(t->files);
	free(t->steps);
	free(t->dir);
	free(t);
}
