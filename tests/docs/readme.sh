#!/bin/bash
# readme.sh - the README, from top to bottom, run as written in a fresh copy
# of the repository, as a new user would: every command of its `sh` and
# `console` blocks runs, in order, in one shell (an `export` holds for the
# commands after it), from the copy's top folder, and must exit 0; where a
# `console` block shows output, the command must print it.
#
# The copy holds the files git tracks (the working tree's versions), with
# the tcx under test first on PATH as `tcx`, so nothing is rebuilt; HOME and
# XDG_CACHE_HOME are empty folders of its own, so that the results store and
# the kernel cache start empty as on a new machine.
#
# What the README's blocks mean here:
#   ```sh        each line is a command (a line ending in \ goes on); lines
#                starting with # are comments; nothing shown is checked
#   ```console   "$ COMMAND" lines are commands (a line ending in \ goes on
#                to the next); the lines up to the next "$ " are what the
#                command prints, stdout and stderr together
#   other blocks (```c, ```cmake) are not commands and are not run
#   <!-- replay: skip (REASON) -->  on the line before a block: the block is
#                not run; REASON says why (a GPU, root, the setup CI itself
#                runs, a test that covers it), and a skip without one fails
#
# Shown output is compared line by line: each shown line must be a line of
# the output, in the order shown.  Output the README leaves out (it says
# "output trimmed") may come between and after them; within a shown line,
# `...` stands for any text (a timing, a device's name, a tuned winner:
# what differs from one run or machine to the next), and everything else
# must be as shown, spaces included.
#
# TCX_README_FILE replays another file instead of the README (the test of
# this test).  Needs TCX and TCX_SOURCE_DIR, an OpenCL device (PoCL), CMake,
# a C compiler and pkg-config, as the README's worked example does.
. "${TCX_SOURCE_DIR:?}/tests/cli/lib.sh"
src=$TCX_SOURCE_DIR
readme=${TCX_README_FILE:-$src/README.md}
py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3) || { echo "skipped: no python3"; exit 77; }
"$TCX" devices 2>/dev/null | grep -q '^opencl:' || { echo "skipped: no OpenCL device"; exit 77; }
for tool in cmake cc pkg-config; do
	command -v $tool >/dev/null || { echo "skipped: no $tool"; exit 77; }
done

# the copy: the files git tracks, else the whole tree but build folders
work=$scratch/tcx
mkdir -p "$work" "$scratch/bin" "$scratch/home"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached | xargs -0 tar -cf - --no-recursion) |
		tar -xf - -C "$work" || { echo "FAIL: cannot copy the tracked files"; exit 1; }
else
	tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$work"
fi
ln -s "$TCX" "$scratch/bin/tcx"

# the README as a script: replay.sh runs each command and checks it
$py - "$readme" >"$scratch/replay.sh" <<'EOF' || { echo "FAIL: cannot read the README's blocks"; exit 1; }
import re, shlex, sys

path = sys.argv[1]
lines = open(path, encoding="utf-8").read().split("\n")
out = []
skip_re = re.compile(r"^<!--\s*replay:\s*skip\s*(\((.*)\))?\s*-->\s*$")
bad = 0
i = 0
blocks = 0
while i < len(lines):
    m = re.match(r"^```(\w*)\s*$", lines[i])
    if not m:
        i += 1
        continue
    lang, start = m.group(1), i
    j = i + 1
    while j < len(lines) and not lines[j].startswith("```"):
        j += 1
    body = lines[i + 1:j]
    i = j + 1
    if lang not in ("sh", "console"):
        continue
    blocks += 1
    prev = start - 1
    while prev >= 0 and not lines[prev].strip():
        prev -= 1
    sk = skip_re.match(lines[prev]) if prev >= 0 else None
    if sk:
        reason = (sk.group(2) or "").strip()
        if not reason:
            print("echo 'FAIL: %s:%d: a replay skip without a reason'; failures=$((failures + 1))"
                  % (path, start + 1))
        else:
            print("echo %s" % shlex.quote("skipped %s:%d (%s)" % (path, start + 1, reason)))
        continue
    k = 0
    while k < len(body):
        line = body[k]
        if lang == "sh":
            if not line.strip() or line.lstrip().startswith("#"):
                k += 1
                continue
            cmd_start = k
            cmd = [line]
        else:
            if not line.startswith("$ "):
                print("echo %s; failures=$((failures + 1))" % shlex.quote(
                    "FAIL: %s:%d: output before any command: %s" % (path, start + 2 + k, line)))
                k += 1
                continue
            cmd_start = k
            cmd = [line[2:]]
        while cmd[-1].endswith("\\") and k + 1 < len(body):
            k += 1
            cmd.append(body[k])
        k += 1
        expect = []
        if lang == "console":
            while k < len(body) and not body[k].startswith("$ "):
                expect.append(body[k])
                k += 1
        text = "\n".join(cmd)
        where = "%s:%d" % (path, start + 2 + cmd_start)
        print("cat >\"$scratch/expect\" <<'__README_EXPECT__'")
        print("\n".join(expect + ["__README_EXPECT__"]) if expect else "__README_EXPECT__")
        print("t0=$EPOCHREALTIME")
        print("{\n%s\n} >\"$scratch/out\" 2>&1 </dev/null" % text)
        print("step $? %s %s" % (shlex.quote(where), shlex.quote(text)))
print("replayed_blocks=%d" % blocks)
EOF

# bad MESSAGE: counts and prints a failure
bad() {
	failures=$((failures + 1))
	echo "FAIL: $*"
}

# matches OUT EXPECT: each line of EXPECT is a line of OUT, in order, `...`
# standing for any text
matches() {
	$py - "$1" "$2" <<'EOF'
import re, sys
out = open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n")
want = open(sys.argv[2], encoding="utf-8").read().split("\n")
if want and want[-1] == "":
    want.pop()
pos = 0
for w in want:
    pat = re.compile("^" + ".*".join(re.escape(p) for p in w.split("...")) + "$")
    while pos < len(out) and not pat.match(out[pos]):
        pos += 1
    if pos == len(out):
        print("  shown but not printed (or not in this order): %s" % w)
        sys.exit(1)
    pos += 1
EOF
}

# step RC WHERE COMMAND: the command at WHERE exited with RC, its output in
# $scratch/out; it must be 0, and the output must show $scratch/expect.
# Says how long it took ($t0: when it started).
step() {
	local rc=$1 where=$2 cmd=$3
	local ms=$(((${EPOCHREALTIME/./} - ${t0/./}) / 1000))
	printf 'ran %s in %d.%01d s\n' "${where#"$src/"}" $((ms / 1000)) $((ms % 1000 / 100))
	checks=$((checks + 1))
	if [ "$rc" -ne 0 ]; then
		bad "$where: exit $rc: $cmd"
		sed 's/^/  | /' "$scratch/out" | tail -n 30
	elif [ -s "$scratch/expect" ]; then
		checks=$((checks + 1))
		if ! matches "$scratch/out" "$scratch/expect"; then
			bad "$where: the output differs from the README's: $cmd"
			sed 's/^/  | /' "$scratch/out" | head -n 40
		fi
	fi
}

cd "$work" || exit 1
export PATH="$scratch/bin:$PATH" HOME=$scratch/home XDG_CACHE_HOME=$scratch/home/.cache
unset PKG_CONFIG_PATH LD_LIBRARY_PATH
replayed_blocks=0
t0=$EPOCHREALTIME # each command's start, set by replay.sh
# shellcheck disable=SC1091
. "$scratch/replay.sh"
checks=$((checks + 1))
[ "$replayed_blocks" -gt 0 ] || bad "no sh or console block in $readme"
cd "$scratch" || exit 1
done_testing
