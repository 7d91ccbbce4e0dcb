/* fuzz_kcache.c - fuzz target: the kernel-cache entry reader
 * (kcache_parse_entry, lib/backend/kcache.c), which decides whether the
 * bytes of an entry file are a whole, undamaged binary for a key.  The input
 * is the file's bytes; the key is taken from where the header keeps it (so
 * that the checks behind the key are reached), and a wrong key must always
 * be refused. */
#include "fuzz.h"
#include "backend/kcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kcache_key k, other;
	const unsigned char *bin = (const unsigned char *)1;
	size_t len = 1;
	const char *why;

	memset(&k, 0, sizeof(k));
	if (size >= 32)
		memcpy(k.b, data + 16, 16);
	why = kcache_parse_entry(data, size, &k, &bin, &len);
	if (why) {
		if (bin || len || !*why)
			fuzz_fail("refused entry (%s) with a binary or no reason", why);
	} else {
		if (size < KCACHE_HEADER_SIZE || !bin || bin != data + KCACHE_HEADER_SIZE)
			fuzz_fail("accepted entry of %zu bytes, binary at the wrong place", size);
		if (len == 0 || len != size - KCACHE_HEADER_SIZE)
			fuzz_fail("accepted entry of %zu bytes with a binary of %zu", size, len);
		{
			/* every byte of the binary lies inside the input (ASan) */
			volatile uint64_t h = common_hash64(bin, len, 0);

			(void)h;
		}
	}
	other = k;
	other.b[0] ^= 0x5a;
	why = kcache_parse_entry(data, size, &other, &bin, &len);
	if (!why)
		fuzz_fail("an entry was accepted for a key it does not carry");
	return 0;
}
