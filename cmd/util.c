/* util.c - the helpers cmd/ shares: messages, exit codes, option tables to
 * getopt_long, usage text, output formats and signals. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "backend/backend.h"
#include "export/export.h"
#include "gen/solution.h"
#include "gen/gen.h"
#include "logic/logic.h"
#include "yaml/ydoc.h"
#include "notation/notation.h"
#include "plan/planner.h"
#include "run/run.h"

int verbosity;
double start_seconds;
volatile int interrupted;

/* A progress line on the terminal, which a message first clears. */
static bool progress_line_shown;

static void erase_progress_line(void)
{
	if (!progress_line_shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	progress_line_shown = false;
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout);
	erase_progress_line();
	fprintf(stderr, "tcx: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 0)
		return;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void info(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 0)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void verbose(const char *fmt, ...)
{
	va_list ap;

	if (verbosity < 1)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

static void log_to_stderr(enum tcx_log_level level, const char *msg, void *ctx)
{
	switch (level) {
	case TCX_LOG_ERROR:
		error("%s", msg);
		break;
	case TCX_LOG_WARN:
		warning("%s", msg);
		break;
	default:
		info("%s", msg);
		break;
	}
}

bool cmd_global_option(const char *arg)
{
	if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0)
		verbosity++;
	else if (strcmp(arg, "-vv") == 0)
		verbosity += 2;
	else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0)
		verbosity = -1;
	else
		return false;
	return true;
}

void cmd_log_setup(void)
{
	enum tcx_log_level max = verbosity < 0	 ? TCX_LOG_ERROR
				 : verbosity == 0 ? TCX_LOG_WARN
				 : verbosity == 1 ? TCX_LOG_INFO
						  : TCX_LOG_DEBUG;

	tcx_log_set(log_to_stderr, NULL, max);
}

int exit_code(enum tcx_status st)
{
	switch (st) {
	case TCX_OK:
		return TCX_EXIT_OK;
	case TCX_EMISMATCH:
	case TCX_EREGRESS:
		return TCX_EXIT_CHECK;
	case TCX_EINVAL:
	case TCX_EPARSE:
	case TCX_ERANGE:
	case TCX_EUNSUPPORTED:
	case TCX_EREJECT:
	case TCX_EIO:
	case TCX_ECORRUPT:
		return TCX_EXIT_USAGE;
	case TCX_ENODEV:
		return TCX_EXIT_NODEV;
	case TCX_EINCOMPLETE:
		return TCX_EXIT_INCOMPLETE;
	case TCX_EINTR:
		return TCX_EXIT_INTR;
	case TCX_ENOMEM:
	case TCX_EBUILD:
	case TCX_ELAUNCH:
	case TCX_EDEVICE:
	case TCX_EBUSY:
	case TCX_ETIMEOUT:
	case TCX_ELIMIT:
	default:
		return TCX_EXIT_RUNTIME;
	}
}

int report(enum tcx_status st, const struct tcx_error *err)
{
	if (st == TCX_OK)
		return 0;
	if (err && err->msg[0])
		error("%s", err->msg);
	else
		error("%s", tcx_status_str(st));
	return exit_code(st);
}

int report_at(enum tcx_status st, const struct tcx_error *err, const char *what,
	      const char *text)
{
	if (st == TCX_OK)
		return 0;
	if (err && err->col > 0 && text && strlen(text) < 200 && !strchr(text, '\n')) {
		error("cannot parse %s '%s': %s (col %u)", what, text, err->msg, err->col);
		fprintf(stderr, "  %s\n  %*s^\n", text, (int)err->col - 1, "");
	} else {
		error("cannot parse %s '%s': %s", what, text ? text : "", err ? err->msg : "");
	}
	return exit_code(st);
}

#define USAGE_WIDTH 80

/* Prints one synopsis line after `lead` ("usage: " or "   or: "), wrapped
 * at USAGE_WIDTH columns the way git wraps long usage strings: breaks only
 * between top-level words (never inside [...], (...) or <...>), and
 * continuation lines start under the first argument, after "tcx <cmd> ". */
static void print_synopsis(FILE *fp, const char *lead, const char *syn)
{
	size_t indent = strlen(lead), col, len = strlen(syn);
	const char *p = syn, *arg;

	/* the command words: "tcx <name> " */
	arg = strchr(syn, ' ');
	arg = arg ? strchr(arg + 1, ' ') : NULL;
	if (arg)
		indent += (size_t)(arg - syn) + 1;
	if (indent > USAGE_WIDTH / 2)
		indent = strlen(lead) + 4;
	fputs(lead, fp);
	col = strlen(lead);
	while (p < syn + len) {
		const char *q = p;
		int depth = 0;
		size_t n;

		/* the next top-level word */
		while (*q && (depth > 0 || *q != ' ')) {
			if (*q == '[' || *q == '(' || *q == '<')
				depth++;
			else if ((*q == ']' || *q == ')' || *q == '>') && depth > 0)
				depth--;
			q++;
		}
		n = (size_t)(q - p);
		if (p != syn && col + 1 + n > USAGE_WIDTH && col > indent) {
			fprintf(fp, "\n%*s", (int)indent, "");
			col = indent;
		} else if (p != syn) {
			fputc(' ', fp);
			col++;
		}
		fwrite(p, 1, n, fp);
		col += n;
		p = q;
		while (*p == ' ')
			p++;
	}
	fputc('\n', fp);
}

void cmd_usage(const struct cmd *c, FILE *fp)
{
	for (int k = 0; c->synopsis[k]; k++)
		print_synopsis(fp, k == 0 ? "usage: " : "   or: ", c->synopsis[k]);
	fprintf(fp, "\n%s\n\n", c->summary);
	for (const struct cmd_option *o = c->options; o->name; o++) {
		char left[64];

		if (o->short_name > 0 && o->short_name < 256)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		if (strlen(left) > 26)
			fprintf(fp, "    %s\n    %-26s  %s\n", left, "", o->help);
		else
			fprintf(fp, "    %-26s  %s\n", left, o->help);
	}
	fprintf(fp, "    %-26s  %s\n", "-h, --help", "show this help");
	if (c->examples && c->examples[0]) {
		fprintf(fp, "\nExamples:\n");
		for (int k = 0; c->examples[k]; k++)
			fprintf(fp, "    %s\n", c->examples[k]);
	}
	fprintf(fp, "\nSee 'man tcx-%s' for the details.\n", c->name);
}

int usage_error(const struct cmd *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	cmd_usage(c, stderr);
	return TCX_EXIT_USAGE;
}

#define MAX_OPTS 96

/* getopt values of the global options after the command, beyond any
 * option value of a command's table */
enum { OPT_GLOBAL_VERBOSE = 0x7f00, OPT_GLOBAL_QUIET };

/* Adds global option --name (short letter `letter`) to the tables being
 * built for c, unless c has an option of that name or letter, which is
 * then c's own.  Returns the new count of long options. */
static int add_global(struct option *longopts, int n, char **s, const struct cmd *c,
		      const char *name, int letter, int val)
{
	bool long_taken = false, short_taken = false;

	for (const struct cmd_option *o = c->options; o->name; o++) {
		long_taken |= strcmp(o->name, name) == 0;
		short_taken |= o->short_name == letter;
	}
	if (!long_taken) {
		longopts[n].name = name;
		longopts[n].has_arg = no_argument;
		longopts[n].flag = NULL;
		longopts[n].val = val;
		n++;
	}
	if (!short_taken)
		*(*s)++ = (char)letter;
	return n;
}

/* The option of c named `name`, else NULL. */
static const struct cmd_option *find_option(const struct cmd *c, const char *name, size_t len)
{
	for (const struct cmd_option *o = c->options; o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

/* Options a command does not take under a name other commands give them:
 * the name the command takes instead, for the hint. */
static const struct {
	const char *cmd, *name, *instead;
} renamed[] = {
	{ "bench", "sizes", "'--exact' (one size per index, repeatable) or '--range'" },
	{ "sizes", "sizes", "'--exact' (one size per index, repeatable) or '--range'" },
};

static void option_hint(const struct cmd *c, const char *name, char *hint, size_t len)
{
	hint[0] = '\0';
	for (size_t k = 0; k < ARRAY_SIZE(renamed); k++)
		if (strcmp(renamed[k].cmd, c->name) == 0 && strcmp(renamed[k].name, name) == 0)
			snprintf(hint, len, "; 'tcx %s' takes sizes with %s", c->name,
				 renamed[k].instead);
}

/* An argument "-type" (one dash) where "--type" was meant: getopt would
 * read it as "-t ype", or fail on '-y'.  As git does, an argument of one
 * dash and 3 or more letters that start a long option's name is refused
 * with the hint, unless it is the value of the option before it.  Returns
 * true (after saying so, with the usage) when there is one. */
static bool single_dash_long(const struct cmd *c, int argc, char **argv)
{
	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		size_t n;

		if (strcmp(a, "--") == 0)
			break;
		if (a[0] == '-' && a[1] == '-') {
			/* --name <value>: skip the value */
			const struct cmd_option *o = find_option(c, a + 2, strcspn(a + 2, "="));

			if (o && o->has_arg == required_argument && !strchr(a, '='))
				k++;
			continue;
		}
		if (a[0] != '-' || a[1] == '\0')
			continue;
		n = strcspn(a + 1, "=");
		if (n >= 3)
			for (const struct cmd_option *o = c->options; o->name; o++)
				if (strncmp(o->name, a + 1, n) == 0) {
					error("unknown option '%s'; did you mean '--%s' (with two "
					      "dashes)?",
					      a, o->name);
					fprintf(stderr, "\n");
					cmd_usage(c, stderr);
					return true;
				}
		/* -abc: the first letter that takes a value takes the rest, or
		 * the next argument when it is the last */
		for (const char *p = a + 1; *p; p++) {
			const struct cmd_option *o = NULL;

			for (const struct cmd_option *q = c->options; q->name; q++)
				if (q->short_name == (unsigned char)*p)
					o = q;
			if (!o)
				break;
			if (o->has_arg == required_argument) {
				if (p[1] == '\0')
					k++;
				break;
			}
		}
	}
	return false;
}

int cmd_getopt(const struct cmd *c, int argc, char **argv)
{
	static const struct cmd *built_for;
	static struct option longopts[MAX_OPTS + 4];
	static char shortopts[3 * MAX_OPTS + 4];
	int n = 0, r;
	char *s = shortopts;

	if (built_for != c) {
		*s++ = ':'; /* report a missing argument as ':' */
		for (const struct cmd_option *o = c->options; o->name && n < MAX_OPTS; o++, n++) {
			longopts[n].name = o->name;
			longopts[n].has_arg = o->has_arg;
			longopts[n].flag = NULL;
			longopts[n].val = o->short_name;
			if (o->short_name > 0 && o->short_name < 256) {
				*s++ = (char)o->short_name;
				if (o->has_arg == required_argument)
					*s++ = ':';
				else if (o->has_arg == optional_argument) {
					*s++ = ':';
					*s++ = ':';
				}
			}
		}
		longopts[n].name = "help";
		longopts[n].has_arg = no_argument;
		longopts[n].flag = NULL;
		longopts[n].val = 'h';
		n++;
		*s++ = 'h';
		/* tcx's global options, anywhere on the line (tcx.c takes them
		 * before the command) */
		n = add_global(longopts, n, &s, c, "verbose", 'v', OPT_GLOBAL_VERBOSE);
		n = add_global(longopts, n, &s, c, "quiet", 'q', OPT_GLOBAL_QUIET);
		memset(&longopts[n], 0, sizeof(longopts[n]));
		*s = '\0';
		built_for = c;
	}
	opterr = 0;
	if (optind <= 1 && single_dash_long(c, argc, argv))
		return '?';
again:
	r = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (r == 'h') {
		cmd_usage(c, stdout);
		return 'h';
	}
	if (r == OPT_GLOBAL_VERBOSE || r == OPT_GLOBAL_QUIET || r == 'v' || r == 'q') {
		/* the global options, taken after the command as before it (the
		 * command's own -v or -q never reaches here: it is in longopts
		 * first and returns its own value) */
		if (r == 'q' || r == OPT_GLOBAL_QUIET)
			verbosity = -1;
		else
			verbosity++;
		cmd_log_setup();
		goto again;
	}
	if (r == '?') {
		if (optopt && optopt < 256) {
			error("unknown option '-%c'", optopt);
		} else {
			const char *arg = argv[optind - 1];
			size_t len = strcspn(arg + 2, "=");
			char name[64], hint[96];
			struct suggest sg;

			/* the closest long option the command takes */
			snprintf(name, sizeof(name), "%.*s", (int)TCX_MIN(len, sizeof(name) - 1),
				 arg + 2);
			suggest_init(&sg, name);
			for (const struct cmd_option *o = c->options; o->name; o++)
				suggest_add(&sg, o->name);
			if (sg.best)
				snprintf(hint, sizeof(hint), "; did you mean '--%s'?", sg.best);
			else
				option_hint(c, name, hint, sizeof(hint));
			error("unknown option '%s'%s", arg, hint);
		}
		fprintf(stderr, "\n");
		cmd_usage(c, stderr);
	} else if (r == ':') {
		error("option '%s' needs a value", argv[optind - 1]);
		fprintf(stderr, "\n");
		cmd_usage(c, stderr);
		r = '?';
	}
	return r;
}

/* The position of `word` among the space-separated words of `list`, else -1. */
static int word_index(const char *list, const char *word)
{
	size_t len = strlen(word);
	int k = 0;

	while (list && *list) {
		size_t n = strcspn(list, " ");

		if (n == len && strncmp(list, word, n) == 0)
			return k;
		k++;
		list += n;
		list += strspn(list, " ");
	}
	return -1;
}

int cmd_action(const struct cmd *c, const char *word)
{
	for (int k = 0; c->actions && c->actions[k].name; k++)
		if (strcmp(c->actions[k].name, word) == 0)
			return k;
	return -1;
}

bool cmd_option_applies(const struct cmd *c, int val, const char *action)
{
	const char *name = NULL;
	int k;

	for (const struct cmd_option *o = c->options; o->name; o++)
		if (o->short_name == val)
			name = o->name;
	if (!name || !c->actions)
		return true;
	if (action) {
		k = cmd_action(c, action);
		return k >= 0 && word_index(c->actions[k].options, name) >= 0;
	}
	for (k = 0; c->actions[k].name; k++)
		if (word_index(c->actions[k].options, name) >= 0)
			return false;
	return true;
}

const char *cmd_option_name(const struct cmd *c, int val)
{
	for (const struct cmd_option *o = c->options; o->name; o++)
		if (o->short_name == val)
			return o->name;
	return "?";
}

int value_error(const char *what, const char *value, const char *values)
{
	struct strbuf list = STRBUF_INIT;
	struct suggest sg;
	char hint[96];
	int nwords = 0, k = 0;

	for (const char *p = values; *p; p += strspn(p, " ")) {
		p += strcspn(p, " ");
		nwords++;
	}
	for (const char *p = values; *p; k++) {
		size_t n = strcspn(p, " ");

		strbuf_addf(&list, "%s%.*s", k == 0 ? "" : k == nwords - 1 ? " or " : ", ", (int)n,
			    p);
		p += n;
		p += strspn(p, " ");
	}
	suggest_init(&sg, value);
	suggest_add_words(&sg, values);
	error("unknown %s '%s' (expected %s)%s", what, value, strbuf_str(&list),
	      suggest_hint(&sg, hint, sizeof(hint)));
	strbuf_release(&list);
	return TCX_EXIT_USAGE;
}

int option_value_error(const struct cmd *c, int val, const char *what, const char *value)
{
	for (const struct cmd_option *o = c->options; o->name; o++)
		if (o->short_name == val && o->kind == OV_ENUM)
			return value_error(what, value, o->values);
	return error("unknown %s '%s'", what, value), TCX_EXIT_USAGE;
}

bool parse_format(const char *s, enum out_format *out, unsigned allowed)
{
	static const char *const names[] = { "table", "json", "yaml", "csv" };

	for (unsigned k = 0; k < ARRAY_SIZE(names); k++)
		if (strcmp(s, names[k]) == 0 && (allowed & (1u << k))) {
			*out = (enum out_format)k;
			return true;
		}
	return false;
}

json_t *json_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

int print_json(FILE *fp, json_t *v)
{
	if (json_dumpf(v, fp, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) != 0)
		return -1;
	fputc('\n', fp);
	return 0;
}

int print_yaml(FILE *fp, json_t *v)
{
	struct strbuf sb = STRBUF_INIT;
	struct tcx_error err;
	enum tcx_status st = yaml_from_json(v, &sb, &err);

	if (st == TCX_OK)
		fputs(strbuf_str(&sb), fp);
	else
		report(st, &err);
	strbuf_release(&sb);
	return st == TCX_OK ? 0 : -1;
}

int load_contraction(const char *expr, const char *type, const char *layout,
		     struct tcx_contraction **out)
{
	enum tcx_dtype dt = TCX_DTYPE_S;
	int lay = LAYOUT_BY_STYLE;
	struct tcx_error err = { 0 };
	enum tcx_status st;

	*out = NULL;
	if (type && !dtype_parse(type, &dt))
		return value_error("element type", type, "s d c z h b");
	if (layout) {
		if (strcmp(layout, "first-fastest") == 0)
			lay = LAYOUT_FIRST_FASTEST;
		else if (strcmp(layout, "last-fastest") == 0)
			lay = LAYOUT_LAST_FASTEST;
		else
			return value_error("layout", layout, "first-fastest last-fastest");
	}
	st = notation_parse(expr, dt, lay, out, &err);
	if (st)
		return report_at(st, &err, "expression", expr);
	return 0;
}

bool stderr_is_tty(void)
{
	return isatty(STDERR_FILENO);
}

void progress_start(struct progress *pg, size_t total)
{
	pg->tty = stderr_is_tty() && verbosity >= 0;
	pg->lines = !pg->tty && verbosity >= 1;
	pg->t0 = common_now_seconds();
	pg->total = total;
}

void progress_show(const struct progress *pg, size_t done, const char *label)
{
	double el = common_now_seconds() - pg->t0;
	char eta[32] = "-:--";
	int pct = (int)(100 * done / (pg->total ? pg->total : 1));

	if (!pg->tty && !pg->lines)
		return;
	if (done > 0) {
		long s = lround(el / (double)done * (double)(pg->total - done));

		if (s >= 3600)
			snprintf(eta, sizeof(eta), "%ld:%02ld:%02ld", s / 3600, s / 60 % 60,
				 s % 60);
		else
			snprintf(eta, sizeof(eta), "%ld:%02ld", s / 60, s % 60);
	}
	if (pg->lines) {
		fflush(stdout);
		fprintf(stderr, "tcx: [%zu/%zu] %3d%% ETA %s %s\n", done, pg->total, pct, eta,
			label);
		return;
	}
	fprintf(stderr, "\r[%zu/%zu] %3d%% ETA %s %.60s\033[K", done, pg->total, pct, eta,
		label);
	fflush(stderr);
	progress_line_shown = true;
}

void eval_progress(const struct export_progress *p, void *ctx)
{
	struct eval_display *d = ctx;
	char label[256];
	size_t at = 0;

	for (int id = 0; id < p->nidx && at < sizeof(label); id++)
		at += (size_t)snprintf(label + at, sizeof(label) - at, "%s%s=%lld", id ? "," : "",
				       d->type->idx[id].name, (long long)p->sizes[id]);
	if (at < sizeof(label))
		snprintf(label + at, sizeof(label) - at, " solution %d/%d round %d/%d",
			 p->solution + 1, p->nsol, p->round, EXPORT_EVAL_ROUNDS);
	progress_show(&d->pg, p->done, label);
}

void progress_clear(const struct progress *pg)
{
	if (pg->tty)
		erase_progress_line();
}

static void on_signal(int sig)
{
	if (interrupted) {
		/* a second signal: give up at once, without leaving temporaries */
		atomic_file_cleanup_all();
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	interrupted = sig;
}

void install_signal_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int open_device(const char *id, struct device **out)
{
	struct tcx_error err = { 0 };
	enum tcx_status st = device_open(id, out, &err);

	if (st)
		return report(st, &err);
	verbose("device %s: %s", device_info_of(*out)->id, device_info_of(*out)->name);
	return 0;
}

int parse_scalar(const char *text, const char *what, double out[2])
{
	char buf[128], *comma;

	out[0] = out[1] = 0;
	snprintf(buf, sizeof(buf), "%s", text);
	comma = strchr(buf, ',');
	if (comma)
		*comma = '\0';
	if (!common_parse_double(buf, &out[0]) ||
	    (comma && !common_parse_double(comma + 1, &out[1])))
		return error("%s '%s' is not a number (complex: 're,im')", what, text),
		       TCX_EXIT_USAGE;
	return 0;
}

int parse_count(const char *text, const char *what, int64_t lo, int64_t *out)
{
	if (!common_parse_i64(text, out) || *out < lo)
		return error("%s '%s' is not a whole number >= %lld", what, text, (long long)lo),
		       TCX_EXIT_USAGE;
	return 0;
}

int parse_accuracy(const char *text, double *out)
{
	if (!common_parse_double(text, out) || !isfinite(*out) || *out <= 0 || *out > 1)
		return error("accuracy '%s' is not a relative error: give a number above 0 and "
			     "at most 1, such as 1e-6",
			     text),
		       TCX_EXIT_USAGE;
	return 0;
}

int load_problem(const struct tcx_contraction *c, const char *sizes, const char *strides,
		 struct problem *p)
{
	struct tcx_error err = { 0 };
	int64_t sz[TCX_MAX_INDICES];
	enum tcx_status st = sizes_parse_assign_zero(c, sizes, sz, &err);

	if (!st)
		st = problem_init(p, c, sz, &err);
	if (!st && strides)
		st = problem_parse_strides(p, strides, &err);
	return st ? report(st, &err) : 0;
}

enum tcx_status problem_at(const struct tcx_contraction *c, const int64_t *sz,
			   const char *strides, struct problem *p, struct tcx_error *err)
{
	enum tcx_status st = problem_init(p, c, sz, err);

	if (!st && strides)
		st = problem_parse_strides(p, strides, err);
	return st;
}

int check_strides(const struct tcx_contraction *c, const char *strides, const int64_t *sizes,
		  size_t n)
{
	struct tcx_error err = { 0 };
	struct problem p;

	for (size_t k = 0; k < n && strides; k++) {
		const int64_t *sz = sizes + k * (size_t)c->nidx;
		enum tcx_status st = problem_at(c, sz, strides, &p, &err);
		char at[256];
		size_t len = 0;

		if (!st)
			continue;
		for (int id = 0; id < c->nidx && len < sizeof(at); id++)
			len += (size_t)snprintf(at + len, sizeof(at) - len, "%s%s=%lld",
						id ? "," : "", c->idx[id].name, (long long)sz[id]);
		tcx_error_prefix(&err, "--strides '%s' at sizes %s", strides, at);
		return report(st, &err);
	}
	return 0;
}

int load_solution(const char *params, const char *file, const struct tcx_contraction *c,
		  const struct device_info *dev, struct solution *s)
{
	struct tcx_error err = { 0 };
	enum tcx_status st = TCX_OK;

	if (params && file)
		return error("--params and --solution cannot be used together"), TCX_EXIT_USAGE;
	if (file) {
		json_t *doc, *sol;

		st = yaml_file_to_json(file, &doc, &err);
		if (st)
			return report(st, &err);
		/* a bare mapping of parameters, or one under "solution" */
		sol = json_object_get(doc, "solution");
		if (!sol)
			sol = json_object_get(doc, "Solution");
		{
			/* a typo must not pass unnoticed: name keys no one knows */
			const char *key;
			json_t *val;
			char hint[96];

			json_object_foreach(sol ? sol : doc, key, val)
			{
				if (param_lookup(key) == PARAM_UNKNOWN && !param_derived_key(key))
					warning("%s: unknown solution parameter '%s' ignored%s", file,
						key, param_hint(key, hint, sizeof(hint)));
			}
		}
		st = solution_from_json(s, sol ? sol : doc, &err);
		json_decref(doc);
		if (st) {
			tcx_error_prefix(&err, "%s", file);
			return report(st, &err);
		}
		return 0;
	}
	solution_heuristic(c, dev, s);
	if (params)
		st = solution_parse(s, params, &err);
	return st ? report(st, &err) : 0;
}

bool planner_wanted(const char *params, const char *file, const char *logic)
{
	return !params && !file && !logic && !planner_env_off();
}

unsigned plan_flags(void)
{
	return planner_env_flags();
}

enum tcx_status prepare_kernel(struct device *dev, const struct problem *p,
			       const struct plan_result *pl, const struct solution *s,
			       struct prepared *pr, struct strbuf *log, struct tcx_error *err)
{
	/* the kernel runs the planned problem: p's merged form, same memory,
	 * or that of p with A and/or B permuted first */
	static bool said;
	enum tcx_status st = contract_prepare_plan(dev, p, pl, s, pr, log, err);
	/* how long a user waits for the first launch, and how much of it the
	 * compiler took (0 when a kernel cache had the program) */
	if (!st && !said) {
		said = true;
		verbose("first kernel ready %.3f s after start (%.3f s compiling it)",
			common_now_seconds() - start_seconds, pr->compile_s);
	}
	return st;
}

enum tcx_status plan_solution_accuracy(const struct problem *p, const struct device_info *dev,
				       double accuracy, enum arith floor, struct plan_result *pl,
				       struct solution *s, struct tcx_error *err)
{
	enum tcx_status st;
	char name[256];

	if (problem_empty_index(p) >= 0 || dev->type == DEV_HOST) {
		memset(pl, 0, sizeof(*pl));
		pl->kp = *p;
		solution_heuristic(p->c, dev, s);
		return TCX_OK;
	}
	st = planner_plan_accuracy(p, dev, CMD_PLAN_FLAGS, accuracy, floor, pl, err);
	if (st)
		return st;
	*s = pl->best.sol;
	solution_name(s, name, sizeof(name));
	verbose("planner: %s%s%s%s%s%s%s, predicted %.3g ms (%s-bound), %d of %d solutions valid, "
		"in %.2g ms",
		pl->best.permute[0].on ? "A " : "", pl->best.permute[1].on ? "B " : "",
		pl->best.permute[2].on ? "C " : "",
		plan_permutes(&pl->best) ? "permuted, " : "",
		pl->merged ? pl->kp.c->expr : "", pl->merged ? " with " : "", name,
		pl->best.time_s * 1e3, pl->best.limit, pl->valid, pl->considered,
		pl->plan_s * 1e3);
	if (pl->direct.on)
		verbose("planner: a permute of A into C runs it for alpha 1 and beta 0, predicted "
			"%.3g ms; the kernel above for other alpha and beta",
			pl->direct.seconds * 1e3);
	if (pl->ttm.on) {
		char what[256];

		ttm_plan_str(&pl->ttm.plan, p->c, what, sizeof(what));
		verbose("planner: %s runs it instead (%s), predicted %.3g ms (%s-bound)",
			ttm_kernel(&pl->ttm.plan), what,
			pl->ttm.seconds * 1e3, pl->ttm.limit);
	}
	return TCX_OK;
}

int plan_solution(const struct problem *p, const struct device_info *dev, struct plan_result *pl,
		  struct solution *s)
{
	struct tcx_error err = { 0 };
	enum tcx_status st = plan_solution_accuracy(p, dev, 0, ARITH_TF32, pl, s, &err);

	return st ? report(st, &err) : 0;
}

void default_store_path(char *buf, size_t len)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (x && *x)
		snprintf(buf, len, "%s/tcx/results.db", x);
	else
		snprintf(buf, len, "%s/.cache/tcx/results.db", home && *home ? home : ".");
}

int load_logic(const char *path, const struct tcx_contraction *c, struct logic **out)
{
	struct tcx_error err = { 0 };
	enum tcx_status st = logic_load(path, out, &err);
	char want[256], have[256];

	if (st)
		return report(st, &err);
	contraction_tensile_name(c, want, sizeof(want));
	contraction_tensile_name((*out)->type, have, sizeof(have));
	if (strcmp(want, have) != 0) {
		error("logic file '%s' is for problem type %s, not %s ('%s')", path, have, want,
		      c->expr);
		logic_free(*out);
		*out = NULL;
		return TCX_EXIT_USAGE;
	}
	return 0;
}

int logic_solution_for(const struct logic *lg, const char *path, const int64_t *sizes,
		       int *pick)
{
	struct strbuf why = STRBUF_INIT;
	int k = logic_lookup(lg, sizes, &why);

	if (k < 0) {
		error("logic file '%s' selects no solution for these sizes", path);
		strbuf_release(&why);
		return TCX_EXIT_USAGE;
	}
	*pick = k;
	verbose("logic selects solution %d (%s): %s", k, lg->sols[k].name, strbuf_str(&why));
	strbuf_release(&why);
	return 0;
}

int logic_solution_plan(const struct logic *lg, int pick, const struct problem *p,
			const struct device_info *dev, struct plan_result *pl, bool *planned,
			struct solution *s)
{
	struct tcx_error err = { 0 };
	enum tcx_status st = logic_plan(lg, pick, p, dev, pl, planned, s, &err);

	return st ? report(st, &err) : 0;
}
