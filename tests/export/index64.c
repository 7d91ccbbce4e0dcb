/* index64.c - the index width of an exported library's run time: sizes and
 * strides whose products pass 2^31 (and 2^32) elements reach the kernel
 * arguments and work sizes exactly, and what does not fit in 64 bits
 * (elements, bytes, the GlobalSplitU workspace) is refused with EINVAL,
 * never wrapped.
 *
 * A unit test of runtime.c, which index64.sh builds with UBSan so that
 * any signed overflow aborts: it includes the generated library source
 * (src/tcxl.c of tests/export/data/special.yaml, problem type
 * Cijk_Ailk_Bjlk_S, solutions with GlobalSplitU 2 and 3) and calls the
 * size checks and the launch set-up directly; no device, no allocation.
 * The refusals are also checked through the public tcxl_query (the sizes
 * are checked before the queue is looked at).
 *
 * Exit status: 0 pass, 1 a check failed.
 */
#include "tcxl.c"

#define G31 ((int64_t)1 << 31)
#define G32 ((int64_t)1 << 32)

static int failures, checks;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		checks++;                                                                          \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

static const struct tl_type *T = &tl_types[0];

/* Whether a launch's grid is within every device's limits (2^31 - 1
 * work-items along a dimension, 65535 groups along dimensions 1 and 2) and
 * has a group for each of the n[0] x n[1] x n[2] the kernel counts. */
static int grid_holds(const size_t *global, const size_t *local, const int64_t *n)
{
	int64_t groups = 1;
	int d;

	for (d = 0; d < 3; d++) {
		if (global[d] % local[d] || global[d] > TCX_GRID_MAX_ITEMS ||
		    (d > 0 && global[d] / local[d] > TCX_GRID_MAX_YZ))
			return 0;
		groups *= (int64_t)(global[d] / local[d]);
	}
	return groups >= n[0] * n[1] * n[2];
}

/* the launch of every kernel of the type for problem p: the arguments and
 * work sizes are exact */
static void check_launches(const char *what, const struct tl_problem *p, int64_t c_elems)
{
	double one = 1;
	int k, sl;

	for (k = 0; k < T->nkernels; k++) {
		const struct tl_kernel *K = &T->kernels[k];
		struct abi_launch L;

		CHECK(tl_launch_make(T, K, p, &one, NULL, &L) == TL_UP(OK), "%s, %s: no launch",
		      what, K->name);
		for (sl = 0; sl < K->plan.nslots; sl++) {
			int id = K->plan.slot[sl];

			if (id < 0)
				continue;
			CHECK(L.args.size[sl] == p->size[id], "%s, %s: slot %d size %lld, not %lld",
			      what, K->name, sl, (long long)L.args.size[sl],
			      (long long)p->size[id]);
			CHECK(L.args.sc[sl] == p->stride[0][id], "%s, %s: slot %d C stride %lld",
			      what, K->name, sl, (long long)L.args.sc[sl]);
		}
		CHECK(L.args.ws_stride == p->extent_c, "%s, %s: ws_stride %lld, not %lld", what,
		      K->name, (long long)L.args.ws_stride, (long long)p->extent_c);
		/* the work-groups along D0 and D1, and a grid within every
		 * device's limits that holds them all */
		CHECK(L.args.groups[0] == (L.args.size[0] + K->plan.mt0 - 1) / K->plan.mt0,
		      "%s, %s: %lld groups along D0", what, K->name, (long long)L.args.groups[0]);
		CHECK(L.args.groups[1] == (L.args.size[1] + K->plan.mt1 - 1) / K->plan.mt1,
		      "%s, %s: %lld groups along D1", what, K->name, (long long)L.args.groups[1]);
		CHECK(grid_holds(L.global, L.local, L.args.groups), "%s, %s: grid %zu x %zu x %zu",
		      what, K->name, L.global[0], L.global[1], L.global[2]);
		if (K->plan.gsu > 1) {
			CHECK(L.ws_bytes == (size_t)K->plan.gsu * (size_t)p->extent_c * 4,
			      "%s, %s: GlobalSplitU workspace %zu bytes", what, K->name,
			      L.ws_bytes);
			CHECK(L.total == c_elems, "%s, %s: the reduction covers %lld, not %lld",
			      what, K->name, (long long)L.total, (long long)c_elems);
			CHECK((int64_t)L.rglobal[0] * (int64_t)L.rglobal[1] *
				      (int64_t)L.rglobal[2] >=
				  c_elems,
			      "%s, %s: the reduction's work sizes %zu x %zu x %zu miss elements",
			      what, K->name, L.rglobal[0], L.rglobal[1], L.rglobal[2]);
			CHECK(L.rglobal[0] <= TCX_GRID_MAX_ITEMS &&
				  L.rglobal[1] / L.rlocal[1] <= TCX_GRID_MAX_YZ &&
				  L.rglobal[2] / L.rlocal[2] <= TCX_GRID_MAX_YZ,
			      "%s, %s: the reduction's work sizes %zu x %zu x %zu", what, K->name,
			      L.rglobal[0], L.rglobal[1], L.rglobal[2]);
		}
	}
}

/* sizes i, j, k, l of C[ijk] = Sum[l] A[ilk] * B[jlk] that must work */
static void works(const char *what, size_t i, size_t j, size_t k, size_t l, const size_t *sc,
		  int64_t extent_c)
{
	size_t sizes[4];
	struct tl_problem p;
	TL_STATUS st;
	char msg[256];

	sizes[0] = i, sizes[1] = j, sizes[2] = k, sizes[3] = l;
	st = tl_problem_make(T, sizes, sc, NULL, NULL, &p);
	TL(last_error)(msg, sizeof(msg));
	CHECK(st == TL_UP(OK), "%s: refused (%d): %s", what, (int)st, msg);
	if (st)
		return;
	CHECK(p.extent_c == extent_c, "%s: C spans %lld elements, not %lld", what,
	      (long long)p.extent_c, (long long)extent_c);
	check_launches(what, &p, (int64_t)i * (int64_t)j * (int64_t)k);
}

/* sizes or strides that do not fit in 64 bits: EINVAL, with a message
 * matching `want`, from the run time and from the public query */
static void refused(const char *what, size_t i, size_t j, size_t k, size_t l, const size_t *sc,
		    const char *want)
{
	size_t sizes[4];
	struct tl_problem p;
	struct TL(choice) ch;
	TL_STATUS st;
	char msg[256];

	sizes[0] = i, sizes[1] = j, sizes[2] = k, sizes[3] = l;
	st = tl_problem_make(T, sizes, sc, NULL, NULL, &p);
	TL(last_error)(msg, sizeof(msg));
	CHECK(st == TL_UP(EINVAL), "%s: status %d, not EINVAL (%s)", what, (int)st, msg);
	CHECK(strstr(msg, want) != NULL, "%s: the message '%s' lacks '%s'", what, msg, want);
	st = TL(query)(0, NULL, sizes, sc, NULL, NULL, &ch);
	TL(last_error)(msg, sizeof(msg));
	CHECK(st == TL_UP(EINVAL) && strstr(msg, want),
	      "%s: tcxl_query gives status %d, '%s', not EINVAL, '%s'", what, (int)st, msg, want);
}

int main(void)
{
	size_t big_c[3] = {1, (size_t)G32 * 2, (size_t)G32 * 8};
	size_t huge_stride[3] = {1, SIZE_MAX, 1};
	size_t wrap_stride[3] = {1, (size_t)1 << 62, 1};

	CHECK(strcmp(T->info.name, "Cijk_Ailk_Bjlk_S") == 0, "problem type %s", T->info.name);
	/* past 2^31 and 2^32 elements: exact */
	works("C of 2^32 elements", 65536, 65536, 1, 16, NULL, G32);
	works("one index of 3 * 2^31", (size_t)(3 * G31), 1, 1, 1, NULL, 3 * G31);
	works("A and B of 2^34 elements", 2, 2, 2, (size_t)G32, NULL, 8);
	works("C strides past 2^32", 4, 4, 4, 4, big_c, 1 + 3 + 3 * (2 * G32) + 3 * (8 * G32));
	/* as large as fits: C of 2^60 elements is 2^62 bytes, its GlobalSplitU
	 * workspace (3 splits) would be 3 * 2^62 bytes */
	refused("GlobalSplitU workspace past 2^63 bytes", (size_t)1 << 30, (size_t)1 << 30, 1, 1,
		NULL, "GlobalSplitU workspace");
	/* past 64 bits: refused */
	refused("C of 2^93 elements", (size_t)G31, (size_t)G31, (size_t)G31, 1, NULL,
		"C spans more than 2^63");
	refused("C of 2^62 elements, 2^64 bytes", (size_t)G31, (size_t)G31, 1, 1, NULL,
		"C spans more than 2^63");
	refused("A of 2^64 elements", (size_t)G32, 1, 1, (size_t)G32, NULL,
		"A spans more than 2^63");
	refused("a C stride past INT64_MAX", 4, 4, 1, 1, huge_stride, "out of range");
	refused("C strides spanning past 2^63", 4, 4, 1, 1, wrap_stride, "C spans more than 2^63");
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
