/* test_sizes.c - Tensile ProblemSizes expansion: the counts and sequences
 * Tensile v3's code produces (docs/tensile-compat.md section 3). */
#include <string.h>

#include "check.h"
#include "model/model.h"

static size_t expand(const char *spec, int nidx, struct size_list *l)
{
	struct size_range r;
	struct tcx_error err;

	size_list_init(l, nidx);
	if (size_range_parse(spec, nidx, &r, &err) != TCX_OK ||
	    size_range_expand(&r, nidx, l, 1000000, &err) != TCX_OK) {
		fprintf(stderr, "%s: %s\n", spec, err.msg);
		return (size_t)-1;
	}
	size_list_sort_unique(l);
	return l->count;
}

static bool column_is(const struct size_list *l, int col, const int64_t *want, size_t n)
{
	if (l->count != n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (l->v[k * (size_t)l->nidx + (size_t)col] != want[k])
			return false;
	return true;
}

int main(void)
{
	struct size_list l;
	struct size_range r;
	struct tcx_error err;
	int64_t ex[4];
	static const int64_t seq15[] = { 64,  96,	144,  208,  288,  384,	496, 624,
					 768, 928, 1104, 1296, 1504, 1728, 1968 };
	static const int64_t seq64[] = { 64,   128,  256,  448,  704,  1024, 1408, 1856,
					 2368, 2944, 3584, 4288, 5056, 5888, 6784 };

	CHECK(expand("[16,1968],0,0", 3, &l) == 123);
	size_list_release(&l);
	CHECK(expand("[[16,1968],0,0]", 3, &l) == 123);
	size_list_release(&l);
	CHECK(expand("[16,1920],0,0", 3, &l) == 120);
	size_list_release(&l);
	CHECK(expand("[16,32,1968],0,0", 3, &l) == 62);
	CHECK(l.v[0] == 16 && l.v[3] == 48 && l.v[61 * 3] == 1968);
	size_list_release(&l);
	CHECK(expand("[64,32,16,1968],0,0", 3, &l) == 15);
	CHECK(column_is(&l, 0, seq15, 15));
	CHECK(column_is(&l, 1, seq15, 15)); /* 0 copies index 0 */
	size_list_release(&l);
	CHECK(expand("[64,64,64,7000],0,0", 3, &l) == 15);
	CHECK(column_is(&l, 0, seq64, 15));
	size_list_release(&l);
	CHECK(expand("[16,16,16,5760],0,0", 3, &l) == 27);
	size_list_release(&l);
	CHECK(expand("[8,32,0,75],0,0", 3, &l) == 3);
	size_list_release(&l);
	CHECK(expand("[1,2],0,0", 3, &l) == 2);
	size_list_release(&l);
	CHECK(expand("[1968],0,0", 3, &l) == 1);
	size_list_release(&l);
	/* whole ranges */
	CHECK(expand("[[16,128],[16,128],[16,128]]", 3, &l) == 512);
	size_list_release(&l);
	CHECK(expand("[[16,128],0,0]", 3, &l) == 8);
	size_list_release(&l);
	CHECK(expand("[[16,16,16,5760],0,[1024,1024,4096]]", 3, &l) == 108);
	size_list_release(&l);
	/* batched default: short list padded with 0, so batch = I */
	CHECK(expand("[[64,64,64,512],0,0]", 4, &l) == 4);
	CHECK(l.v[2] == 64 && l.v[3] == 64);
	size_list_release(&l);
	/* sorted, index 0 slowest, duplicates removed */
	CHECK(expand("[[16,32],[2],[1,2]]", 3, &l) == 4);
	CHECK(l.v[0] == 16 && l.v[2] == 1 && l.v[5] == 2 && l.v[6] == 32);
	size_list_release(&l);
	size_list_init(&l, 3);
	CHECK(size_range_parse("[16,32],0,0", 3, &r, &err) == TCX_OK);
	CHECK(size_range_expand(&r, 3, &l, 100, &err) == TCX_OK);
	CHECK(size_range_expand(&r, 3, &l, 100, &err) == TCX_OK);
	CHECK(l.count == 4);
	size_list_sort_unique(&l);
	CHECK(l.count == 2);
	size_list_release(&l);

	/* bad specs */
	CHECK(size_range_parse("[0,16],0,0", 3, &r, &err) == TCX_ERANGE);
	CHECK(size_range_parse("[16,8],0,0", 3, &r, &err) == TCX_ERANGE);
	CHECK(size_range_parse("[16,0,64],0,0", 3, &r, &err) == TCX_ERANGE);
	CHECK(size_range_parse("[16,1,2,3,4],0,0", 3, &r, &err) == TCX_EPARSE);
	CHECK(size_range_parse("[16,32", 3, &r, &err) == TCX_EPARSE);
	CHECK(size_range_parse("[a],0", 3, &r, &err) == TCX_EPARSE);
	CHECK(size_range_parse("", 3, &r, &err) == TCX_EPARSE);
	CHECK(size_range_parse("[16],5", 3, &r, &err) == TCX_EINVAL);	/* no index 5 */
	CHECK(size_range_parse("1,0,[4]", 3, &r, &err) == TCX_EINVAL);	/* a cycle */
	CHECK(size_range_parse("0,[4],[4]", 3, &r, &err) == TCX_EINVAL); /* copies itself */
	CHECK(size_range_parse("[99999999999999999999]", 1, &r, &err) == TCX_ERANGE);
	size_list_init(&l, 3);
	CHECK(size_range_parse("[[1,1000000],[1,1000000],[1,10]]", 3, &r, &err) == TCX_OK);
	CHECK(size_range_expand(&r, 3, &l, 1000000, &err) == TCX_ERANGE);
	size_list_release(&l);

	/* exact */
	CHECK(size_exact_parse("1024,512,64", 3, ex, &err) == TCX_OK);
	CHECK(ex[0] == 1024 && ex[1] == 512 && ex[2] == 64);
	CHECK(size_exact_parse("[ 7, 8, 9 ]", 3, ex, &err) == TCX_OK && ex[2] == 9);
	CHECK(size_exact_parse("1,2", 3, ex, &err) == TCX_EINVAL);
	CHECK(size_exact_parse("1,2,3,4", 3, ex, &err) == TCX_EINVAL);
	CHECK(size_exact_parse("1,0,3", 3, ex, &err) == TCX_ERANGE);
	CHECK(size_exact_parse("1,x,3", 3, ex, &err) == TCX_EPARSE);
	return check_done();
}
