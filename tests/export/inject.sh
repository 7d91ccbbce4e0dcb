#!/bin/bash
# inject.sh - no text from a logic file or its path can end a literal or a
# comment in the generated library: a logic whose every string field (the
# device's name, vendor, architecture, backend and driver, DeviceNames, the
# schedule, the solution names, the expression's white space, the creation
# notes) and whose file name hold trigraphs (??/ is a backslash under
# -std=c99), quotes, backslashes, newlines, comment delimiters, control
# bytes next to NUL, UTF-8, template markers and a payload that once put a
# load-time constructor into the library (it prints INJECTED and exits 99
# if it runs) is exported; the tree builds with -pedantic -Wall -Wextra
# -Werror (C99 with trigraphs; the header also as C89 and C++11); the
# client loads the library and runs; every string reaches the library's
# tables byte for byte; no trigraph, control byte or payload is left in
# any generated file or kernel prelude; a NUL in a field does not get
# through either.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/common.sh"
echo '#include <CL/cl.h>' | "$cc_cmd" -E - >/dev/null 2>&1 ||
	{ echo "skipped: no OpenCL headers (CL/cl.h)"; exit 77; }
strict="-pedantic -Wall -Wextra -Werror"

# the hostile logic (JSON, which tcx reads as YAML) and what the library
# must hold: expected.txt, one "field<TAB>hex of the bytes" line each
python3 - <<'PY'
import json
payload = (', 0 }; static const char tl_pwn_m[] = { 73, 78, 74, 69, 67, 84, 69, 68, 0 }; '
           '__attribute__((constructor)) static void tl_pwn(void) '
           '{ __builtin_puts(tl_pwn_m); __builtin_exit(99); } '
           'static const char *const tl_pwn_q[] = { 0 }; //')
nasty = 'q"uote\\back\\\\slash\\"??/\n*/ /* // ??= ??( ??) ??< ??> ??\' ??! ??- %s%n @TL_PREFIX@ ${X} \t\r'
names = {
    "device": 'x??/"; __attribute__((constructor)) static void tl_pwn2(void) '
              '{ __builtin_exit(99); } static const char *tl_pwn2_q = "??/',
    "vendor": 'v\x01\x1f\x7f\u00ff\u2028\u00e9\u20ac end??/',
    "arch": nasty,
    "names": ['x??/', payload, 'q"??/', '*/', 'default??/'],
    "sols": ['gsu2-lds??/', 'lsu2"*/\n#define X ??/'],
}
logic = {
    "tcx-logic": 1,
    "device": {"name": names["device"], "vendor": names["vendor"], "arch": names["arch"],
               "backend": nasty, "driver": 'd??/\n*/', "compute_units": 4},
    "schedule": 'sched??/"\n*/',
    "device_names": names["names"],
    "problem": {"expression": 'C[ijk] =\n\tSum[l] A[ilk]\r* B[jlk]', "type": "s"},
    "solutions": [
        {"name": names["sols"][0],
         "parameters": {"WorkGroup": [4, 4, 1], "ThreadTile": [2, 2], "DepthU": 8,
                        "VectorWidth": 2, "GlobalSplitU": 2, "UseLDS": True,
                        "PrefetchGlobalRead": True, "PrefetchLocalRead": True}},
        {"name": names["sols"][1],
         "parameters": {"WorkGroup": [2, 2, 2], "ThreadTile": [4, 2], "DepthU": 8,
                        "VectorWidth": 2, "UseLDS": True, "PrefetchGlobalRead": False,
                        "PrefetchLocalRead": False}},
    ],
    "exact": [{"sizes": [29, 17, 3, 13], "solution": 0, "gflops": 1},
              {"sizes": [33, 9, 2, 20], "solution": 1, "gflops": 1}],
    "range": None, "selector": None,
    "created": {"tcx_version": 'v??/"\n', "date": '*/??/'},
}
# the path: everything a path may hold (its directories make "??/" and "*/")
import os
os.makedirs('in??/e*')
fname = 'in??/e*/v"il\\ \n#??=.yaml'
open(fname, "w").write(json.dumps(logic, indent=1))
open("fname.txt", "w").write(fname)
rows = [("logic", os.path.basename(fname)), ("device", names["device"]), ("vendor", names["vendor"]),
        ("arch", names["arch"]), ("expression", logic["problem"]["expression"])]
rows += [("device_names", n) for n in names["names"]]
rows += [("solution", n) for n in names["sols"]]
with open("expected.txt", "w") as f:
    for k, v in rows:
        f.write("%s\t%s\n" % (k, v.encode().hex()))
PY
logic=$(cat fname.txt)

run export-lib "$logic" -o lib --name tcxi --selector logic
expect_rc 0 "export-lib of the hostile logic"

# the header as C89 and C++11 (trigraphs on in both), the tree with CMake
printf '#include "tcxi.h"\nint main(void) { return tcxi_problem_count() - 1; }\n' >h.c
check "header as C89" "$cc_cmd" -std=c89 $strict -fsyntax-only -Ilib/include h.c
if command -v c++ >/dev/null; then
	cp h.c h.cpp
	check "header as C++11" c++ -std=c++11 $strict -fsyntax-only -Ilib/include h.cpp
fi
build_tree lib build "$scratch/prefix" "$strict" || finish

# the client loads the library: no constructor of the payload runs
check "client --list" build/tcxi-client --list
checks=$((checks + 1))
printf '%s' "$out" | grep -q INJECTED && fail "the payload ran: $out"
if "$TCX" devices 2>/dev/null | grep -q '^opencl:'; then
	check "client validates through the library" build/tcxi-client --sizes 29,17,3,13
	checks=$((checks + 1))
	printf '%s' "$out" | grep -q INJECTED && fail "the payload ran: $out"
fi

# every string, byte for byte, in the tables
cat >strings.c <<'C'
#include "tcxi.c"
static void hex(const char *field, const char *s)
{
	printf("%s\t", field);
	for (; *s; s++)
		printf("%02x", (unsigned char)*s);
	printf("\n");
}
int main(void)
{
	const struct tl_type *T = &tl_types[0];
	const struct tl_variant *v = &T->variants[0];
	int k;

	hex("logic", v->logic);
	hex("device", v->device_name);
	hex("vendor", v->vendor);
	hex("arch", v->architecture);
	hex("expression", T->info.expression);
	for (k = 0; k < v->ndevice_names; k++)
		hex("device_names", v->device_names[k]);
	for (k = 0; k < T->nkernels; k++)
		hex("solution", T->kernels[k].name);
	return 0;
}
C
check "build the strings' check" "$cc_cmd" -std=c99 $strict -D_POSIX_C_SOURCE=200809L \
	-DCL_TARGET_OPENCL_VERSION=120 -Ilib/src -Ilib/include strings.c -o strings \
	-lOpenCL -lpthread -lm &&
	check "run the strings' check" ./strings &&
	{
		printf '%s\n' "$out" >got.txt
		check "every string byte for byte" diff expected.txt got.txt
	}

# nothing of the attack is left as text anywhere in the tree, nor in the
# kernels' #define preludes (byte arrays)
checks=$((checks + 3))
grep -rlF '??' lib && fail "a trigraph's '??' is left in the files above"
grep -rlP '[\x00-\x08\x0b-\x1f\x7f]' lib && fail "control bytes are left in the files above"
python3 - lib/src/tcxi.c <<'PY' || fail "a kernel prelude holds text of the logic"
import re, sys
src = open(sys.argv[1]).read()
arrays = re.findall(r"static const unsigned char (tl_t\d+_k\d+_\w+)\[\d+\] = \{([^}]*)\}", src)
if not arrays:
    sys.exit("no prelude arrays found")
for name, body in arrays:
    data = bytes(int(x) for x in body.replace("\n", "").split(",") if x.strip())
    for bad in (b"??", b"pwn", b"INJECTED", b"quote", b"sched", b"gsu2-lds", b"lsu2"):
        if bad in data:
            sys.exit("%s holds %r" % (name, bad))
PY

# a NUL in a field: refused, or nothing after it reaches the library
python3 - "$logic" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
l["device"]["name"] = 'nul\u0000??/" pwn_after_nul'
l["solutions"][0]["name"] = 'sol\u0000*/ pwn_after_nul'
open("nul.yaml", "w").write(json.dumps(l))
PY
run export-lib nul.yaml -o nul --name tcxn --selector logic
if [ "$rc" -eq 0 ]; then
	checks=$((checks + 1))
	grep -rl 'pwn_after_nul' nul && fail "text after a NUL reached the library"
	check "the library with a NUL in its logic" "$cc_cmd" -std=c99 $strict \
		-D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 -Inul/include -Inul/src \
		-fsyntax-only nul/src/tcxn.c
else
	expect_rc 2 "export-lib refuses a NUL in a field"
fi
finish
