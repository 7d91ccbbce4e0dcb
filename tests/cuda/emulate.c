/* emulate.c - runs the CUDA dialect of the kernels on the host, to check
 * what they compute, not only that they compile: the validation matrix
 * (tests/opencl/matrix_cases.h) for one element type, on a test-only
 * backend that compiles each generated CUDA source (port.h + cuda/compat.h
 * + contract.cl, exactly as NVRTC gets it) with the host's C++ compiler
 * and runs every block of a launch as real threads that meet at
 * __syncthreads.  The dynamic shared memory a launch asks for is poisoned
 * before each block and fenced by a canary after it, so a wrong size from
 * the generator shows.  This proves compat.h (vectors, lanes, fp16 and
 * bf16, loads) and the shared-memory carving without a GPU; the fp16
 * conversions run compat.h's portable code, not the PTX/HIP instructions.
 *
 * usage: cuda_emulate TYPE [--seed N] [--quick] [--limits] [--only PARAMSET]
 * The tensor-core parameter sets run over the awkward sizes (the 7s and the
 * prime) unless --only names one; --quick limits every set to those.
 * --limits runs the limits (below) instead of the matrix.
 * Needs a C++17 compiler: $TCX_TEST_CXX, else c++ (exit 77 without one).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "notation/notation.h"
#include "run/run.h"

#include "../opencl/matrix_cases.h"

#define SMEM_MAX (256 * 1024)
#define CANARY	 4096

/* What the host compiler needs to take CUDA C++: the CUDA words as plain
 * C++, threadIdx per thread, __syncthreads as a barrier of the block. */
static const char prelude[] = "#include <cmath>\n"
			      "#include <cstring>\n"
			      "#include <pthread.h>\n"
			      "#include <sched.h>\n"
			      "#include <cstdlib>\n"
			      "#define __global__\n"
			      "#define __device__\n"
			      "#define __forceinline__ inline\n"
			      "#define __shared__\n"
			      "#define __restrict__ __restrict\n"
			      "#define __launch_bounds__(...)\n"
			      "#define __grid_constant__\n"
			      "struct tcx_emu_dim3 { unsigned x, y, z; };\n"
			      "static thread_local tcx_emu_dim3 threadIdx;\n"
			      "static tcx_emu_dim3 blockIdx, blockDim, gridDim;\n"
			      "static pthread_barrier_t tcx_emu_barrier;\n"
			      "/* named barrier 1: the warpgroup kernel's producer, 128 threads */\n"
			      "static pthread_barrier_t tcx_emu_bar1;\n"
			      "/* each warpgroup's own (the warpgroup kernel's A from registers) */\n"
			      "static pthread_barrier_t tcx_emu_wgbar[8];\n"
			      "/* which of two buffers the next emulated wgmma with A from\n"
			      " * registers trades them through (compat.h) */\n"
			      "static thread_local int tcx_emu_rsp;\n"
			      "static bool tcx_emu_barrier_made;\n"
			      "#define __syncthreads() pthread_barrier_wait(&tcx_emu_barrier)\n"
			      "alignas(1024) unsigned char tcx_smem["
			      "(256 + 4) * 1024"
			      "];\n"
			      "static inline float __uint_as_float(unsigned u)\n"
			      "{ float f; std::memcpy(&f, &u, 4); return f; }\n"
			      "static inline unsigned __float_as_uint(float f)\n"
			      "{ unsigned u; std::memcpy(&u, &f, 4); return u; }\n"
			      "using std::fma;\n"
			      "static inline long min(long a, long b) { return a < b ? a : b; }\n"
			      "#line 1 \"generated\"\n";

/* The launch wrappers: cuLaunchKernel's kernelParams convention, by the
 * kernels' parameters in kernels/common/abi.h's order. */
static const char epilogue[] =
    "\n#line 1 \"emulate-epilogue\"\n"
    "extern \"C\" void tcx_emu_tcx_contract(void **a)\n"
    "{\n"
    "\ttcx_contract(*(DATA_T **)a[TCX_PARAM_C], *(const DATA_T **)a[TCX_PARAM_P],\n"
    "\t\t     *(const DATA_T **)a[TCX_PARAM_Q], *(VAL_T **)a[TCX_PARAM_W],\n"
    "\t\t     *(const struct tcx_args *)a[TCX_PARAM_ARGS],\n"
    "\t\t     *(const SCALAR_T *)a[TCX_PARAM_ALPHA], *(const SCALAR_T *)a[TCX_PARAM_BETA]\n"
    "#if MI_WGMMA\n"
    "\t\t     , *(const tcx_tmap *)a[TCX_PARAM_TMAP_P], *(const tcx_tmap *)a[TCX_PARAM_TMAP_Q],\n"
    "\t\t     *(const struct tcx_tma *)a[TCX_PARAM_TMA]\n"
    "#endif\n"
    "\t\t     );\n"
    "}\n"
    "extern \"C\" int tcx_emu_contract_args(void)\n"
    "{\n"
    "\treturn MI_WGMMA ? TCX_PARAMS_WGMMA : TCX_PARAMS;\n"
    "}\n"
    "extern \"C\" void tcx_emu_tcx_gsu_reduce(void **a)\n"
    "{\n"
    "\ttcx_gsu_reduce(*(DATA_T **)a[TCX_REDUCE_C], *(const VAL_T **)a[TCX_REDUCE_W],\n"
    "\t\t       *(const struct tcx_args *)a[TCX_REDUCE_ARGS],\n"
    "\t\t       *(const SCALAR_T *)a[TCX_REDUCE_ALPHA], *(const SCALAR_T *)a[TCX_REDUCE_BETA],\n"
    "\t\t       *(const long *)a[TCX_REDUCE_TOTAL]);\n"
    "}\n"
    "extern \"C\" void tcx_emu_block(const unsigned *b, const unsigned *d, const unsigned *g)\n"
    "{\n"
    "\tblockIdx = { b[0], b[1], b[2] };\n"
    "\tblockDim = { d[0], d[1], d[2] };\n"
    "\tgridDim = { g[0], g[1], g[2] };\n"
    "}\n"
    "extern \"C\" void tcx_emu_thread(unsigned x, unsigned y, unsigned z)\n"
    "{\n"
    "\tthreadIdx = { x, y, z };\n"
    "\ttcx_emu_rsp = 0;\n"
    "}\n"
    "extern \"C\" void tcx_emu_barrier_init(unsigned n)\n"
    "{\n"
    "\tif (tcx_emu_barrier_made)\n"
    "\t\tpthread_barrier_destroy(&tcx_emu_barrier);\n"
    "\tif (tcx_emu_barrier_made) {\n"
    "\t\tpthread_barrier_destroy(&tcx_emu_bar1);\n"
    "\t\tfor (int w = 0; w < 8; w++)\n"
    "\t\t\tpthread_barrier_destroy(&tcx_emu_wgbar[w]);\n"
    "\t}\n"
    "\tpthread_barrier_init(&tcx_emu_barrier, NULL, n);\n"
    "\tpthread_barrier_init(&tcx_emu_bar1, NULL, n < 128 ? n : 128);\n"
    "\tfor (int w = 0; w < 8; w++)\n"
    "\t\tpthread_barrier_init(&tcx_emu_wgbar[w], NULL, n < 128 ? n : 128);\n"
    "\ttcx_emu_barrier_made = true;\n"
    "}\n"
    "extern \"C\" unsigned char *tcx_emu_smem(void)\n"
    "{\n"
    "\treturn tcx_smem;\n"
    "}\n";

typedef void (*kernel_fn)(void **);

struct device {
	struct device_base base; /* first: backend.c casts to it */
	struct device_info info;
	const char *cxx;
	char dir[64];
	int nbuilt;
};

struct program {
	void *so;
	char *log;
	kernel_fn contract, reduce;
	void (*block)(const unsigned *b, const unsigned *d, const unsigned *g);
	void (*thread)(unsigned x, unsigned y, unsigned z);
	void (*barrier_init)(unsigned n);
	unsigned char *(*smem)(void);
	int (*contract_args)(void);
};

struct buffer {
	void *p;
	size_t size;
};

static const struct device_info *emu_info(const struct device *dev)
{
	return &dev->info;
}

static void emu_program_free(struct program *p)
{
	if (!p)
		return;
	if (p->so)
		dlclose(p->so);
	free(p->log);
	free(p);
}

static const char *emu_build_log(const struct program *p)
{
	return p && p->log ? p->log : "";
}

static enum tcx_status emu_build(struct device *dev, const char *src, size_t len, const char *opts,
				 struct program **out, struct tcx_error *err)
{
	char path[128], so[128], logp[128], cmd[1024];
	struct program *p = calloc(1, sizeof(*p));
	FILE *fp;
	int n = dev->nbuilt++, rc;

	*out = NULL;
	if (!p)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	snprintf(path, sizeof(path), "%s/k%d.cpp", dev->dir, n);
	snprintf(so, sizeof(so), "%s/k%d.so", dev->dir, n);
	snprintf(logp, sizeof(logp), "%s/k%d.log", dev->dir, n);
	fp = fopen(path, "w");
	if (!fp) {
		free(p);
		return tcx_fail(err, TCX_EIO, "cannot write '%s'", path);
	}
	fputs(prelude, fp);
	fwrite(src, 1, len, fp);
	fputs(epilogue, fp);
	fclose(fp);
	snprintf(cmd, sizeof(cmd), "%s -std=c++17 -O1 -fPIC -shared -Wno-psabi -o %s %s -lpthread > %s 2>&1",
		 dev->cxx, so, path, logp);
	rc = system(cmd);
	if (common_read_file(logp, &p->log, NULL, NULL) != TCX_OK)
		p->log = strdup("");
	*out = p;
	if (rc != 0)
		return tcx_fail(err, TCX_EBUILD, "the host compiler rejects the CUDA source %s",
				path);
	p->so = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!p->so)
		return tcx_fail(err, TCX_EBUILD, "cannot load %s: %s", so, dlerror());
	*(void **)&p->contract = dlsym(p->so, "tcx_emu_tcx_contract");
	*(void **)&p->reduce = dlsym(p->so, "tcx_emu_tcx_gsu_reduce");
	*(void **)&p->block = dlsym(p->so, "tcx_emu_block");
	*(void **)&p->thread = dlsym(p->so, "tcx_emu_thread");
	*(void **)&p->barrier_init = dlsym(p->so, "tcx_emu_barrier_init");
	*(void **)&p->smem = dlsym(p->so, "tcx_emu_smem");
	*(void **)&p->contract_args = dlsym(p->so, "tcx_emu_contract_args");
	if (!p->contract || !p->reduce || !p->block || !p->thread || !p->barrier_init || !p->smem ||
	    !p->contract_args)
		return tcx_fail(err, TCX_EBUILD, "%s lacks the emulation entry points", so);
	unlink(path);
	unlink(so);
	unlink(logp);
	return TCX_OK;
}

static enum tcx_status emu_alloc(struct device *dev, size_t bytes, struct buffer **out,
				 struct tcx_error *err)
{
	struct buffer *b = calloc(1, sizeof(*b));

	*out = NULL;
	if (!b || !(b->p = malloc(bytes ? bytes : 1))) {
		free(b);
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	}
	/* garbage, as device memory is */
	memset(b->p, 0x5c, bytes);
	b->size = bytes;
	*out = b;
	return TCX_OK;
}

static void emu_free(struct buffer *b)
{
	if (b)
		free(b->p);
	free(b);
}

static enum tcx_status emu_write(struct device *dev, struct buffer *b, size_t off, const void *src,
				 size_t bytes, struct tcx_error *err)
{
	if (off > b->size || bytes > b->size - off)
		return tcx_fail(err, TCX_EINVAL, "write past the end of a buffer");
	memcpy((char *)b->p + off, src, bytes);
	return TCX_OK;
}

static enum tcx_status emu_read(struct device *dev, struct buffer *b, size_t off, void *dst,
				size_t bytes, struct tcx_error *err)
{
	if (off > b->size || bytes > b->size - off)
		return tcx_fail(err, TCX_EINVAL, "read past the end of a buffer");
	memcpy(dst, (char *)b->p + off, bytes);
	return TCX_OK;
}

/* A launch's threads: one per thread of a block, kept for all its blocks.
 * Between blocks the launching thread sets the block up, then releases
 * them through `start` and waits for them at `end`. */
struct emu_pool {
	pthread_barrier_t start, end;
	bool quit;
	const struct program *p;
	kernel_fn fn;
	void **params;
};

struct emu_thread {
	pthread_t tid;
	struct emu_pool *pool;
	unsigned x, y, z;
};

static void *thread_main(void *arg)
{
	struct emu_thread *t = arg;
	struct emu_pool *pool = t->pool;

	pool->p->thread(t->x, t->y, t->z);
	for (;;) {
		pthread_barrier_wait(&pool->start);
		if (pool->quit)
			break;
		pool->fn(pool->params);
		pthread_barrier_wait(&pool->end);
	}
	return NULL;
}

static enum tcx_status emu_launch(struct device *dev, struct program *p, const struct launch *l,
				  double *event_ms, struct tcx_error *err)
{
	void *params[LAUNCH_MAX_ARGS];
	unsigned grid[3], block[3], b[3];
	size_t dyn = 0, nt = 1, k = 0;
	int np = 0, want;
	kernel_fn fn;
	struct emu_thread *th;
	struct emu_pool pool;
	unsigned char *smem = p->smem();
	enum tcx_status st = TCX_OK;

	if (event_ms)
		*event_ms = 0;
	if (strcmp(l->kernel, TCX_CONTRACT_NAME) == 0) {
		fn = p->contract;
		want = p->contract_args();
	} else if (strcmp(l->kernel, TCX_REDUCE_NAME) == 0) {
		fn = p->reduce;
		want = TCX_REDUCE_PARAMS;
	} else {
		return tcx_fail(err, TCX_ELAUNCH, "no kernel '%s' in the program", l->kernel);
	}
	for (int a = 0; a < l->nargs; a++) {
		const struct karg *g = &l->args[a];

		if (g->kind == KARG_BUFFER)
			params[np++] = (void *)&g->buf->p;
		else if (g->kind == KARG_BYTES)
			params[np++] = (void *)g->ptr;
		else
			dyn += g->size;
	}
	if (np != want)
		return tcx_fail(err, TCX_ELAUNCH, "kernel '%s' takes %d arguments, not %d",
				l->kernel, want, np);
	if (dyn > SMEM_MAX)
		return tcx_fail(err, TCX_ELIMIT, "kernel '%s': %zu bytes of shared memory",
				l->kernel, dyn);
	for (int d = 0; d < 3; d++) {
		if (!l->local[d] || l->global[d] % l->local[d])
			return tcx_fail(err, TCX_ELAUNCH, "kernel '%s': global %zu, block %zu",
					l->kernel, l->global[d], l->local[d]);
		/* the grid's limits, as the CUDA backend checks them */
		if (l->global[d] / l->local[d] > (size_t)dev->info.max_groups[d])
			return tcx_fail(err, TCX_ELIMIT,
					"kernel '%s': %zu blocks in dimension %d exceed the device "
					"limit of %lld",
					l->kernel, l->global[d] / l->local[d], d,
					(long long)dev->info.max_groups[d]);
		grid[d] = (unsigned)(l->global[d] / l->local[d]);
		block[d] = (unsigned)l->local[d];
		nt *= l->local[d];
	}
	if (nt > 1024)
		return tcx_fail(err, TCX_ELIMIT, "kernel '%s': block of %zu threads", l->kernel,
				nt);
	th = calloc(nt, sizeof(*th));
	if (!th)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	pool.quit = false;
	pool.p = p;
	pool.fn = fn;
	pool.params = params;
	pthread_barrier_init(&pool.start, NULL, (unsigned)nt + 1);
	pthread_barrier_init(&pool.end, NULL, (unsigned)nt + 1);
	p->barrier_init((unsigned)nt);
	for (unsigned z = 0; z < block[2]; z++)
		for (unsigned y = 0; y < block[1]; y++)
			for (unsigned x = 0; x < block[0]; x++, k++) {
				th[k] = (struct emu_thread){0, &pool, x, y, z};
				if (pthread_create(&th[k].tid, NULL, thread_main, &th[k])) {
					fprintf(stderr, "cannot start a thread\n");
					exit(1);
				}
			}
	for (b[2] = 0; b[2] < grid[2] && !st; b[2]++)
		for (b[1] = 0; b[1] < grid[1] && !st; b[1]++)
			for (b[0] = 0; b[0] < grid[0] && !st; b[0]++) {
				/* what a block finds in shared memory: NaNs, then a fence */
				memset(smem, 0xff, dyn);
				memset(smem + dyn, 0xa5, CANARY);
				p->block(b, block, grid);
				pthread_barrier_wait(&pool.start);
				pthread_barrier_wait(&pool.end);
				for (size_t c = 0; c < CANARY; c++)
					if (smem[dyn + c] != 0xa5) {
						st =
						    tcx_fail(err, TCX_ELAUNCH,
							     "kernel '%s' wrote shared memory byte "
							     "%zu, past the %zu bytes the launch "
							     "gave it",
							     l->kernel, dyn + c, dyn);
						break;
					}
			}
	pool.quit = true;
	pthread_barrier_wait(&pool.start);
	for (k = 0; k < nt; k++)
		pthread_join(th[k].tid, NULL);
	pthread_barrier_destroy(&pool.start);
	pthread_barrier_destroy(&pool.end);
	free(th);
	return st;
}

/* The device lives on main's stack: nothing to close. */
static void emu_close(struct device *dev)
{
}

static struct tcx_backend_ops emu_ops = {
    .name = "cuda-emu",
    .close = emu_close,
    .info = emu_info,
    .build = emu_build,
    .build_log = emu_build_log,
    .program_free = emu_program_free,
    .alloc = emu_alloc,
    .free = emu_free,
    .write = emu_write,
    .read = emu_read,
    .launch = emu_launch,
};

/* --limits: instead of the matrix, the limits.  Contractions of the most
 * indices tcx takes (16 in C, in A, in B, 16 batch indices, which fill
 * every slot of the kernel's arguments, and 16 bound ones), and launches
 * of more work-groups than a small artificial grid takes along any
 * dimension (the emulated device refuses what exceeds its limits, as CUDA
 * does): the kernels' groups folded over every dimension of the grid, spare
 * groups, GlobalSplitU's reduction, WorkGroupMapping.  The 16 indices
 * have sizes of 1 and 2, the later ones (the last slots) 2. */
static const struct limit_case {
	const char *expr;
	const char *sizes;     /* in id order */
	int64_t max_groups[3]; /* the grid's limits; 0: CUDA's */
} limit_cases[] = {
    {"abcdefgh,ijklmnop->abcdefghijklmnop", "2,2,2,1,1,1,1,1,1,1,1,1,2,2,2,2", {0}},
    {"abcdefghijklmnop,ijklmnop->abcdefgh", "2,2,1,1,1,1,2,2,2,2,1,1,1,1,2,2", {0}},
    {"ijklmnop,abcdefghijklmnop->abcdefgh", "2,2,1,1,1,1,2,2,2,2,1,1,1,1,2,2", {0}},
    {"abcdefghijklmnop,abcdefghijklmnop->abcdefghijklmnop", "2,2,2,1,1,1,1,1,1,1,1,1,2,2,2,2", {0}},
    {"abcdefghijklmnop,abcdefghijklmnop->", "2,2,2,1,1,1,1,1,1,1,1,1,2,2,2,2", {0}},
    /* a batch of 13 (39 groups along dimension 2 with GlobalSplitU 3) over
     * tiles of D0 and D1 (9 x 10 of 1x1 tiles, 1 x 2 of 16x8), folded into
     * a grid of 40 x 5 x 8 */
    {"C[ijk]=A[ilk]*B[jlk]", "9,10,13,9", {40, 5, 8}},
    /* one index of many tiles: a grid of 5 x 3 x 40 */
    {"ik,kj->ij", "97,5,3", {5, 3, 40}},
};

/* CUDA's grid: work-groups along each dimension */
static const int64_t cuda_grid[3] = {INT32_MAX, 65535, 65535};

static int run_case(struct device *dev, enum tcx_dtype t, struct tcx_contraction *c,
		    const struct problem *p, const struct paramset *ps, uint64_t seed,
		    const char *where, int *runs)
{
	struct solution s;
	struct prepared pr;
	struct validate_opts o;
	struct validate_report r;
	struct strbuf log = STRBUF_INIT;
	struct tcx_error err = {0};
	enum tcx_status st;

	solution_default(&s);
	if (solution_parse(&s, ps->params, &err)) {
		printf("FAIL params %s: %s\n", ps->name, err.msg);
		return 1;
	}
	validate_opts_default(&o);
	o.seed = seed;
	o.threads = 1;
	if (c->use_beta) {
		o.alpha[0] = 1.5;
		o.beta[0] = -0.5;
		if (dtype_info(t)->complex) {
			o.alpha[1] = 0.25;
			o.beta[1] = 0.75;
		}
	}
	(*runs)++;
	st = contract_prepare(dev, c, p, &s, &pr, &log, &err);
	if (st == TCX_EREJECT && strstr(err.msg, "EdgeType None")) {
		(*runs)--;
		strbuf_release(&log);
		return 0;
	}
	if (st == TCX_EBUILD)
		printf("%s\n", strbuf_str(&log));
	strbuf_release(&log);
	if (!st)
		st = validate_run(dev, &pr, p, &o, &r, &err);
	if (!st)
		return 0;
	printf("FAIL %-48s %s %-20s: %s (seed %llu)\n", c->expr, where, ps->name, err.msg,
	       (unsigned long long)o.seed);
	for (int m = 0; st == TCX_EMISMATCH && m < r.nlist && m < 3; m++)
		printf("     element %lld: got %g, want %g%s\n", (long long)r.list[m].lin,
		       r.list[m].got[0], r.list[m].want[0],
		       r.list[m].unwritten ? " (never written)" : "");
	return 1;
}

int main(int argc, char **argv)
{
	struct device dev;
	enum tcx_dtype t;
	struct tcx_error err = {0};
	uint64_t seed = 1;
	int failures = 0, runs = 0;
	bool quick = false, limits = false;
	const char *only = NULL; /* one parameter set, by name */
	const char *cxx = getenv("TCX_TEST_CXX");
	char cmd[512], where[64];

	if (argc < 2 || !dtype_parse(argv[1], &t)) {
		fprintf(stderr, "usage: cuda_emulate TYPE [--seed N] [--quick] [--limits] "
				"[--only PARAMSET]\n");
		return 2;
	}
	for (int k = 2; k < argc; k++) {
		if (!strcmp(argv[k], "--seed") && k + 1 < argc)
			seed = strtoull(argv[++k], NULL, 10);
		else if (!strcmp(argv[k], "--quick"))
			quick = true;
		else if (!strcmp(argv[k], "--limits"))
			limits = true;
		else if (!strcmp(argv[k], "--only") && k + 1 < argc)
			only = argv[++k];
	}
	if (!cxx || !*cxx)
		cxx = "c++";
	snprintf(cmd, sizeof(cmd), "%s --version > /dev/null 2>&1", cxx);
	if (system(cmd) != 0) {
		fprintf(stderr,
			"skipped: no C++ compiler '%s' to run the CUDA dialect on the host\n", cxx);
		return 77;
	}

	/* an H100-like device of the CUDA dialect: the generator applies the
	 * GPU rules and emits what the cuda backend would compile */
	memset(&dev, 0, sizeof(dev));
	dev.base.ops = &emu_ops;
	dev.cxx = cxx;
	snprintf(dev.dir, sizeof(dev.dir), "/tmp/tcx-emu-XXXXXX");
	if (!mkdtemp(dev.dir)) {
		fprintf(stderr, "cannot create a directory under /tmp\n");
		return 1;
	}
	snprintf(dev.info.id, sizeof(dev.info.id), "cuda-emu");
	snprintf(dev.info.backend, sizeof(dev.info.backend), "cuda-emu");
	snprintf(dev.info.lang, sizeof(dev.info.lang), "cuda");
	snprintf(dev.info.name, sizeof(dev.info.name), "CUDA dialect on the host");
	snprintf(dev.info.arch, sizeof(dev.info.arch), "sm_90");
	dev.info.type = DEV_GPU;
	dev.info.global_mem = dev.info.max_alloc = 1LL << 32;
	dev.info.local_mem = 227 * 1024;
	dev.info.local_mem_per_cu = 228 * 1024;
	dev.info.max_wg_size = 1024;
	dev.info.max_wg_dim[0] = dev.info.max_wg_dim[1] = 1024;
	dev.info.max_wg_dim[2] = 64;
	memcpy(dev.info.max_groups, cuda_grid, sizeof(cuda_grid));
	dev.info.simd_width = dev.info.wg_multiple = 32;
	dev.info.fp64 = dev.info.fp16 = true;
	printf("CUDA dialect on the host (%s), type %s, seed %llu%s\n", cxx, dtype_info(t)->name,
	       (unsigned long long)seed, limits ? ", the limits" : "");

	for (size_t e = 0; limits && e < ARRAY_SIZE(limit_cases); e++) {
		const struct limit_case *lc = &limit_cases[e];
		struct tcx_contraction *c;
		int64_t sz[TCX_MAX_INDICES];
		struct problem p;

		if (notation_parse(lc->expr, t, LAYOUT_BY_STYLE, &c, &err)) {
			printf("FAIL parse '%s': %s\n", lc->expr, err.msg);
			failures++;
			continue;
		}
		if (sizes_parse_assign(c, lc->sizes, sz, &err) || problem_init(&p, c, sz, &err)) {
			printf("FAIL sizes of '%s': %s\n", lc->expr, err.msg);
			failures++;
			contraction_free(c);
			continue;
		}
		for (int d = 0; d < 3; d++)
			dev.info.max_groups[d] = lc->max_groups[d] ? lc->max_groups[d] : cuda_grid[d];
		snprintf(where, sizeof(where), "grid %lldx%lldx%lld",
			 (long long)dev.info.max_groups[0], (long long)dev.info.max_groups[1],
			 (long long)dev.info.max_groups[2]);
		for (size_t ps = 0; ps < ARRAY_SIZE(paramsets); ps++) {
			if (!paramset_applies(&paramsets[ps], dtype_info(t)->letter, dev.info.lang,
					      dev.info.arch) ||
			    (only && strcmp(only, paramsets[ps].name) != 0))
				continue;
			/* the warpgroup kernel, slowest to emulate by far, reads
			 * its arguments as the others do: the grids only */
			if (paramsets[ps].cuda == 2 && !only && !lc->max_groups[0])
				continue;
			failures += run_case(&dev, t, c, &p, &paramsets[ps],
					     seed + (uint64_t)(e * 131 + ps), where, &runs);
		}
		contraction_free(c);
	}

	for (size_t e = 0; !limits && e < ARRAY_SIZE(exprs); e++) {
		struct tcx_contraction *c;

		if (notation_parse(exprs[e], t, LAYOUT_BY_STYLE, &c, &err)) {
			printf("FAIL parse '%s': %s\n", exprs[e], err.msg);
			failures++;
			continue;
		}
		for (int set = 0; set < MATRIX_SIZE_SETS; set++) {
			int64_t sz[TCX_MAX_INDICES];
			struct problem p;

			/* --quick: the awkward sizes only (7s, the prime, aligned) */
			if (quick && set != 1 && set != 3 && set != 4)
				continue;
			make_sizes(set, c->nidx, sz);
			if (problem_init(&p, c, sz, &err)) {
				printf("FAIL sizes of '%s': %s\n", exprs[e], err.msg);
				failures++;
				continue;
			}
			snprintf(where, sizeof(where), "set %d", set);
			for (size_t ps = 0; ps < ARRAY_SIZE(paramsets); ps++) {
				if (!paramset_applies(&paramsets[ps], dtype_info(t)->letter,
						      dev.info.lang, dev.info.arch) ||
				    !size_set_applies(&paramsets[ps], set) ||
				    (only && strcmp(only, paramsets[ps].name) != 0))
					continue;
				/* the CUDA-only (tensor-core) sets emulate each warp's
				 * collectives lane by lane under barriers, ten times the
				 * cost of the others: the awkward sizes only, unless
				 * --only names one; the GPU matrix runs every size */
				if (paramsets[ps].cuda && !only && set != 1 && set != 3 && set != 4)
					continue;
				failures += run_case(&dev, t, c, &p, &paramsets[ps],
						     seed + (uint64_t)(e * 131 + set * 7 + ps),
						     where, &runs);
			}
		}
		contraction_free(c);
	}
	printf("%d runs, %lu kernels compiled, %d failed\n", runs, dev.base.builds, failures);
	device_close(&dev);
	rmdir(dev.dir);
	return failures ? 1 : 0;
}
