#!/bin/bash
# fsize.sh - a really full disk, without injection: tcx under a file-size
# limit (ulimit -f), with SIGXFSZ as the shell leaves it.  tcx ignores the
# signal itself, so that a write past the limit fails with EFBIG ("File too
# large") as it would with ENOSPC, instead of killing tcx with no word
# (exit 153).  `tcx tune` is limited so that the results store cannot be
# opened for writing at all, then so that it takes some measurements and
# not the next: tune exits 2 naming the store, the store passes SQLite's
# integrity_check, `tcx results` lists it, the measurements it held before
# are there unchanged, no logic file is written and none is left
# half-written, and once the disk has room again the same tune completes.
# Then the writing commands (tune, results merge, run -o, logic export and
# import, export-lib) run with a limit below their output: each exits 2
# naming its file and the reason, and leaves the earlier output whole.
# (The commands whose outputs are smaller than the temporary files PoCL's
# compiler writes for every kernel cannot be limited alone: fullfs.sh
# fills a disk apart from PoCL's cache for them.)  Needs no
# TCX_FAULT_INJECTION.
. "$(dirname "$0")/lib.sh"
need_opencl
need_tools sqlite3 python3
# the kernel caches would take writes of their own: tcx's is off, PoCL's is
# this test's, warmed below, so that only the store and outputs write
export TCX_NO_KERNEL_CACHE=1 POCL_CACHE_DIR="$scratch/pocl"
tiny_config tiny.yaml
# the same candidates at another size: three measurements the store lacks
sed 's/Exact: \[ 32, 32, 16 \]/Exact: [ 64, 32, 16 ]/' tiny.yaml >more.yaml

# limited KIB ARGS...: run tcx ARGS with files limited to KIB KiB and
# SIGXFSZ left alone (stdout goes to /dev/null and stderr through a pipe,
# which the limit does not touch)
limited() {
	local kib=$1

	shift
	(
		ulimit -f "$kib"
		exec "$TCX" "$@" 2>&1 >/dev/null
	) | cat >"$scratch/.err"
	rc=${PIPESTATUS[0]}
	out=""
	err=$(cat "$scratch/.err")
	checks=$((checks + 1))
	[ "$rc" -ne 153 ] || fail "tcx $1 was killed by SIGXFSZ"
}

# the store as it was before the disk filled up: three measurements, and
# the logic written from them
run tune --db store.db -o logic tiny.yaml
expect_rc 0 "tune with room on the disk"
checks=$((checks + 1))
[ "$(rows store.db)" = 3 ] || fail "the first tune stored $(rows store.db) measurements, not 3"
sqlite3 store.db 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
earlier=$(sqlite3 store.db "SELECT * FROM measurements WHERE sizes = '32,32,16' ORDER BY solution;")
logicfile=$(ls logic/*_Cij_Aik_Bkj_S.yaml)
logicsum=$(md5sum <"$logicfile")
# PoCL compiles the kernels of more.yaml once, with room, into its cache
run tune --db warm.db -o warm more.yaml
expect_rc 0 "tune more.yaml with room on the disk (warming PoCL's cache)"
rm -rf warm warm.db*

# expect_store_kept WHAT: the store opens, passes its check and still holds
# the earlier measurements unchanged; no logic was written, none changed
expect_store_kept() {
	expect_store_ok store.db
	checks=$((checks + 1))
	[ "$(sqlite3 store.db "SELECT * FROM measurements WHERE sizes = '32,32,16' ORDER BY solution;")" = "$earlier" ] ||
		fail "$1: the earlier measurements changed or are gone"
	checks=$((checks + 1))
	[ "$(ls logic)" = "$(basename "$logicfile")" ] ||
		fail "$1: tune wrote logic after a failed store: $(ls logic)"
	expect_same "$logicfile" "$logicsum"
	expect_no_temps
}

# 4 KiB: not even SQLite's write-ahead index (32 KiB) fits, so the store
# cannot be opened for writing at all
limited 4 tune --db store.db -o logic more.yaml
expect_rc 2 "tune with 4 KiB files allowed"
expect_err "results store 'store.db'.*File too large" "tune names the store and why"
expect_store_kept "4 KiB"
checks=$((checks + 1))
[ "$(rows store.db)" = 3 ] || fail "4 KiB: the store holds $(rows store.db) measurements, not 3"

# 32 KiB: the index fits and the store takes some measurements, then its
# log cannot grow and the next one cannot be stored
limited 32 tune --db store.db -o logic more.yaml
expect_rc 2 "tune with 32 KiB files allowed"
expect_err "cannot write results store 'store.db'.*File too large" "tune names the store"
expect_store_kept "32 KiB"
checks=$((checks + 1))
n=$(rows store.db)
[ "$n" -ge 3 ] && [ "$n" -lt 6 ] ||
	fail "32 KiB: the store holds $n measurements: the limit did not bite, or lost rows"

# room again: the same tune completes, measuring only what is missing
run tune --db store.db -o logic more.yaml
expect_rc 0 "tune once the disk has room again"
expect_store_ok store.db
checks=$((checks + 1))
[ "$(rows store.db)" = 6 ] || fail "the store holds $(rows store.db) measurements, not 6"
checks=$((checks + 1))
grep -q 'tcx-logic' "$logicfile" || fail "the logic file is not whole"
expect_no_temps

# the writing commands, each limited below its output
writers_setup "$scratch/w"
writers_check limited "File too large" "$scratch/w"
writers_kept "$scratch/w"
done_testing
