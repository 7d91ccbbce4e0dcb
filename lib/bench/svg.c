/* svg.c - the SVG line-plot writer behind tcx bench --plot (svg.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/svg.h"

/* Ten distinguishable colours (Tableau 10). */
static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
	int n, min;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (int k = 1; k < n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if ((int)cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void svg_escape(struct strbuf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		int n;

		switch (*p) {
		case '&':
			strbuf_adds(out, "&amp;");
			break;
		case '<':
			strbuf_adds(out, "&lt;");
			break;
		case '>':
			strbuf_adds(out, "&gt;");
			break;
		case '"':
			strbuf_adds(out, "&quot;");
			break;
		case '\'':
			strbuf_adds(out, "&apos;");
			break;
		default:
			/* XML 1.0 allows no control characters but tab and newlines,
			 * and only well-formed UTF-8 */
			if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') {
				strbuf_addc(out, '?');
				break;
			}
			n = utf8_len(p);
			if (n == 0) {
				strbuf_addc(out, '?');
				break;
			}
			strbuf_add(out, (const char *)p, (size_t)n);
			p += n;
			continue;
		}
		p++;
	}
}

/* 1, 2 or 5 times a power of ten, near v. */
static double nice_step(double v)
{
	double e = pow(10, floor(log10(v))), f = v / e;

	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * e;
}

/* "1.5k", "2M", "512", "0.25": three significant digits and an SI prefix. */
static void si_format(double v, char *buf, size_t len)
{
	static const struct {
		double scale;
		const char *suffix;
	} si[] = { { 1e15, "P" }, { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" } };
	double a = fabs(v);

	for (size_t k = 0; k < ARRAY_SIZE(si); k++)
		if (a >= si[k].scale) {
			snprintf(buf, len, "%.3g%s", v / si[k].scale, si[k].suffix);
			return;
		}
	snprintf(buf, len, "%.3g", v);
}

struct axis {
	bool log;
	double lo, hi;       /* data coordinates of the axis ends (log: of log10) */
	double p0, p1;       /* pixel coordinates of the ends */
	int nticks;
	double ticks[64];    /* data values */
};

static double axis_map(const struct axis *a, double v)
{
	double t = a->log ? log10(v) : v;

	return a->p0 + (t - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

static void linear_ticks(struct axis *a, double lo, double hi)
{
	double step = nice_step((hi - lo) / 5);

	a->lo = floor(lo / step) * step;
	a->hi = ceil(hi / step) * step;
	if (a->hi <= a->lo)
		a->hi = a->lo + step;
	a->nticks = 0;
	for (double t = a->lo; t <= a->hi + step * 1e-6 && a->nticks < 64; t += step)
		a->ticks[a->nticks++] = fabs(t) < step * 1e-9 ? 0 : t;
}

static void log_ticks(struct axis *a, double lo, double hi)
{
	static const double mult[] = { 1, 2, 5 };
	int k0, k1, decades;

	/* pad a little so the end points are not on the frame */
	a->lo = log10(lo) - 0.05 * (log10(hi) - log10(lo));
	a->hi = log10(hi) + 0.05 * (log10(hi) - log10(lo));
	k0 = (int)floor(a->lo);
	k1 = (int)ceil(a->hi);
	decades = k1 - k0;
	a->nticks = 0;
	for (int k = k0; k <= k1; k++)
		for (size_t m = 0; m < (decades <= 3 ? 3u : 1u); m++) {
			double v = mult[m] * pow(10, k);

			if (log10(v) >= a->lo && log10(v) <= a->hi && a->nticks < 64)
				a->ticks[a->nticks++] = v;
		}
	/* a wide range: thin the decades out to at most 8 labels */
	while (a->nticks > 8) {
		int n = 0;

		for (int t = 0; t < a->nticks; t += 2)
			a->ticks[n++] = a->ticks[t];
		a->nticks = n;
	}
}

struct point {
	double x, y;
};

static int cmp_point(const void *a, const void *b)
{
	const struct point *p = a, *q = b;

	return p->x < q->x ? -1 : p->x > q->x;
}

static bool usable(double x, double y, bool log_x)
{
	return isfinite(x) && isfinite(y) && (!log_x || x > 0);
}

enum tcx_status svg_plot_write(const struct svg_plot *p, struct strbuf *out, bool *log_x,
			       struct tcx_error *err)
{
	int w = p->width > 0 ? p->width : 960, h = p->height > 0 ? p->height : 600;
	int left = 90, right = 30, top = p->subtitle ? 70 : 50;
	int legend_h = 20 * p->nseries + 10, bottom = 60 + legend_h;
	double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
	struct axis ax = { 0 }, ay = { 0 };
	struct point *pts = NULL;
	int npts = 0, cap = 0;
	bool logx;
	char buf[64];

	for (int s = 0; s < p->nseries; s++)
		for (int i = 0; i < p->series[s].n; i++) {
			double x = p->series[s].x[i], y = p->series[s].y[i];

			if (!usable(x, y, false) || x <= 0)
				continue;
			xmin = fmin(xmin, x);
			xmax = fmax(xmax, x);
			ymax = fmax(ymax, y);
			npts++;
		}
	if (npts == 0)
		return tcx_fail(err, TCX_EINVAL, "nothing to plot: no size has a result");
	logx = xmax / xmin > 8;
	if (log_x)
		*log_x = logx;
	h += legend_h;
	ax.log = logx;
	ax.p0 = left;
	ax.p1 = w - right;
	ay.p0 = h - bottom;
	ay.p1 = top;
	if (logx) {
		log_ticks(&ax, xmin, xmax);
	} else {
		double pad = xmax > xmin ? 0.05 * (xmax - xmin) : 0.1 * xmax;

		linear_ticks(&ax, fmax(0, xmin - pad), xmax + pad);
	}
	linear_ticks(&ay, 0, ymax > 0 ? ymax * 1.05 : 1);

	strbuf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	strbuf_addf(out,
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		    "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, "
		    "Arial, sans-serif\" font-size=\"12\">\n",
		    w, h, w, h);
	strbuf_adds(out, "<title>");
	svg_escape(out, p->title);
	strbuf_adds(out, "</title>\n");
	strbuf_addf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w,
		    h);
	/* title */
	strbuf_addf(out, "<text class=\"title\" x=\"%d\" y=\"28\" text-anchor=\"middle\" "
			 "font-size=\"16\" font-weight=\"bold\">", w / 2);
	svg_escape(out, p->title);
	strbuf_adds(out, "</text>\n");
	if (p->subtitle) {
		strbuf_addf(out,
			    "<text class=\"subtitle\" x=\"%d\" y=\"48\" text-anchor=\"middle\" "
			    "font-size=\"12\" fill=\"#444\">",
			    w / 2);
		svg_escape(out, p->subtitle);
		strbuf_adds(out, "</text>\n");
	}
	/* grid and ticks */
	strbuf_adds(out, "<g class=\"axes\" stroke=\"#ccc\" stroke-width=\"1\">\n");
	for (int t = 0; t < ay.nticks; t++) {
		double y = axis_map(&ay, ay.ticks[t]);

		strbuf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", ax.p0,
			    y, ax.p1, y);
	}
	for (int t = 0; t < ax.nticks; t++) {
		double x = axis_map(&ax, ax.ticks[t]);

		strbuf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x,
			    ay.p0, x, ay.p1);
	}
	strbuf_addf(out,
		    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		    "stroke=\"#333\"/>\n",
		    ax.p0, ay.p1, ax.p1 - ax.p0, ay.p0 - ay.p1);
	strbuf_adds(out, "</g>\n<g class=\"ticks\" fill=\"#333\">\n");
	for (int t = 0; t < ay.nticks; t++) {
		si_format(ay.ticks[t], buf, sizeof(buf));
		strbuf_addf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			    ax.p0 - 6, axis_map(&ay, ay.ticks[t]) + 4, buf);
	}
	for (int t = 0; t < ax.nticks; t++) {
		si_format(ax.ticks[t], buf, sizeof(buf));
		strbuf_addf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			    axis_map(&ax, ax.ticks[t]), ay.p0 + 18, buf);
	}
	strbuf_adds(out, "</g>\n");
	/* axis labels */
	strbuf_addf(out, "<text class=\"xlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
		    (ax.p0 + ax.p1) / 2, ay.p0 + 40);
	svg_escape(out, p->xlabel);
	if (logx)
		strbuf_adds(out, " (log scale)");
	strbuf_adds(out, "</text>\n");
	strbuf_addf(out,
		    "<text class=\"ylabel\" x=\"0\" y=\"0\" text-anchor=\"middle\" "
		    "transform=\"translate(22 %.1f) rotate(-90)\">",
		    (ay.p0 + ay.p1) / 2);
	svg_escape(out, p->ylabel);
	strbuf_adds(out, "</text>\n");

	/* the series */
	for (int s = 0; s < p->nseries; s++) {
		const struct svg_series *se = &p->series[s];
		const char *colour = palette[(size_t)s % ARRAY_SIZE(palette)];
		int n = 0;

		if (se->n > cap) {
			struct point *np = realloc(pts, (size_t)se->n * sizeof(*pts));

			if (!np) {
				free(pts);
				return tcx_fail(err, TCX_ENOMEM, "out of memory");
			}
			pts = np;
			cap = se->n;
		}
		for (int i = 0; i < se->n; i++)
			if (usable(se->x[i], se->y[i], logx) && se->x[i] > 0)
				pts[n++] = (struct point){ se->x[i], se->y[i] };
		if (n > 1)
			qsort(pts, (size_t)n, sizeof(*pts), cmp_point);
		strbuf_adds(out, "<g class=\"series\">\n<title>");
		svg_escape(out, se->name);
		strbuf_addf(out,
			    "</title>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
			    "points=\"",
			    colour);
		for (int i = 0; i < n; i++)
			strbuf_addf(out, "%s%.1f,%.1f", i ? " " : "", axis_map(&ax, pts[i].x),
				    axis_map(&ay, pts[i].y));
		strbuf_adds(out, "\"/>\n");
		for (int i = 0; i < n; i++)
			strbuf_addf(out,
				    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
				    axis_map(&ax, pts[i].x), axis_map(&ay, pts[i].y), colour);
		strbuf_adds(out, "</g>\n");
	}
	free(pts);

	/* the legend, below the axis label */
	strbuf_adds(out, "<g class=\"legend\">\n");
	for (int s = 0; s < p->nseries; s++) {
		double y = ay.p0 + 62 + 20 * s;

		strbuf_addf(out,
			    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			    "stroke-width=\"2\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
			    "fill=\"%s\"/>\n",
			    ax.p0, y, ax.p0 + 30, y, palette[(size_t)s % ARRAY_SIZE(palette)],
			    ax.p0 + 15, y, palette[(size_t)s % ARRAY_SIZE(palette)]);
		strbuf_addf(out, "<text x=\"%.1f\" y=\"%.1f\">", ax.p0 + 38, y + 4);
		svg_escape(out, p->series[s].name);
		strbuf_adds(out, "</text>\n");
	}
	strbuf_adds(out, "</g>\n</svg>\n");
	return strbuf_status(out, err);
}
