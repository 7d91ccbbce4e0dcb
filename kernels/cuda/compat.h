/* compat.h - the OpenCL C built-ins the contraction template uses, in CUDA
 * and HIP C++, so that kernels/opencl/contract.cl compiles unchanged with
 * NVRTC and hiprtc and means what it means in OpenCL.  The generator
 * inserts it after common/port.h when the device's language is "cuda".
 *
 * What it supplies (OpenCL semantics, element-wise where OpenCL is):
 *   - the n-wide vectors float2..float16, double2..double16 as tcx_float4
 *     (port.h's VECN), plus the ushortN and uintN that bf16 loads go
 *     through; lane access v[k], .x/.y on 2-vectors, construction from a
 *     scalar (broadcast) and from two parts, + - * (vector and scalar),
 *     +=, -=, *=, unary -, << on integers, fma;
 *   - vloadN, vload_half, vload_halfN, vstore_half_rte, as_float, as_uint,
 *     as_floatN, convert_uintN;
 *   - the OpenCL scalar type names uint and ushort, and tcx_half (port.h's
 *     HALF_T: fp16 kept as its 16 bits, converted on load and store).
 * Everything is __device__ inline; nothing here allocates or launches.
 * Built-ins CUDA and HIP already have (fma and min on scalars) are theirs. */
#ifndef TCX_COMPAT_H
#define TCX_COMPAT_H

#ifndef TCX_LANG_CUDA
#error "compat.h is for CUDA and HIP only (TCX_LANG_CUDA)"
#endif

/* struct tcx_args is all long: it must be 64-bit, as on the host */
static_assert(sizeof(long) == 8, "tcx kernels need a 64-bit long (LP64)");

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned short tcx_half; /* fp16 bits; arithmetic is in float */

/* not static: NVRTC warns of every static function a kernel leaves unused */
#define TCX_DEV __device__ __forceinline__

/* ---- vectors ----------------------------------------------------------- */

/* OpenCL aligns an n-vector to its size; 16 bytes is what loads use. */
#define TCX_VEC_ALIGN(T, N) (sizeof(T) * (N) > 16 ? 16 : sizeof(T) * (N))

template <typename T, int N> struct alignas(TCX_VEC_ALIGN(T, N)) tcx_vec {
	T s[N];

	tcx_vec() = default;
	__device__ explicit tcx_vec(T v)
	{
		for (int k = 0; k < N; k++)
			s[k] = v;
	}
	__device__ T &operator[](int k) { return s[k]; }
	__device__ const T &operator[](int k) const { return s[k]; }
};

/* 2-vectors also carry complex numbers, which the template reads as .x, .y */
template <typename T> struct alignas(TCX_VEC_ALIGN(T, 2)) tcx_vec<T, 2> {
	T x, y;

	tcx_vec() = default;
	__device__ explicit tcx_vec(T v) : x(v), y(v) {}
	__device__ tcx_vec(T a, T b) : x(a), y(b) {}
	__device__ T &operator[](int k) { return k ? y : x; }
	__device__ const T &operator[](int k) const { return k ? y : x; }
};

typedef tcx_vec<float, 2> tcx_float2;
typedef tcx_vec<float, 4> tcx_float4;
typedef tcx_vec<float, 8> tcx_float8;
typedef tcx_vec<float, 16> tcx_float16;
typedef tcx_vec<double, 2> tcx_double2;
typedef tcx_vec<double, 4> tcx_double4;
typedef tcx_vec<double, 8> tcx_double8;
typedef tcx_vec<double, 16> tcx_double16;

static_assert(sizeof(tcx_float2) == 8 && alignof(tcx_float2) == 8, "float2 layout");
static_assert(sizeof(tcx_double2) == 16 && alignof(tcx_double2) == 16, "double2 layout");

#define TCX_VEC_BINOP(OP)                                                                   \
	template <typename T, int N>                                                        \
	TCX_DEV tcx_vec<T, N> operator OP(tcx_vec<T, N> a, const tcx_vec<T, N> &b)          \
	{                                                                                   \
		for (int k = 0; k < N; k++)                                                 \
			a[k] = a[k] OP b[k];                                                \
		return a;                                                                   \
	}                                                                                   \
	template <typename T, int N> TCX_DEV tcx_vec<T, N> operator OP(tcx_vec<T, N> a, T b) \
	{                                                                                   \
		for (int k = 0; k < N; k++)                                                 \
			a[k] = a[k] OP b;                                                   \
		return a;                                                                   \
	}                                                                                   \
	template <typename T, int N> TCX_DEV tcx_vec<T, N> operator OP(T a, tcx_vec<T, N> b) \
	{                                                                                   \
		for (int k = 0; k < N; k++)                                                 \
			b[k] = a OP b[k];                                                   \
		return b;                                                                   \
	}                                                                                   \
	template <typename T, int N>                                                        \
	TCX_DEV tcx_vec<T, N> &operator OP##=(tcx_vec<T, N> &a, const tcx_vec<T, N> &b)     \
	{                                                                                   \
		for (int k = 0; k < N; k++)                                                 \
			a[k] = a[k] OP b[k];                                                \
		return a;                                                                   \
	}

TCX_VEC_BINOP(+)
TCX_VEC_BINOP(-)
TCX_VEC_BINOP(*)

template <typename T, int N> TCX_DEV tcx_vec<T, N> operator-(tcx_vec<T, N> a)
{
	for (int k = 0; k < N; k++)
		a[k] = -a[k];
	return a;
}

template <int N> TCX_DEV tcx_vec<uint, N> operator<<(tcx_vec<uint, N> a, int n)
{
	for (int k = 0; k < N; k++)
		a[k] <<= n;
	return a;
}

/* fma(a, b, c) = a * b + c, rounded once, lane by lane (OpenCL's fma) */
template <typename T, int N>
TCX_DEV tcx_vec<T, N> fma(const tcx_vec<T, N> &a, const tcx_vec<T, N> &b, tcx_vec<T, N> c)
{
	for (int k = 0; k < N; k++)
		c[k] = fma(a[k], b[k], c[k]);
	return c;
}

/* ---- reinterpretation ------------------------------------------------- */

TCX_DEV float as_float(uint u)
{
	return __uint_as_float(u);
}

TCX_DEV uint as_uint(float f)
{
	return __float_as_uint(f);
}

/* ---- fp16 -------------------------------------------------------------- */

/* fp16 bits to float (exact) and float to fp16 bits, rounded to nearest
 * even with overflow to infinity: OpenCL's vload_half and vstore_half_rte.
 * The hardware conversion on CUDA and HIP; integer code elsewhere. */
#if defined(__CUDA_ARCH__)
TCX_DEV float tcx_h2f(tcx_half h)
{
	float f;

	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}

TCX_DEV tcx_half tcx_f2h(float f)
{
	tcx_half h;

	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}
#elif defined(__HIP_DEVICE_COMPILE__)
TCX_DEV float tcx_h2f(tcx_half h)
{
	return (float)__builtin_bit_cast(_Float16, h);
}

TCX_DEV tcx_half tcx_f2h(float f)
{
	return __builtin_bit_cast(tcx_half, (_Float16)f);
}
#else
TCX_DEV float tcx_h2f(tcx_half h)
{
	uint s = (uint)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;

	if (e == 0) {
		/* zero or subnormal: m * 2^-24, exact in float */
		float f = (float)m * 5.9604644775390625e-8f;

		return s ? -f : f;
	}
	if (e == 31)
		return as_float(s | 0x7f800000u | (m << 13));
	return as_float(s | ((e + 112) << 23) | (m << 13));
}

TCX_DEV tcx_half tcx_f2h(float f)
{
	uint x = as_uint(f), s = (x >> 16) & 0x8000u, e, full, sh, q, rem, half;

	x &= 0x7fffffffu;
	if (x > 0x7f800000u) /* NaN, kept quiet */
		return (tcx_half)(s | 0x7e00u | ((x >> 13) & 0x3ffu));
	if (x == 0x7f800000u)
		return (tcx_half)(s | 0x7c00u);
	if (x >= 0x477ff000u) /* 65520 and above round to infinity */
		return (tcx_half)(s | 0x7c00u);
	if (x >= 0x38800000u) { /* normal: rebias, round the 13 dropped bits */
		x -= 0x38000000u;
		x += 0xfffu + ((x >> 13) & 1u);
		return (tcx_half)(s | (x >> 13));
	}
	/* subnormal (or zero): units of 2^-24, rounded to nearest even */
	e = x >> 23;
	if (e < 95)
		return (tcx_half)s;
	full = 0x800000u | (x & 0x7fffffu);
	sh = 126 - e;
	q = full >> sh;
	rem = full & ((1u << sh) - 1);
	half = 1u << (sh - 1);
	if (rem > half || (rem == half && (q & 1u)))
		q++;
	return (tcx_half)(s | q);
}
#endif

TCX_DEV float vload_half(long i, const tcx_half *p)
{
	return tcx_h2f(p[i]);
}

TCX_DEV void vstore_half_rte(float f, long i, tcx_half *p)
{
	p[i] = tcx_f2h(f);
}

/* ---- n-wide loads and conversions ------------------------------------ */

/* vloadN(i, p): the N elements at p + i * N (element-aligned, as in OpenCL) */
#define TCX_NWIDE(N)                                                                        \
	template <typename T> TCX_DEV tcx_vec<T, N> vload##N(long i, const T *p)            \
	{                                                                                   \
		tcx_vec<T, N> v;                                                            \
		for (int k = 0; k < N; k++)                                                 \
			v[k] = p[i * N + k];                                                \
		return v;                                                                   \
	}                                                                                   \
	TCX_DEV tcx_vec<float, N> vload_half##N(long i, const tcx_half *p)                  \
	{                                                                                   \
		tcx_vec<float, N> v;                                                        \
		for (int k = 0; k < N; k++)                                                 \
			v[k] = tcx_h2f(p[i * N + k]);                                       \
		return v;                                                                   \
	}                                                                                   \
	TCX_DEV tcx_vec<float, N> as_float##N(const tcx_vec<uint, N> &u)                    \
	{                                                                                   \
		tcx_vec<float, N> v;                                                        \
		for (int k = 0; k < N; k++)                                                 \
			v[k] = as_float(u[k]);                                              \
		return v;                                                                   \
	}                                                                                   \
	TCX_DEV tcx_vec<uint, N> convert_uint##N(const tcx_vec<ushort, N> &u)               \
	{                                                                                   \
		tcx_vec<uint, N> v;                                                         \
		for (int k = 0; k < N; k++)                                                 \
			v[k] = (uint)u[k];                                                  \
		return v;                                                                   \
	}

TCX_NWIDE(2)
TCX_NWIDE(4)
TCX_NWIDE(8)
TCX_NWIDE(16)

/* ---- tensor cores (MatrixInstruction; CUDA, sm_80 and later) ----------
 *
 * The warp-wide operations the MatrixInstruction kernel is built from,
 * for its four instruction shapes (MI_M x MI_N x MI_K):
 *   16x8x16 fp16 or bf16 (TCX_TYPE_H, TCX_TYPE_B), 16x8x8 tf32 (TCX_TYPE_S),
 * both accumulating in fp32, and 8x8x4 fp64 (TCX_TYPE_D, and TCX_TYPE_Z
 * as four real products) on the fp64 tensor cores, accumulating in fp64,
 * with 16x8x4, 16x8x8 and 16x8x16 on sm_90.  The fragment layouts are
 * PTX's for
 * mma.sync...row.col: with g = lane / 4 and q = lane % 4,
 *   C (16x8, 4 floats):  c[e] at (m = g + 8 (e / 2), n = 2 q + e % 2)
 *   A 16-bit (4 regs of 2): reg r holds (m = g + 8 (r % 2), k = 2 q + 8 (r / 2) + {0, 1})
 *   B 16-bit (2 regs of 2): reg r holds (k = 2 q + 8 r + {0, 1}, n = g)
 *   A tf32 (4 regs):     reg r holds (m = g + 8 (r % 2), k = q + 4 (r / 2))
 *   B tf32 (2 regs):     reg r holds (k = q + 4 r, n = g)
 *   C fp64 (16x8, 4 doubles): as fp32's; 8x8 (2 doubles) the same for e < 2
 *   A fp64 (K / 2 doubles): reg r holds (m = g + 8 (r % 2), k = q + 4 (r / 2));
 *                        8x8x4: one, (m = g, k = q)
 *   B fp64 (K / 4 doubles): reg r holds (k = q + 4 r, n = g)
 * 16-bit fragments come from shared memory by ldmatrix .trans, which
 * reads 8x8 tiles stored k-major (one row per k, 8 consecutive m or n
 * elements of 16 bytes): lane 8 i + r gives the address of row r of tile
 * i, and each lane receives its 2 elements of every tile.
 *
 * On the GPU these are PTX.  Compiled for the host (tests/cuda/emulate.c),
 * the same warp-collective semantics run in portable code: the lanes of a
 * warp exchange their operands through tcx_emu_xchg between two block
 * barriers (every thread of the block calls them together, as the kernel
 * does), so the host run checks the fragment arithmetic the GPU runs. */
#if defined(MI_M) && MI_M > 0

#if defined(TCX_TYPE_D) || defined(TCX_TYPE_Z)
#define MI_F64 1
#define MI_ACC_T double /* an accumulator (of a real or an imaginary part) */
#define MI_CREGS (MI_M / 4) /* accumulators per lane of a C tile */
#define MI_AREGS ((MI_M / 8) * (MI_K / 4)) /* elements per A fragment */
#define MI_BREGS (MI_K / 4)                /* and per B fragment */
#else
#define MI_F64 0
#define MI_ACC_T float
#define MI_CREGS 4
#define MI_AREGS 4 /* 32-bit registers per A fragment, in every 32-bit shape */
#define MI_BREGS 2 /* and per B fragment */
#endif

#if defined(__CUDA_ARCH__)
TCX_DEV uint tcx_smem_addr(const void *p)
{
	return (uint)__cvta_generic_to_shared(p);
}

/* four 8x8 16-bit tiles, transposed: tile i's row r at lane 8 i + r's p */
TCX_DEV void tcx_ldsm_x4_t(uint *r, const ushort *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(tcx_smem_addr(p)));
}

/* two tiles: lanes 0 .. 15 give the rows */
TCX_DEV void tcx_ldsm_x2_t(uint *r, const ushort *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
		     : "=r"(r[0]), "=r"(r[1])
		     : "r"(tcx_smem_addr(p)));
}

/* fp32 to tf32, rounded to nearest (ties away), as the tensor core takes it */
TCX_DEV uint tcx_tf32(float f)
{
	uint r;

	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(f));
	return r;
}

#if MI_F64
/* c += a * b on one 8 x 8 or 16 x 8 tile, in fp64 */
TCX_DEV void tcx_mma(double *c, const double *a, const double *b)
{
#if MI_M == 8
	asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
		     "{%0, %1}, {%2}, {%3}, {%0, %1};"
		     : "+d"(c[0]), "+d"(c[1])
		     : "d"(a[0]), "d"(b[0]));
#elif MI_K == 4
	asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 "
		     "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
		     : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
		     : "d"(a[0]), "d"(a[1]), "d"(b[0]));
#elif MI_K == 8
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
		     : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
		     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, "
		     "{%0, %1, %2, %3};"
		     : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
		     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]),
		       "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#endif
}
#else
/* c += a * b on one 16 x 8 tile */
TCX_DEV void tcx_mma(float *c, const uint *a, const uint *b)
{
#if defined(TCX_TYPE_S)
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif defined(TCX_TYPE_B)
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
#endif /* MI_F64 */
#else /* the host: portable warp collectives */
/* every lane's fragment registers: at most 8 of A and 4 of B (fp64's 16x8x16) */
static unsigned long long tcx_emu_xchg[1024][12];

TCX_DEV int tcx_emu_tid(void)
{
	return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
}

/* tiles transposed, as ldmatrix .trans: tile i of `n` from lanes 8 i .. */
TCX_DEV void tcx_emu_ldsm_t(uint *r, const ushort *p, int n)
{
	const int tid = tcx_emu_tid(), w = tid & ~31, lane = tid & 31;

	tcx_emu_xchg[tid][0] = (unsigned long long)(size_t)p;
	__syncthreads();
	for (int i = 0; i < n; i++) {
		const ushort *r0 = (const ushort *)(size_t)tcx_emu_xchg[w + 8 * i + 2 * (lane % 4)][0];
		const ushort *r1 =
			(const ushort *)(size_t)tcx_emu_xchg[w + 8 * i + 2 * (lane % 4) + 1][0];

		r[i] = (uint)r0[lane / 4] | (uint)r1[lane / 4] << 16;
	}
	__syncthreads();
}

TCX_DEV void tcx_ldsm_x4_t(uint *r, const ushort *p)
{
	tcx_emu_ldsm_t(r, p, 4);
}

TCX_DEV void tcx_ldsm_x2_t(uint *r, const ushort *p)
{
	tcx_emu_ldsm_t(r, p, 2);
}

TCX_DEV uint tcx_tf32(float f)
{
	uint x = as_uint(f);

	if ((x & 0x7f800000u) != 0x7f800000u)
		x += 0x1000u; /* half a tf32 unit: ties away from zero */
	return x & 0xffffe000u;
}

/* one 16-bit element of a fragment register */
TCX_DEV float tcx_emu_el(unsigned long long reg, int hi)
{
	const ushort h = (ushort)(reg >> (hi ? 16 : 0));
#if defined(TCX_TYPE_B)
	return as_float((uint)h << 16);
#else
	return tcx_h2f(h);
#endif
}

#if MI_F64
/* fp64: each lane gives its A and B elements as bits; the products are
 * fused into the sum in k order */
TCX_DEV double tcx_emu_f64(unsigned long long bits)
{
	double d;

	__builtin_memcpy(&d, &bits, sizeof(d));
	return d;
}

TCX_DEV void tcx_mma(double *c, const double *a, const double *b)
{
	const int tid = tcx_emu_tid(), w = tid & ~31, lane = tid & 31;
	const int g = lane / 4, q = lane % 4;

	for (int r = 0; r < MI_AREGS; r++)
		__builtin_memcpy(&tcx_emu_xchg[tid][r], &a[r], sizeof(double));
	for (int r = 0; r < MI_BREGS; r++)
		__builtin_memcpy(&tcx_emu_xchg[tid][MI_AREGS + r], &b[r], sizeof(double));
	__syncthreads();
	for (int e = 0; e < MI_CREGS; e++) {
		const int m = g + 8 * (e / 2), n = 2 * q + e % 2;
		double s = c[e];

		for (int k = 0; k < MI_K; k++)
			s = fma(tcx_emu_f64(tcx_emu_xchg[w + (m % 8) * 4 + k % 4]
							[m / 8 + (MI_M / 8) * (k / 4)]),
				tcx_emu_f64(tcx_emu_xchg[w + n * 4 + k % 4][MI_AREGS + k / 4]), s);
		c[e] = s;
	}
	__syncthreads();
}
#else
TCX_DEV void tcx_mma(float *c, const uint *a, const uint *b)
{
	const int tid = tcx_emu_tid(), w = tid & ~31, lane = tid & 31;
	const int g = lane / 4, q = lane % 4;

	for (int k = 0; k < 4; k++)
		tcx_emu_xchg[tid][k] = a[k];
	tcx_emu_xchg[tid][4] = b[0];
	tcx_emu_xchg[tid][5] = b[1];
	__syncthreads();
	for (int e = 0; e < 4; e++) {
		const int m = g + 8 * (e / 2), n = 2 * q + e % 2;
		float s = c[e];

#if defined(TCX_TYPE_S)
		/* the tensor cores read the top 19 bits of an fp32 operand */
		for (int k = 0; k < 8; k++) {
			const float av = as_float(
				(uint)tcx_emu_xchg[w + (m % 8) * 4 + k % 4][m / 8 + 2 * (k / 4)] &
				0xffffe000u);
			const float bv = as_float(
				(uint)tcx_emu_xchg[w + n * 4 + k % 4][4 + k / 4] & 0xffffe000u);

			s += av * bv;
		}
#else
		for (int k = 0; k < 16; k++) {
			const float av = tcx_emu_el(
				tcx_emu_xchg[w + (m % 8) * 4 + (k % 8) / 2][m / 8 + 2 * (k / 8)], k % 2);
			const float bv =
				tcx_emu_el(tcx_emu_xchg[w + n * 4 + (k % 8) / 2][4 + k / 8], k % 2);

			s += av * bv;
		}
#endif
		c[e] = s;
	}
	__syncthreads();
}
#endif /* MI_F64 */
#endif /* __CUDA_ARCH__ */
#endif /* MI_M */

/* ---- Hopper's warpgroup tensor cores (MatrixInstruction [64, N, K, 1]) --
 *
 * What kernels/cuda/wgmma.cuh is built from (sm_90a): cp.async copies of
 * global memory into shared memory, the proxy fence that makes ordinary
 * shared-memory writes visible to the tensor cores, and wgmma.mma_async
 * reading both operands from shared memory through matrix descriptors.
 * The instruction itself, with its shape, types and transposes, is the
 * generator's TCX_WGMMA_ASM (one asm statement of N/2 accumulators).
 *
 * Shared-memory tiles use the 128-byte swizzle: inside each 1 KiB atom
 * (8 rows of 128 bytes), the 16-byte chunk c of row r sits at chunk
 * c ^ (r % 8).  A descriptor names a tile by its start address and two
 * strides (PTX's canonical layouts, in bytes):
 *   K-major  (tnsp 0): element (r, k) at start + (r / 8) SBO + (r % 8) 128
 *                      + k bytes(elem); LBO unused
 *   MN-major (tnsp 1): element (r, k) at start + (r / E) LBO + (r % E)
 *                      bytes(elem) + (k / 8) SBO + (k % 8) 128, E = 128 /
 *                      bytes(elem)
 * and the swizzle applies to the address so formed.  Accumulator register
 * d[x] of thread t of the warpgroup holds D(m, n) with
 *   m = 16 (t / 32) + (t % 32) / 4 + 8 ((x % 4) / 2),
 *   n = 8 (x / 4) + 2 (t % 4) + x % 2.
 * On the host (tests/cuda/emulate.c) the same operations run in portable
 * code: copies are immediate, fences and waits do nothing, and each thread
 * computes its own accumulators from shared memory by those formulas. */
#if defined(MI_WGMMA) && MI_WGMMA

typedef unsigned long long tcx_u64;

#if defined(TCX_TYPE_S)
#define WG_ES 4 /* bytes of an element in shared memory */
#else
#define WG_ES 2
#endif

#if defined(__CUDA_ARCH__)
TCX_DEV uint tcx_smem_u32(const void *p)
{
	return (uint)__cvta_generic_to_shared(p);
}

/* 16 bytes from global to shared memory; past `bytes` it writes zeros */
TCX_DEV void tcx_cp16(void *dst, const void *src, int bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(tcx_smem_u32(dst)),
		     "l"(src), "r"(bytes)
		     : "memory");
}

/* 4 bytes, or a zero when bytes is 0 */
TCX_DEV void tcx_cp4(void *dst, const void *src, int bytes)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(tcx_smem_u32(dst)),
		     "l"(src), "r"(bytes)
		     : "memory");
}

TCX_DEV void tcx_cp_commit(void)
{
	asm volatile("cp.async.commit_group;" ::: "memory");
}

/* until at most N of this thread's copy groups are in flight */
template <int N> TCX_DEV void tcx_cp_wait(void)
{
	asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/* ordinary shared-memory writes, before the tensor cores read them */
TCX_DEV void tcx_fence_async(void)
{
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

TCX_DEV void tcx_wg_fence(void)
{
	asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

TCX_DEV void tcx_wg_commit(void)
{
	asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/* until at most N of the warpgroup's wgmma groups are in flight */
template <int N> TCX_DEV void tcx_wg_wait(void)
{
	asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/* keeps the compiler from moving reads or writes of an accumulator across
 * the asynchronous instructions that own it */
TCX_DEV void tcx_wg_reg(float &r)
{
	asm volatile("" : "+f"(r)::"memory");
}

TCX_DEV void tcx_wg_ureg(uint &r)
{
	asm volatile("" : "+r"(r)::"memory");
}

/* d += A B for one m64nNk(MI_K) tile, the operands by descriptor */
TCX_DEV void tcx_wgmma(float *d, tcx_u64 da, tcx_u64 db)
{
	TCX_WGMMA_ASM(d, da, db);
}

#ifdef TCX_WGMMA_RS_ASM
/* the same with A from registers: a[0..3] hold (m, k) = (g, q), (g + 8, q),
 * (g, q + 4), (g + 8, q + 4) of the warp's 16 rows, g = lane / 4, q = lane
 * % 4 (tf32, m64nNk8) */
TCX_DEV void tcx_wgmma_rs(float *d, const uint *a, tcx_u64 db)
{
	TCX_WGMMA_RS_ASM(d, a, db);
}

/* d = A B: the same, d's old contents ignored */
TCX_DEV void tcx_wgmma_rs0(float *d, const uint *a, tcx_u64 db)
{
	TCX_WGMMA_RS0_ASM(d, a, db);
}
#endif

/* fp32 to tf32 (the top 19 bits), rounded to nearest, ties away */
TCX_DEV float tcx_tf32_round(float f)
{
	uint r;

	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(f));
	return __uint_as_float(r);
}

/* mbarriers (8 bytes of shared memory each): init with the arrivals a
 * phase takes; a phase completes when they have all arrived and, after
 * expect_tx, the bytes announced have landed */
TCX_DEV void tcx_mbar_init(tcx_u64 *b, int count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(tcx_smem_u32(b)), "r"(count)
		     : "memory");
}

/* after the inits: visible to the copy engine as well */
TCX_DEV void tcx_mbar_fence_init(void)
{
	asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

TCX_DEV void tcx_mbar_arrive(tcx_u64 *b)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(tcx_smem_u32(b)) : "memory");
}

TCX_DEV void tcx_mbar_expect_tx(tcx_u64 *b, int bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
			     tcx_smem_u32(b)),
		     "r"(bytes)
		     : "memory");
}

/* until the phase of parity `parity` has completed */
TCX_DEV void tcx_mbar_wait(tcx_u64 *b, int parity)
{
	asm volatile("{\n"
		     ".reg .pred p;\n"
		     "TCX_MBAR_WAIT:\n"
		     "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
		     "@!p bra TCX_MBAR_WAIT;\n"
		     "}\n" ::"r"(tcx_smem_u32(b)),
		     "r"(parity)
		     : "memory");
}

/* a barrier of the threads [0, n) of named barrier id (1 ..) */
TCX_DEV void tcx_bar_sync(int id, int n)
{
	asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}

/* the warpgroup's registers per thread, down or up (sm_90a) */
template <int N> TCX_DEV void tcx_reg_dealloc(void)
{
	asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

template <int N> TCX_DEV void tcx_reg_alloc(void)
{
	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

/* A box of a tensor by its map (CUDA's CUtensorMap) at coordinates c[],
 * into shared memory at dst, its bytes counted on the mbarrier b. */
struct alignas(64) tcx_tmap {
	tcx_u64 w[16];
};

TCX_DEV void tcx_tma_load(void *dst, const tcx_tmap *m, int rank, const int *c, tcx_u64 *b)
{
	const uint d = tcx_smem_u32(dst), mb = tcx_smem_u32(b);
	const tcx_u64 g = (tcx_u64)m;

	switch (rank) {
	case 2:
		asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::"
			     "bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(d),
			     "l"(g), "r"(c[0]), "r"(c[1]), "r"(mb)
			     : "memory");
		break;
	case 3:
		asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::"
			     "bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(d),
			     "l"(g), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(mb)
			     : "memory");
		break;
	case 4:
		asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::"
			     "bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(d),
			     "l"(g), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(mb)
			     : "memory");
		break;
	default:
		asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::"
			     "bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(d),
			     "l"(g), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(mb)
			     : "memory");
		break;
	}
}
#else /* the host */
TCX_DEV uint tcx_smem_u32(const void *p)
{
	return (uint)((const unsigned char *)p - tcx_smem);
}

TCX_DEV void tcx_cp16(void *dst, const void *src, int bytes)
{
	memcpy(dst, src, (size_t)bytes);
	memset((unsigned char *)dst + bytes, 0, (size_t)(16 - bytes));
}

TCX_DEV void tcx_cp4(void *dst, const void *src, int bytes)
{
	memcpy(dst, src, (size_t)bytes);
	memset((unsigned char *)dst + bytes, 0, (size_t)(4 - bytes));
}

TCX_DEV void tcx_cp_commit(void)
{
}

template <int N> TCX_DEV void tcx_cp_wait(void)
{
}

TCX_DEV void tcx_fence_async(void)
{
}

TCX_DEV void tcx_wg_fence(void)
{
}

TCX_DEV void tcx_wg_commit(void)
{
}

template <int N> TCX_DEV void tcx_wg_wait(void)
{
}

TCX_DEV void tcx_wg_reg(float &r)
{
	(void)r;
}

TCX_DEV void tcx_wg_ureg(uint &r)
{
	(void)r;
}

TCX_DEV float tcx_tf32_round(float f)
{
	uint x = as_uint(f);

	if ((x & 0x7f800000u) != 0x7f800000u)
		x += 0x1000u; /* half a tf32 unit: ties away from zero */
	return as_float(x & 0xffffe000u);
}

/* mbarriers: arrivals pending (low 32 bits) and the phase (bit 32), in an
 * atomic 64-bit word; the expected count lives beside it in the next one
 * (the kernel keeps 16 bytes an mbarrier on the host) */
TCX_DEV void tcx_mbar_init(tcx_u64 *b, int count)
{
	__atomic_store_n(b, (tcx_u64)(uint)count, __ATOMIC_SEQ_CST);
	__atomic_store_n(b + 1, (tcx_u64)(uint)count, __ATOMIC_SEQ_CST);
}

TCX_DEV void tcx_mbar_fence_init(void)
{
}

TCX_DEV void tcx_mbar_arrive(tcx_u64 *b)
{
	for (;;) {
		tcx_u64 v = __atomic_load_n(b, __ATOMIC_SEQ_CST), n;

		n = (v & 0xffffffffull) == 1 ? ((v ^ (1ull << 32)) & ~0xffffffffull) | b[1] : v - 1;
		if (__atomic_compare_exchange_n(b, &v, n, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST)) {
			tcx_emu_progress++;
			return;
		}
	}
}

TCX_DEV void tcx_mbar_wait(tcx_u64 *b, int parity)
{
	while ((int)((__atomic_load_n(b, __ATOMIC_SEQ_CST) >> 32) & 1) == parity)
		tcx_emu_yield();
	tcx_emu_progress++;
}

/* bytes announced for the copy engine, which the host never uses */
TCX_DEV void tcx_mbar_expect_tx(tcx_u64 *b, int bytes)
{
	(void)bytes;
	tcx_mbar_arrive(b);
}

/* named barrier 1 of the producer's 128 threads (the only one used) */
TCX_DEV void tcx_bar_sync(int id, int n)
{
	(void)id;
	(void)n;
	tcx_emu_bar_wait(&tcx_emu_bar1);
}

template <int N> TCX_DEV void tcx_reg_dealloc(void)
{
}

template <int N> TCX_DEV void tcx_reg_alloc(void)
{
}

/* no copy engine on the host: the kernel never takes the TMA path there */
struct alignas(64) tcx_tmap {
	tcx_u64 w[16];
};

TCX_DEV void tcx_tma_load(void *dst, const tcx_tmap *m, int rank, const int *c, tcx_u64 *b)
{
	(void)dst;
	(void)m;
	(void)rank;
	(void)c;
	(void)b;
	abort();
}

/* element (r, k) of an operand by its descriptor, as the tensor core reads
 * it (tf32 keeps the top 19 bits of each fp32) */
TCX_DEV float tcx_emu_wg_el(tcx_u64 desc, int mn_major, int r, int k)
{
	const uint start = (uint)(desc & 0x3fff) << 4, lbo = (uint)((desc >> 16) & 0x3fff) << 4;
	const uint sbo = (uint)((desc >> 32) & 0x3fff) << 4, e = 128 / WG_ES;
	uint a;

	if ((desc >> 62) != 1)
		return NAN; /* only the 128-byte swizzle is laid out here */
	if (mn_major)
		a = start + (uint)r / e * lbo + (uint)r % e * WG_ES + (uint)k / 8 * sbo +
		    (uint)k % 8 * 128;
	else
		a = start + (uint)r / 8 * sbo + (uint)r % 8 * 128 + (uint)k * WG_ES;
	a ^= ((a >> 7) & 7) << 4;
#if defined(TCX_TYPE_S)
	{
		uint x;

		memcpy(&x, tcx_smem + a, 4);
		return as_float(x & 0xffffe000u);
	}
#else
	{
		ushort h;

		memcpy(&h, tcx_smem + a, 2);
#if defined(TCX_TYPE_B)
		return as_float((uint)h << 16);
#else
		return tcx_h2f(h);
#endif
	}
#endif
}

/* the thread's accumulators of d += A B (A 64 x MI_K, B MI_K x MI_N);
 * WG_TNSP_P and WG_TNSP_Q say which operands are MN-major */
TCX_DEV void tcx_wgmma(float *d, tcx_u64 da, tcx_u64 db)
{
	const int t = (int)(threadIdx.x + blockDim.x * threadIdx.y) % 128;

	for (int x = 0; x < MI_N / 2; x++) {
		const int m = 16 * (t / 32) + (t % 32) / 4 + 8 * ((x % 4) / 2);
		const int n = 8 * (x / 4) + 2 * (t % 4) + x % 2;
		float s = 0;

		for (int k = 0; k < MI_K; k++)
			s += tcx_emu_wg_el(da, WG_TNSP_P, m, k) * tcx_emu_wg_el(db, WG_TNSP_Q, n, k);
		d[x] += s;
	}
}

/* with A from the registers of the warpgroup's threads, which trade them
 * through tcx_emu_rsx behind one barrier of the warpgroup: two buffers
 * used in turn (tcx_emu_rsp, each thread's, zeroed when it starts), as a
 * thread can write the other one only after the next call's barrier,
 * which every thread passes only once done reading this one */
static unsigned tcx_emu_rsx[2][1024][4];

TCX_DEV void tcx_wgmma_rs(float *d, const uint *a, tcx_u64 db)
{
	const int id = (int)(threadIdx.x + blockDim.x * threadIdx.y), t = id % 128, w0 = id - t;
	const int p = tcx_emu_rsp;

	for (int r = 0; r < 4; r++)
		tcx_emu_rsx[p][id][r] = a[r];
	tcx_emu_bar_wait(&tcx_emu_wgbar[id / 128]);
	for (int x = 0; x < MI_N / 2; x++) {
		const int m = 16 * (t / 32) + (t % 32) / 4 + 8 * ((x % 4) / 2);
		const int n = 8 * (x / 4) + 2 * (t % 4) + x % 2;
		float s = 0;

		for (int k = 0; k < MI_K; k++) {
			const int owner = w0 + 32 * (m / 16) + 4 * (m % 8) + k % 4;
			const uint v = tcx_emu_rsx[p][owner][(m % 16) / 8 + 2 * (k / 4)];

			s += as_float(v & 0xffffe000u) * tcx_emu_wg_el(db, WG_TNSP_Q, n, k);
		}
		d[x] += s;
	}
	tcx_emu_rsp = 1 - p;
}

TCX_DEV void tcx_wgmma_rs0(float *d, const uint *a, tcx_u64 db)
{
	for (int x = 0; x < MI_N / 2; x++)
		d[x] = 0;
	tcx_wgmma_rs(d, a, db);
}
#endif /* __CUDA_ARCH__ */
#endif /* MI_WGMMA */

#endif /* TCX_COMPAT_H */
