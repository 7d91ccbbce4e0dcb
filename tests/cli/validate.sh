#!/bin/bash
# validate.sh - tcx validate passes correct kernels and fails broken ones:
# wrong sums, unwritten elements, NaN, bad parameters, failing builds.
. "$(dirname "$0")/lib.sh"

gemm='C[ij]=A[ik]*B[kj]'

run validate "$gemm" --sizes i=37,j=29,k=53
expect_rc 0 "a correct kernel passes"
expect_out 'result +PASS' "PASS line"
expect_out 'checked +1073 of 1073' "every element checked"

run validate "$gemm" --sizes i=37,j=29,k=53 --params 'TestSkipLastU=1,DepthU=8'
expect_rc 1 "a kernel that skips the last DepthU chunk fails"
expect_out 'result +FAIL' "FAIL line"
expect_err 'validation failed' "message"
expect_err 'seed 1' "seed printed on failure"

run validate "$gemm" --sizes i=8,j=8,k=8 --init nan
expect_rc 1 "NaN never passes"
expect_out 'NaN' "NaN counted"

run validate "$gemm" --sizes i=16,j=16,k=16 --format json
expect_rc 0 "json"
expect_out '"result": "pass"' "json result"
expect_out '"checked": 256' "json checked"

run validate "$gemm" --sizes i=16,j=16,k=16 --params 'WorkGroup=[3,3,3]'
expect_rc 2 "an invalid solution is refused"
expect_err 'solution rejected: LocalSplitU 3' "reason named"

run validate "$gemm" --sizes i=16,j=16,k=16 --params 'WorkGroup=[128,64,1],ThreadTile=[1,1],VectorWidth=1' --device opencl:0:0
expect_rc 3 "a work-group larger than the device allows"
expect_err 'exceeds the device limit of 4096' "limit named"

run validate "$gemm" --sizes i=16,j=16,k=16 --params 'Bogus=1'
expect_rc 2 "unknown parameter"
expect_err "unknown solution parameter 'Bogus'" "named"

run validate "$gemm" --sizes i=16,j=16 
expect_rc 2 "missing size"
expect_err "no size given for index 'k'" "named"

run validate "$gemm" --sizes i=16,j=16,k=16 --device opencl:7:7
expect_rc 4 "a device id of a known backend that does not exist"
expect_err "unknown device id 'opencl:7:7'" "named"

run validate "$gemm" --sizes i=16,j=16,k=16 --device nosuch:0
expect_rc 2 "an id of no backend"

run validate "$gemm" --sizes i=16,j=16,k=16 --device host
expect_rc 0 "the host device computes with the reference"

# interior tiles store whole vectors with nothing checked (STORE_C_FAST in
# the template), packed too: D0 = i x k and D1 = j x l (PackFreeIndices),
# beta 0 and not, alpha 1 (which multiplies nothing) and not; k = 7 leaves
# an edge tile to the checked stores
p='UseLDS=True,WorkGroup=[4,4,1],ThreadTile=[4,4],VectorWidth=4,DepthU=8,PackFreeIndices=True'
for ab in 1:0 1:0.5 -1.5:0; do
	alpha=${ab%:*} beta=${ab#*:}
	run validate 'C[i,j,k,l]=A[i,m,k]*B[m,j,l]' --sizes i=8,j=12,k=7,l=4,m=5 --params "$p" \
		--alpha "$alpha" --beta "$beta"
	expect_rc 0 "packed vector stores, alpha $alpha, beta $beta"
done

# a template that does not compile: exit 3 with the compiler's words
mkdir -p broken/common broken/opencl
cp "$TCX_SOURCE_DIR/kernels/common/port.h" "$TCX_SOURCE_DIR/kernels/common/abi.h" broken/common/
sed 's/^KERNEL void tcx_gsu_reduce/KERNEL void tcx_gsu_reduce syntax error here/' \
	"$TCX_SOURCE_DIR/kernels/opencl/contract.cl" >broken/opencl/contract.cl
TCX_KERNEL_DIR=$PWD/broken run validate "$gemm" --sizes i=16,j=16,k=16 --device opencl:0:0
expect_rc 3 "a kernel that fails to build"
expect_err 'does not compile|build' "build failure named"

# a template that never writes the first element (neither by element nor
# as part of a vector): caught by the poison
cp "$TCX_SOURCE_DIR/kernels/common/port.h" "$TCX_SOURCE_DIR/kernels/common/abi.h" broken/common/
sed -e 's/^\t\t\t\tput_c(C, W, oc, r,/\t\t\t\tif (oc != args.off_c) put_c(C, W, oc, r,/' \
	-e 's/^\(\t*\)\*(GLOBAL VEC_T \*)(C + ocv) = r;/\1if (ocv != args.off_c) *(GLOBAL VEC_T *)(C + ocv) = r;/' \
	-e 's/^\(\t*\)\*cv_ = r_;/\1if ((GLOBAL DATA_T *)cv_ != C + args.off_c) *cv_ = r_;/' \
	"$TCX_SOURCE_DIR/kernels/opencl/contract.cl" >broken/opencl/contract.cl
grep -q 'if (oc != args.off_c) put_c' broken/opencl/contract.cl || fail "sed did not apply"
grep -q 'if (ocv != args.off_c) \*(GLOBAL' broken/opencl/contract.cl || fail "sed did not apply (vector)"
grep -q 'if ((GLOBAL DATA_T \*)cv_ != C' broken/opencl/contract.cl || fail "sed did not apply (unchecked)"
TCX_KERNEL_DIR=$PWD/broken run validate "$gemm" --sizes i=16,j=16,k=16 --device opencl:0:0
expect_rc 1 "an element the kernel never wrote"
expect_out 'never written' "reported as unwritten"

done_testing
