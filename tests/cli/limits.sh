#!/bin/bash
# limits.sh - inputs at and past tcx's limits that need more than one
# command line to set up: a read-only query leaves an empty file or another
# program's database as it was.
. "$(dirname "$0")/lib.sh"
export XDG_CACHE_HOME=$scratch/cache TCX_NO_KERNEL_CACHE=1

# ---- read-only queries --------------------------------------------------------
: >empty.db
sqlite3 other.db 'PRAGMA user_version = 7;'
sqlite3 tables.db 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'
for f in empty.db other.db tables.db; do
	sum=$(md5sum <"$f")
	run results --db "$f"
	expect_rc 2 "tcx results --db $f"
	expect_err "'$f' is (a SQLite database but )?not a tcx results store" "$f is refused"
	checks=$((checks + 1))
	[ "$(md5sum <"$f")" = "$sum" ] || fail "tcx results --db $f changed it"
	checks=$((checks + 1))
	[ -z "$(ls "$f"-* 2>/dev/null)" ] || fail "tcx results --db $f left $(ls "$f"-*)"
done

done_testing
