/* short_sum.cu - what bounds a GEMM with a short sum on an NVIDIA GPU:
 * C[M,N] (M fastest) = A[M,K] (M fastest) * B[K,N] (K fastest), K = 24 by
 * default, the shape of TCCG's CCSD(T) contractions once planned (11520 x
 * 8000 x 24, C 368 MB).  Kernels, each timed (best of 20) and checked
 * against a plain reference:
 *   write only / copy   C's bytes stored (and read) at the memory's rate;
 *   tRAxRB[oN][cs|st|c] a SIMT tile of 32 RA x 8 RB outputs in 256 threads,
 *                       the whole sum staged in shared memory: as is, with
 *                       streaming stores (cs), loads and stores but no
 *                       products (st), products but no stores (c); oN the
 *                       work-groups an SM (launch bounds); pN persistent;
 *   sRAxRB              C staged through shared memory, 16-byte stores;
 *   tmaRAxRB            C staged, stored by the copy engine (bulk copies).
 * Build: nvcc -O3 -arch=sm_90a -o short_sum bench/micro/short_sum.cu
 * Run:   short_sum [M N K [KERNEL]]  (KERNEL: time only that one)
 * Findings on an H200: bench/results/2026-11-26-h200-short-sum-bound.md. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)

__global__ void k_write(float4 *c, long n4) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x)
    c[i] = make_float4(i, 1, 2, 3);
}
__global__ void k_copy(float4 *c, const float4 *a, long n4) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x)
    c[i] = a[i];
}
__global__ void k_ref(float *C, const float *A, const float *B, int M, int N, int K) {
  long e = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (e >= (long)M * N) return;
  int m = e % M, n = e / M; float s = 0;
  for (int k = 0; k < K; k++) s += A[m + (long)M * k] * B[k + (long)K * n];
  C[e] = s;
}
// BM = 32*RA rows, BN = 8*RB cols, 256 threads; KMAX whole sum in shared.
template <int RA, int RB, int KMAX, int MODE, int OCC>
__global__ void __launch_bounds__(256, OCC) k_tile(float *C, const float *__restrict__ A, const float *__restrict__ B, int M, int N, int K, int persistent) {
  constexpr int BM = 32 * RA, BN = 8 * RB;
  __shared__ __align__(16) float As[KMAX][BM];
  __shared__ __align__(16) float Bs[KMAX][BN + 4];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32, t = threadIdx.x;
  const int tm = (M + BM - 1) / BM, tn = (N + BN - 1) / BN;
  const long ntiles = (long)tm * tn;
  for (long tile = blockIdx.x; tile < ntiles; tile += persistent ? gridDim.x : ntiles) {
    const int m0 = (tile % tm) * BM, n0 = (tile / tm) * BN;
    __syncthreads();
    for (int e = t; e < K * BM; e += 256) { int k = e / BM, m = e % BM; As[k][m] = m0 + m < M ? A[m0 + m + (long)M * k] : 0.f; }
    for (int e = t; e < K * BN; e += 256) { int n = e / K, k = e % K; Bs[k][n] = n0 + n < N ? B[k + (long)K * (n0 + n)] : 0.f; }
    __syncthreads();
    float acc[RA][RB];
#pragma unroll
    for (int r = 0; r < RA; r++)
#pragma unroll
      for (int s = 0; s < RB; s++) acc[r][s] = 0;
    if (MODE != 2) {
#pragma unroll 4
      for (int k = 0; k < K; k++) {
        float a[RA], b[RB];
#pragma unroll
        for (int r = 0; r < RA; r++) a[r] = As[k][tx + 32 * r];
#pragma unroll
        for (int s = 0; s < RB; s += 4) *(float4 *)&b[s] = *(const float4 *)&Bs[k][ty * RB + s];
#pragma unroll
        for (int r = 0; r < RA; r++)
#pragma unroll
          for (int s = 0; s < RB; s++) acc[r][s] = fmaf(a[r], b[s], acc[r][s]);
      }
    } else {
      acc[0][0] = As[0][tx] + Bs[0][ty];
    }
#pragma unroll
    for (int s = 0; s < RB; s++) {
      const int n = n0 + ty * RB + s;
      if (n >= N) continue;
#pragma unroll
      for (int r = 0; r < RA; r++) {
        const int m = m0 + tx + 32 * r;
        if (m >= M) continue;
        float *p = C + m + (long)M * n;
        if (MODE == 3) { if (acc[r][s] == 12345.678f) *p = 0; } else if (MODE == 1) __stcs(p, acc[r][s]); else *p = acc[r][s];
      }
    }
  }
}
// Same, but the tile is staged through shared memory and written with float4 along M.
template <int RA, int RB, int KMAX, int OCC>
__global__ void __launch_bounds__(256, OCC) k_tile_st(float *C, const float *__restrict__ A, const float *__restrict__ B, int M, int N, int K, int persistent) {
  constexpr int BM = 32 * RA, BN = 8 * RB;
  extern __shared__ __align__(16) float sm[];
  float (*As)[BM] = (float (*)[BM])sm;
  float (*Bs)[BN + 4] = (float (*)[BN + 4])(sm + KMAX * BM);
  float *Cs = sm; // reused after the sum: BN x (BM + 4)
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32, t = threadIdx.x;
  const int tm = (M + BM - 1) / BM, tn = (N + BN - 1) / BN;
  const long ntiles = (long)tm * tn;
  for (long tile = blockIdx.x; tile < ntiles; tile += persistent ? gridDim.x : ntiles) {
    const int m0 = (tile % tm) * BM, n0 = (tile / tm) * BN;
    __syncthreads();
    for (int e = t; e < K * BM; e += 256) { int k = e / BM, m = e % BM; As[k][m] = m0 + m < M ? A[m0 + m + (long)M * k] : 0.f; }
    for (int e = t; e < K * BN; e += 256) { int n = e / K, k = e % K; Bs[k][n] = n0 + n < N ? B[k + (long)K * (n0 + n)] : 0.f; }
    __syncthreads();
    float acc[RA][RB];
#pragma unroll
    for (int r = 0; r < RA; r++)
#pragma unroll
      for (int s = 0; s < RB; s++) acc[r][s] = 0;
#pragma unroll 4
    for (int k = 0; k < K; k++) {
      float a[RA], b[RB];
#pragma unroll
      for (int r = 0; r < RA; r++) a[r] = As[k][tx + 32 * r];
#pragma unroll
      for (int s = 0; s < RB; s += 4) *(float4 *)&b[s] = *(const float4 *)&Bs[k][ty * RB + s];
#pragma unroll
      for (int r = 0; r < RA; r++)
#pragma unroll
        for (int s = 0; s < RB; s++) acc[r][s] = fmaf(a[r], b[s], acc[r][s]);
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < RB; s++)
#pragma unroll
      for (int r = 0; r < RA; r++) Cs[(ty * RB + s) * (BM + 4) + tx + 32 * r] = acc[r][s];
    __syncthreads();
    for (int e = t; e < BN * (BM / 4); e += 256) {
      int n = e / (BM / 4), m4 = e % (BM / 4);
      int m = m0 + 4 * m4, nn = n0 + n;
      if (nn < N && m + 3 < M) __stcs((float4 *)(C + m + (long)M * nn), *(float4 *)&Cs[n * (BM + 4) + 4 * m4]);
    }
  }
}


__device__ __forceinline__ void bulk_store(void *g, const void *s, unsigned bytes) {
  unsigned sa = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" :: "l"(g), "r"(sa), "r"(bytes) : "memory");
}
// Compute in registers, stage C in shared (double buffer), one bulk (TMA) copy per column.
template <int RA, int RB, int OCC>
__global__ void __launch_bounds__(256, OCC) k_tma(float *C, const float *__restrict__ A, const float *__restrict__ B, int M, int N, int K) {
  constexpr int BM = 32 * RA, BN = 8 * RB, KMAX = 32;
  extern __shared__ __align__(128) float sm[];
  float (*As)[BM] = (float (*)[BM])sm;
  float (*Bs)[BN + 4] = (float (*)[BN + 4])(sm + KMAX * BM);
  float *Cs0 = sm + KMAX * BM + KMAX * (BN + 4);
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32, t = threadIdx.x;
  const int tm = (M + BM - 1) / BM, tn = (N + BN - 1) / BN;
  const long ntiles = (long)tm * tn;
  int it = 0;
  for (long tile = blockIdx.x; tile < ntiles; tile += gridDim.x, it++) {
    const int m0 = (tile % tm) * BM, n0 = (tile / tm) * BN;
    float *Cs = Cs0 + (it & 1) * BM * BN;
    if (t < BN) asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
    __syncthreads();
    for (int e = t; e < K * BM; e += 256) { int k = e / BM, m = e % BM; As[k][m] = m0 + m < M ? A[m0 + m + (long)M * k] : 0.f; }
    for (int e = t; e < K * BN; e += 256) { int n = e / K, k = e % K; Bs[k][n] = n0 + n < N ? B[k + (long)K * (n0 + n)] : 0.f; }
    __syncthreads();
    float acc[RA][RB];
#pragma unroll
    for (int r = 0; r < RA; r++)
#pragma unroll
      for (int s = 0; s < RB; s++) acc[r][s] = 0;
#pragma unroll 4
    for (int k = 0; k < K; k++) {
      float a[RA], b[RB];
#pragma unroll
      for (int r = 0; r < RA; r++) a[r] = As[k][tx + 32 * r];
#pragma unroll
      for (int s = 0; s < RB; s += 4) *(float4 *)&b[s] = *(const float4 *)&Bs[k][ty * RB + s];
#pragma unroll
      for (int r = 0; r < RA; r++)
#pragma unroll
        for (int s = 0; s < RB; s++) acc[r][s] = fmaf(a[r], b[s], acc[r][s]);
    }
#pragma unroll
    for (int s = 0; s < RB; s++)
#pragma unroll
      for (int r = 0; r < RA; r++) Cs[(ty * RB + s) * BM + tx + 32 * r] = acc[r][s];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (t < BN && n0 + t < N) {
      int rows = min(BM, M - m0);
      bulk_store(C + m0 + (long)M * (n0 + t), Cs + t * BM, rows * 4);
    }
    if (t < BN) asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  }
  if (t < BN) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

static float run(const char *name, void (*launch)(void), int reps, double bytes, double flops) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  launch(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int i = 0; i < reps; i++) {
    cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
  }
  printf("%-40s %9.1f us  %6.2f TB/s(C)  %6.2f TFLOP/s\n", name, best * 1e3, bytes / best / 1e9, flops / best / 1e9);
  return best;
}
static float *gA, *gB, *gC, *gR; static int gM, gN, gK, gSM;
static double maxerr() {
  static float *h1, *h2; size_t n = (size_t)gM * gN;
  if (!h1) { h1 = (float *)malloc(n * 4); h2 = (float *)malloc(n * 4); }
  CK(cudaMemcpy(h1, gC, n * 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(h2, gR, n * 4, cudaMemcpyDeviceToHost));
  double m = 0; for (size_t i = 0; i < n; i++) { double d = fabs(h1[i] - h2[i]); if (d > m) m = d; }
  CK(cudaMemset(gC, 0xff, n * 4));
  return m;
}
#define TILE(name, RA, RB, MODE, OCC, PERS) \
  static void L_##name() { constexpr int BM = 32 * RA, BN = 8 * RB; long nt = (long)((gM + BM - 1) / BM) * ((gN + BN - 1) / BN); \
    k_tile<RA, RB, 32, MODE, OCC><<<PERS ? gSM * OCC : nt, 256>>>(gC, gA, gB, gM, gN, gK, PERS); }
#define TILEST(name, RA, RB, OCC, PERS) \
  static void L_##name() { constexpr int BM = 32 * RA, BN = 8 * RB; long nt = (long)((gM + BM - 1) / BM) * ((gN + BN - 1) / BN); \
    size_t sh = 4 * (size_t)(32 * BM + 32 * (BN + 4)); if (sh < 4 * (size_t)BN * (BM + 4)) sh = 4 * (size_t)BN * (BM + 4); \
    cudaFuncSetAttribute(k_tile_st<RA, RB, 32, OCC>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sh); \
    k_tile_st<RA, RB, 32, OCC><<<PERS ? gSM * OCC : nt, 256, sh>>>(gC, gA, gB, gM, gN, gK, PERS); }
#define TMA(name, RA, RB, OCC) \
  static void L_##name() { constexpr int BM = 32 * RA, BN = 8 * RB; size_t sh = 4 * (size_t)(32 * BM + 32 * (BN + 4) + 2 * BM * BN); \
    cudaFuncSetAttribute(k_tma<RA, RB, OCC>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sh); \
    k_tma<RA, RB, OCC><<<gSM * OCC, 256, sh>>>(gC, gA, gB, gM, gN, gK); }
TMA(tma4x16, 4, 16, 1)
TMA(tma4x8o2, 4, 8, 2)
TMA(tma2x8o3, 2, 8, 3)
TMA(tma4x4o3, 4, 4, 3)
TILE(t4x16c, 4, 16, 3, 2, 0)
TILE(t4x16, 4, 16, 0, 1, 0)
TILE(t4x16o2, 4, 16, 0, 2, 0)
TILE(t4x16cs, 4, 16, 1, 2, 0)
TILE(t4x16st, 4, 16, 2, 2, 0)
TILE(t4x16p2, 4, 16, 0, 2, 1)
TILE(t4x16p3, 4, 16, 0, 3, 1)
TILE(t4x8o3, 4, 8, 0, 3, 0)
TILE(t2x8o4, 2, 8, 0, 4, 0)
TILE(t4x4o4, 4, 4, 0, 4, 0)
TILE(t8x8o2, 8, 8, 0, 2, 0)
TILEST(s4x16o2, 4, 16, 2, 0)
TILEST(s4x8o3, 4, 8, 3, 0)
TILEST(s4x16p2, 4, 16, 2, 1)
static long gn4; static float4 *gX;
static void L_write() { k_write<<<gSM * 8, 256>>>((float4 *)gC, gn4); }
static void L_copy() { k_copy<<<gSM * 8, 256>>>((float4 *)gC, gX, gn4); }
int main(int argc, char **argv) {
  gM = argc > 1 ? atoi(argv[1]) : 11520; gN = argc > 2 ? atoi(argv[2]) : 8000; gK = argc > 3 ? atoi(argv[3]) : 24;
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); gSM = p.multiProcessorCount;
  printf("%s, %d SMs; M=%d N=%d K=%d\n", p.name, gSM, gM, gN, gK);
  size_t nc = (size_t)gM * gN;
  CK(cudaMalloc(&gA, (size_t)gM * gK * 4)); CK(cudaMalloc(&gB, (size_t)gN * gK * 4));
  CK(cudaMalloc(&gC, nc * 4)); CK(cudaMalloc(&gR, nc * 4)); CK(cudaMalloc(&gX, nc * 4));
  { float *h = (float *)malloc(((size_t)gM + gN) * gK * 4); for (size_t i = 0; i < ((size_t)gM + gN) * gK; i++) h[i] = (rand() % 2001 - 1000) / 1000.f;
    CK(cudaMemcpy(gA, h, (size_t)gM * gK * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(gB, h + (size_t)gM * gK, (size_t)gN * gK * 4, cudaMemcpyHostToDevice)); }
  k_ref<<<(nc + 255) / 256, 256>>>(gR, gA, gB, gM, gN, gK); CK(cudaDeviceSynchronize());
  const char *only = argc > 4 ? argv[4] : 0;
  gn4 = nc / 4; double bytes = nc * 4.0, fl = 2.0 * nc * gK;
  if (!only) { run("write only (float4)", L_write, 20, bytes, fl);
  run("copy (float4; C bytes)", L_copy, 20, bytes, fl); }
#define R(name) if (!only || !strcmp(only, #name)) { run(#name, L_##name, 20, bytes, fl); printf("%40s maxerr %.3g\n", "", maxerr()); }
  R(tma4x16) R(tma4x8o2) R(tma2x8o3) R(tma4x4o3) R(t4x16c) R(t4x16) R(t4x16o2) R(t4x16cs) R(t4x16st) R(t4x16p2) R(t4x16p3) R(t4x8o3) R(t2x8o4) R(t4x4o4) R(t8x8o2)
  R(s4x16o2) R(s4x8o3) R(s4x16p2)
  return 0;
}
