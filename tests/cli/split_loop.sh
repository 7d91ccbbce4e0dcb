#!/bin/bash
# split_loop.sh - the second main loop that GPUs get (interior tiles read
# whole aligned vectors, without bounds checks), forced on the CPU device
# with TCX_SPLIT_LOOP=1 so that CI validates it: interior and edge tiles,
# aligned and unaligned operands, s and d, beta zero and not.  CPU devices
# do without it by default (it slows PoCL's compile several times over).
. "$(dirname "$0")/lib.sh"

# Each kernel here is built once: tcx's kernel cache would only add PoCL's
# build for a generic work-group size when it reads the binary to store it,
# more than half of this test's time with the second loop's long kernels.
export TCX_NO_KERNEL_CACHE=1

p='UseLDS=True,WorkGroup=[8,8,1],ThreadTile=[4,4],VectorWidth=4,DepthU=8'
p+=',PrefetchGlobalRead=True,PrefetchLocalRead=True,LdsPad=4'

# the generated source has the second loop only when asked
TCX_DUMP_KERNELS=$scratch/k0 run validate 'C[ij]=A[ik]*B[kj]' --sizes i=96,j=70,k=40 \
	--params "$p" --beta 0.5
expect_rc 0 "NN, the CPU's default single loop"
checks=$((checks + 1))
grep -q '^#define SPLIT_LOOP 1' "$scratch"/k0/*.cl 2>/dev/null && fail "a CPU device got the second loop"

export TCX_SPLIT_LOOP=1
TCX_DUMP_KERNELS=$scratch/k1 run validate 'C[ij]=A[ik]*B[kj]' --sizes i=96,j=70,k=40 \
	--params "$p" --beta 0.5
expect_rc 0 "NN: interior tiles, an edge along j, beta 0.5"
expect_out 'result +PASS' "PASS line"
checks=$((checks + 1))
grep -q '^#define SPLIT_LOOP 1' "$scratch"/k1/*.cl 2>/dev/null || fail "TCX_SPLIT_LOOP=1 not honoured"
# j = 70 leaves tiles past D1's end: they read A (P) by whole vectors too,
# in a third loop that only such problems get
checks=$((checks + 1))
grep -q '^#define SPLIT_LOOP_P 1' "$scratch"/k1/*.cl 2>/dev/null ||
	fail "an edge along j: no loop with P unchecked"

run validate 'C[ij]=A[ki]*B[jk]' -t d --sizes i=64,j=96,k=33 --params "$p"
expect_rc 0 "TN, double, a DepthU tail"

# A read along its sum (K-major) and B's free extent 24 in tiles of 32:
# every tile crosses D1's end, and A goes by vectors along k in the third
# loop (the tensor-times-matrix case, C[a,b,j] = A[k,b,a] B[j,k])
TCX_DUMP_KERNELS=$scratch/k2 run validate 'C[a,j,b]=A[k,b,a]*B[j,k]' \
	--sizes a=64,b=3,j=24,k=48 --params "$p,TileIndexA=a" --beta 0.5
expect_rc 0 "A K-major, every tile past D1's end"
checks=$((checks + 1))
grep -q '^#define SPLIT_LOOP_P 1' "$scratch"/k2/*.cl 2>/dev/null ||
	fail "j = 24 in tiles of 32: no loop with P unchecked"

# unaligned leading dimensions: those tiles fall back to element reads
run validate 'C[ijk]=A[ilk]*B[jlk]' --sizes i=64,j=64,k=2,l=32 --params "$p" --beta 0.5 \
	--strides 'A=[1,67,2211],B=[1,65,2145],C=[1,66,4224]'
expect_rc 0 "batched, unaligned strides"

# packed operands (PackFreeIndices) read whole vectors from each row's
# offset: along the packed index (A's i x k) and along the sum (B's m)
run validate 'C[i,j,k,l]=A[i,m,k]*B[m,j,l]' --sizes i=16,j=8,k=6,l=8,m=24 \
	--params "$p,PackFreeIndices=True" --beta 0.5
expect_rc 0 "packed, vectors along the packed index and the sum"

# a kernel broken in the main loop still fails with the second loop
run validate 'C[ij]=A[ik]*B[kj]' --sizes i=96,j=64,k=40 --params "$p,TestSkipLastU=1"
expect_rc 1 "a kernel that skips the last chunk fails"

done_testing
