/* port.h - the few words the contraction template needs from its kernel
 * language, so one template serves OpenCL C and CUDA/HIP C++.  The
 * generator includes this first; TCX_LANG_CUDA selects the CUDA spelling. */
#ifndef TCX_PORT_H
#define TCX_PORT_H

#ifdef TCX_LANG_CUDA
/* CUDA and HIP ---------------------------------------------------------- */
#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL_MEM __shared__
#define INLINE static __device__ __forceinline__
#define BARRIER() __syncthreads()
#define LID(d) ((d) == 0 ? (long)threadIdx.x : (d) == 1 ? (long)threadIdx.y : (long)threadIdx.z)
#define GROUP(d) ((d) == 0 ? (long)blockIdx.x : (d) == 1 ? (long)blockIdx.y : (long)blockIdx.z)
#define NGROUPS(d) ((d) == 0 ? (long)gridDim.x : (d) == 1 ? (long)gridDim.y : (long)gridDim.z)
#define RESTRICT __restrict__
#define FMA(a, b, c) fma((a), (b), (c))
#define CONVERT_LONG(x) ((long)(x))
#define WG_SIZE_HINT(x, y, z) __launch_bounds__((x) * (y) * (z))
#else
/* OpenCL C 1.2 ---------------------------------------------------------- */
#define KERNEL __kernel
#define GLOBAL __global
#define LOCAL_MEM __local
#define INLINE static inline
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define LID(d) ((long)get_local_id(d))
#define GROUP(d) ((long)get_group_id(d))
#define NGROUPS(d) ((long)get_num_groups(d))
#define RESTRICT restrict
#define FMA(a, b, c) fma((a), (b), (c))
#define CONVERT_LONG(x) ((long)(x))
#define WG_SIZE_HINT(x, y, z) __attribute__((reqd_work_group_size(x, y, z)))
#endif

#define TCX_CAT_(a, b) a##b
#define TCX_CAT(a, b) TCX_CAT_(a, b)

#endif /* TCX_PORT_H */
