/* tcx.c - main: global options, the command table and dispatch, help,
 * version, and the hidden --complete helper the shell completions call. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cmd.h"
#include "backend/backend.h"
#include "yaml/ydoc.h"

/* Each subcommand is defined in cmd/<name>.c. */
extern const struct cmd cmd_parse_def, cmd_sizes_def, cmd_devices_def, cmd_validate_def,
	cmd_run_def, cmd_bench_def, cmd_tune_def, cmd_results_def, cmd_logic_def;
extern const struct cmd cmd_export_lib_def, cmd_plan_def;

/* One row per subcommand, in the order `tcx --help` lists them. */
static const struct cmd *const command_table[] = {
	&cmd_parse_def,
	&cmd_sizes_def,
	&cmd_devices_def,
	&cmd_plan_def,
	&cmd_validate_def,
	&cmd_run_def,
	&cmd_bench_def,
	&cmd_tune_def,
	&cmd_results_def,
	&cmd_logic_def,
	&cmd_export_lib_def,
	NULL,
};

const struct cmd *cmd_find(const char *name)
{
	for (int k = 0; command_table[k]; k++)
		if (strcmp(command_table[k]->name, name) == 0)
			return command_table[k];
	return NULL;
}

/* "'bnech' is not a tcx command; did you mean 'bench'?", or "see 'tcx
 * --help'" when no command is close.  Returns TCX_EXIT_USAGE. */
static int unknown_command(const char *name)
{
	struct suggest sg;

	suggest_init(&sg, name);
	for (int k = 0; command_table[k]; k++)
		if (!(command_table[k]->flags & CMD_HIDDEN))
			suggest_add(&sg, command_table[k]->name);
	suggest_add(&sg, "help");
	suggest_add(&sg, "version");
	if (sg.best)
		error("'%s' is not a tcx command; did you mean '%s'?", name, sg.best);
	else
		error("'%s' is not a tcx command; see 'tcx --help'", name);
	return TCX_EXIT_USAGE;
}

static const char *const main_usage[] = {
	"usage: tcx [--version] [--help] [-v | --verbose] [-q | --quiet] <command> [<args>]",
	NULL,
};

static void print_main_help(FILE *fp)
{
	fprintf(fp, "%s\n", main_usage[0]);
	fprintf(fp, "\ntcx reads a tensor contraction in index notation, generates GPU kernels for "
		    "it,\ntunes, benchmarks and validates them, and writes library logic and a C "
		    "library.\n\nCommands:\n");
	for (int k = 0; command_table[k]; k++)
		if (!(command_table[k]->flags & CMD_HIDDEN))
			fprintf(fp, "   %-12s %s\n", command_table[k]->name,
				command_table[k]->summary);
	fprintf(fp, "\nGlobal options:\n"
		    "   -h, --help       show this help, or a command's with 'tcx help <command>'\n"
		    "   --version        show the version, backends and library versions\n"
		    "   -v, --verbose    say more (repeat for debug detail)\n"
		    "   -q, --quiet      say only errors\n"
		    "\nExamples:\n"
		    "   tcx parse 'C[ijk]=A[ilk]*B[jlk]'\n"
		    "   tcx validate 'ik,kj->ij' --sizes i=129,j=127,k=64\n"
		    "   tcx bench 'C[ij]=A[ik]*B[jk]' --range '[64,64,512],0,0' --format json\n"
		    "\nSee 'tcx help <command>' or 'man tcx-<command>' for a command's options.\n"
		    "Exit status: 0 ok, 1 a check failed, 2 bad input or usage, 3 device or "
		    "runtime\nerror, 4 no usable device.\n");
}

/* The reason `why` (devices_list's "name: reason" lines) gives for backend
 * `name`, copied into buf; false when it gives none. */
static bool backend_reason(const char *why, const char *name, char *buf, size_t len)
{
	size_t n = strlen(name);

	while (*why) {
		size_t line = strcspn(why, "\n");

		if (line > n + 1 && strncmp(why, name, n) == 0 && why[n] == ':') {
			const char *r = why + n + 1;

			r += strspn(r, " ");
			snprintf(buf, len, "%.*s", (int)(line - (size_t)(r - why)), r);
			return true;
		}
		why += line;
		why += *why == '\n';
	}
	return false;
}

/* tcx --version: the version, each backend (built or not, and whether its
 * runtime answers), and the versions of the libraries tcx runs with. */
static void print_version(void)
{
	struct device_info *devs = NULL;
	struct strbuf why = STRBUF_INIT;
	struct tcx_error err = { 0 };
	int n = 0;
	bool listed = devices_list(&devs, &n, &why, &err) == TCX_OK;

	printf("tcx %s\n", tcx_version());
	printf("backends:\n");
	printf("  %-8s built in: the reference, always available\n", "host");
	for (int b = 0; backend_known_at(b); b++) {
		const char *name = backend_known_at(b);
		char reason[TCX_ERROR_SIZE];
		int count = 0, first = -1;

		if (strcmp(name, "host") == 0)
			continue; /* the reference, above */
		if (!backend_find(name)) {
			printf("  %-8s not built\n", name);
			continue;
		}
		for (int k = 0; k < n; k++)
			if (strcmp(devs[k].backend, name) == 0 && count++ == 0)
				first = k;
		if (count > 0) {
			/* the driver's own words, up to the first comma */
			int dlen = (int)strcspn(devs[first].driver, ",");

			printf("  %-8s built, runtime available: %d device%s (%s: %.*s)\n", name,
			       count, count == 1 ? "" : "s", devs[first].id, dlen,
			       devs[first].driver);
		} else if (listed &&
			   backend_reason(strbuf_str(&why), name, reason, sizeof(reason))) {
			printf("  %-8s built, runtime not available: %s\n", name, reason);
		} else {
			printf("  %-8s built, runtime not available: %s\n", name,
			       listed ? "no devices found" : err.msg);
		}
	}
	printf("libraries: libyaml %s, jansson %s, SQLite %s\n", ydoc_libyaml_version(),
	       jansson_version_str(), sqlite3_libversion());
	free(devs);
	strbuf_release(&why);
}

/* Prints the space-separated words of `p`, one per line. */
static void print_words(const char *p)
{
	while (*p) {
		size_t n = strcspn(p, " ");

		printf("%.*s\n", (int)n, p);
		p += n;
		p += strspn(p, " ");
	}
}

/* The global options (-v, --verbose, -q, --quiet) that cmd_getopt takes
 * after command c too: those c's table does not name otherwise. */
static void print_globals(const struct cmd *c)
{
	static const struct {
		const char *name;
		int letter;
	} globals[] = { { "verbose", 'v' }, { "quiet", 'q' } };

	for (size_t g = 0; g < ARRAY_SIZE(globals); g++) {
		bool long_taken = false, short_taken = false;

		for (const struct cmd_option *o = c->options; o->name; o++) {
			long_taken |= strcmp(o->name, globals[g].name) == 0;
			short_taken |= o->short_name == globals[g].letter;
		}
		if (!short_taken)
			printf("-%c\n", globals[g].letter);
		if (!long_taken)
			printf("--%s\n", globals[g].name);
	}
}

/* tcx --complete                  -> commands
 * tcx --complete CMD              -> CMD's options ("--name" per line)
 * tcx --complete CMD --opt        -> values of an enumerated option, or a
 *                                    word naming what to complete: @file
 *                                    @dir @device
 * tcx --complete CMD --args       -> what positional arguments are
 * tcx --complete CMD --actions    -> the words CMD's first argument can be
 *                                    (logic: show, import, ...), if any
 * tcx --complete CMD --options [ACTION]
 *                                 -> the options CMD takes with ACTION, or
 *                                    given no action (all of them for a
 *                                    command without actions): the short
 *                                    and the long form of each, -h and
 *                                    --help, and the global options
 *                                    -v, --verbose, -q, --quiet
 * tcx --complete --devices        -> device ids, one per line */
static int complete(int argc, char **argv)
{
	const struct cmd *c;

	if (argc >= 2 && strcmp(argv[1], "--devices") == 0) {
		struct device_info *devs = NULL;
		int n = 0;

		if (devices_list(&devs, &n, NULL, NULL) == TCX_OK)
			for (int k = 0; k < n; k++)
				printf("%s\n", devs[k].id);
		free(devs);
		return 0;
	}
	if (argc < 2) {
		for (int k = 0; command_table[k]; k++)
			if (!(command_table[k]->flags & CMD_HIDDEN))
				printf("%s\n", command_table[k]->name);
		printf("help\n");
		return 0;
	}
	c = cmd_find(argv[1]);
	if (!c)
		return 0;
	if (argc < 3) {
		for (const struct cmd_option *o = c->options; o->name; o++)
			printf("--%s\n", o->name);
		printf("--help\n");
		return 0;
	}
	if (strcmp(argv[2], "--args") == 0) {
		printf("%s\n", c->args ? c->args : "");
		return 0;
	}
	if (strcmp(argv[2], "--actions") == 0) {
		for (int k = 0; c->actions && c->actions[k].name; k++)
			printf("%s\n", c->actions[k].name);
		return 0;
	}
	if (strcmp(argv[2], "--options") == 0) {
		const char *action = argc > 3 ? argv[3] : NULL;

		if (action && cmd_action(c, action) < 0)
			return 0;
		for (const struct cmd_option *o = c->options; o->name; o++) {
			if (!cmd_option_applies(c, o->short_name, action))
				continue;
			if (o->short_name > 0 && o->short_name < 256)
				printf("-%c\n", o->short_name);
			printf("--%s\n", o->name);
		}
		printf("-h\n--help\n");
		print_globals(c);
		return 0;
	}
	for (const struct cmd_option *o = c->options; o->name; o++) {
		bool match = strncmp(argv[2], "--", 2) == 0 && strcmp(argv[2] + 2, o->name) == 0;

		if (!match && o->short_name > 0 && o->short_name < 256 && argv[2][0] == '-' &&
		    argv[2][1] == o->short_name && argv[2][2] == '\0')
			match = true;
		if (!match)
			continue;
		switch (o->kind) {
		case OV_ENUM:
			print_words(o->values);
			break;
		case OV_FILE:
			printf("@file\n");
			break;
		case OV_DIR:
			printf("@dir\n");
			break;
		case OV_DEVICE:
			printf("@device\n");
			break;
		case OV_NONE:
			printf(o->has_arg ? "@text\n" : "@none\n");
			break;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	int k;

	start_seconds = common_now_seconds();
	/* a write past the file-size limit (ulimit -f) fails with EFBIG, which
	 * every writer reports with the file's name, instead of killing tcx
	 * half-way through with no word */
	signal(SIGXFSZ, SIG_IGN);
	for (k = 1; k < argc && argv[k][0] == '-'; k++) {
		const char *a = argv[k];

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			print_main_help(stdout);
			return 0;
		} else if (strcmp(a, "--version") == 0) {
			print_version();
			return 0;
		} else if (cmd_global_option(a)) {
			continue;
		} else if (strcmp(a, "--complete") == 0) {
			return complete(argc - k, argv + k);
		} else {
			static const char *const globals[] = { "help", "version", "verbose", "quiet" };
			struct suggest sg;
			char hint[64] = "";

			if (strncmp(a, "--", 2) == 0) {
				suggest_init(&sg, a + 2);
				for (size_t g = 0; g < ARRAY_SIZE(globals); g++)
					suggest_add(&sg, globals[g]);
				if (sg.best)
					snprintf(hint, sizeof(hint), "; did you mean '--%s'?", sg.best);
			}
			error("unknown option '%s'%s", a, hint);
			fprintf(stderr, "%s\n", main_usage[0]);
			return TCX_EXIT_USAGE;
		}
	}
	if (k >= argc) {
		print_main_help(stderr);
		return TCX_EXIT_USAGE;
	}
	if (strcmp(argv[k], "help") == 0) {
		if (k + 1 >= argc) {
			print_main_help(stdout);
			return 0;
		}
		c = cmd_find(argv[k + 1]);
		if (!c)
			return unknown_command(argv[k + 1]);
		cmd_usage(c, stdout);
		return 0;
	}
	if (strcmp(argv[k], "version") == 0) {
		print_version();
		return 0;
	}
	c = cmd_find(argv[k]);
	if (!c)
		return unknown_command(argv[k]);
	cmd_log_setup();
	if (c->flags & CMD_INTERRUPTIBLE)
		install_signal_handlers();
	optind = 0; /* glibc: 0 re-initialises getopt for the subcommand */
	return c->fn(argc - k, argv + k);
}
