/* cmd.h - what every subcommand file shares: exit codes, messages, the
 * option tables that drive getopt_long, usage text, man-page checks and
 * shell completion, and output-format helpers. */
#ifndef TCX_CMD_H
#define TCX_CMD_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "common/common.h"
#include "plan/arith.h"

/* Exit codes (DESIGN.md; man tcx(1), EXIT STATUS). */
enum {
	TCX_EXIT_OK = 0,
	TCX_EXIT_CHECK = 1,   /* a check failed: mismatch, regression */
	TCX_EXIT_USAGE = 2,   /* bad input or usage */
	TCX_EXIT_RUNTIME = 3, /* device or runtime error */
	TCX_EXIT_NODEV = 4,   /* no usable device */
	/* did its part, but measurements other shards owe are missing (tcx
	 * tune --shard: run another round; --from-store: the store lacks them) */
	TCX_EXIT_INCOMPLETE = 5,
	TCX_EXIT_INTR = 130,  /* interrupted by SIGINT/SIGTERM after saving */
};

/* What a value of an option completes to (shell completion, man checks). */
enum opt_values {
	OV_NONE,   /* a flag, or free text */
	OV_ENUM,   /* one of `values`, space separated */
	OV_FILE,   /* a file name */
	OV_DIR,    /* a directory */
	OV_DEVICE, /* a device id, as `tcx devices` lists */
};

/* One option of a subcommand: the single source for getopt_long, the
 * usage text, the man-page drift test and the completions. */
struct cmd_option {
	const char *name;   /* long name, without "--" */
	int short_name;     /* 0 when none; for options with only a long name,
			     * a unique value >= 256 identifies the option */
	int has_arg;        /* no_argument / required_argument / optional_argument */
	const char *arg;    /* metavariable, e.g. "<file>" */
	const char *help;   /* one line */
	enum opt_values kind;
	const char *values; /* for OV_ENUM */
};

/* An action: a word a command's first argument can be (`tcx logic show`),
 * with the long options it takes.  Options that no action of a command
 * lists are those of the command given no action (`tcx results`); the
 * command refuses the others, and the shell completions offer them only
 * where they apply. */
struct cmd_action {
	const char *name;    /* NULL ends a list */
	const char *options; /* long names, space-separated */
};

#define CMD_NEEDS_DEVICE 0x1
/* SIGINT/SIGTERM set `interrupted`, which the command polls to stop cleanly
 * (others end at once on a signal, as programs do). */
#define CMD_INTERRUPTIBLE 0x4
#define CMD_HIDDEN 0x2

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *const *synopsis; /* NULL-terminated lines */
	const char *summary;
	const struct cmd_option *options; /* terminated by { NULL } */
	const char *const *examples;      /* NULL-terminated, may be NULL */
	const char *args;                 /* what positional arguments complete to: "expr", "file", ... */
	unsigned flags;
	const struct cmd_action *actions; /* what the first argument can be, or NULL */
};

/* The command table (cmd/tcx.c). */
extern const struct cmd commands[];
const struct cmd *cmd_find(const char *name);

/* Global options set by main. */
extern int verbosity; /* 0 normal, -1 quiet, >0 verbose */
extern double start_seconds; /* common_now_seconds() when main began */

/* Messages, git style: "tcx: <msg>" on stderr. */
int error(const char *fmt, ...) TCX_PRINTF(1, 2);   /* returns -1 */
void warning(const char *fmt, ...) TCX_PRINTF(1, 2);
void info(const char *fmt, ...) TCX_PRINTF(1, 2);   /* unless --quiet */
void verbose(const char *fmt, ...) TCX_PRINTF(1, 2); /* with -v */

/* Routes lib/'s log messages to stderr at the chosen verbosity. */
void cmd_log_setup(void);

/* Maps a status to an exit code. */
int exit_code(enum tcx_status st);
/* Prints "tcx: <err->msg>" and returns the exit code for st. */
int report(enum tcx_status st, const struct tcx_error *err);
/* As report, for a parse error in `text`: also prints the text and a caret
 * under err->col. */
int report_at(enum tcx_status st, const struct tcx_error *err, const char *what,
	      const char *text);

/* Prints the usage of a command to fp (stdout for --help, stderr on misuse). */
void cmd_usage(const struct cmd *c, FILE *fp);
/* Prints usage to stderr and returns TCX_EXIT_USAGE. */
int usage_error(const struct cmd *c, const char *fmt, ...) TCX_PRINTF(2, 3);

/* A value that is not one of `values` (space-separated): says "unknown
 * <what> '<value>' (expected a, b or c)", with "; did you mean 'b'?" when
 * one is close, and returns TCX_EXIT_USAGE.  option_value_error takes the
 * values from the OV_ENUM option of c's table that getopt returns as val. */
int value_error(const char *what, const char *value, const char *values);
int option_value_error(const struct cmd *c, int val, const char *what, const char *value);

/* getopt_long over a command's option table.  Call like getopt_long; "help"
 * (-h/--help) is handled: it prints usage to stdout and returns 'h' so the
 * caller can return 0.  Unknown options return '?', after the usage and
 * the closest option the command takes, if one is close.  tcx's global
 * options (-v, --verbose, -q, --quiet) are taken here too, after the
 * command as before it, unless the command has an option of that name. */
int cmd_getopt(const struct cmd *c, int argc, char **argv);

/* Takes `arg` if it is one of tcx's global options (-v, --verbose, -vv, -q,
 * --quiet): sets verbosity and returns true; else returns false.  For main,
 * before the command, and for a command's words before its action (tcx
 * logic -v show); cmd_log_setup applies the verbosity. */
bool cmd_global_option(const char *arg);

/* Actions (struct cmd_action).  cmd_action: the position of `word` in
 * c->actions, else -1.  cmd_option_applies: whether the option of c's
 * table that getopt returns as `val` is taken with `action` (NULL: the
 * command given no action); options outside the table, and every option of
 * a command without actions, apply. */
int cmd_action(const struct cmd *c, const char *word);
bool cmd_option_applies(const struct cmd *c, int val, const char *action);
/* The long name of the option getopt returns as `val`, else "?". */
const char *cmd_option_name(const struct cmd *c, int val);

/* Output formats. */
enum out_format { FMT_TABLE, FMT_JSON, FMT_YAML, FMT_CSV };
bool parse_format(const char *s, enum out_format *out, unsigned allowed);
#define FMT_ALLOW(f) (1u << (f))

/* A JSON number, or null for NaN and infinities (which JSON cannot hold). */
json_t *json_num(double v);
/* Writes a JSON value (pretty, ordered) to fp with a final newline. */
int print_json(FILE *fp, json_t *v);
/* Writes a JSON value as YAML (block style). */
int print_yaml(FILE *fp, json_t *v);

/* Reads a contraction from an expression argument with the common options. */
struct tcx_contraction;
int load_contraction(const char *expr, const char *type, const char *layout,
		     struct tcx_contraction **out);

/* Opens a device (NULL: the default) or reports why not; returns an exit code. */
struct device;
int open_device(const char *id, struct device **out);
/* Parses "1.5" or "1.5,-2" (complex) into out[2]; returns an exit code. */
int parse_scalar(const char *text, const char *what, double out[2]);
/* Parses a whole number >= lo; returns an exit code. */
int parse_count(const char *text, const char *what, int64_t lo, int64_t *out);
/* Parses --accuracy's relative error (plan/arith.h): a positive finite
 * number, at most 1; returns an exit code. */
int parse_accuracy(const char *text, double *out);

/* Sizes ("i=64,j=32" or "64,32"; a size may be 0, an empty problem) and
 * optional strides into p; exit code. */
struct problem;
int load_problem(const struct tcx_contraction *c, const char *sizes, const char *strides,
		 struct problem *p);
/* The problem at sizes sz (by index id) with --strides applied (NULL:
 * packed), for the commands that take a set of sizes (bench, tune): the
 * same strides for every size.  TCX_EINVAL or TCX_EPARSE when they do not
 * fit these sizes (a tensor's rank, or C's elements sharing an address). */
enum tcx_status problem_at(const struct tcx_contraction *c, const int64_t *sz,
			   const char *strides, struct problem *p, struct tcx_error *err);
/* Checks --strides against every size of a set of n (each nidx wide)
 * before anything runs; an error names the first size they do not fit.
 * Exit code. */
int check_strides(const struct tcx_contraction *c, const char *strides, const int64_t *sizes,
		  size_t n);
/* The solution from --params text or a --solution file (YAML or JSON
 * mapping of parameters); neither: the built-in heuristic for the device.
 * --params adjust the heuristic's choice.  Returns an exit code. */
struct solution;
struct device_info;
int load_solution(const char *params, const char *file, const struct tcx_contraction *c,
		  const struct device_info *dev, struct solution *s);

/* Whether the planner picks the solution: none was given (--params,
 * --solution, --logic) and $TCX_PLANNER is not 0, which keeps the
 * built-in default instead. */
bool planner_wanted(const char *params, const char *file, const char *logic);
/* What the commands let the planner choose (planner_plan's flags, from
 * plan/planner.h): the same for `tcx plan` as for the commands that run
 * its choice (prepare_kernel carries out its permutes).  PLAN_PERMUTE;
 * with $TCX_PLANNER=ttgt, PLAN_PERMUTE_ONLY, which compares TTGT with
 * the direct plan and tests the permutes on devices where they never win. */
unsigned plan_flags(void);
#define CMD_PLAN_FLAGS plan_flags()
/* The planner's solution for p on dev (plan/planner.h), said with -v; the
 * kernel then runs pl->kp, p's merged form or p itself.  An empty problem
 * gets the built-in default (it runs no kernel).  Release pl with
 * plan_release.  Returns an exit code. */
struct plan_result;
/* contract_prepare for s on dev: of p itself, or with pl (non-NULL when
 * the planner chose s) of the problem the plan runs, with its permutes.
 * Release with contract_release. */
struct prepared;
struct strbuf;
enum tcx_status prepare_kernel(struct device *dev, const struct problem *p,
			       const struct plan_result *pl, const struct solution *s,
			       struct prepared *pr, struct strbuf *log, struct tcx_error *err);
int plan_solution(const struct problem *p, const struct device_info *dev, struct plan_result *pl,
		  struct solution *s);
/* plan_solution for a result within a relative error, in an arithmetic at
 * least as accurate as floor (planner_plan_accuracy); the status, not
 * reported. */
enum tcx_status plan_solution_accuracy(const struct problem *p, const struct device_info *dev,
				       double accuracy, enum arith floor, struct plan_result *pl,
				       struct solution *s, struct tcx_error *err);

/* Loads library logic and checks it is for contraction c; exit code. */
struct logic;
int load_logic(const char *path, const struct tcx_contraction *c, struct logic **out);
/* The solution the logic selects for sizes (said with -v), its index in
 * *pick; exit code. */
int logic_solution_for(const struct logic *lg, const char *path, const int64_t *sizes,
		       int *pick);
/* What runs the logic's solution `pick` for p on dev (logic_plan): its
 * parameters in *s, and *planned with the plan in pl where it runs in the
 * planner's form; exit code. */
struct plan_result;
int logic_solution_plan(const struct logic *lg, int pick, const struct problem *p,
			const struct device_info *dev, struct plan_result *pl, bool *planned,
			struct solution *s);

/* The default results store: $XDG_CACHE_HOME/tcx/results.db, else
 * ~/.cache/tcx/results.db. */
void default_store_path(char *buf, size_t len);

/* True when standard error is a terminal (progress displays). */
bool stderr_is_tty(void);

/* Progress of a long command on standard error: on a terminal, one line
 * that each step overwrites ("[12/40]  30% ETA 0:42 i=64,j=64,k=64") and
 * that a message or progress_clear erases; elsewhere, with -v, one line
 * per step ("tcx: [12/40]  30% ETA 0:42 ..."); else (and with -q) nothing. */
struct progress {
	bool tty, lines;
	double t0;
	size_t total;
};
void progress_start(struct progress *pg, size_t total);
/* `done` of the total steps are done; label names the one starting now. */
void progress_show(const struct progress *pg, size_t done, const char *label);
void progress_clear(const struct progress *pg);

/* The progress of a held-out evaluation (export_eval's progress callback,
 * ctx a struct eval_display): "[4/18]  22% ETA 1:10 i=96,j=96,k=96
 * solution 2/3 round 2/3".  Start pg with the evaluation's total. */
struct export_progress;
struct eval_display {
	struct progress pg;
	const struct tcx_contraction *type;
};
void eval_progress(const struct export_progress *p, void *ctx);

/* Signals: SIGINT/SIGTERM set this flag; long loops check it and stop. */
extern volatile int interrupted;
void install_signal_handlers(void);

#endif /* TCX_CMD_H */
