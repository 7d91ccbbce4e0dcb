/* regress_main.c - runs a fuzz target without libFuzzer: feeds it every file
 * under the directories (or the files) named on the command line, in sorted
 * order, so that crash inputs kept in tests/fuzz/regress/<target>/ and the
 * seed corpus are checked in every build, sanitizers included.  A missing
 * directory counts as empty, but no input at all is a failure.  Exit 0 when
 * every input ran; a crash is the sanitizer's or abort()'s. */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include "fuzz.h"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_file(const char *path)
{
	char *data = NULL;
	size_t len = 0;
	struct tcx_error err;
	uint8_t *copy;

	if (common_read_file(path, &data, &len, &err) != TCX_OK) {
		fprintf(stderr, "regress: %s\n", err.msg);
		return -1;
	}
	/* an exact-size heap copy, so that ASan catches reads past the end */
	copy = malloc(len ? len : 1);
	if (!copy) {
		free(data);
		return -1;
	}
	memcpy(copy, data, len);
	free(data);
	fprintf(stderr, "regress: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
	return 0;
}

static int run_dir(const char *dir, int *count)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int bad = 0;

	if (!d) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "regress: cannot open '%s': %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "README") == 0)
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));

			if (!p)
				abort();
			names = p;
		}
		names[n] = malloc(strlen(dir) + strlen(de->d_name) + 2);
		if (!names[n])
			abort();
		sprintf(names[n], "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t k = 0; k < n; k++) {
		struct stat sb;

		if (stat(names[k], &sb) == 0 && S_ISREG(sb.st_mode)) {
			if (run_file(names[k]))
				bad = -1;
			else
				(*count)++;
		}
		free(names[k]);
	}
	free(names);
	return bad;
}

int main(int argc, char **argv)
{
	int count = 0, bad = 0;

	for (int k = 1; k < argc; k++) {
		struct stat sb;

		if (stat(argv[k], &sb) == 0 && S_ISREG(sb.st_mode)) {
			if (run_file(argv[k]))
				bad = 1;
			else
				count++;
		} else if (run_dir(argv[k], &count)) {
			bad = 1;
		}
	}
	fprintf(stderr, "regress: %d inputs ran\n", count);
	if (count == 0) {
		/* the seed corpus always has inputs: none means a wrong path */
		fprintf(stderr, "regress: no inputs found\n");
		return 1;
	}
	return bad;
}
