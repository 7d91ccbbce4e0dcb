/* ydoc.h - YAML for every tcx format (tuning configs, logic files, solution
 * files): text read through libyaml into a tree of nodes that keep their
 * places, for "FILE:LINE:COL: ..." messages; scalars typed by one schema;
 * trees turned into jansson values; jansson values written as YAML.
 *
 * lib/yaml/ is the only place that includes <yaml.h>: the formats above it
 * see nodes and JSON, never libyaml's events (libyaml's 1-for-success
 * results are converted here).
 *
 * What a document may hold (tcx-config(5), docs/logic-format.md): one
 * document, no aliases (*name), mapping keys that are scalars and differ,
 * no NUL characters, lists and mappings nested at most YDOC_MAX_DEPTH deep.
 * Anything else is TCX_EPARSE with "NAME:LINE:COL: ..." (1-based, also in
 * err->line and err->col).  Running out of memory, in libyaml or here, is
 * TCX_ENOMEM "out of memory reading 'NAME'", never a malformed file.
 *
 * Scalars are typed as YAML 1.2's core schema reads them, less its octal,
 * hexadecimal, infinite and not-a-number forms: a plain scalar without a
 * tag that is true/True/TRUE or false/False/FALSE is a boolean,
 * null/Null/NULL/~ or nothing is null, a decimal integer is an integer, a
 * decimal float is a real; anything quoted or tagged, and every other
 * plain scalar (None, .inf, 0x10, yes), is text.  PyYAML's output, as
 * Tensile writes it, reads the same.
 */
#ifndef TCX_YDOC_H
#define TCX_YDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/common.h"

#define YDOC_MAX_DEPTH 64 /* nested lists and mappings */

enum ynode_kind { YNODE_SCALAR, YNODE_SEQ, YNODE_MAP };
/* How a scalar was written. */
enum ynode_style { YSTYLE_PLAIN, YSTYLE_QUOTED, YSTYLE_BLOCK };

/* One node of a document.  A mapping's children alternate key, value, key,
 * value ...; its keys are scalars. */
struct ynode {
	enum ynode_kind kind;
	unsigned line, col;	/* 1-based place where the node starts */
	bool plain;		/* a plain scalar without a tag: typed by its text */
	enum ynode_style style; /* scalars */
	char *text;		/* scalars: the value, NUL-terminated; NULL otherwise */
	size_t n, alloc;	/* children */
	struct ynode **kid;
};

/* Reads the one document of `len` bytes of text (not necessarily
 * NUL-terminated; `name` for messages) into a tree.  max_nodes bounds the
 * scalars, lists and mappings together (0: no bound), so that a hostile
 * file cannot exhaust memory.  *out is the caller's (ynode_free), or NULL
 * when the text holds no document (empty, or only comments); on failure
 * NULL and err says why (see above). */
enum tcx_status ydoc_parse(const char *text, size_t len, const char *name, size_t max_nodes,
			   struct ynode **out, struct tcx_error *err);
/* Releases n and its children; NULL allowed. */
void ynode_free(struct ynode *n);

/* Mappings: the number of pairs, the k-th key and value, and the value of
 * `key` (NULL when absent). */
size_t ymap_size(const struct ynode *m);
const struct ynode *ymap_key(const struct ynode *m, size_t k);
const struct ynode *ymap_val(const struct ynode *m, size_t k);
const struct ynode *ymap_get(const struct ynode *m, const char *key);

/* Typed scalars (the schema above). */
bool ynode_is_null(const struct ynode *n);
/* 1 for true, 0 for false, -1 for anything else. */
int ynode_bool(const struct ynode *n);
/* A decimal integer that fits int64_t. */
bool ynode_int(const struct ynode *n, int64_t *v);
/* A decimal integer or float that fits a double. */
bool ynode_float(const struct ynode *n, double *v);
/* What n is, for "expected X, found Y" messages: "a list", "a mapping",
 * "nothing" (null) or "a single value". */
const char *ynode_what(const struct ynode *n);
/* The file's column of the 1-based column `col` of a one-line scalar's
 * text (a plain or quoted scalar; others give the node's column). */
unsigned ynode_text_col(const struct ynode *n, unsigned col);

/* The JSON value of n: mappings become objects, lists arrays, scalars as
 * the schema types them.  *out is the caller's.  Fails only for memory
 * (`name` for the message). */
enum tcx_status ynode_to_json(const struct ynode *n, const char *name, json_t **out,
			      struct tcx_error *err);

/* Messages at a place: code with "NAME:LINE:COL: <message>" and
 * err->line/col set; ynode_fail is TCX_EPARSE at n's place. */
enum tcx_status ydoc_fail(struct tcx_error *err, enum tcx_status code, const char *name,
			  unsigned line, unsigned col, const char *fmt, ...) TCX_PRINTF(6, 7);
enum tcx_status ydoc_vfail(struct tcx_error *err, enum tcx_status code, const char *name,
			   unsigned line, unsigned col, const char *fmt, va_list ap);
enum tcx_status ynode_fail(struct tcx_error *err, const char *name, const struct ynode *n,
			   const char *fmt, ...) TCX_PRINTF(4, 5);
/* A warning "NAME:LINE:COL: <message>" through tcx_log. */
void ynode_warn(const char *name, const struct ynode *n, const char *fmt, ...) TCX_PRINTF(3, 4);
/* TCX_ENOMEM "out of memory reading 'NAME'". */
enum tcx_status ydoc_nomem(struct tcx_error *err, const char *name);

/* ---- documents as JSON (logic and solution files) ---- */

#define YDOC_MAX_TEXT ((size_t)64 << 20) /* larger texts are refused (TCX_EINVAL) */

/* Reads text (len bytes; `name` for messages) as ydoc_parse does, without
 * a bound on nodes but refusing texts over YDOC_MAX_TEXT, into a tree
 * (*tree, when not NULL) and its JSON (*json, when not NULL), both the
 * caller's.  A text without a document is "NAME: empty document"
 * (TCX_EPARSE). */
enum tcx_status ydoc_load(const char *text, size_t len, const char *name, struct ynode **tree,
			  json_t **json, struct tcx_error *err);
/* The same for the file at path (TCX_EIO when it cannot be read). */
enum tcx_status ydoc_load_file(const char *path, struct ynode **tree, json_t **json,
			       struct tcx_error *err);
/* The JSON alone, of a text and of a file. */
enum tcx_status yaml_to_json(const char *text, size_t len, const char *name, json_t **out,
			     struct tcx_error *err);
enum tcx_status yaml_file_to_json(const char *path, json_t **out, struct tcx_error *err);

/* ---- writing ---- */

/* Appends v to out as a YAML document in block style: strings that YAML
 * 1.1 (PyYAML, Tensile's reader) would read as another type are quoted. */
enum tcx_status yaml_from_json(json_t *v, struct strbuf *out, struct tcx_error *err);

/* The version of libyaml tcx runs with ("0.2.5"). */
const char *ydoc_libyaml_version(void);

#endif /* TCX_YDOC_H */
