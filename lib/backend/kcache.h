/* kcache.h - the on-disk cache of compiled kernels: program binaries under
 * $XDG_CACHE_HOME/tcx/kernels (default ~/.cache/tcx/kernels), keyed by the
 * backend, the device's name and architecture, its driver version, the
 * kernel source and the build options, so that a second run of the same
 * kernels loads them instead of compiling them.
 *
 * An entry is one file, <32 hex digits of the key>.bin: a 48-byte header
 * followed by the binary.  The header, little-endian:
 *
 *   0  magic "TCXKBIN\0"        8 bytes
 *   8  format version (1)       u32
 *  12  header size (48)         u32
 *  16  key                      16 bytes (repeats the file name)
 *  32  binary length            u64
 *  40  FNV-1a 64 of the binary  u64
 *
 * Entries are written to a temporary file beside their place and renamed
 * into it, so readers never see half an entry.  An entry that is truncated,
 * too long, from another format version or fails its checksum is removed
 * and reported as TCX_ECORRUPT; the caller compiles the kernel again.  A hit
 * sets the entry's modification time to now, so that a size cap can evict
 * the least recently used entries first.
 *
 * device_build() (backend.c) is the user: memory cache, then this cache,
 * then the compiler.  TCX_NO_KERNEL_CACHE=1 in the environment turns the
 * disk cache off for the whole process.
 */
#ifndef TCX_KCACHE_H
#define TCX_KCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

struct device_info;

#define KCACHE_MAGIC "TCXKBIN"
#define KCACHE_VERSION 1
#define KCACHE_HEADER_SIZE 48
/* Binaries above this size are neither stored nor trusted when read. */
#define KCACHE_MAX_BINARY ((uint64_t)1 << 30)

struct kcache_key {
	uint8_t b[16];
};

/* The directory of one of tcx's cache areas, "$XDG_CACHE_HOME/tcx/<sub>"
 * (XDG_CACHE_HOME unset or not absolute: "$HOME/.cache"), appended to out.
 * sub may be "" for the tcx directory itself.  Creates nothing.  TCX_EIO
 * when neither variable gives a place. */
enum tcx_status tcx_cache_path(const char *sub, struct strbuf *out, struct tcx_error *err);

/* True when $TCX_NO_KERNEL_CACHE is set to anything but "" or "0". */
bool kcache_disabled_by_env(void);

/* The key of a kernel: backend, device name, architecture, driver, build
 * options and source. */
void kcache_key_make(const struct device_info *di, const char *src, size_t len, const char *opts,
		     struct kcache_key *out);
/* 32 lowercase hex digits and a NUL. */
void kcache_key_hex(const struct kcache_key *k, char out[33]);

/* Reads entry k from dir.  TCX_OK with *bin set (a heap copy the caller
 * frees) and *len on a hit, or with *bin NULL when there is no entry.
 * TCX_ECORRUPT when the entry is damaged: it has been removed and err says
 * what was wrong.  TCX_EIO when it exists but cannot be read. */
enum tcx_status kcache_load(const char *dir, const struct kcache_key *k, unsigned char **bin,
			    size_t *len, struct tcx_error *err);

/* Checks the n bytes of an entry file (read whole) against key k, in
 * memory.  NULL when they are a valid entry: *bin then points at the binary
 * inside `data` (borrowed) and *len is its length.  Else the reason the
 * entry is damaged ("truncated header", "checksum mismatch", ...), with
 * *bin NULL.  Reads nothing outside data[0..n).  For kcache_load's checks
 * and the fuzz target (tests/fuzz/fuzz_kcache.c). */
const char *kcache_parse_entry(const void *data, size_t n, const struct kcache_key *k,
			       const unsigned char **bin, size_t *len);

/* Writes entry k into dir (created when missing), atomically. */
enum tcx_status kcache_store(const char *dir, const struct kcache_key *k, const unsigned char *bin,
			     size_t len, struct tcx_error *err);

/* Removes entry k from dir; a missing entry is not an error. */
enum tcx_status kcache_remove(const char *dir, const struct kcache_key *k,
			      struct tcx_error *err);

/* The size cap (kcache_trim.c).  $TCX_KERNEL_CACHE_MAX sets it in bytes,
 * with an optional K, M or G (KiB, MiB, GiB); 0 means no cap; unset or
 * malformed, KCACHE_DEFAULT_MAX. */
#define KCACHE_DEFAULT_MAX ((uint64_t)1 << 30)
uint64_t kcache_max_bytes(void);

/* Keeps the entries in dir (the files named like entries; nothing else is
 * touched) within max_bytes: when they are over it, removes the least
 * recently used (the oldest modification time; a hit touches its entry)
 * until they fit in three quarters of it, so that the next stores need not
 * trim again.  *removed (NULL allowed) counts the entries removed.  A
 * missing dir is empty; max_bytes 0 does nothing.  device_build calls it
 * after each store. */
enum tcx_status kcache_trim(const char *dir, uint64_t max_bytes, int *removed,
			    struct tcx_error *err);

/* The path of entry k in dir, appended to out. */
void kcache_entry_path(const char *dir, const struct kcache_key *k, struct strbuf *out);

#endif /* TCX_KCACHE_H */
