/* permute.c - plans, sources and launches of the tensor permute
 * (kernels/opencl/permute.cl): indices merged, elements fused into words,
 * the path (a straight copy or a transpose through local memory), the
 * work-groups and their grid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "gen/permute.h"

/* The widest word the kernel moves (a 128-bit load or store), and the
 * work-items of a work-group where the device takes them. */
#define PERMUTE_MAX_WORD 16
#define PERMUTE_THREADS	 256

/* One index of the permute: its size and strides, in words once fused. */
struct pdim {
	int64_t n, si, so;
	int id;
};

/* Merges index j into index i wherever j continues i in both tensors (j's
 * strides are i's times i's size); the merged index keeps i's place.
 * Returns the indices left. */
static int merge_dims(struct pdim *d, int n)
{
	bool again = true;

	while (again) {
		again = false;
		for (int i = 0; i < n && !again; i++)
			for (int j = 0; j < n && !again; j++) {
				int64_t ei, eo;

				if (i == j || common_mul_overflows_i64(d[i].si, d[i].n, &ei) ||
				    common_mul_overflows_i64(d[i].so, d[i].n, &eo) ||
				    d[j].si != ei || d[j].so != eo)
					continue;
				d[i].n *= d[j].n;
				d[j] = d[--n];
				again = true;
			}
	}
	return n;
}

/* Fuses elements into words along the index of unit stride in both tensors,
 * when there is one: as many as fit in PERMUTE_MAX_WORD bytes, divide its
 * size and every other stride (so that every word stays aligned).  Returns
 * the elements per word; the strides and sizes become words. */
static int fuse_dims(struct pdim *d, int *n, int es)
{
	int c = -1, f;

	for (int k = 0; k < *n; k++)
		if (d[k].si == 1 && d[k].so == 1)
			c = k;
	if (c < 0)
		return 1;
	for (f = PERMUTE_MAX_WORD / es; f > 1; f /= 2) {
		bool ok = d[c].n % f == 0;

		for (int k = 0; k < *n && ok; k++)
			if (k != c && (d[k].si % f || d[k].so % f))
				ok = false;
		if (ok)
			break;
	}
	if (f == 1)
		return 1;
	d[c].n /= f;
	for (int k = 0; k < *n; k++)
		if (k != c) {
			d[k].si /= f;
			d[k].so /= f;
		}
	if (d[c].n == 1)
		d[c] = d[--*n];
	return f;
}

/* The index moving fastest in the input (in the output when `out`): the
 * least positive stride, ties to the least stride in the other tensor;
 * -1 when every stride is 0. */
static int fastest(const struct pdim *d, int n, bool out, int skip)
{
	int best = -1;

	for (int k = 0; k < n; k++) {
		int64_t s = out ? d[k].so : d[k].si, t = out ? d[k].si : d[k].so;
		int64_t bs = best < 0 ? 0 : out ? d[best].so : d[best].si;
		int64_t bt = best < 0 ? 0 : out ? d[best].si : d[best].so;

		if (k == skip || s <= 0)
			continue;
		if (best < 0 || s < bs || (s == bs && t < bt))
			best = k;
	}
	return best;
}

/* The 8-byte lanes of a word of `word` bytes that hold imaginary parts:
 * every lane for complex fp32 (an element per lane), the second of each
 * pair for complex fp64. */
static int conj_lanes(enum tcx_dtype t, int word)
{
	if (t == TCX_DTYPE_C)
		return word == 16 ? 3 : 1;
	if (t == TCX_DTYPE_Z)
		return 2;
	return 0;
}

static void place(struct permute_plan *p, int sl, const struct pdim *d)
{
	p->dim[sl] = d ? d->id : -1;
	p->size[sl] = d ? d->n : 1;
	p->si[sl] = d ? d->si : 0;
	p->so[sl] = d ? d->so : 0;
}

static int cmp_out_stride(const void *a, const void *b)
{
	const struct pdim *x = a, *y = b;

	return x->so < y->so ? -1 : x->so > y->so;
}

/* Slots 0 and 1 (a, b: indices of d, -1 for a stand-in), then the others
 * folded, by output stride, so that neighbouring work-groups write
 * neighbouring memory. */
static void place_all(struct permute_plan *p, struct pdim *d, int n, int a, int b)
{
	struct pdim rest[TCX_MAX_INDICES];
	int nr = 0;

	place(p, 0, a >= 0 ? &d[a] : NULL);
	place(p, 1, b >= 0 ? &d[b] : NULL);
	for (int k = 0; k < n; k++)
		if (k != a && k != b)
			rest[nr++] = d[k];
	qsort(rest, (size_t)nr, sizeof(rest[0]), cmp_out_stride);
	for (int k = 0; k < nr; k++)
		place(p, 2 + k, &rest[k]);
	p->nfold = nr;
	p->nslots = 2 + nr;
	for (int sl = p->nslots; sl < TCX_PERMUTE_SLOTS; sl++)
		place(p, sl, NULL);
}

/* The copy's work-group: 256, 32 or 8 work-items along slot 0 (few
 * shapes, so that permutes of many sizes share a program), the rest of
 * PERMUTE_THREADS along slot 1 when it has more than one element; 4 words
 * a work-item where there are that many (loads in flight before the
 * stores). */
static void copy_shape(struct permute_plan *p, int threads, const struct device_info *dev)
{
	int max0 = dev && dev->max_wg_dim[0] > 0 ? dev->max_wg_dim[0] : threads;
	int max1 = dev && dev->max_wg_dim[1] > 0 ? dev->max_wg_dim[1] : threads;
	int w0 = p->size[0] >= 256 ? 256 : p->size[0] > 8 ? 32 : 8, w1 = 1;

	while (w0 > 1 && (w0 > threads || w0 > max0))
		w0 /= 2;
	if (p->size[1] > 1)
		for (w1 = threads / w0; w1 > 1 && w1 > max1;)
			w1 /= 2;
	p->wg[0] = w0;
	p->wg[1] = w1;
	p->rep[0] = p->rep[1] = 1;
	if (w1 > 1 && p->size[1] >= 4 * w1)
		p->rep[1] = 4;
	else if (w1 == 1 && p->size[0] >= 4 * w0)
		p->rep[0] = 4;
	p->local[0] = (size_t)p->wg[0];
	p->local[1] = (size_t)p->wg[1];
	p->groups[0] = gen_ceil_div(p->size[0], p->wg[0] * p->rep[0]);
	p->groups[1] = gen_ceil_div(p->size[1], p->wg[1] * p->rep[1]);
}

/* The transpose's tile along a slot of n words whose partner slot has m:
 * an extent up to twice the wide tile whole, rounded up to 8 words (24 and
 * 48, the short indices of TCCG's tensors, fill their tiles where 32 x 32
 * filled half); past that the wide tile (128 bytes of 4-byte words, 64 of
 * 2-byte ones), doubled when the partner's tile is short of it, so that a
 * work-group moves some 1000 words or more. */
static int tile_extent(int64_t n, int64_t m, int word)
{
	const int wide = word == 2 ? 64 : 32;

	if (n <= 2 * wide)
		return (int)gen_ceil_div(n, 8) * 8;
	return gen_ceil_div(m, 8) * 8 < wide ? 2 * wide : wide;
}

/* Halves a tile extent, staying a multiple of 8. */
static int tile_halve(int t)
{
	return (int)gen_ceil_div(t / 2, 8) * 8;
}

/* The transpose's tile (tile_extent along each slot), halved along its
 * longer side where the device's local memory (or 32 KB, for occupancy)
 * does not take it, and to what a work-group's work-items can move: whole
 * rows of it (a multiple of 4 of them, of 32 work-items, where that many
 * fit), each work-item's places worked out once by the kernel.  Its rows
 * are padded so that a column spans every bank (an odd count of 4-byte
 * banks; of 2-byte words, twice an odd count). */
static enum tcx_status tile_shape(struct permute_plan *p, int threads,
				  const struct device_info *dev, struct tcx_error *err)
{
	int max0 = dev && dev->max_wg_dim[0] > 0 ? dev->max_wg_dim[0] : threads;
	int max1 = dev && dev->max_wg_dim[1] > 0 ? dev->max_wg_dim[1] : threads;
	int64_t lmem = dev && dev->local_mem > 0 ? dev->local_mem : INT64_MAX;

	if (lmem > 32768)
		lmem = 32768;
	if (threads > max0)
		threads = max0;
	p->tile[0] = tile_extent(p->size[0], p->size[1], p->word);
	p->tile[1] = tile_extent(p->size[1], p->size[0], p->word);
	p->pad = p->word == 2 ? 2 : 1;
	while ((int64_t)p->tile[1] * (p->tile[0] + p->pad) * p->word > lmem &&
	       (p->tile[0] > 8 || p->tile[1] > 8)) {
		if (p->tile[0] >= p->tile[1])
			p->tile[0] = tile_halve(p->tile[0]);
		else
			p->tile[1] = tile_halve(p->tile[1]);
	}
	while (p->tile[0] > threads && p->tile[0] > 8)
		p->tile[0] = tile_halve(p->tile[0]);
	p->rows = threads / p->tile[0];
	if (p->rows > max1)
		p->rows = max1;
	if (p->rows >= 4)
		p->rows -= p->rows % 4;
	while (p->tile[1] > p->tile[0] * p->rows && p->tile[1] > 8)
		p->tile[1] = tile_halve(p->tile[1]);
	p->lds_bytes = (int64_t)p->tile[1] * (p->tile[0] + p->pad) * p->word;
	if (p->lds_bytes > lmem || p->rows < 1 || p->tile[1] > p->tile[0] * p->rows)
		return tcx_fail(err, TCX_ELIMIT,
				"a permute's tile of %d-byte words does not fit '%s' (%d work-items, "
				"%lld bytes of local memory)",
				p->word, dev ? dev->id : "the device", threads, (long long)lmem);
	p->local[0] = (size_t)p->tile[0];
	p->local[1] = (size_t)p->rows;
	p->groups[0] = gen_ceil_div(p->size[0], p->tile[0]);
	p->groups[1] = gen_ceil_div(p->size[1], p->tile[1]);
	return TCX_OK;
}

enum tcx_status permute_plan_make(enum tcx_dtype t, int rank, const int64_t *size,
				  const int64_t *stride_in, const int64_t *stride_out, bool conj,
				  const struct device_info *dev, struct permute_plan *out,
				  struct tcx_error *err)
{
	const struct dtype_info *ti = dtype_info(t);
	struct pdim d[TCX_MAX_INDICES];
	int64_t count = 1, ext_in = 0, ext_out = 0;
	int n = 0, threads, a, b;
	bool empty = false;

	memset(out, 0, sizeof(*out));
	if (!ti)
		return tcx_fail(err, TCX_EINVAL, "no element type %d", (int)t);
	if (rank < 0 || rank > TCX_MAX_INDICES)
		return tcx_fail(err, TCX_EINVAL, "a permute of %d indices: tcx takes 0 to %d", rank,
				TCX_MAX_INDICES);
	out->dtype = t;
	out->conj = conj && ti->complex;
	out->word = ti->bytes;
	out->fuse = 1;
	out->conj_lanes = conj_lanes(t, ti->bytes);
	snprintf(out->lang, sizeof(out->lang), "%s", dev && dev->lang[0] ? dev->lang : "opencl");
	for (int k = 0; k < rank; k++) {
		int64_t e;

		if (size[k] < 0)
			return tcx_fail(err, TCX_EINVAL, "size %lld of index %d is negative",
					(long long)size[k], k);
		if (stride_in[k] < 0 || stride_out[k] < 0)
			return tcx_fail(err, TCX_EINVAL, "stride %lld of index %d in the %s is negative",
					(long long)(stride_in[k] < 0 ? stride_in[k] : stride_out[k]), k,
					stride_in[k] < 0 ? "input" : "output");
		if (size[k] == 0)
			empty = true;
		if (size[k] <= 1)
			continue;
		if (stride_out[k] == 0)
			return tcx_fail(err, TCX_EINVAL,
					"output stride 0 of index %d writes one element %lld times", k,
					(long long)size[k]);
		if (common_mul_overflows_i64(count, size[k], &count) ||
		    common_mul_overflows_i64(size[k] - 1, stride_in[k], &e) ||
		    common_add_overflows_i64(ext_in, e, &ext_in) ||
		    common_mul_overflows_i64(size[k] - 1, stride_out[k], &e) ||
		    common_add_overflows_i64(ext_out, e, &ext_out) || ext_in > INT64_MAX / 16 ||
		    ext_out > INT64_MAX / 16)
			return tcx_fail(err, TCX_ERANGE, "a permute of index %d (size %lld): offsets "
					"overflow 64 bits", k, (long long)size[k]);
		d[n++] = (struct pdim){size[k], stride_in[k], stride_out[k], k};
	}
	if (empty) {
		out->path = PERMUTE_EMPTY;
		place_all(out, d, 0, -1, -1);
		return TCX_OK;
	}
	out->elements = count;
	n = merge_dims(d, n);
	out->fuse = fuse_dims(d, &n, ti->bytes);
	out->word = ti->bytes * out->fuse;
	out->conj_lanes = conj_lanes(t, out->word);

	threads = dev && dev->max_wg_size > 0 && dev->max_wg_size < PERMUTE_THREADS
			  ? dev->max_wg_size
			  : PERMUTE_THREADS;
	a = fastest(d, n, false, -1);
	b = fastest(d, n, true, -1);
	if (a < 0)
		a = b; /* every input stride 0: one element, everywhere */
	out->local[2] = 1;
	if (a == b) {
		/* the straight copy: along a, then the index written next fastest */
		out->path = PERMUTE_COPY;
		place_all(out, d, n, a, fastest(d, n, true, a));
		out->unit0 = out->si[0] == 1 && out->so[0] == 1;
		copy_shape(out, threads, dev);
	} else {
		enum tcx_status st;

		out->path = PERMUTE_TILE;
		place_all(out, d, n, a, b);
		out->unit0 = out->si[0] == 1;
		out->unit1 = out->so[1] == 1;
		st = tile_shape(out, threads, dev, err);
		if (st)
			return st;
	}
	out->groups[2] = 1;
	for (int sl = 2; sl < out->nslots; sl++)
		out->groups[2] *= out->size[sl];
	return plan_grid(out->groups, out->local, dev, out->global, err);
}

/* The templates of a permute's source, after its prelude. */
enum tcx_status permute_plan_tensor(const struct problem *p, enum tensor_role t,
				    const int64_t *to, const struct device_info *dev,
				    struct permute_plan *out, struct tcx_error *err)
{
	int64_t size[TCX_MAX_INDICES], si[TCX_MAX_INDICES], so[TCX_MAX_INDICES];

	for (int k = 0; k < p->c->rank[t]; k++) {
		const int id = p->c->written[t][k];

		size[k] = p->size[id];
		si[k] = p->stride[t][id];
		so[k] = to[id];
	}
	return permute_plan_make(p->c->dtype, p->c->rank[t], size, si, so, false, dev, out, err);
}

enum tcx_status permute_source(const struct permute_plan *p, struct strbuf *src,
			       struct strbuf *opts, struct tcx_error *err)
{
	enum tcx_status st;

	if (p->path == PERMUTE_EMPTY)
		return tcx_fail(err, TCX_EINVAL, "an empty permute has no kernel");
	strbuf_addf(src, "/* tcx %s permute kernel */\n", tcx_version());
	if (strcmp(p->lang, "cuda") == 0)
		strbuf_adds(src, "#define TCX_LANG_CUDA 1\n");
	strbuf_addf(src, "#define PERM_WORD %d\n", p->word);
	if (p->path == PERMUTE_TILE)
		strbuf_addf(src,
			    "#define PERM_TILE %d\n#define PERM_TILE1 %d\n#define PERM_RROWS %d\n"
			    "#define PERM_PAD %d\n#define PERM_UNIT0 %d\n#define PERM_UNIT1 %d\n",
			    p->tile[0], p->tile[1], p->rows, p->pad, p->unit0, p->unit1);
	else
		strbuf_addf(src,
			    "#define PERM_TILE 0\n#define PERM_WG0 %d\n#define PERM_WG1 %d\n"
			    "#define PERM_REP0 %d\n#define PERM_REP1 %d\n#define PERM_UNIT0 %d\n",
			    p->wg[0], p->wg[1], p->rep[0], p->rep[1], p->unit0);
	st = strbuf_status(src, err);
	return st ? st : kernel_assemble_family("opencl/permute.cl", p->lang, src, opts, err);
}

enum tcx_status permute_build(const struct permute_plan *p, struct device *dev,
			      struct program **prog, struct strbuf *log, struct tcx_error *err)
{
	struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
	enum tcx_status st;

	*prog = NULL;
	st = permute_source(p, &src, &opts, err);
	if (!st)
		st = device_build(dev, src.buf, src.len, strbuf_str(&opts), prog, NULL, log, err);
	strbuf_release(&src);
	strbuf_release(&opts);
	return st;
}

enum tcx_status permute_launch(const struct permute_plan *p, struct device *dev,
			       struct program *prog, struct buffer *in, int64_t in_off,
			       struct buffer *out, int64_t out_off, double *event_ms,
			       struct tcx_error *err)
{
	struct tcx_permute_args args;
	struct launch l;

	if (event_ms)
		*event_ms = 0;
	if (p->path == PERMUTE_EMPTY)
		return TCX_OK;
	if (in_off < 0 || out_off < 0 || in_off % p->fuse || out_off % p->fuse)
		return tcx_fail(err, TCX_EINVAL,
				"permute offsets %lld and %lld: the plan moves %d elements at once "
				"and needs multiples of %d",
				(long long)in_off, (long long)out_off, p->fuse, p->fuse);
	memset(&args, 0, sizeof(args));
	for (int sl = 0; sl < TCX_PERMUTE_SLOTS; sl++) {
		args.size[sl] = p->size[sl];
		args.si[sl] = p->si[sl];
		args.so[sl] = p->so[sl];
	}
	args.off_in = in_off / p->fuse;
	args.off_out = out_off / p->fuse;
	args.nfold = p->nfold;
	args.conj = p->conj ? p->conj_lanes : 0;
	memcpy(args.groups, p->groups, sizeof(args.groups));
	launch_init(&l, TCX_PERMUTE_NAME);
	memcpy(l.local, p->local, sizeof(l.local));
	memcpy(l.global, p->global, sizeof(l.global));
	/* the parameters in common/abi.h's order */
	launch_arg_buffer(&l, out);
	launch_arg_buffer(&l, in);
	launch_arg_bytes(&l, &args, sizeof(args));
	/* CUDA and HIP carve the tile out of dynamic shared memory */
	if (strcmp(p->lang, "cuda") == 0 && p->lds_bytes > 0)
		launch_arg_local(&l, (size_t)p->lds_bytes);
	return device_launch(dev, prog, &l, event_ms, err);
}

enum tcx_status permute_packed_strides(int rank, const int64_t *size, const int *order,
				       int64_t *stride, int64_t *count, struct tcx_error *err)
{
	bool seen[TCX_MAX_INDICES] = {false};
	int64_t s = 1;

	if (rank < 0 || rank > TCX_MAX_INDICES)
		return tcx_fail(err, TCX_EINVAL, "a tensor of %d indices: tcx takes 0 to %d", rank,
				TCX_MAX_INDICES);
	for (int k = 0; k < rank; k++) {
		if (order[k] < 0 || order[k] >= rank || seen[order[k]])
			return tcx_fail(err, TCX_EINVAL,
					"index order: %d at position %d is not one of the %d "
					"indices, or repeats",
					order[k], k, rank);
		seen[order[k]] = true;
	}
	for (int k = 0; k < rank; k++) {
		int64_t n = size[order[k]];

		if (n < 0)
			return tcx_fail(err, TCX_EINVAL, "size %lld of index %d is negative",
					(long long)n, order[k]);
		stride[order[k]] = s;
		if (common_mul_overflows_i64(s, n ? n : 1, &s))
			return tcx_fail(err, TCX_ERANGE, "a packed tensor of %d indices: its "
					"element count overflows 64 bits", rank);
	}
	if (count) {
		*count = 1;
		for (int k = 0; k < rank; k++)
			*count *= size[k];
	}
	return TCX_OK;
}

void permute_plan_str(const struct permute_plan *p, char *buf, size_t len)
{
	switch (p->path) {
	case PERMUTE_EMPTY:
		snprintf(buf, len, "empty");
		break;
	case PERMUTE_COPY:
		snprintf(buf, len, "copy of %d-byte words (%d element%s), %dx%d work-items",
			 p->word, p->fuse, p->fuse > 1 ? "s" : "", p->wg[0], p->wg[1]);
		break;
	default:
		snprintf(buf, len, "tile %dx%d of %d-byte words (%d element%s), %dx%d work-items",
			 p->tile[0], p->tile[1], p->word, p->fuse, p->fuse > 1 ? "s" : "", p->tile[0],
			 p->rows);
		break;
	}
}
