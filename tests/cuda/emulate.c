/* emulate.c - runs the CUDA dialect of the kernels on the host, to check
 * what they compute, not only that they compile: the validation matrix
 * (tests/opencl/matrix_cases.h) for one element type, on a test-only
 * backend that compiles each generated CUDA source (port.h + cuda/compat.h
 * + contract.cl, exactly as NVRTC gets it) with the host's C++ compiler
 * and runs every block of a launch, its threads as fibers on one host
 * thread, each run until it waits (__syncthreads, a named barrier, an
 * mbarrier) and then the next, so a block whose every thread waits with
 * nothing left to change fails as a deadlock instead of hanging.  The dynamic shared memory a launch asks for is poisoned
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/check.h"
#include "notation/notation.h"
#include "run/run.h"

#include "../opencl/matrix_cases.h"

#define SMEM_MAX (256 * 1024)
#define CANARY	 4096

/* What the host compiler needs to take CUDA C++: the CUDA words as plain
 * C++, threadIdx per thread, __syncthreads as a barrier of the block. */
static const char prelude[] = "#include <cmath>\n"
			      "#include <cstring>\n"
			      "#include <cstdlib>\n"
			      "#define __global__\n"
			      "#define __device__\n"
			      "#define __forceinline__ inline\n"
			      "#define __shared__\n"
			      "#define __restrict__ __restrict\n"
			      "#define __launch_bounds__(...)\n"
			      "#define __grid_constant__\n"
			      "struct tcx_emu_dim3 { unsigned x, y, z; };\n"
			      "/* the running thread's: the scheduler sets them at every switch\n"
			      " * (external, so that no call is assumed to leave them alone) */\n"
			      "extern tcx_emu_dim3 threadIdx;\n"
			      "extern int tcx_emu_rsp;\n"
			      "static tcx_emu_dim3 blockIdx, blockDim, gridDim;\n"
			      "/* waits passed and arrivals made: a sweep of the scheduler that\n"
			      " * changes nothing is a deadlock */\n"
			      "static unsigned long tcx_emu_progress;\n"
			      "void tcx_emu_yield(void);\n"
			      "struct tcx_emu_bar { unsigned n, arrived, gen; };\n"
			      "/* the block's barrier; named barrier 1, the warpgroup kernel's\n"
			      " * producer (128 threads); each warpgroup's own (its A from registers) */\n"
			      "static tcx_emu_bar tcx_emu_barrier, tcx_emu_bar1, tcx_emu_wgbar[8];\n"
			      "static void tcx_emu_bar_wait(tcx_emu_bar *b)\n"
			      "{\n"
			      "\tconst unsigned g = __atomic_load_n(&b->gen, __ATOMIC_SEQ_CST);\n"
			      "\ttcx_emu_progress++;\n"
			      "\tif (++b->arrived == b->n) {\n"
			      "\t\tb->arrived = 0;\n"
			      "\t\t__atomic_store_n(&b->gen, g + 1, __ATOMIC_SEQ_CST);\n"
			      "\t\treturn;\n"
			      "\t}\n"
			      "\twhile (__atomic_load_n(&b->gen, __ATOMIC_SEQ_CST) == g)\n"
			      "\t\ttcx_emu_yield();\n"
			      "\ttcx_emu_progress++;\n"
			      "}\n"
			      "#define __syncthreads() tcx_emu_bar_wait(&tcx_emu_barrier)\n"
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
    "/* A block's threads as fibers on one host thread, each run until it\n"
    " * waits (a barrier, an mbarrier), then the next: no thread can miss a\n"
    " * wake-up, and a sweep over them all that changes nothing is a deadlock. */\n"
    "#if defined(__x86_64__)\n"
    "/* a switch saves the callee-saved registers on the stack it leaves and\n"
    " * that stack's pointer in *save, then takes the other's: no system call\n"
    " * (swapcontext's signal mask costs one a switch, its sanitizer\n"
    " * interceptor clears the stack's shadow) */\n"
    "extern \"C\" void tcx_emu_switch(void **save, void *to);\n"
    "asm(\".pushsection .text\\n.globl tcx_emu_switch\\n.hidden tcx_emu_switch\\n\"\n"
    "    \".type tcx_emu_switch, @function\\ntcx_emu_switch:\\n\"\n"
    "    \"pushq %rbp\\npushq %rbx\\npushq %r12\\npushq %r13\\npushq %r14\\npushq %r15\\n\"\n"
    "    \"movq %rsp, (%rdi)\\nmovq %rsi, %rsp\\n\"\n"
    "    \"popq %r15\\npopq %r14\\npopq %r13\\npopq %r12\\npopq %rbx\\npopq %rbp\\nret\\n\"\n"
    "    \".popsection\\n\");\n"
    "struct tcx_emu_ctx { void *sp; };\n"
    "static void tcx_emu_swap(tcx_emu_ctx *from, tcx_emu_ctx *to)\n"
    "{\n"
    "\ttcx_emu_switch(&from->sp, to->sp);\n"
    "}\n"
    "/* the first switch to c pops six zero registers, then returns to entry\n"
    " * with the stack as a call leaves it */\n"
    "static void tcx_emu_make(tcx_emu_ctx *c, unsigned char *stack, size_t size,\n"
    "\t\t\t void (*entry)(void))\n"
    "{\n"
    "\tvoid **sp = (void **)(stack + size) - 8;\n"
    "\n"
    "\tfor (int r = 0; r < 8; r++)\n"
    "\t\tsp[r] = 0;\n"
    "\tsp[6] = (void *)entry;\n"
    "\tc->sp = sp;\n"
    "}\n"
    "#else\n"
    "#include <ucontext.h>\n"
    "struct tcx_emu_ctx { ucontext_t uc; };\n"
    "static void tcx_emu_swap(tcx_emu_ctx *from, tcx_emu_ctx *to)\n"
    "{\n"
    "\tswapcontext(&from->uc, &to->uc);\n"
    "}\n"
    "static void tcx_emu_make(tcx_emu_ctx *c, unsigned char *stack, size_t size,\n"
    "\t\t\t void (*entry)(void))\n"
    "{\n"
    "\tgetcontext(&c->uc);\n"
    "\tc->uc.uc_stack.ss_sp = stack;\n"
    "\tc->uc.uc_stack.ss_size = size;\n"
    "\tc->uc.uc_link = NULL;\n"
    "\tmakecontext(&c->uc, entry, 0);\n"
    "}\n"
    "#endif\n"
    "tcx_emu_dim3 threadIdx;\n"
    "int tcx_emu_rsp;\n"
    "/* each thread's stack: TCX_EMU_STACK bytes (the compile command's) of\n"
    " * the launcher's, a guard page below each */\n"
    "struct tcx_emu_fiber { tcx_emu_ctx ctx; tcx_emu_dim3 id; int rsp; bool done; };\n"
    "static tcx_emu_fiber tcx_emu_f[1024];\n"
    "static unsigned char *tcx_emu_stacks;\n"
    "static unsigned tcx_emu_cur;\n"
    "static tcx_emu_ctx tcx_emu_sched;\n"
    "static void (*tcx_emu_fn)(void **);\n"
    "static void **tcx_emu_args;\n"
    "void tcx_emu_yield(void)\n"
    "{\n"
    "\ttcx_emu_swap(&tcx_emu_f[tcx_emu_cur].ctx, &tcx_emu_sched);\n"
    "}\n"
    "/* a thread's whole life; the scheduler never resumes it once done */\n"
    "static void tcx_emu_start(void)\n"
    "{\n"
    "\ttcx_emu_fn(tcx_emu_args);\n"
    "\ttcx_emu_f[tcx_emu_cur].done = true;\n"
    "\ttcx_emu_progress++;\n"
    "\ttcx_emu_yield();\n"
    "\tabort();\n"
    "}\n"
    "/* runs block b of a grid g of blocks d on the stacks given: 1 on a\n"
    " * deadlock, else 0 */\n"
    "static int tcx_emu_run(void (*fn)(void **), void **a, const unsigned *b,\n"
    "\t\t       const unsigned *d, const unsigned *g, unsigned char *stacks)\n"
    "{\n"
    "\tconst unsigned n = d[0] * d[1] * d[2];\n"
    "\tunsigned left = n, k = 0;\n"
    "\n"

    "\tblockIdx = { b[0], b[1], b[2] };\n"
    "\tblockDim = { d[0], d[1], d[2] };\n"
    "\tgridDim = { g[0], g[1], g[2] };\n"
    "\ttcx_emu_barrier = { n, 0, 0 };\n"
    "\ttcx_emu_bar1 = { n < 128 ? n : 128, 0, 0 };\n"
    "\tfor (int w = 0; w < 8; w++)\n"
    "\t\ttcx_emu_wgbar[w] = { n < 128 ? n : 128, 0, 0 };\n"
    "\ttcx_emu_stacks = stacks;\n"
    "\ttcx_emu_fn = fn;\n"
    "\ttcx_emu_args = a;\n"
    "\tfor (unsigned z = 0; z < d[2]; z++)\n"
    "\t\tfor (unsigned y = 0; y < d[1]; y++)\n"
    "\t\t\tfor (unsigned x = 0; x < d[0]; x++, k++) {\n"
    "\t\t\t\ttcx_emu_fiber *f = &tcx_emu_f[k];\n"
    "\n"
    "\t\t\t\ttcx_emu_make(&f->ctx, tcx_emu_stacks + (size_t)k * TCX_EMU_STACK,\n"
    "\t\t\t\t\t     TCX_EMU_STACK, tcx_emu_start);\n"
    "\t\t\t\tf->id = { x, y, z };\n"
    "\t\t\t\tf->rsp = 0;\n"
    "\t\t\t\tf->done = false;\n"
    "\t\t\t}\n"
    "\twhile (left) {\n"
    "\t\tconst unsigned long before = tcx_emu_progress;\n"
    "\n"
    "\t\tfor (k = 0; k < n; k++) {\n"
    "\t\t\ttcx_emu_fiber *f = &tcx_emu_f[k];\n"
    "\n"
    "\t\t\tif (f->done)\n"
    "\t\t\t\tcontinue;\n"
    "\t\t\ttcx_emu_cur = k;\n"
    "\t\t\tthreadIdx = f->id;\n"
    "\t\t\ttcx_emu_rsp = f->rsp;\n"
    "\t\t\ttcx_emu_swap(&tcx_emu_sched, &f->ctx);\n"
    "\t\t\tf->rsp = tcx_emu_rsp;\n"
    "\t\t\tleft -= f->done;\n"
    "\t\t}\n"
    "\t\tif (left && tcx_emu_progress == before)\n"
    "\t\t\treturn 1;\n"
    "\t}\n"
    "\treturn 0;\n"
    "}\n"
    "extern \"C\" int tcx_emu_run_contract(void **a, const unsigned *b, const unsigned *d,\n"
    "\t\t\t\t    const unsigned *g, unsigned char *stacks)\n"
    "{\n"
    "\treturn tcx_emu_run(tcx_emu_tcx_contract, a, b, d, g, stacks);\n"
    "}\n"
    "extern \"C\" int tcx_emu_run_reduce(void **a, const unsigned *b, const unsigned *d,\n"
    "\t\t\t\t  const unsigned *g, unsigned char *stacks)\n"
    "{\n"
    "\treturn tcx_emu_run(tcx_emu_tcx_gsu_reduce, a, b, d, g, stacks);\n"
    "}\n"
    "extern \"C\" unsigned char *tcx_emu_smem(void)\n"
    "{\n"
    "\treturn tcx_smem;\n"
    "}\n";

/* runs one block of a launch on the device's stacks: 0, 1 on a deadlock */
typedef int (*block_fn)(void **a, const unsigned *b, const unsigned *d, const unsigned *g,
			unsigned char *stacks);

/* the emulated threads' stacks, as the program's epilogue lays them out */
#define EMU_STACK (128 * 1024)
#define EMU_GUARD 4096

struct device {
	struct device_base base; /* first: backend.c casts to it */
	struct device_info info;
	const char *cxx;
	unsigned char *stacks; /* 1024 of EMU_STACK bytes, each over a guard page */
	char dir[64];
	int nbuilt;
};

struct program {
	struct program_head head; /* first: program_log reads its log */
	void *so;
	block_fn contract, reduce;
	unsigned char *(*smem)(void);
	int (*contract_args)(void);
};

struct buffer {
	size_t size; /* first, as backend.h asks */
	void *p;
};

static void emu_program_free(struct program *p)
{
	if (!p)
		return;
	if (p->so)
		dlclose(p->so);
	free(p->head.log);
	free(p);
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
	p->head.dev = dev; /* device_launch checks it */
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
	snprintf(cmd, sizeof(cmd),
		 "%s -std=c++17 -O1 -fPIC -shared -Wno-psabi -DTCX_EMU_STACK=%d -o %s %s > %s 2>&1",
		 dev->cxx, EMU_STACK, so, path, logp);
	rc = system(cmd);
	if (common_read_file(logp, &p->head.log, NULL, NULL) != TCX_OK)
		p->head.log = strdup("");
	*out = p;
	if (rc != 0)
		return tcx_fail(err, TCX_EBUILD, "the host compiler rejects the CUDA source %s",
				path);
	p->so = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!p->so)
		return tcx_fail(err, TCX_EBUILD, "cannot load %s: %s", so, dlerror());
	*(void **)&p->contract = dlsym(p->so, "tcx_emu_run_contract");
	*(void **)&p->reduce = dlsym(p->so, "tcx_emu_run_reduce");
	*(void **)&p->smem = dlsym(p->so, "tcx_emu_smem");
	*(void **)&p->contract_args = dlsym(p->so, "tcx_emu_contract_args");
	if (!p->contract || !p->reduce || !p->smem || !p->contract_args)
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

static enum tcx_status emu_copy(struct device *dev, struct buffer *b, size_t off, void *host,
				size_t bytes, bool to_dev, struct tcx_error *err)
{
	if (to_dev)
		memcpy((char *)b->p + off, host, bytes);
	else
		memcpy(host, (char *)b->p + off, bytes);
	return TCX_OK;
}

static enum tcx_status emu_launch(struct device *dev, struct program *p, const struct launch *l,
				  double *event_ms, struct tcx_error *err)
{
	void *params[LAUNCH_MAX_ARGS];
	unsigned grid[3], block[3], b[3];
	size_t dyn = 0, nt = 1;
	int np = 0, want;
	block_fn fn;
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
	for (b[2] = 0; b[2] < grid[2] && !st; b[2]++)
		for (b[1] = 0; b[1] < grid[1] && !st; b[1]++)
			for (b[0] = 0; b[0] < grid[0] && !st; b[0]++) {
				int rc;

				/* what a block finds in shared memory: NaNs, then a fence */
				memset(smem, 0xff, dyn);
				memset(smem + dyn, 0xa5, CANARY);
				rc = fn(params, b, block, grid, dev->stacks);
				if (rc)
					return tcx_fail(err, TCX_ELAUNCH,
							"kernel '%s' deadlocks: every thread of "
							"block (%u,%u,%u) waits",
							l->kernel, b[0], b[1], b[2]);
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
	return st;
}

/* The device lives on main's stack: nothing to close. */
static void emu_close(struct device *dev)
{
}

static struct tcx_backend_ops emu_ops = {
    .name = "cuda-emu",
    .close = emu_close,
    .build = emu_build,
    .program_free = emu_program_free,
    .alloc = emu_alloc,
    .free = emu_free,
    .copy = emu_copy,
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
	const char *sizes;     /* by name, or in Tensile notation's (id) order */
	int64_t max_groups[3]; /* the grid's limits; 0: CUDA's */
} limit_cases[] = {
    {"abcdefgh,ijklmnop->abcdefghijklmnop",
     "a=2,b=2,c=2,d=2,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1,n=2,o=2,p=2", {0}},
    {"abcdefghijklmnop,ijklmnop->abcdefgh",
     "a=2,b=2,c=1,d=1,e=1,f=1,g=2,h=2,i=2,j=2,k=1,l=1,m=1,n=1,o=2,p=2", {0}},
    {"ijklmnop,abcdefghijklmnop->abcdefgh",
     "a=2,b=2,c=1,d=1,e=1,f=1,g=2,h=2,i=2,j=2,k=1,l=1,m=1,n=1,o=2,p=2", {0}},
    {"abcdefghijklmnop,abcdefghijklmnop->abcdefghijklmnop",
     "a=2,b=2,c=2,d=2,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1,n=2,o=2,p=2", {0}},
    {"abcdefghijklmnop,abcdefghijklmnop->",
     "a=2,b=2,c=2,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=2,n=2,o=2,p=2", {0}},
    /* a batch of 13 (39 groups along dimension 2 with GlobalSplitU 3) over
     * tiles of D0 and D1 (9 x 10 of 1x1 tiles, 1 x 2 of 16x8), folded into
     * a grid of 40 x 5 x 8 */
    {"C[ijk]=A[ilk]*B[jlk]", "9,10,13,9", {40, 5, 8}},
    /* one index of many tiles: a grid of 5 x 3 x 40 */
    {"ik,kj->ij", "i=5,j=97,k=3", {5, 3, 40}},
};

/* CUDA's grid: work-groups along each dimension */
static const int64_t cuda_grid[3] = {INT32_MAX, 65535, 65535};

/* Seconds spent on each parameter set, printed at the end: where the
 * emulation's time goes (CI's budget is shared by every test). */
static double ps_seconds[ARRAY_SIZE(paramsets)];

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
	if (st == TCX_EREJECT && size_rule(err.msg)) {
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
	dev.base.info = &dev.info;
	dev.cxx = cxx;
	snprintf(dev.dir, sizeof(dev.dir), "/tmp/tcx-emu-XXXXXX");
	if (!mkdtemp(dev.dir)) {
		fprintf(stderr, "cannot create a directory under /tmp\n");
		return 1;
	}
	dev.stacks = mmap(NULL, (size_t)1024 * EMU_STACK, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (dev.stacks == MAP_FAILED) {
		fprintf(stderr, "cannot map the stacks of 1024 emulated threads\n");
		rmdir(dev.dir);
		return 1;
	}
	for (int k = 0; k < 1024; k++)
		mprotect(dev.stacks + (size_t)k * EMU_STACK, EMU_GUARD, PROT_NONE);
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
	dev.info.simd_width = 32;
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
			double t0 = now_seconds();

			failures += run_case(&dev, t, c, &p, &paramsets[ps],
					     seed + (uint64_t)(e * 131 + ps), where, &runs);
			ps_seconds[ps] += now_seconds() - t0;
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
				 * collectives lane by lane under barriers, three to ten
				 * times the cost of the others: the awkward sizes only, unless
				 * --only names one; the GPU matrix runs every size */
				if (paramsets[ps].cuda && !only && set != 1 && set != 3 && set != 4)
					continue;
				double t0 = now_seconds();

				failures += run_case(&dev, t, c, &p, &paramsets[ps],
						     seed + (uint64_t)(e * 131 + set * 7 + ps),
						     where, &runs);
				ps_seconds[ps] += now_seconds() - t0;
			}
		}
		contraction_free(c);
	}
	for (size_t ps = 0; ps < ARRAY_SIZE(paramsets); ps++)
		if (ps_seconds[ps] > 0)
			printf("%-24s %7.1f s\n", paramsets[ps].name, ps_seconds[ps]);
	printf("%d runs, %lu kernels compiled, %d failed\n", runs, dev.base.builds, failures);
	device_close(&dev);
	rmdir(dev.dir);
	munmap(dev.stacks, (size_t)1024 * EMU_STACK);
	return failures ? 1 : 0;
}
