/* abi.c - the host's side of the kernels' ABI (kernels/common/abi.h): from
 * a kernel plan and a problem's sizes and strides, the launch of
 * tcx_contract (struct tcx_args, the work-group, how many work-groups and
 * their grid within every device's limits) and of tcx_gsu_reduce, the
 * GlobalSplitU reduction, with alpha and beta as the kernels take them.
 *
 * One source for two users, as select.c: tcx compiles it into lib/gen/gen.c
 * (plan_launch, plan_grid), and `tcx export-lib` copies it into every
 * library it writes, whose runtime.c includes it, so that the library
 * launches exactly what tcx bench timed.  Everything is static: include
 * this file (it is not a translation unit of its own); the includer
 * supplies <string.h> and abi.h, which has the types.  C99, no other
 * dependency.
 *
 * Element types are Tensile's letters in lowercase: s, d, c, z, h, b.
 */

static int64_t abi_ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* Bytes of one value of type t in registers and in the GlobalSplitU
 * workspace (fp16 and bf16 are computed in fp32). */
static size_t abi_value_bytes(char t)
{
	switch (t) {
	case 'd':
	case 'c':
		return 8;
	case 'z':
		return 16;
	default:
		return 4;
	}
}

/* The GlobalSplitU workspace of a plan: one C (extent_c elements) per
 * part; 0 with one part. */
static size_t abi_workspace_bytes(char t, int gsu, int64_t extent_c)
{
	return gsu > 1 ? (size_t)gsu * (size_t)extent_c * abi_value_bytes(t) : 0;
}

/* v, (re, im), as SCALAR_T of type t; its size. */
static size_t abi_scalar_of(char t, const double *v, union abi_scalar *out)
{
	memset(out, 0, sizeof(*out));
	switch (t) {
	case 'd':
		out->d = v[0];
		return sizeof(double);
	case 'c':
		out->f2[0] = (float)v[0];
		out->f2[1] = (float)v[1];
		return 2 * sizeof(float);
	case 'z':
		out->d2[0] = v[0];
		out->d2[1] = v[1];
		return 2 * sizeof(double);
	default:
		out->f = (float)v[0];
		return sizeof(float);
	}
}

/* The launches of plan k for problem p with type t, alpha and beta (NULL:
 * 0), less their work sizes.  The arguments: every slot's size (1 past
 * the plan's) and strides, the counts and the conjugations; the
 * work-groups: macro tiles along D0 and D1 (with PackFreeIndices times
 * their packed slots), the other folded slots and GlobalSplitU's parts
 * along dimension 2; the reduction: one work-item per element of C, in
 * groups of 64. */
static void abi_launch_make(const struct abi_plan *k, const struct abi_sizes *p, char t,
			    const double *alpha, const double *beta, struct abi_launch *L)
{
	static const double zero[2] = {0, 0};
	int64_t f2 = 1;
	int sl;

	memset(L, 0, sizeof(*L));
	for (sl = 0; sl < TCX_MAX_SLOTS; sl++)
		L->args.size[sl] = 1;
	for (sl = 0; sl < k->nslots; sl++) {
		int id = k->slot[sl];

		if (id < 0)
			continue;
		L->args.size[sl] = p->size[id];
		L->args.sp[sl] = p->stride_p[id];
		L->args.sq[sl] = p->stride_q[id];
		L->args.sc[sl] = p->stride_c[id];
		/* the folded slots D0 or D1 span with PackFreeIndices are not in
		 * the third dimension of the grid */
		if (sl >= 3 && sl < 3 + k->nf2 && sl != k->pack[0] && sl != k->pack[1])
			f2 *= p->size[id];
	}
	L->args.ws_stride = p->extent_c;
	L->args.nf2 = k->nf2;
	L->args.nb = k->nb;
	L->args.conj_p = k->conj_p;
	L->args.conj_q = k->conj_q;
	L->local[0] = (size_t)(k->threads ? k->threads : k->wg[0]);
	L->local[1] = (size_t)(k->threads ? 1 : k->wg[1]);
	L->local[2] = (size_t)k->wg[2];
	L->args.groups[0] = abi_ceil_div(
	    L->args.size[0] * (k->pack[0] >= 0 ? L->args.size[k->pack[0]] : 1), k->mt0);
	L->args.groups[1] = abi_ceil_div(
	    L->args.size[1] * (k->pack[1] >= 0 ? L->args.size[k->pack[1]] : 1), k->mt1);
	L->args.groups[2] = f2 * k->gsu;
	L->scalar_bytes = abi_scalar_of(t, alpha ? alpha : zero, &L->alpha);
	abi_scalar_of(t, beta ? beta : zero, &L->beta);
	L->ws_bytes = abi_workspace_bytes(t, k->gsu, p->extent_c);
	if (k->gsu <= 1)
		return;
	L->total = L->args.size[0] * L->args.size[1];
	for (sl = 3; sl < 3 + k->nf2; sl++)
		L->total *= L->args.size[sl];
	L->rlocal[0] = 64;
	L->rlocal[1] = L->rlocal[2] = 1;
	L->rgroups[0] = abi_ceil_div(L->total, 64);
	L->rgroups[1] = L->rgroups[2] = 1;
}

enum abi_fit {
	ABI_FITS,
	ABI_TOO_MANY, /* more work-groups than 64 bits count */
	ABI_GRID_FULL /* more than the three dimensions hold together */
};

/* The work sizes (global[], in work-items) of a launch of n[d] work-groups
 * of local[d] work-items along dimension d.  cap[d] is the device's limit
 * of work-groups along d (0: none); on return, the limit applied: that,
 * TCX_GRID_MAX_ITEMS work-items and TCX_GRID_MAX_YZ groups along 1 and 2,
 * whichever is least.  n itself when it fits; else the n[0] * n[1] * n[2]
 * groups, numbered dimension 0 fastest, over as few dimensions as hold
 * them, with fewer than one layer of dimensions 0 and 1 to spare: the
 * kernels number their group the same way (GROUP_DECODE), take its place
 * from n (struct tcx_args' groups), and spare groups leave at once. */
static enum abi_fit abi_grid(const int64_t n[3], const size_t local[3], int64_t cap[3],
			     size_t global[3])
{
	int64_t g[3], total = 1;
	int d, fits = 1;

	for (d = 0; d < 3; d++) {
		int64_t most = TCX_GRID_MAX_ITEMS / (int64_t)(local[d] ? local[d] : 1);

		if (d > 0 && most > TCX_GRID_MAX_YZ)
			most = TCX_GRID_MAX_YZ;
		if (cap[d] <= 0 || cap[d] > most)
			cap[d] = most;
		fits = fits && n[d] <= cap[d];
		g[d] = n[d];
	}
	/* no work-groups at all: an empty grid, which launches refuse */
	if (n[0] <= 0 || n[1] <= 0 || n[2] <= 0)
		fits = 1;
	if (!fits) {
		for (d = 0; d < 3; d++) {
			if (total > INT64_MAX / n[d])
				return ABI_TOO_MANY;
			total *= n[d];
		}
		g[0] = total < cap[0] ? total : cap[0];
		g[1] = abi_ceil_div(total, g[0]);
		g[1] = g[1] < cap[1] ? g[1] : cap[1];
		g[2] = abi_ceil_div(total, g[0] * g[1]);
		if (g[2] > cap[2])
			return ABI_GRID_FULL;
	}
	for (d = 0; d < 3; d++)
		global[d] = (size_t)g[d] * local[d];
	return ABI_FITS;
}
