/* export.c - tcx export-lib: writes the source tree of a self-contained C
 * library from logic files.  The generated parts are the public header's
 * problem-type section, the tables (kernels with their #define preludes
 * from plan_prelude, launch constants from plan_make, selection data from
 * the selector) and the typed entry points; everything else is a source
 * file under runtime/, embedded at build time (or read from
 * $TCX_EXPORT_DIR), copied with @TL_...@ names filled in.  The tree goes
 * in as a whole (tree.c). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "gen/gen.h"
#include "gen/kernels.h"

/* runtime/, embedded by cmake/embed.cmake */
extern const struct embedded_kernel export_templates[];

static enum tcx_status template_text(const char *name, char **text, size_t *len,
				     struct tcx_error *err)
{
	const char *dir = getenv("TCX_EXPORT_DIR");

	*text = NULL;
	if (dir && *dir) {
		struct strbuf full = STRBUF_INIT;
		enum tcx_status st;

		strbuf_addf(&full, "%s/%s", dir, name);
		st = common_read_file(strbuf_str(&full), text, len, err);
		strbuf_release(&full);
		return st;
	}
	for (const struct embedded_kernel *k = export_templates; k->path; k++)
		if (strcmp(k->path, name) == 0) {
			*text = malloc(k->len + 1);
			if (!*text)
				return tcx_fail(err, TCX_ENOMEM, "out of memory");
			memcpy(*text, k->data, k->len);
			(*text)[k->len] = '\0';
			if (len)
				*len = k->len;
			return TCX_OK;
		}
	return tcx_fail(err, TCX_EINVAL, "no export template '%s' in this build", name);
}

/* Names a library cannot have: the names it makes (<prefix>_run,
 * <PREFIX>_OK, include/<prefix>.h, src/<prefix>.c, the CMake targets
 * <prefix> and <prefix>-client) would collide with the headers it includes
 * or with its own.  `space`: every name that starts with name + "_" too. */
static const struct {
	const char *name;
	bool space;
	const char *why;
} reserved_names[] = {
    /* the runtimes' headers (CL/cl.h, cuda.h, nvrtc.h, the HIP headers) */
    {"cl", true, "OpenCL's names start with cl_ and CL_ (cl_mem, cl_run and the rest collide)"},
    {"cu", true, "CUDA's names start with cu and CU_"},
    {"cuda", true, "CUDA's names start with cuda and CUDA_"},
    {"nvrtc", true, "NVRTC's names start with nvrtc and NVRTC_"},
    {"hip", true, "HIP's names start with hip and HIP_"},
    {"hiprtc", true, "hiprtc's names start with hiprtc and HIPRTC_"},
    {"pthread", true, "POSIX threads' names start with pthread_ and PTHREAD_"},
    /* the library's own */
    {"tl", true, "the library's internal names start with tl_ and TL_"},
    {"sel", true, "the library's selectors' names start with sel_ and SEL_"},
    {"config", false, "the library has a src/config.h of its own"},
    {"runtime", false, "the library has a src/runtime.c of its own"},
    {"runtime_gpu", false, "the library has a src/runtime_gpu.c of its own"},
    {"select", false, "the library has a src/select.c of its own"},
    {"gpu", false, "the library has a src/gpu.h of its own"},
    {"abi", false, "the library has a src/abi.h and src/abi.c of its own"},
    {"elem", false, "the library has a src/elem.h of its own"},
    {"clerr", false, "the library has a src/clerr.h of its own"},
    /* CMake's reserved target names */
    {"all", false, "CMake reserves the target name"},
    {"clean", false, "CMake reserves the target name"},
    {"help", false, "CMake reserves the target name"},
    {"install", false, "CMake reserves the target name"},
    {"preinstall", false, "CMake reserves the target name"},
    {"edit_cache", false, "CMake reserves the target name"},
    {"rebuild_cache", false, "CMake reserves the target name"},
    {"test", false, "CMake reserves the target name"},
    {"package", false, "CMake reserves the target name"},
    {"package_source", false, "CMake reserves the target name"},
};

/* Headers that include/<prefix>.h would hide from the library or its users
 * (the include directory comes before the system's): C's, and those the
 * library's sources include, directly or through glibc, CUDA and HIP. */
static const char *const system_headers[] = {
    "assert",	 "complex", "ctype",  "errno",	"fenv",	     "float",	    "inttypes", "iso646",
    "limits",	 "locale",  "math",   "setjmp", "signal",    "stdalign",    "stdarg",	"stdatomic",
    "stdbool",	 "stddef",  "stdint", "stdio",	"stdlib",    "stdnoreturn", "string",	"tgmath",
    "threads",	 "time",    "uchar",  "wchar",	"wctype",    "alloca",	    "dlfcn",	"endian",
    "features",	 "pthread", "sched",  "unistd", "syslimits", "mm_malloc",   "mmintrin", "xmmintrin",
    "emmintrin", "cuda",    "nvrtc",
};

bool export_name_check(const char *name, char *why, size_t len)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 40 || isdigit((unsigned char)name[0])) {
		snprintf(
		    why, len,
		    "lowercase letters, digits and '_', not starting with a digit, at most 40");
		return false;
	}
	for (size_t k = 0; k < n; k++)
		if (!islower((unsigned char)name[k]) && !isdigit((unsigned char)name[k]) &&
		    name[k] != '_') {
			snprintf(why, len,
				 "lowercase letters, digits and '_', not starting with "
				 "a digit, at most 40");
			return false;
		}
	if (name[0] == '_') {
		snprintf(why, len, "names starting with '_' are reserved to C's implementation");
		return false;
	}
	if (strstr(name, "__") || name[n - 1] == '_') {
		snprintf(why, len, "its names would hold '__' (%s_run), which C++ reserves", name);
		return false;
	}
	for (size_t k = 0; k < ARRAY_SIZE(reserved_names); k++) {
		size_t m = strlen(reserved_names[k].name);

		if (strncmp(name, reserved_names[k].name, m) == 0 &&
		    (name[m] == '\0' || (reserved_names[k].space && name[m] == '_'))) {
			snprintf(why, len, "%s", reserved_names[k].why);
			return false;
		}
	}
	for (size_t k = 0; k < ARRAY_SIZE(system_headers); k++)
		if (strcmp(name, system_headers[k]) == 0) {
			snprintf(why, len, "its header %s.h would hide the system's <%s.h>", name,
				 name);
			return false;
		}
	return true;
}

/* ---- output helpers ------------------------------------------------------ */

struct subst {
	const char *key; /* "TL_PREFIX": replaces @TL_PREFIX@ */
	const char *value;
};

/* Appends text with every @KEY@ of the table replaced; other @...@ stay. */
static void substitute(struct strbuf *out, const char *text, const struct subst *tab)
{
	const char *p = text;

	while (*p) {
		const char *at = strchr(p, '@');
		bool done = false;

		if (!at) {
			strbuf_adds(out, p);
			break;
		}
		strbuf_add(out, p, (size_t)(at - p));
		for (const struct subst *s = tab; s->key; s++) {
			size_t n = strlen(s->key);

			if (strncmp(at + 1, s->key, n) == 0 && at[1 + n] == '@') {
				strbuf_adds(out, s->value);
				p = at + n + 2;
				done = true;
				break;
			}
		}
		if (!done) {
			strbuf_addc(out, '@');
			p = at + 1;
		}
	}
}

/* A template copied with the names filled in. */
static enum tcx_status copy_template(struct export_tree *tree, const char *name, const char *rel,
				     const struct subst *tab, struct tcx_error *err)
{
	char *text = NULL;
	struct strbuf out = STRBUF_INIT;
	enum tcx_status st = template_text(name, &text, NULL, err);

	if (!st) {
		substitute(&out, text, tab);
		st = strbuf_status(&out, err);
	}
	if (!st)
		st = export_tree_write(tree, rel, out.buf ? out.buf : "", out.len, err);
	free(text);
	strbuf_release(&out);
	return st;
}

/* A file of kernels/, copied as it is. */
static enum tcx_status copy_kernel_file(struct export_tree *tree, const char *path, const char *rel,
					struct tcx_error *err)
{
	char *text = NULL;
	size_t len = 0;
	enum tcx_status st = kernel_source(path, &text, &len, err);

	if (!st)
		st = export_tree_write(tree, rel, text, len, err);
	free(text);
	return st;
}

/* A byte array (C promises only 4095 characters a string literal). */
static void emit_bytes(struct strbuf *o, const char *name, const char *data, size_t len)
{
	strbuf_addf(o, "static const unsigned char %s[%zu] = {", name, len ? len : 1);
	for (size_t k = 0; k < len; k++)
		strbuf_addf(o, "%s%u,", k % 20 ? "" : "\n\t", (unsigned char)data[k]);
	if (!len)
		strbuf_adds(o, "0");
	strbuf_adds(o, "\n};\n");
}

static void emit_ints(struct strbuf *o, const char *name, const int *v, int n)
{
	strbuf_addf(o, "static const int %s[%d] = {", name, n ? n : 1);
	for (int k = 0; k < n; k++)
		strbuf_addf(o, "%s%d", k ? ", " : " ", v[k]);
	strbuf_adds(o, n ? " };\n" : " 0 };\n");
}

static void emit_i64s(struct strbuf *o, const char *name, const int64_t *v, size_t n)
{
	strbuf_addf(o, "static const int64_t %s[%zu] = {", name, n ? n : 1);
	for (size_t k = 0; k < n; k++)
		strbuf_addf(o, "%s%s%lld", k ? "," : "", k % 12 ? " " : "\n\t", (long long)v[k]);
	strbuf_adds(o, n ? "\n};\n" : " 0 };\n");
}

/* ---- problem types and kernels ---------------------------------------------- */

/* One kernel (distinct solution) of a problem type. */
struct xkernel {
	struct solution sol;
	struct kernel_plan plan;
	char name[LOGIC_NAME_MAX];
	char *prelude[2][2]; /* [language][generic] */
	size_t prelude_len[2][2];
};

struct xtype {
	char name[256]; /* Tensile's, as an identifier */
	char upper[256];
	const struct tcx_contraction *c;
	int *inputs; /* indices into the inputs */
	int ninputs;
	struct xkernel *kernels;
	int nkernels;
	int **kernel_of; /* per input: per logic solution, the kernel */
};

struct xlib {
	const struct export_input *in;
	int n;
	struct xtype *types;
	int ntypes;
	char *tmpl[2]; /* the kernel template text per language (NULL: none) */
	size_t tmpl_len[2];
	bool cuda; /* CUDA kernels were made */
	double accuracy; /* export_opts.accuracy */
};

static void xlib_release(struct xlib *x)
{
	for (int t = 0; t < x->ntypes; t++) {
		struct xtype *T = &x->types[t];

		for (int k = 0; k < T->nkernels; k++)
			for (int l = 0; l < 2; l++)
				for (int g = 0; g < 2; g++)
					free(T->kernels[k].prelude[l][g]);
		for (int i = 0; i < T->ninputs; i++)
			free(T->kernel_of ? T->kernel_of[i] : NULL);
		free(T->kernel_of);
		free(T->kernels);
		free(T->inputs);
	}
	free(x->types);
	free(x->tmpl[0]);
	free(x->tmpl[1]);
}

/* The languages of a library's kernels: OpenCL C, and the CUDA dialect
 * (CUDA and HIP), as tcx's backends name them (struct device_info, lang). */
static const char *const xlang[2] = {"opencl", "cuda"};

/* A language's templates (plan_templates), one after the other, as
 * plan_source puts them after the prelude. */
static enum tcx_status template_of(const char *lang, char **out, size_t *len, struct tcx_error *err)
{
	struct strbuf b = STRBUF_INIT;
	enum tcx_status st = TCX_OK;

	for (const char *const *t = plan_templates(lang); !st && *t; t++) {
		char *text = NULL;

		st = kernel_source(*t, &text, NULL, err);
		if (!st)
			strbuf_adds(&b, text);
		free(text);
	}
	if (!st)
		st = strbuf_status(&b, err);
	*len = b.len;
	*out = st ? NULL : strbuf_detach(&b);
	if (!st && !*out)
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
	strbuf_release(&b);
	return st;
}

/* The kernel templates; without the CUDA dialect's (a $TCX_KERNEL_DIR
 * without them) the library goes without CUDA and HIP. */
static enum tcx_status load_templates(struct xlib *x, struct tcx_error *err)
{
	struct tcx_error e2 = {0};
	enum tcx_status st = template_of(xlang[0], &x->tmpl[0], &x->tmpl_len[0], err);

	if (!st && template_of(xlang[1], &x->tmpl[1], &x->tmpl_len[1], &e2) != TCX_OK)
		tcx_log(TCX_LOG_DEBUG, "no CUDA-dialect kernels: %s", e2.msg);
	return st;
}

/* A plan's prelude, the caller's to free. */
static enum tcx_status make_prelude(const struct kernel_plan *k, char **out, size_t *len,
				    struct tcx_error *err)
{
	struct strbuf src = STRBUF_INIT;
	enum tcx_status st = plan_prelude(k, &src, err);

	*len = src.len;
	*out = st ? NULL : strbuf_detach(&src);
	if (!st && !*out)
		st = tcx_fail(err, TCX_ENOMEM, "out of memory");
	strbuf_release(&src);
	return st;
}

static enum tcx_status add_kernel(struct xlib *x, struct xtype *T, const struct logic_solution *ls,
				  const char *path, int *out, struct tcx_error *err)
{
	struct xkernel *K, *nk;
	struct device_info cuda;
	enum tcx_status st;

	for (int k = 0; k < T->nkernels; k++)
		if (solution_equal(&T->kernels[k].sol, &ls->sol)) {
			*out = k;
			return TCX_OK;
		}
	if (ls->sol.const_sizes)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"%s: solution %s has ConstantSizes: a library kernel must run any "
				"size",
				path, ls->name);
	nk = realloc(T->kernels, (size_t)(T->nkernels + 1) * sizeof(*nk));
	if (!nk)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	T->kernels = nk;
	K = &T->kernels[T->nkernels];
	memset(K, 0, sizeof(*K));
	K->sol = ls->sol;
	snprintf(K->name, sizeof(K->name), "%s", ls->name);
	T->nkernels++;
	/* the packed kernel, as contract_prepare makes it for packed strides */
	st = plan_make(T->c, NULL, &ls->sol, NULL, &K->plan, err);
	if (st) {
		tcx_error_prefix(err, "%s: solution %s", path, ls->name);
		return st;
	}
	for (int lang = 0; lang < 2 && !st; lang++) {
		struct kernel_plan p;

		if (!x->tmpl[lang])
			continue;
		if (lang == 1) {
			memset(&cuda, 0, sizeof(cuda));
			snprintf(cuda.lang, sizeof(cuda.lang), "%s", xlang[1]);
			st = plan_make(T->c, NULL, &ls->sol, &cuda, &p, err);
		} else {
			p = K->plan;
		}
		for (int g = 0; g < 2 && !st; g++) {
			if (g) {
				/* any strides: nothing assumed of them */
				p.packed = false;
				p.unit_p_d0 = p.unit_p_du = p.unit_q_d1 = p.unit_q_du = false;
				p.unit_c_d0 = false;
			}
			st = make_prelude(&p, &K->prelude[lang][g], &K->prelude_len[lang][g], err);
		}
		if (st && lang == 1) {
			/* no CUDA variant of this kernel: the library goes without */
			tcx_log(TCX_LOG_WARN, "%s: solution %s: no CUDA kernel (%s)", path,
				ls->name, err ? err->msg : "");
			free(x->tmpl[1]);
			x->tmpl[1] = NULL;
			st = TCX_OK;
		}
	}
	*out = T->nkernels - 1;
	return st;
}

static void type_ident(const struct tcx_contraction *c, char *name, char *upper, size_t len)
{
	char raw[256];
	size_t k;

	contraction_tensile_name(c, raw, sizeof(raw));
	for (k = 0; raw[k] && k + 1 < len; k++) {
		char ch = isalnum((unsigned char)raw[k]) ? raw[k] : '_';

		name[k] = ch;
		upper[k] = (char)toupper((unsigned char)ch);
	}
	name[k] = upper[k] = '\0';
}

static enum tcx_status group_types(struct xlib *x, struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;

	x->types = calloc((size_t)x->n, sizeof(*x->types));
	if (!x->types)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (int i = 0; i < x->n; i++) {
		const struct logic *l = x->in[i].logic;
		char name[256], upper[256];
		struct xtype *T = NULL;
		int *ni;

		type_ident(l->type, name, upper, sizeof(name));
		for (int t = 0; t < x->ntypes; t++)
			if (strcmp(x->types[t].name, name) == 0)
				T = &x->types[t];
			else if (strcmp(x->types[t].upper, upper) == 0)
				return tcx_fail(
				    err, TCX_EINVAL,
				    "problem types %s and %s differ only in case: their "
				    "macros would clash",
				    x->types[t].name, name);
		if (T && (T->c->nidx != l->type->nidx || T->c->dtype != l->type->dtype))
			return tcx_fail(err, TCX_EINVAL, "%s and %s: two problem types named %s",
					x->in[T->inputs[0]].path, x->in[i].path, name);
		if (!T) {
			T = &x->types[x->ntypes++];
			snprintf(T->name, sizeof(T->name), "%s", name);
			snprintf(T->upper, sizeof(T->upper), "%s", upper);
			T->c = l->type;
		}
		ni = realloc(T->inputs, (size_t)(T->ninputs + 1) * sizeof(*ni));
		if (!ni)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		T->inputs = ni;
		T->inputs[T->ninputs++] = i;
	}
	for (int t = 0; t < x->ntypes && !st; t++) {
		struct xtype *T = &x->types[t];

		T->kernel_of = calloc((size_t)T->ninputs, sizeof(*T->kernel_of));
		if (!T->kernel_of)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		for (int i = 0; i < T->ninputs && !st; i++) {
			const struct logic *l = x->in[T->inputs[i]].logic;

			if (l->nsol == 0)
				return tcx_fail(err, TCX_EINVAL, "%s: no solutions",
						x->in[T->inputs[i]].path);
			T->kernel_of[i] = calloc((size_t)l->nsol, sizeof(int));
			if (!T->kernel_of[i])
				return tcx_fail(err, TCX_ENOMEM, "out of memory");
			for (int k = 0; k < l->nsol && !st; k++)
				st = add_kernel(x, T, &l->sols[k], x->in[T->inputs[i]].path,
						&T->kernel_of[i][k], err);
		}
		/* every kernel of a type shares its slots (they follow from the
		 * contraction alone) */
		for (int k = 1; k < T->nkernels && !st; k++)
			if (T->kernels[k].plan.nslots != T->kernels[0].plan.nslots ||
			    memcmp(T->kernels[k].plan.slot, T->kernels[0].plan.slot,
				   sizeof(T->kernels[0].plan.slot)) != 0 ||
			    T->kernels[k].plan.p_is_a != T->kernels[0].plan.p_is_a)
				st = tcx_fail(err, TCX_EINVAL,
					      "%s: kernels disagree on their slots", T->name);
	}
	return st;
}

/* ---- the generated files ------------------------------------------------------------ */

static const char *scalar_type(enum tcx_dtype t)
{
	switch (t) {
	case TCX_DTYPE_D:
	case TCX_DTYPE_Z:
		return "double";
	default:
		return "float";
	}
}

static void index_list(struct strbuf *o, const struct tcx_contraction *c, const int *ids, int n)
{
	strbuf_addc(o, '[');
	for (int k = 0; k < n; k++)
		strbuf_addf(o, "%s%s", k ? ", " : "", c->idx[ids[k]].name);
	strbuf_addc(o, ']');
}

static void header_types(const struct xlib *x, const char *prefix, const char *up, struct strbuf *o)
{
	if (x->accuracy > 0)
		strbuf_addf(o,
			    "\n/* The relative error every solution was measured within, the "
			    "largest\n * |got - ref| / sum |a b| against tcx's fp64 host reference "
			    "(tcx export-lib\n * --accuracy). */\n#define %s_ACCURACY %.17g\n",
			    up, x->accuracy);
	for (int t = 0; t < x->ntypes; t++) {
		const struct xtype *T = &x->types[t];
		const struct tcx_contraction *c = T->c;
		bool cplx = dtype_info(c->dtype)->complex;
		const char *sc = scalar_type(c->dtype);
		int ids[TCX_MAX_INDICES];

		for (int id = 0; id < c->nidx; id++)
			ids[id] = id;
		strbuf_addf(o, "\n/* %s: ", T->name);
		strbuf_add_ctext(o, c->expr);
		strbuf_addf(o, " (%s)\n *   sizes: ", dtype_info(c->dtype)->name);
		index_list(o, c, ids, c->nidx);
		strbuf_adds(o, "\n *   strides_c: ");
		index_list(o, c, c->written[T_C], c->rank[T_C]);
		strbuf_adds(o, ", strides_a: ");
		index_list(o, c, c->written[T_A], c->rank[T_A]);
		strbuf_adds(o, ", strides_b: ");
		index_list(o, c, c->written[T_B], c->rank[T_B]);
		strbuf_addf(o, "\n *   %d solution%s from %d logic file%s:", T->nkernels,
			    T->nkernels == 1 ? "" : "s", T->ninputs, T->ninputs == 1 ? "" : "s");
		for (int i = 0; i < T->ninputs; i++) {
			const struct export_input *in = &x->in[T->inputs[i]];

			strbuf_adds(o, "\n *     ");
			if (in->logic->device_name)
				strbuf_add_ctext(o, in->logic->device_name);
			else
				strbuf_adds(o, "an unknown device");
			strbuf_adds(o, " (tuned on ");
			if (in->logic->architecture)
				strbuf_add_ctext(o, in->logic->architecture);
			else
				strbuf_adds(o, "-");
			strbuf_addf(o, "; selector %s)", selector_kind_name(in->kind));
		}
		if (cplx)
			strbuf_adds(o, "\n *   alpha and beta: real and imaginary parts.");
		strbuf_adds(o, " */\n");
		strbuf_addf(o, "#define %s_%s %d /* its number, for %s_run() */\n", up, T->upper, t,
			    prefix);
		strbuf_addf(o,
			    "%s_API enum %s_status %s_%s(%s_queue queue, const size_t sizes[%d],\n"
			    "\tconst size_t *strides_c, const size_t *strides_a, const size_t "
			    "*strides_b,\n",
			    up, prefix, prefix, T->name, prefix, c->nidx);
		if (cplx)
			strbuf_addf(o, "\tconst %s alpha[2], const %s beta[2],", sc, sc);
		else
			strbuf_addf(o, "\t%s alpha, %s beta,", sc, sc);
		strbuf_addf(o, " %s_mem c, %s_mem a, %s_mem b);\n", prefix, prefix, prefix);
		strbuf_addf(o,
			    "%s_API enum %s_status %s_%s_query(%s_queue queue, const size_t "
			    "sizes[%d],\n"
			    "\tconst size_t *strides_c, const size_t *strides_a, const size_t "
			    "*strides_b,\n"
			    "\tstruct %s_choice *choice);\n",
			    up, prefix, prefix, T->name, prefix, c->nidx, prefix);
	}
}

/* The selection data of input i as tables named tl_t<t>_v<i>_*. */
static void emit_variant_tables(struct strbuf *o, const struct xlib *x, int t, int i)
{
	const struct xtype *T = &x->types[t];
	const struct export_input *in = &x->in[T->inputs[i]];
	const struct sel_table *s = selector_table(in->sel);
	char nm[128];
	int npg;

	snprintf(nm, sizeof(nm), "tl_t%d_v%d", t, i);
	strbuf_adds(o, "\n/* ");
	strbuf_add_ctext(o, in->path);
	strbuf_adds(o, " */\n");
	strbuf_addf(o, "static const struct sel_solution %s_sols[%d] = {\n", nm, s->nsol);
	for (int k = 0; k < s->nsol; k++)
		strbuf_addf(o, "\t{ %d, %d, %d, %d, %d, %d, %d, %d, %d, %d },\n", s->sols[k].mt0,
			    s->sols[k].mt1, s->sols[k].depth_u, s->sols[k].gsu, s->sols[k].edge_none,
			    s->sols[k].loop_tail, s->sols[k].pack0, s->sols[k].pack1, s->sols[k].vw0,
			    s->sols[k].vw1);
	strbuf_adds(o, "};\n");
	snprintf(nm, sizeof(nm), "tl_t%d_v%d_kernel_of", t, i);
	emit_ints(o, nm, T->kernel_of[i], s->nsol);
	snprintf(nm, sizeof(nm), "tl_t%d_v%d_exact_sizes", t, i);
	emit_i64s(o, nm, s->exact_sizes, (size_t)s->nexact * (size_t)s->nidx);
	snprintf(nm, sizeof(nm), "tl_t%d_v%d_exact_sol", t, i);
	emit_ints(o, nm, s->exact_sol, s->nexact);
	strbuf_addf(o, "static const struct sel_node tl_t%d_v%d_nodes[%d] = {\n", t, i,
		    s->nnodes ? s->nnodes : 1);
	for (int k = 0; k < s->nnodes; k++)
		strbuf_addf(o, "\t{ %d, %d, %d },\n", s->nodes[k].index, s->nodes[k].nrules,
			    s->nodes[k].first);
	if (!s->nnodes)
		strbuf_adds(o, "\t{ 0, 0, 0 },\n");
	{
		int nrules = 0;

		for (int k = 0; k < s->nnodes; k++)
			nrules += s->nodes[k].nrules;
		strbuf_addf(o, "};\nstatic const struct sel_rule tl_t%d_v%d_rules[%d] = {\n", t, i,
			    nrules ? nrules : 1);
		for (int k = 0; k < nrules; k++)
			strbuf_addf(o, "\t{ %lld, %d, %d },\n", (long long)s->rules[k].threshold,
				    s->rules[k].sol, s->rules[k].child);
		if (!nrules)
			strbuf_adds(o, "\t{ 0, 0, 0 },\n");
	}
	strbuf_adds(o, "};\n");
	snprintf(nm, sizeof(nm), "tl_t%d_v%d_point_sizes", t, i);
	emit_i64s(o, nm, s->point_sizes, (size_t)s->npoints * (size_t)s->nidx);
	npg = s->npoints * s->nsol;
	strbuf_addf(o, "static const double tl_t%d_v%d_point_gflops[%d] = {", t, i,
		    npg > 0 ? npg : 1);
	for (int k = 0; k < npg; k++)
		strbuf_addf(o, "%s%s%.17g", k ? "," : "", k % 6 ? " " : "\n\t", s->point_gflops[k]);
	strbuf_adds(o, npg > 0 ? "\n};\n" : " 0 };\n");
	strbuf_addf(o, "static const char *const tl_t%d_v%d_device_names[%d] = {", t, i,
		    in->logic->ndevice_names ? in->logic->ndevice_names : 1);
	for (int k = 0; k < in->logic->ndevice_names; k++) {
		strbuf_adds(o, k ? ", " : " ");
		strbuf_add_cstring(o, in->logic->device_names[k]);
	}
	strbuf_adds(o, in->logic->ndevice_names ? " };\n" : " NULL };\n");
}

static void emit_variant(struct strbuf *o, const struct xlib *x, int t, int i)
{
	const struct xtype *T = &x->types[t];
	const struct export_input *in = &x->in[T->inputs[i]];
	const struct logic *l = in->logic;
	const struct sel_table *s = selector_table(in->sel);
	const char *base = strrchr(in->path, '/');
	bool dflt = l->ndevice_names == 1 && strcmp(l->device_names[0], "default") == 0;

	strbuf_adds(o, "\t{ ");
	strbuf_add_cstring(o, base ? base + 1 : in->path);
	strbuf_adds(o, ", ");
	strbuf_add_cstring(o, l->device_name);
	strbuf_adds(o, ", ");
	strbuf_add_cstring(o, l->architecture);
	strbuf_adds(o, ", ");
	strbuf_add_cstring(o, l->vendor);
	strbuf_addf(o, ",\n\t  tl_t%d_v%d_device_names, %d, %d, %d,\n", t, i, l->ndevice_names,
		    dflt, (int)in->kind);
	strbuf_addf(o,
		    "\t  { %d, %d, %d, %d, tl_t%d_bound, %d, %d, tl_t%d_v%d_sols, %d,\n"
		    "\t    tl_t%d_v%d_exact_sizes, tl_t%d_v%d_exact_sol, %d, tl_t%d_v%d_nodes,\n"
		    "\t    tl_t%d_v%d_rules, %d, tl_t%d_v%d_point_sizes, tl_t%d_v%d_point_gflops,\n"
		    "\t    %.17g, %.17g },\n",
		    s->nidx, s->d0, s->d1, s->du, t, s->compute_units, s->nsol, t, i, s->nexact, t,
		    i, t, i, s->nnodes, t, i, t, i, s->npoints, t, i, t, i, s->pad_exp,
		    s->bandwidth);
	strbuf_addf(o, "\t  tl_t%d_v%d_kernel_of },\n", t, i);
}

static void emit_type(struct strbuf *o, const struct xlib *x, int t)
{
	const struct xtype *T = &x->types[t];
	const struct tcx_contraction *c = T->c;
	char nm[128];
	int bound[TCX_MAX_INDICES], order[TCX_MAX_INDICES], n;
	static const char *const tn[3] = {"c", "a", "b"};

	strbuf_addf(o, "\n/* ---- %s: ", T->name);
	strbuf_add_ctext(o, c->expr);
	strbuf_adds(o, " */\n");
	strbuf_addf(o, "static const char *const tl_t%d_names[%d] = {", t, c->nidx);
	for (int id = 0; id < c->nidx; id++) {
		strbuf_adds(o, id ? ", " : " ");
		strbuf_add_cstring(o, c->idx[id].name);
		bound[id] = c->idx[id].cls == IDX_BOUND;
	}
	strbuf_adds(o, " };\n");
	snprintf(nm, sizeof(nm), "tl_t%d_bound", t);
	emit_ints(o, nm, bound, c->nidx);
	for (int r = 0; r < 3; r++) {
		snprintf(nm, sizeof(nm), "tl_t%d_written_%s", t, tn[r]);
		emit_ints(o, nm, c->written[r], c->rank[r]);
		n = contraction_dims(c, (enum tensor_role)r, order);
		snprintf(nm, sizeof(nm), "tl_t%d_order_%s", t, tn[r]);
		emit_ints(o, nm, order, n);
	}
	/* the kernels: their slots, preludes, then the table */
	snprintf(nm, sizeof(nm), "tl_t%d_slots", t);
	emit_ints(o, nm, T->kernels[0].plan.slot, T->kernels[0].plan.nslots);
	for (int k = 0; k < T->nkernels; k++)
		for (int l = 0; l < 2; l++)
			for (int g = 0; g < 2; g++) {
				if (!T->kernels[k].prelude[l][g] || !x->tmpl[l])
					continue;
				snprintf(nm, sizeof(nm), "tl_t%d_k%d_%s%s", t, k,
					 l ? "cuda" : "opencl", g ? "_any" : "_packed");
				emit_bytes(o, nm, T->kernels[k].prelude[l][g],
					   T->kernels[k].prelude_len[l][g]);
			}
	strbuf_addf(o, "static const struct tl_kernel tl_t%d_kernels[%d] = {\n", t, T->nkernels);
	for (int k = 0; k < T->nkernels; k++) {
		const struct xkernel *K = &T->kernels[k];
		const char *lang[2] = {"opencl", "cuda"};

		struct abi_plan a;

		plan_abi(&K->plan, &a);
		strbuf_adds(o, "\t{ ");
		strbuf_add_cstring(o, K->name);
		strbuf_addf(o,
			    ",\n\t  { .nslots = %d, .slot = tl_t%d_slots, .nf2 = %d, .nb = %d, "
			    ".conj_p = %d, .conj_q = %d,\n\t    .wg = { %d, %d, %d }, .threads = %d, "
			    ".mt0 = %d, .mt1 = %d, .gsu = %d, .pack = { %d, %d } },\n\t  %lldL, {",
			    a.nslots, t, a.nf2, a.nb, a.conj_p, a.conj_q, a.wg[0], a.wg[1], a.wg[2],
			    a.threads, a.mt0, a.mt1, a.gsu, a.pack[0], a.pack[1],
			    (long long)K->plan.lds_bytes);
		for (int l = 0; l < 2; l++) {
			strbuf_adds(o, l ? ", {" : " {");
			for (int g = 0; g < 2; g++) {
				if (K->prelude[l][g] && x->tmpl[l])
					strbuf_addf(o, "%stl_t%d_k%d_%s%s", g ? ", " : " ", t, k,
						    lang[l], g ? "_any" : "_packed");
				else
					strbuf_addf(o, "%sNULL", g ? ", " : " ");
			}
			strbuf_adds(o, " }");
		}
		strbuf_adds(o, " },\n\t  {");
		for (int l = 0; l < 2; l++) {
			strbuf_adds(o, l ? ", {" : " {");
			for (int g = 0; g < 2; g++)
				strbuf_addf(o, "%s%zu", g ? ", " : " ",
					    K->prelude[l][g] && x->tmpl[l] ? K->prelude_len[l][g]
									   : 0);
			strbuf_adds(o, " }");
		}
		strbuf_adds(o, " } },\n");
	}
	strbuf_adds(o, "};\n");
	for (int i = 0; i < T->ninputs; i++)
		emit_variant_tables(o, x, t, i);
	strbuf_addf(o, "static const struct tl_variant tl_t%d_variants[%d] = {\n", t, T->ninputs);
	for (int i = 0; i < T->ninputs; i++)
		emit_variant(o, x, t, i);
	strbuf_adds(o, "};\n");
}

static void emit_type_entry(struct strbuf *o, const struct xlib *x, int t)
{
	const struct xtype *T = &x->types[t];
	const struct tcx_contraction *c = T->c;
	const struct kernel_plan *k0 = &T->kernels[0].plan;

	strbuf_adds(o, "\t{ { ");
	strbuf_add_cstring(o, T->name);
	strbuf_adds(o, ", ");
	strbuf_add_cstring(o, c->expr);
	strbuf_addf(o, ", '%c', %d, tl_t%d_names, { %d, %d, %d },\n",
		    dtype_info(c->dtype)->letter | 0x20, c->nidx, t, c->rank[T_C], c->rank[T_A],
		    c->rank[T_B]);
	strbuf_addf(o, "\t    { tl_t%d_written_c, tl_t%d_written_a, tl_t%d_written_b },\n", t, t,
		    t);
	strbuf_addf(o, "\t    { tl_t%d_order_c, tl_t%d_order_a, tl_t%d_order_b },\n", t, t, t);
	strbuf_addf(o, "\t    { 0, %d, %d }, %d },\n", c->conj[T_A], c->conj[T_B], T->nkernels);
	strbuf_addf(o, "\t  %d, %d, tl_t%d_kernels, %d, tl_t%d_variants },\n", k0->p_is_a,
		    T->nkernels, t, T->ninputs, t);
}

static void emit_wrappers(struct strbuf *o, const struct xlib *x, const char *prefix,
			  const char *up)
{
	for (int t = 0; t < x->ntypes; t++) {
		const struct xtype *T = &x->types[t];
		const struct tcx_contraction *c = T->c;
		bool cplx = dtype_info(c->dtype)->complex;
		const char *sc = scalar_type(c->dtype);

		strbuf_addf(
		    o,
		    "\n%s_API enum %s_status %s_%s(%s_queue queue, const size_t sizes[%d],\n"
		    "\tconst size_t *strides_c, const size_t *strides_a, const size_t "
		    "*strides_b,\n",
		    up, prefix, prefix, T->name, prefix, c->nidx);
		if (cplx)
			strbuf_addf(o, "\tconst %s alpha[2], const %s beta[2],", sc, sc);
		else
			strbuf_addf(o, "\t%s alpha, %s beta,", sc, sc);
		strbuf_addf(o, " %s_mem c, %s_mem a, %s_mem b)\n{\n", prefix, prefix, prefix);
		if (cplx)
			strbuf_adds(
			    o, "\tdouble al[2], be[2];\n\n"
			       "\tif (!alpha) {\n\t\ttl_set_error(\"alpha is missing\");\n"
			       "\t\treturn TL_UP(EINVAL);\n\t}\n"
			       "\tal[0] = alpha[0];\n\tal[1] = alpha[1];\n"
			       "\tbe[0] = beta ? beta[0] : 0;\n\tbe[1] = beta ? beta[1] : 0;\n");
		else
			strbuf_adds(
			    o, "\tdouble al[2], be[2];\n\n"
			       "\tal[0] = alpha;\n\tal[1] = 0;\n\tbe[0] = beta;\n\tbe[1] = 0;\n");
		strbuf_addf(
		    o,
		    "\treturn %s_run(%d, queue, sizes, strides_c, strides_a, strides_b, al, "
		    "be, c, a, b);\n}\n",
		    prefix, t);
		strbuf_addf(o,
			    "\n%s_API enum %s_status %s_%s_query(%s_queue queue, const size_t "
			    "sizes[%d],\n"
			    "\tconst size_t *strides_c, const size_t *strides_a, const size_t "
			    "*strides_b,\n"
			    "\tstruct %s_choice *choice)\n{\n"
			    "\treturn %s_query(%d, queue, sizes, strides_c, strides_a, strides_b, "
			    "choice);\n}\n",
			    up, prefix, prefix, T->name, prefix, c->nidx, prefix, prefix, t);
	}
}

/* "kernels/common/port.h, kernels/opencl/contract.cl": a language's
 * templates, for a comment. */
static void template_names(struct strbuf *o, const char *lang)
{
	for (const char *const *t = plan_templates(lang); *t; t++)
		strbuf_addf(o, "%skernels/%s", t == plan_templates(lang) ? "" : ", ", *t);
}

static enum tcx_status write_source(const struct xlib *x, struct export_tree *tree,
				    const char *prefix, const char *up, struct tcx_error *err)
{
	struct strbuf o = STRBUF_INIT, rel = STRBUF_INIT;
	enum tcx_status st;

	strbuf_addf(&o,
		    "/* %s.c - the library's tables: its problem types, their kernels (the "
		    "#define\n * preludes tcx's generator wrote, over the embedded template) and "
		    "the selection\n * data of each logic file; and the typed entry points.  The "
		    "run time is\n * runtime.c.  Generated by tcx %s export-lib: do not edit. */\n",
		    prefix, tcx_version());
	strbuf_addf(&o, "#include \"config.h\"\n#include \"%s.h\"\n#include \"runtime.h\"\n\n",
		    prefix);
	strbuf_adds(&o, "#if !TL_WITH_CUDA && !TL_WITH_HIP\n/* the kernel template (");
	template_names(&o, xlang[0]);
	strbuf_adds(&o, ") */\n");
	emit_bytes(&o, "tl_template_opencl", x->tmpl[0], x->tmpl_len[0]);
	strbuf_adds(&o, "#endif\n");
	if (x->tmpl[1]) {
		strbuf_adds(&o,
			    "#if TL_WITH_CUDA || TL_WITH_HIP\n/* the same for CUDA and HIP (HIP "
			    "compiles the CUDA dialect, as tcx's hip\n * backend does): ");
		template_names(&o, xlang[1]);
		strbuf_adds(&o, " */\n");
		emit_bytes(&o, "tl_template_cuda", x->tmpl[1], x->tmpl_len[1]);
		strbuf_adds(&o, "#endif\n");
	}
	for (int t = 0; t < x->ntypes; t++)
		emit_type(&o, x, t);
	strbuf_addf(&o, "\n#define TL_NTYPES %d\nstatic const struct tl_type tl_types[%d] = {\n",
		    x->ntypes, x->ntypes);
	for (int t = 0; t < x->ntypes; t++)
		emit_type_entry(&o, x, t);
	strbuf_adds(&o, "};\n\n#include \"runtime.c\"\n");
	emit_wrappers(&o, x, prefix, up);
	st = strbuf_status(&o, err);
	strbuf_addf(&rel, "src/%s.c", prefix);
	if (!st)
		st = export_tree_write(tree, strbuf_str(&rel), o.buf, o.len, err);
	strbuf_release(&o);
	strbuf_release(&rel);
	return st;
}

static enum tcx_status write_config(const struct xlib *x, struct export_tree *tree,
				    const char *prefix, const char *up, struct tcx_error *err)
{
	struct strbuf o = STRBUF_INIT;
	enum tcx_status st;

	strbuf_addf(&o,
		    "/* config.h - the names of the library %s, for its run time and client\n"
		    " * (templates that say TL(name) for %s_name).  Generated by tcx %s\n"
		    " * export-lib: do not edit. */\n"
		    "#ifndef TL_CONFIG_H\n#define TL_CONFIG_H\n\n"
		    "#define TL_NAME \"%s\"\n#define TL_HEADER \"%s.h\"\n"
		    "#define TL(name) %s_##name\n#define TL_UP(name) %s_##name\n"
		    "/* the backend: OpenCL, or CUDA or HIP when the build defines\n"
		    " * TL_WITH_CUDA=1 or TL_WITH_HIP=1 */\n"
		    "#ifndef TL_WITH_CUDA\n#define TL_WITH_CUDA 0\n#endif\n"
		    "#ifndef TL_WITH_HIP\n#define TL_WITH_HIP 0\n#endif\n"
		    "/* the CUDA-dialect kernels, for CUDA and HIP */\n"
		    "#define TL_HAVE_CUDA_KERNELS %d\n"
		    "/* what tcx compiles its OpenCL kernels with */\n"
		    "#define TL_OPENCL_OPTIONS \"%s\"\n"
		    "\n#endif /* TL_CONFIG_H */\n",
		    prefix, prefix, tcx_version(), prefix, prefix, prefix, up, x->tmpl[1] != NULL,
		    plan_options(xlang[0]));
	st = strbuf_status(&o, err);
	if (!st)
		st = export_tree_write(tree, "src/config.h", o.buf, o.len, err);
	strbuf_release(&o);
	return st;
}

static enum tcx_status write_readme(const struct xlib *x, struct export_tree *tree,
				    const char *prefix, const char *up, bool reports,
				    struct tcx_error *err)
{
	struct strbuf o = STRBUF_INIT;
	enum tcx_status st;

	strbuf_addf(&o,
		    "# %s\n\nTensor contractions tuned by tcx, as a C library. Generated by "
		    "tcx %s\n(`tcx export-lib`): regenerate rather than edit.\n\n",
		    prefix, tcx_version());
	strbuf_adds(&o, "| problem type | expression | solutions | logic files (device; "
			"selector) |\n|---|---|---:|---|\n");
	for (int t = 0; t < x->ntypes; t++) {
		const struct xtype *T = &x->types[t];

		strbuf_addf(&o, "| `%s_%s` | `", prefix, T->name);
		strbuf_add_ctext(&o, T->c->expr);
		strbuf_addf(&o, "` | %d |", T->nkernels);
		for (int i = 0; i < T->ninputs; i++) {
			const struct export_input *in = &x->in[T->inputs[i]];
			const char *base = strrchr(in->path, '/');

			/* input text only inside backticks, where Markdown is inert */
			strbuf_adds(&o, i ? "<br>`" : " `");
			strbuf_add_ctext(&o, base ? base + 1 : in->path);
			strbuf_adds(&o, "` (");
			if (in->logic->device_name) {
				strbuf_addc(&o, '`');
				strbuf_add_ctext(&o, in->logic->device_name);
				strbuf_addc(&o, '`');
			} else {
				strbuf_addc(&o, '?');
			}
			strbuf_addf(&o, "; %s)", selector_kind_name(in->kind));
		}
		strbuf_adds(&o, " |\n");
	}
	strbuf_addf(&o,
		    "\nBuild, install and use:\n\n```sh\ncmake -S . -B build && cmake --build "
		    "build\ncmake --install build --prefix \"$HOME/.local\"\n"
		    "build/%s-client --list\nbuild/%s-client --sizes ... --query   # which "
		    "solution, and why\n```\n\n"
		    "```cmake\nfind_package(%s REQUIRED)\ntarget_link_libraries(app PRIVATE "
		    "%s::%s)\n```\n\nor, with pkg-config (OpenCL's flags and the library's run "
		    "path come with it):\n\n```sh\nexport PKG_CONFIG_PATH=$HOME/.local/lib/pkgconfig\n"
		    "cc app.c -o app $(pkg-config --cflags --libs %s)\n```\n\nThe API is "
		    "documented in\n`include/%s.h`. Options: `-D%s_WITH_CUDA=ON` runs on CUDA "
		    "(driver API and NVRTC,\nloaded at run time) instead of OpenCL, "
		    "`-D%s_WITH_HIP=ON` on HIP (the HIP runtime\nand hiprtc, loaded at run "
		    "time; kernels compiled for each device's gfx target)%s;\n"
		    "`-DBUILD_SHARED_LIBS=OFF` builds a static library.\n",
		    prefix, prefix, prefix, prefix, prefix, prefix, prefix, up, up,
		    x->tmpl[1] ? ""
			       : " (neither available: tcx had no CUDA-dialect kernel template)");
	if (x->accuracy > 0)
		strbuf_addf(&o,
			    "\nAccuracy: every solution's relative error, the largest |got - ref| "
			    "/ sum |a b|\nagainst tcx's fp64 host reference, was measured within "
			    "%.3g (`%s_ACCURACY`).\n",
			    x->accuracy, up);
	if (reports)
		strbuf_adds(&o, "\nHow well each selector chooses at sizes that were never tuned: "
				"`selector-report.md`\n(and `.json`).\n");
	st = strbuf_status(&o, err);
	if (!st)
		st = export_tree_write(tree, "README.md", o.buf, o.len, err);
	strbuf_release(&o);
	return st;
}

static enum tcx_status write_reports(const struct xlib *x, struct export_tree *tree, bool *any,
				     struct tcx_error *err)
{
	json_t *all = json_array();
	struct strbuf md = STRBUF_INIT;
	enum tcx_status st = TCX_OK;
	char *text = NULL;

	*any = false;
	if (!all)
		return tcx_fail(err, TCX_ENOMEM, "out of memory");
	for (int i = 0; i < x->n && !st; i++) {
		if (!x->in[i].report)
			continue;
		if (*any)
			strbuf_adds(&md, "\n");
		*any = true;
		json_array_append(all, x->in[i].report);
		st = export_report_markdown(x->in[i].report, &md, err);
		strbuf_addf(&md, "\nThe library uses the **%s** selector for this logic.\n",
			    selector_kind_name(x->in[i].kind));
	}
	if (!st && *any) {
		text = json_dumps(all, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (!text)
			st = tcx_fail(err, TCX_ENOMEM, "out of memory");
		if (!st)
			st = strbuf_status(&md, err);
		if (!st)
			st = export_tree_write(tree, "selector-report.md", md.buf, md.len, err);
		if (!st)
			st = export_tree_write(tree, "selector-report.json", text, strlen(text),
					       err);
	}
	free(text);
	strbuf_release(&md);
	json_decref(all);
	return st;
}

enum tcx_status export_lib(const struct export_input *in, int n, const struct export_opts *o,
			   struct tcx_error *err)
{
	struct xlib x;
	struct export_tree *tree = NULL;
	char up[64], why[128];
	enum tcx_status st;
	struct strbuf hdr = STRBUF_INIT, types = STRBUF_INIT, rel = STRBUF_INIT;
	bool reports = false;

	if (!export_name_check(o->name, why, sizeof(why)))
		return tcx_fail(err, TCX_EINVAL, "bad library name '%s': %s",
				o->name ? o->name : "", why);
	if (n <= 0)
		return tcx_fail(err, TCX_EINVAL, "no logic files to export");
	memset(&x, 0, sizeof(x));
	x.in = in;
	x.n = n;
	x.accuracy = o->accuracy;
	for (int i = 0; i < n && o->accuracy > 0; i++) {
		st = export_accuracy_check(in[i].logic, in[i].path, o->accuracy, err);
		if (st)
			return st;
	}
	for (size_t k = 0; k <= strlen(o->name); k++)
		up[k] = (char)toupper((unsigned char)o->name[k]);
	st = load_templates(&x, err);
	if (!st)
		st = group_types(&x, err);
	if (!st && !o->force)
		st = export_dir_check(o->out_dir, err);
	if (!st)
		st = export_tree_create(o->out_dir, &tree, err);
	if (st)
		goto out;
	{
		const struct subst tab[] = {
		    {"TL_PREFIX", o->name},   {"TL_UPPER", up}, {"TL_TCX_VERSION", tcx_version()},
		    {"TL_PROBLEM_TYPES", ""}, {NULL, NULL},
		};
		struct subst full[ARRAY_SIZE(tab)];
		char *text = NULL;

		memcpy(full, tab, sizeof(tab));
		header_types(&x, o->name, up, &types);
		full[3].value = strbuf_str(&types);
		st = template_text("header.h.in", &text, NULL, err);
		if (!st) {
			substitute(&hdr, text, full);
			st = strbuf_status(&hdr, err);
		}
		free(text);
		strbuf_addf(&rel, "include/%s.h", o->name);
		if (!st)
			st = export_tree_write(tree, strbuf_str(&rel), hdr.buf, hdr.len, err);
		if (!st)
			st = write_config(&x, tree, o->name, up, err);
		if (!st)
			st = write_source(&x, tree, o->name, up, err);
		/* the templates, copied; the kernels' ABI as tcx's kernels have it */
		if (!st)
			st = copy_kernel_file(tree, "common/abi.h", "src/abi.h", err);
		if (!st)
			st = copy_template(tree, "abi.c", "src/abi.c", tab, err);
		if (!st)
			st = copy_template(tree, "elem.h", "src/elem.h", tab, err);
		if (!st)
			st = copy_template(tree, "select.h", "src/select.h", tab, err);
		if (!st)
			st = copy_template(tree, "select.c", "src/select.c", tab, err);
		if (!st)
			st = copy_template(tree, "runtime.h", "src/runtime.h", tab, err);
		if (!st)
			st = copy_template(tree, "runtime.c", "src/runtime.c", tab, err);
		if (!st)
			st = copy_template(tree, "clerr.h", "src/clerr.h", tab, err);
		if (!st)
			st = copy_template(tree, "gpu.h", "src/gpu.h", tab, err);
		if (!st)
			st = copy_template(tree, "runtime_gpu.c", "src/runtime_gpu.c", tab, err);
		if (!st)
			st = copy_template(tree, "client.c", "client/client.c", tab, err);
		if (!st)
			st = copy_template(tree, "client_gpu.c", "client/client_gpu.c", tab, err);
		if (!st)
			st = copy_template(tree, "CMakeLists.txt.in", "CMakeLists.txt", tab, err);
		strbuf_reset(&rel);
		strbuf_addf(&rel, "cmake/%sConfig.cmake.in", o->name);
		if (!st)
			st = copy_template(tree, "Config.cmake.in", strbuf_str(&rel), tab, err);
		strbuf_reset(&rel);
		strbuf_addf(&rel, "%s.pc.in", o->name);
		if (!st)
			st = copy_template(tree, "pc.in", strbuf_str(&rel), tab, err);
	}
	if (!st)
		st = write_reports(&x, tree, &reports, err);
	if (!st)
		st = write_readme(&x, tree, o->name, up, reports, err);
	if (!st)
		st = export_tree_commit(tree, err);
	if (!st)
		tcx_log(TCX_LOG_INFO, "%s: %d problem type%s, library written to %s", o->name,
			x.ntypes, x.ntypes == 1 ? "" : "s", o->out_dir);
out:
	export_tree_destroy(tree);
	strbuf_release(&hdr);
	strbuf_release(&types);
	strbuf_release(&rel);
	xlib_release(&x);
	return st;
}

enum tcx_status export_accuracy_check(const struct logic *l, const char *path, double accuracy,
				      struct tcx_error *err)
{
	if (l->accuracy > accuracy)
		return tcx_fail(err, TCX_EINVAL,
				"logic '%s' was tuned for a relative error of %.3g, weaker than the "
				"accuracy %.3g asked",
				path, l->accuracy, accuracy);
	for (int k = 0; k < l->nsol; k++) {
		const struct logic_solution *s = &l->sols[k];

		if (!s->measured && !(l->accuracy > 0))
			return tcx_fail(err, TCX_EINVAL,
					"logic '%s' records no accuracy: solution %d (%s) has no "
					"measured error (tune it with tcx tune --accuracy)",
					path, k, s->name);
		if (s->measured && s->measured_error > accuracy)
			return tcx_fail(err, TCX_EINVAL,
					"logic '%s': solution %d (%s) measured a relative error of "
					"%.3g in %s, above the accuracy %.3g asked",
					path, k, s->name, s->measured_error, arith_name(s->arith),
					accuracy);
	}
	return TCX_OK;
}
