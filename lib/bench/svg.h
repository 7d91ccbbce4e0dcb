/* svg.h - line plots as standalone SVG 1.1 (tcx bench --plot): one
 * polyline with markers per series, axes with ticks and labels, a legend
 * and a title.  The x axis is logarithmic when the data span more than 8x.
 * Text is escaped for XML; the output opens in browsers and in rsvg. */
#ifndef TCX_BENCH_SVG_H
#define TCX_BENCH_SVG_H

#include <stdbool.h>

#include "common/common.h"

struct svg_series {
	const char *name;       /* legend text */
	int n;
	const double *x, *y;    /* n points, any order (drawn sorted by x); points
				   with a non-finite or, on a log axis, non-positive
				   coordinate are left out */
};

struct svg_plot {
	const char *title;      /* first title line */
	const char *subtitle;   /* second, smaller line; may be NULL */
	const char *xlabel, *ylabel;
	int nseries;
	const struct svg_series *series;
	int width, height;      /* pixels; <= 0: 960 x 600 */
};

/* Appends the SVG document to out.  *log_x (may be NULL) says whether the x
 * axis came out logarithmic.  TCX_EINVAL when no series has a point. */
enum tcx_status svg_plot_write(const struct svg_plot *p, struct strbuf *out, bool *log_x,
			       struct tcx_error *err);

/* Appends s to out with & < > " ' escaped. */
void svg_escape(struct strbuf *out, const char *s);

#endif /* TCX_BENCH_SVG_H */
