/* kernel_source.c - a developer's tool: print the kernel tcx generates for
 * a contraction and a solution, for OpenCL or for CUDA (a made-up sm_90
 * device), so that it can be compiled and disassembled offline:
 *
 *   kernel_source cuda 'C[ij]=A[ik]*B[kj]' s 'WorkGroup=[16,16,1],...' > k.cu
 *   nvcc -cubin -arch=sm_90 -Xptxas -v k.cu && cuobjdump -sass k.cubin
 *
 * usage: kernel_source opencl|cuda EXPR TYPE PARAMS */
#include <stdio.h>
#include <string.h>

#include "gen/gen.h"
#include "notation/notation.h"

int main(int argc, char **argv)
{
	struct device_info d;
	struct tcx_contraction *c = NULL;
	struct solution s;
	struct kernel_plan k;
	struct strbuf src = STRBUF_INIT, opts = STRBUF_INIT;
	struct tcx_error err = { 0 };
	enum tcx_dtype t;

	if (argc != 5 || !dtype_parse(argv[3], &t)) {
		fprintf(stderr, "usage: kernel_source opencl|cuda EXPR TYPE PARAMS\n");
		return 2;
	}
	memset(&d, 0, sizeof(d));
	snprintf(d.name, sizeof(d.name), "offline");
	snprintf(d.lang, sizeof(d.lang), "%s", strcmp(argv[1], "cuda") ? "opencl" : "cuda");
	snprintf(d.arch, sizeof(d.arch), "sm_90");
	d.type = DEV_GPU;
	d.max_wg_size = 1024;
	d.max_wg_dim[0] = d.max_wg_dim[1] = d.max_wg_dim[2] = 1024;
	d.local_mem = 227 * 1024;
	d.fp64 = d.fp16 = true;
	d.simd_width = 32;
	solution_default(&s);
	if (notation_parse(argv[2], t, LAYOUT_BY_STYLE, &c, &err) ||
	    solution_parse(&s, argv[4], &err) || plan_make(c, NULL, &s, &d, &k, &err) ||
	    plan_source(&k, &src, &opts, &err)) {
		fprintf(stderr, "kernel_source: %s\n", err.msg);
		contraction_free(c);
		return 1;
	}
	fputs(src.buf, stdout);
	fprintf(stderr, "lds bytes %lld, nlc %d/%d, nlp %d/%d\n", (long long)k.lds_bytes, k.nlc_p,
		k.nlc_q, k.nlp_p, k.nlp_q);
	strbuf_release(&src);
	strbuf_release(&opts);
	contraction_free(c);
	return 0;
}
