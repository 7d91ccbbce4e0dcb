/* port.h - the few words the contraction template needs from its kernel
 * language, so one template serves OpenCL C and CUDA/HIP C++.  The
 * generator includes this first; TCX_LANG_CUDA selects the CUDA spelling,
 * and kernels/cuda/compat.h then supplies the OpenCL built-ins (vector
 * types, vloadN, vload_half, as_float ...) that C++ lacks.
 *
 * Words whose OpenCL spelling is not C++:
 *   VECN(T, n)           the n-wide vector of T: float4, tcx_float4
 *   MAKE2(T, a, b)       a 2-vector from its parts: (float2)(a, b)
 *   VLANE(T, x, v)       lane v of vector x (element type T), an lvalue
 *   HALF_T               fp16 storage: half, or its 16 bits in CUDA/HIP
 *   GID(d), GSIZE(d)     get_global_id, get_global_size, as long
 *   GROUP(d), NGROUPS(d) get_group_id, get_num_groups, as long
 *   LOCAL_POOL()         CUDA: the block's dynamic shared memory, from which
 *   LOCAL_ARRAY(T, name, dims, inner, off)
 *                        carves `T name dims` at byte offset `off` (OpenCL:
 *                        a __local array; CUDA has no static 48 KiB limit
 *                        this way, and the launch passes the size). */
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
#if defined(WG_OCC) && WG_OCC > 0 && !defined(__HIP__)
/* the solution's Occupancy: registers for WG_OCC work-groups per SM */
#define WG_SIZE_HINT(x, y, z) __launch_bounds__((x) * (y) * (z), WG_OCC)
#else
#define WG_SIZE_HINT(x, y, z) __launch_bounds__((x) * (y) * (z))
#endif
#define LSIZE(d) ((d) == 0 ? (long)blockDim.x : (d) == 1 ? (long)blockDim.y : (long)blockDim.z)
#define GID(d) (GROUP(d) * LSIZE(d) + LID(d))
#define GSIZE(d) (NGROUPS(d) * LSIZE(d))
#define VECN(T, n) TCX_CAT(tcx_, TCX_CAT(T, n))
#define MAKE2(T, a, b) (T((a), (b)))
#define VLANE(T, x, v) ((x)[v])
#define HALF_T tcx_half
#ifndef LOCAL_POOL
#define LOCAL_POOL() extern __shared__ __attribute__((aligned(16))) unsigned char tcx_smem[]
#endif
#define LOCAL_ARRAY(T, name, dims, inner, off) T(*const name) inner = (T(*) inner)(tcx_smem + (off))
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
#define LSIZE(d) ((long)get_local_size(d))
#define GID(d) ((long)get_global_id(d))
#define GSIZE(d) ((long)get_global_size(d))
#define VECN(T, n) TCX_CAT(T, n)
#define MAKE2(T, a, b) ((T)((a), (b)))
#define VLANE(T, x, v) (((T *)&(x))[v])
#define HALF_T half
#define LOCAL_POOL()
#define LOCAL_ARRAY(T, name, dims, inner, off) __local T name dims
#endif

/* The work-group's number over the launch's grid, dimension 0 fastest:
 * launches fold counts past a dimension's limit into the others. */
#define GROUP_LINEAR() (GROUP(0) + NGROUPS(0) * (GROUP(1) + NGROUPS(1) * GROUP(2)))

#define TCX_CAT_(a, b) a##b
#define TCX_CAT(a, b) TCX_CAT_(a, b)

#endif /* TCX_PORT_H */
