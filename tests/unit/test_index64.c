/* test_index64.c - tensors past 2^31 elements: the proof that index
 * arithmetic is 64-bit wherever a tensor can exceed 2^31 elements.
 *
 * A device run cannot show it here: 2^31 floats are 8 GiB, and PoCL offers
 * 3.7 GiB.  So the chain from sizes to addresses is checked link by link:
 *
 *  1. host model: problem_init, problem_count and host_c_offset_of compute sizes,
 *     strides, extents and offsets past 2^32 exactly, and refuse with
 *     TCX_ERANGE what overflows 64 bits (elements or bytes);
 *  2. launch: plan_launch, through a device whose launch hook records the
 *     arguments, hands the kernel sizes, strides and element counts past
 *     2^32 intact (struct tcx_args is all 64-bit), and the work sizes it
 *     computes from them are exact;
 *  3. kernel source: the generated prelude writes baked sizes as 64-bit
 *     constants (an L suffix), and, compiled by clang's OpenCL front end,
 *     every subscript of a __global pointer and every offset added to one
 *     has a 64-bit type, and no 64-bit value is narrowed to 32 bits
 *     implicitly (-Werror=shorten-64-to-32), for every element type and the
 *     template's main branches (local memory or not, prefetching,
 *     LocalSplitU, GlobalSplitU, edge handling, WorkGroupMapping).
 * Kernels made for smaller tensors use 32-bit offsets instead (OFF32,
 * test_solution.c), and plan_accepts keeps larger ones off them.
 * What stays 32-bit is arithmetic inside one tile (thread and work-group
 * ids, tile offsets), bounded by the tile size.  Part 3 needs clang; without
 * it that part is reported as skipped and the rest still runs. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "backend/backend.h"
#include "backend/check.h"
#include "backend/host/host.h"
#include "gen/gen.h"
#include "notation/notation.h"

#define G31 ((int64_t)1 << 31)
#define G32 ((int64_t)1 << 32)

static struct tcx_contraction *parse(const char *expr, enum tcx_dtype t)
{
	struct tcx_contraction *c = NULL;
	struct tcx_error err;

	if (notation_parse(expr, t, LAYOUT_BY_STYLE, &c, &err) != TCX_OK)
		fprintf(stderr, "%s: %s\n", expr, err.msg);
	return c;
}

/* ---- 1. the host model ------------------------------------------------ */

static void test_host_model(void)
{
	struct tcx_contraction *c = parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_S);
	struct problem p;
	struct tcx_error err;
	int64_t sizes[3], idx[TCX_MAX_INDICES], lin, want;

	CHECK(c != NULL);
	if (!c)
		return;
	/* C of (2^20 + 3) x (2^20 + 5) elements: past 2^40 */
	sizes[0] = ((int64_t)1 << 20) + 3;
	sizes[1] = ((int64_t)1 << 20) + 5;
	sizes[2] = 7;
	CHECK(problem_init(&p, c, sizes, &err) == TCX_OK);
	want = sizes[0] * sizes[1];
	CHECK(want > ((int64_t)1 << 40));
	CHECK(problem_count(&p, T_C) == want);
	CHECK(p.extent[T_C] == want);
	CHECK(p.stride[T_C][1] == sizes[0]); /* j: C's second index, i moves fastest */
	CHECK(p.extent[T_A] == sizes[0] * 7);
	/* the last element of C and one in the middle */
	lin = want - 1;
	CHECK(host_c_offset_of(&p, lin, idx) == want - 1);
	CHECK(idx[0] == sizes[0] - 1 && idx[1] == sizes[1] - 1);
	lin = (int64_t)3 << 38; /* past 2^39, inside C */
	want = host_c_offset_of(&p, lin, idx);
	CHECK(idx[0] == lin % sizes[0] && idx[1] == lin / sizes[0]);
	CHECK(want == idx[0] + idx[1] * sizes[0]);
	CHECK(want == lin); /* packed: the offset is the linear index */

	/* one index of 2^40: A and C of 2^41 elements, 2^43 bytes */
	sizes[0] = (int64_t)1 << 40;
	sizes[1] = 2;
	sizes[2] = 2;
	CHECK(problem_init(&p, c, sizes, &err) == TCX_OK);
	CHECK(problem_count(&p, T_C) == (int64_t)1 << 41);
	CHECK(problem_bound_volume(&p) == 2);

	/* 2^32 x 2^32 elements: the count overflows 64 bits */
	sizes[0] = sizes[1] = G32;
	sizes[2] = 1;
	CHECK(problem_init(&p, c, sizes, &err) == TCX_ERANGE);
	CHECK(strstr(err.msg, "element count overflows") != NULL);
	/* 2^31 x 2^31 floats: 2^62 elements fit, 2^64 bytes do not */
	sizes[0] = sizes[1] = G31;
	CHECK(problem_init(&p, c, sizes, &err) == TCX_ERANGE);
	CHECK(strstr(err.msg, "byte count overflows") != NULL);
	contraction_free(c);

	/* complex double (16 bytes): 2^59 elements are 2^63 bytes, too many */
	c = parse("C[ij]=A[ik]*B[kj]", TCX_DTYPE_Z);
	CHECK(c != NULL);
	if (!c)
		return;
	sizes[0] = (int64_t)1 << 30;
	sizes[1] = (int64_t)1 << 29;
	sizes[2] = 1;
	CHECK(problem_init(&p, c, sizes, &err) == TCX_ERANGE);
	sizes[1] = (int64_t)1 << 28; /* 2^58 elements, 2^62 bytes: fits */
	CHECK(problem_init(&p, c, sizes, &err) == TCX_OK);
	contraction_free(c);
}

/* ---- 2. launch arguments ------------------------------------------------ */

struct rec_device {
	struct device_base base;
	struct device_info info;
};

static struct launch recorded[4];
static unsigned char recorded_bytes[4][LAUNCH_MAX_ARGS][sizeof(struct tcx_args)];
static int nrecorded;

static enum tcx_status rec_launch(struct device *dev, struct program *prog, const struct launch *l,
				  double *event_ms, struct tcx_error *err)
{
	(void)dev;
	(void)prog;
	(void)err;
	if (event_ms)
		*event_ms = 0;
	if (nrecorded < 4) {
		recorded[nrecorded] = *l;
		for (int a = 0; a < l->nargs; a++)
			if (l->args[a].kind == KARG_BYTES &&
			    l->args[a].size <= sizeof(recorded_bytes[0][0]))
				memcpy(recorded_bytes[nrecorded][a], l->args[a].ptr,
				       l->args[a].size);
		nrecorded++;
	}
	return TCX_OK;
}

static void cpu_info(struct device_info *di, const char *lang)
{
	memset(di, 0, sizeof(*di));
	snprintf(di->id, sizeof(di->id), "record:0");
	snprintf(di->backend, sizeof(di->backend), "record");
	snprintf(di->name, sizeof(di->name), "launch recorder");
	snprintf(di->lang, sizeof(di->lang), "%s", lang);
	di->type = DEV_GPU;
	di->compute_units = 8;
	di->global_mem = di->max_alloc = (int64_t)1 << 40;
	di->local_mem = 65536;
	di->max_wg_size = 1024;
	di->max_wg_dim[0] = di->max_wg_dim[1] = di->max_wg_dim[2] = 1024;
	di->simd_width = 32;
	di->pref_vector_float = 1;
	di->fp64 = true;
}

static void test_launch_args(void)
{
	struct tcx_contraction *c = parse("C[ijb]=A[ikb]*B[kjb]", TCX_DTYPE_S);
	struct tcx_backend_ops ops;
	struct rec_device rd;
	struct kernel_plan k;
	struct solution s;
	struct problem p;
	struct tcx_error err;
	int64_t sizes[4];
	double alpha[2] = {1, 0}, beta[2] = {0, 0};
	/* any non-NULL handles: the recorder never dereferences them */
	struct buffer *buf = (struct buffer *)&rd;
	/* a program of the recorder's, as device_launch checks */
	struct program_head prog = { .dev = (struct device *)&rd };
	const struct tcx_args *a;

	CHECK(c != NULL);
	if (!c)
		return;
	memset(&ops, 0, sizeof(ops));
	ops.name = "record";
	ops.launch = rec_launch;
	memset(&rd, 0, sizeof(rd));
	rd.base.ops = &ops;
	rd.base.info = &rd.info;
	cpu_info(&rd.info, "opencl");

	/* i = 3 * 2^30 + 1 (past 2^31), j = 3, b = 5, k = 2: C has past 2^33 elements */
	sizes[0] = 3 * ((int64_t)1 << 30) + 1;
	sizes[1] = 3;
	sizes[2] = 5;
	sizes[3] = 2;
	CHECK(problem_init(&p, c, sizes, &err) == TCX_OK);
	solution_default(&s);
	s.wg[0] = 16;
	s.wg[1] = 1;
	s.wg[2] = 1;
	s.tt[0] = 4;
	s.tt[1] = 1;
	s.depth_u = 2;
	s.vw = 1;
	s.gsu = 2;
	s.use_lds = false;
	CHECK_MSG(plan_make(c, &p, &s, &rd.info, &k, &err) == TCX_OK, "%s", err.msg);
	nrecorded = 0;
	CHECK_MSG(plan_launch(&k, (struct device *)&rd, (struct program *)&prog, &p, buf, buf, buf, buf, alpha, beta,
			      NULL, &err) == TCX_OK,
		  "%s", err.msg);
	CHECK(nrecorded == 2); /* the contraction and the GlobalSplitU reduction */
	if (nrecorded < 2) {
		contraction_free(c);
		return;
	}
	/* tcx_contract(C, P, Q, W, args, alpha, beta): args is argument 4 */
	CHECK(recorded[0].args[TCX_PARAM_ARGS].kind == KARG_BYTES);
	CHECK(recorded[0].args[TCX_PARAM_ARGS].size == sizeof(struct tcx_args));
	a = (const struct tcx_args *)recorded_bytes[0][TCX_PARAM_ARGS];
	CHECK(a->size[0] == sizes[0]);		 /* D0 = i, past 2^31 */
	CHECK(a->sc[1] == sizes[0]);		 /* C's stride of j */
	CHECK(a->ws_stride == sizes[0] * 3 * 5); /* GlobalSplitU parts apart */
	CHECK(a->ws_stride > G32);
	{
		/* b folds into dimension 2, with C's stride past 2^32 */
		bool found = false;

		for (int sl = 3; sl < 3 + (int)a->nf2; sl++)
			if (a->size[sl] == 5 && a->sc[sl] == sizes[0] * 3)
				found = true;
		CHECK(found);
	}
	/* work sizes: ceil(i / MT0) groups of WG0 along dimension 0 */
	CHECK(recorded[0].global[0] == (size_t)((sizes[0] + k.mt0 - 1) / k.mt0) * (size_t)s.wg[0]);
	CHECK(recorded[0].global[0] > (size_t)G31 / (size_t)k.mt0);
	CHECK(recorded[0].global[2] == (size_t)5 * (size_t)s.gsu);
	/* the reduction: C's element count as a 64-bit argument, covered by
	 * its work size */
	{
		int last = recorded[1].nargs - 1;
		int64_t total;

		CHECK(recorded[1].args[last].size == sizeof(int64_t));
		memcpy(&total, recorded_bytes[1][last], sizeof(total));
		CHECK(total == sizes[0] * 3 * 5);
		CHECK((int64_t)(recorded[1].global[0] * recorded[1].global[1]) >= total);
	}
	contraction_free(c);
}

/* ---- 3. the kernel source ---------------------------------------------- */

/* The column where an AST dump line's node starts (after the tree drawing),
 * and its kind. */
static int node_col(const char *line, char *kind, size_t len)
{
	int col = 0;
	size_t n = 0;

	while (line[col] && strchr(" |`-", line[col]))
		col++;
	while (line[col + (int)n] && line[col + (int)n] != ' ' && n + 1 < len) {
		kind[n] = line[col + (int)n];
		n++;
	}
	kind[n] = '\0';
	return col;
}

/* The node's type: the first '...' after its source range. */
static void node_type(const char *line, char *type, size_t len)
{
	const char *q = strstr(line, "> '");

	type[0] = '\0';
	if (!q)
		q = strchr(line, '\'');
	else
		q += 2;
	if (q && *q == '\'') {
		const char *e = strchr(q + 1, '\'');

		if (e && (size_t)(e - q - 1) < len) {
			memcpy(type, q + 1, (size_t)(e - q - 1));
			type[e - q - 1] = '\0';
		}
	}
}

/* An integer type of 64 bits, as clang spells OpenCL's. */
static bool wide(const char *type)
{
	/* idx_t is the template's tensor index: long, since these kernels
	 * are made for tensors past 2^31 elements (no OFF32, checked in
	 * test_kernel_source) */
	static const char *const ok[] = {"long",     "unsigned long", "ulong",	   "size_t",
					 "ptrdiff_t", "intptr_t",     "uintptr_t", "idx_t"};
	const char *t = type;

	for (;;) {
		if (!strncmp(t, "const ", 6))
			t += 6;
		else if (!strncmp(t, "__private ", 10))
			t += 10;
		else
			break;
	}
	for (size_t k = 0; k < ARRAY_SIZE(ok); k++)
		if (!strcmp(t, ok[k]))
			return true;
	return false;
}

struct ast_line {
	int col;
	char kind[48];
	char type[160];
	const char *text;
};

/* Checks one AST dump: returns the number of global accesses seen, and adds
 * one failure per narrow index. */
static int check_ast(char *dump, const char *what)
{
	struct ast_line *v = NULL;
	size_t n = 0, cap = 0;
	int seen = 0;

	for (char *line = strtok(dump, "\n"); line; line = strtok(NULL, "\n")) {
		if (n == cap) {
			struct ast_line *p = realloc(v, (cap = cap ? 2 * cap : 4096) * sizeof(*v));

			if (!p)
				abort();
			v = p;
		}
		v[n].col = node_col(line, v[n].kind, sizeof(v[n].kind));
		node_type(line, v[n].type, sizeof(v[n].type));
		v[n].text = line;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		bool subscript = !strcmp(v[i].kind, "ArraySubscriptExpr");
		bool ptr_arith = (!strcmp(v[i].kind, "BinaryOperator") ||
				  !strcmp(v[i].kind, "CompoundAssignOperator")) &&
				 strchr(v[i].type, '*') &&
				 (strstr(v[i].text, "'+'") || strstr(v[i].text, "'-'") ||
				  strstr(v[i].text, "'+='") || strstr(v[i].text, "'-='"));

		if (!strstr(v[i].type, "__global") || !(subscript || ptr_arith))
			continue;
		/* the direct children: the pointer and the integer */
		for (size_t j = i + 1; j < n && v[j].col > v[i].col; j++) {
			if (v[j].col != v[i].col + 2 || strchr(v[j].type, '*') ||
			    strchr(v[j].type, '['))
				continue;
			seen++;
			CHECK_MSG(wide(v[j].type),
				  "%s: a __global access indexed by '%s':\n  %s\n  %s", what,
				  v[j].type, v[i].text, v[j].text);
		}
	}
	free(v);
	return seen;
}

static bool have_clang(void)
{
	return system("clang --version >/dev/null 2>&1") == 0;
}

/* Compiles src with clang's OpenCL C front end; checks the AST and the
 * narrowing warnings. */
static void clang_check(const char *src, size_t len, const char *what)
{
	char path[] = "/tmp/tcx-index64-XXXXXX.cl", cmd[512];
	int fd = mkstemps(path, 3);
	FILE *fp;
	struct strbuf dump = STRBUF_INIT;
	char buf[65536];
	size_t got;
	int rc, seen;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, src, len) == (ssize_t)len);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "clang -x cl -cl-std=CL1.2 -fsyntax-only -Werror=shorten-64-to-32 %s 2>&1", path);
	fp = popen(cmd, "r");
	while (fp && (got = fread(buf, 1, sizeof(buf), fp)) > 0)
		strbuf_add(&dump, buf, got);
	rc = fp ? pclose(fp) : -1;
	CHECK_MSG(rc == 0, "%s: clang -Werror=shorten-64-to-32 fails:\n%s", what,
		  strbuf_str(&dump));
	strbuf_reset(&dump);
	snprintf(cmd, sizeof(cmd),
		 "clang -x cl -cl-std=CL1.2 -fsyntax-only -fno-color-diagnostics -Xclang "
		 "-ast-dump %s 2>/dev/null",
		 path);
	fp = popen(cmd, "r");
	while (fp && (got = fread(buf, 1, sizeof(buf), fp)) > 0)
		strbuf_add(&dump, buf, got);
	if (fp)
		pclose(fp);
	CHECK(!dump.failed);
	seen = check_ast(dump.buf ? dump.buf : (char *)"", what);
	/* the check saw the template's loads and stores (ld1, st1 and the
	 * reduction's read of the workspace at least), or it proves nothing */
	CHECK_MSG(seen >= 3, "%s: only %d __global accesses found in the AST", what, seen);
	strbuf_release(&dump);
	unlink(path);
}

struct variant {
	const char *name;
	enum tcx_dtype dtype;
	const char *params; /* solution_parse text over the defaults */
};

static void test_kernel_source(void)
{
	static const struct variant variants[] = {
	    {"s, local memory, prefetch", TCX_DTYPE_S,
	     "WorkGroup=[8,8,1],ThreadTile=[4,4],DepthU=8,VectorWidth=4,"
	     "PrefetchGlobalRead=True,PrefetchLocalRead=True"},
	    {"s, direct, LocalSplitU, GlobalSplitU", TCX_DTYPE_S,
	     "WorkGroup=[4,4,2],ThreadTile=[4,2],DepthU=8,VectorWidth=4,UseLDS=False,"
	     "GlobalSplitU=2"},
	    {"d, ShiftPtr, WorkGroupMapping, constant sizes", TCX_DTYPE_D,
	     "WorkGroup=[8,8,1],ThreadTile=[2,2],DepthU=8,VectorWidth=1,EdgeType=ShiftPtr,"
	     "WorkGroupMapping=4,ConstantSizes=True"},
	    {"c, complex", TCX_DTYPE_C,
	     "WorkGroup=[8,8,1],ThreadTile=[2,2],DepthU=8,VectorWidth=1"},
	    {"z, complex double, GlobalSplitU", TCX_DTYPE_Z,
	     "WorkGroup=[8,8,1],ThreadTile=[2,2],DepthU=8,VectorWidth=1,GlobalSplitU=3"},
	    {"h, fp16 storage", TCX_DTYPE_H,
	     "WorkGroup=[8,8,1],ThreadTile=[4,4],DepthU=8,VectorWidth=4,UseLDS=False"},
	    {"b, bf16 storage", TCX_DTYPE_B,
	     "WorkGroup=[8,8,1],ThreadTile=[4,4],DepthU=8,VectorWidth=4"},
	};
	bool clang = have_clang();
	struct device_info di;

	if (!clang)
		fprintf(stderr, "skipped: the clang part (clang not found); the prelude is still "
				"checked\n");
	cpu_info(&di, "opencl");
	for (size_t v = 0; v < ARRAY_SIZE(variants); v++) {
		struct tcx_contraction *c = parse("C[ijb]=A[ikb]*B[kjb]", variants[v].dtype);
		struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
		struct kernel_plan k;
		struct solution s;
		struct problem p;
		struct tcx_error err;
		/* D0 past 2^31 elements, the batch folded into dimension 2 */
		int64_t sizes[4] = {G31 + 64, 64, 3, 64};

		CHECK(c != NULL);
		if (!c)
			continue;
		CHECK(problem_init(&p, c, sizes, &err) == TCX_OK);
		solution_default(&s);
		CHECK_MSG(solution_parse(&s, variants[v].params, &err) == TCX_OK, "%s: %s",
			  variants[v].name, err.msg);
		CHECK_MSG(plan_make(c, &p, &s, &di, &k, &err) == TCX_OK, "%s: %s", variants[v].name,
			  err.msg);
		CHECK(plan_source(&k, &src, &opts, &err) == TCX_OK);
		CHECK_MSG(!k.off32 && !strstr(strbuf_str(&src), "#define OFF32 1"),
			  "%s: 32-bit offsets for a tensor past 2^31 elements", variants[v].name);
		if (k.const_sizes) {
			char want[64];

			snprintf(want, sizeof(want), "#define SIZE_D0 %lldL\n",
				 (long long)sizes[k.slot[0]]);
			CHECK_MSG(strstr(strbuf_str(&src), want) != NULL,
				  "%s: no 64-bit constant '%s' in the prelude", variants[v].name,
				  want);
		}
		if (clang)
			clang_check(strbuf_str(&src), src.len, variants[v].name);
		strbuf_release(&src);
		strbuf_release(&opts);
		contraction_free(c);
	}
}

int main(void)
{
	test_host_model();
	test_launch_args();
	test_kernel_source();
	return check_done();
}
