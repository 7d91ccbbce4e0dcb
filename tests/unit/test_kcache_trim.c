/* test_kcache_trim.c - the kernel cache's size cap (kcache_trim): over the
 * cap, the least recently used entries go first, down to three quarters of
 * it; a hit (kcache_load) makes an entry recent; files that are not entries
 * stay; $TCX_KERNEL_CACHE_MAX sets the cap. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "backend/kcache.h"

#define NENTRIES  8
#define BIN_BYTES 1000

static char dir[256];

static void key_of(int i, struct kcache_key *k)
{
	memset(k, 0, sizeof(*k));
	k->b[0] = (uint8_t)(0x40 + i);
	k->b[15] = 0x5a;
}

static bool exists(int i)
{
	struct kcache_key k;
	struct strbuf p = STRBUF_INIT;
	bool yes;

	key_of(i, &k);
	kcache_entry_path(dir, &k, &p);
	yes = access(strbuf_str(&p), F_OK) == 0;
	strbuf_release(&p);
	return yes;
}

/* Sets entry i's last use to `age` seconds in the past. */
static void set_age(int i, int age)
{
	struct kcache_key k;
	struct strbuf p = STRBUF_INIT;
	struct timespec ts[2];

	key_of(i, &k);
	kcache_entry_path(dir, &k, &p);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age;
	ts[1] = ts[0];
	CHECK(utimensat(AT_FDCWD, strbuf_str(&p), ts, 0) == 0);
	strbuf_release(&p);
}

static uint64_t entry_bytes(void)
{
	return KCACHE_HEADER_SIZE + BIN_BYTES;
}

int main(void)
{
	struct pcg32 rng;
	unsigned char bin[BIN_BYTES];
	struct tcx_error err;
	char other[300];
	int removed = -1;
	FILE *fp;

	snprintf(dir, sizeof(dir), "%s/tcx-kcache-trim-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		SKIP("cannot make a temporary directory");
	pcg32_seed(&rng, 7, 1);
	for (int i = 0; i < NENTRIES; i++) {
		struct kcache_key k;

		for (size_t b = 0; b < sizeof(bin); b++)
			bin[b] = (unsigned char)pcg32_next(&rng);
		key_of(i, &k);
		CHECK(kcache_store(dir, &k, bin, sizeof(bin), &err) == TCX_OK);
		set_age(i, 1000 - 100 * i); /* entry 0 the oldest */
	}
	/* a file that is not an entry, older than all */
	snprintf(other, sizeof(other), "%s/README", dir);
	fp = fopen(other, "w");
	CHECK(fp != NULL);
	if (fp) {
		fputs("not an entry\n", fp);
		fclose(fp);
	}

	/* under the cap: nothing goes */
	CHECK(kcache_trim(dir, NENTRIES * entry_bytes(), &removed, &err) == TCX_OK);
	CHECK(removed == 0);
	for (int i = 0; i < NENTRIES; i++)
		CHECK(exists(i));

	/* entry 1 is used now: it becomes the most recent */
	{
		struct kcache_key k;
		unsigned char *got = NULL;
		size_t len = 0;

		key_of(1, &k);
		CHECK(kcache_load(dir, &k, &got, &len, &err) == TCX_OK && got && len == BIN_BYTES);
		free(got);
	}

	/* a cap of 6 entries with 8 stored: down to 3/4 of it, 4.5 entries, so
	 * four stay: the most recently used, 1, 7, 6, 5 */
	CHECK(kcache_trim(dir, 6 * entry_bytes(), &removed, &err) == TCX_OK);
	CHECK(removed == 4);
	CHECK(!exists(0) && !exists(2) && !exists(3) && !exists(4));
	CHECK(exists(1) && exists(5) && exists(6) && exists(7));
	CHECK(access(other, F_OK) == 0);

	/* no cap */
	CHECK(kcache_trim(dir, 0, &removed, &err) == TCX_OK && removed == 0);
	/* a missing directory is an empty cache */
	CHECK(kcache_trim("/nonexistent/tcx-kcache", 1, &removed, &err) == TCX_OK);

	/* the cap from the environment */
	unsetenv("TCX_KERNEL_CACHE_MAX");
	CHECK(kcache_max_bytes() == KCACHE_DEFAULT_MAX);
	setenv("TCX_KERNEL_CACHE_MAX", "512M", 1);
	CHECK(kcache_max_bytes() == (uint64_t)512 << 20);
	setenv("TCX_KERNEL_CACHE_MAX", "2GiB", 1);
	CHECK(kcache_max_bytes() == (uint64_t)2 << 30);
	setenv("TCX_KERNEL_CACHE_MAX", "64k", 1);
	CHECK(kcache_max_bytes() == (uint64_t)64 << 10);
	setenv("TCX_KERNEL_CACHE_MAX", "3g", 1);
	CHECK(kcache_max_bytes() == (uint64_t)3 << 30);
	setenv("TCX_KERNEL_CACHE_MAX", "12345", 1);
	CHECK(kcache_max_bytes() == 12345);
	setenv("TCX_KERNEL_CACHE_MAX", "0", 1);
	CHECK(kcache_max_bytes() == 0);
	setenv("TCX_KERNEL_CACHE_MAX", "lots", 1);
	CHECK(kcache_max_bytes() == KCACHE_DEFAULT_MAX);
	setenv("TCX_KERNEL_CACHE_MAX", "99999999999999999999G", 1);
	CHECK(kcache_max_bytes() == KCACHE_DEFAULT_MAX);

	/* clean up */
	for (int i = 0; i < NENTRIES; i++) {
		struct kcache_key k;

		key_of(i, &k);
		kcache_remove(dir, &k, NULL);
	}
	unlink(other);
	rmdir(dir);
	return check_done();
}
