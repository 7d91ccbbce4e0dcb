/* read.c - YAML text into a tree of nodes with their places (libyaml's
 * event parser; aliases refused, depth and node count bounded), typed
 * scalars, the tree as JSON, and messages at a node's place (ydoc.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "yaml/ydoc.h"

const char *ydoc_libyaml_version(void)
{
	return yaml_get_version_string();
}

/* ---- messages ---------------------------------------------------------- */

enum tcx_status ydoc_vfail(struct tcx_error *err, enum tcx_status code, const char *name,
			   unsigned line, unsigned col, const char *fmt, va_list ap)
{
	char msg[TCX_ERROR_SIZE];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return tcx_fail_at(err, code, line, col, "%s:%u:%u: %s", name, line, col, msg);
}

enum tcx_status ydoc_fail(struct tcx_error *err, enum tcx_status code, const char *name,
			  unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;
	enum tcx_status st;

	va_start(ap, fmt);
	st = ydoc_vfail(err, code, name, line, col, fmt, ap);
	va_end(ap);
	return st;
}

enum tcx_status ynode_fail(struct tcx_error *err, const char *name, const struct ynode *n,
			   const char *fmt, ...)
{
	va_list ap;
	enum tcx_status st;

	va_start(ap, fmt);
	st = ydoc_vfail(err, TCX_EPARSE, name, n->line, n->col, fmt, ap);
	va_end(ap);
	return st;
}

void ynode_warn(const char *name, const struct ynode *n, const char *fmt, ...)
{
	char msg[TCX_ERROR_SIZE];
	va_list ap;

	if (!tcx_log_enabled(TCX_LOG_WARN))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tcx_log(TCX_LOG_WARN, "%s:%u:%u: %s", name, n->line, n->col, msg);
}

enum tcx_status ydoc_nomem(struct tcx_error *err, const char *name)
{
	return tcx_fail(err, TCX_ENOMEM, "out of memory reading '%s'", name);
}

/* ---- the tree ---------------------------------------------------------- */

void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	for (size_t k = 0; k < n->n; k++)
		ynode_free(n->kid[k]);
	free(n->kid);
	free(n->text);
	free(n);
}

size_t ymap_size(const struct ynode *m)
{
	return m->kind == YNODE_MAP ? m->n / 2 : 0;
}

const struct ynode *ymap_key(const struct ynode *m, size_t k)
{
	return m->kid[2 * k];
}

const struct ynode *ymap_val(const struct ynode *m, size_t k)
{
	return m->kid[2 * k + 1];
}

const struct ynode *ymap_get(const struct ynode *m, const char *key)
{
	for (size_t k = 0; k < ymap_size(m); k++)
		if (strcmp(ymap_key(m, k)->text, key) == 0)
			return ymap_val(m, k);
	return NULL;
}

/* ---- scalars ------------------------------------------------------------ */

bool ynode_is_null(const struct ynode *n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};

	if (n->kind != YNODE_SCALAR || !n->plain)
		return false;
	for (size_t k = 0; k < ARRAY_SIZE(nulls); k++)
		if (strcmp(n->text, nulls[k]) == 0)
			return true;
	return false;
}

int ynode_bool(const struct ynode *n)
{
	static const char *const t[] = {"true", "True", "TRUE"}, *const f[] = {"false", "False",
									       "FALSE"};

	if (n->kind != YNODE_SCALAR || !n->plain)
		return -1;
	for (size_t k = 0; k < ARRAY_SIZE(t); k++) {
		if (strcmp(n->text, t[k]) == 0)
			return 1;
		if (strcmp(n->text, f[k]) == 0)
			return 0;
	}
	return -1;
}

bool ynode_int(const struct ynode *n, int64_t *v)
{
	const char *s;

	if (n->kind != YNODE_SCALAR || !n->plain)
		return false;
	s = n->text + (n->text[0] == '-' || n->text[0] == '+');
	if (!*s || strspn(s, "0123456789") != strlen(s))
		return false;
	return common_parse_i64(n->text, v);
}

/* [-+]? (digits [. digits?] | . digits) ([eE] [-+]? digits)? */
bool ynode_float(const struct ynode *n, double *v)
{
	const char *s;
	size_t d, f = 0;
	char *end;

	if (n->kind != YNODE_SCALAR || !n->plain)
		return false;
	s = n->text + (n->text[0] == '-' || n->text[0] == '+');
	d = strspn(s, "0123456789");
	s += d;
	if (*s == '.') {
		f = strspn(s + 1, "0123456789");
		s += 1 + f;
	}
	if (d + f == 0)
		return false;
	if (*s == 'e' || *s == 'E') {
		s++;
		s += *s == '-' || *s == '+';
		if (!strspn(s, "0123456789"))
			return false;
		s += strspn(s, "0123456789");
	}
	if (*s)
		return false;
	errno = 0;
	*v = strtod(n->text, &end);
	return *end == '\0' && errno != ERANGE;
}

const char *ynode_what(const struct ynode *n)
{
	if (n->kind == YNODE_SEQ)
		return "a list";
	if (n->kind == YNODE_MAP)
		return "a mapping";
	if (ynode_is_null(n))
		return "nothing";
	return "a single value";
}

unsigned ynode_text_col(const struct ynode *n, unsigned col)
{
	if (!col || n->kind != YNODE_SCALAR)
		return n->col;
	if (n->style == YSTYLE_PLAIN)
		return n->col + col - 1;
	if (n->style == YSTYLE_QUOTED)
		return n->col + col;
	return n->col;
}

enum tcx_status ynode_to_json(const struct ynode *n, const char *name, json_t **out,
			      struct tcx_error *err)
{
	json_t *v = NULL;
	int64_t i;
	double d;
	int b;

	*out = NULL;
	switch (n->kind) {
	case YNODE_SCALAR:
		/* libyaml hands over valid UTF-8 only: NULL means memory */
		if (ynode_is_null(n))
			v = json_null();
		else if ((b = ynode_bool(n)) >= 0)
			v = json_boolean(b);
		else if (ynode_int(n, &i))
			v = json_integer((json_int_t)i);
		else if (ynode_float(n, &d))
			v = json_real(d);
		else
			v = json_string(n->text);
		break;
	case YNODE_SEQ:
		v = json_array();
		for (size_t k = 0; v && k < n->n; k++) {
			json_t *item;
			enum tcx_status st = ynode_to_json(n->kid[k], name, &item, err);

			if (st) {
				json_decref(v);
				return st;
			}
			if (json_array_append_new(v, item)) {
				json_decref(v);
				return ydoc_nomem(err, name);
			}
		}
		break;
	case YNODE_MAP:
		v = json_object();
		for (size_t k = 0; v && k < ymap_size(n); k++) {
			json_t *item;
			enum tcx_status st = ynode_to_json(ymap_val(n, k), name, &item, err);

			if (st) {
				json_decref(v);
				return st;
			}
			if (json_object_set_new(v, ymap_key(n, k)->text, item)) {
				json_decref(v);
				return ydoc_nomem(err, name);
			}
		}
		break;
	}
	if (!v)
		return ydoc_nomem(err, name);
	*out = v;
	return TCX_OK;
}

/* ---- building the tree from libyaml's events ----------------------------- */

struct builder {
	const char *name;
	struct tcx_error *err;
	const char *text;
	size_t len;
	size_t nodes, max_nodes;
	struct ynode *stack[YDOC_MAX_DEPTH];
	int depth;
	struct ynode *root;
	int ndocs;
};

static enum tcx_status parse_fail(struct builder *b, const yaml_parser_t *p)
{
	unsigned line = (unsigned)p->problem_mark.line + 1,
		 col = (unsigned)p->problem_mark.column + 1;
	const char *problem = p->problem ? p->problem : "unknown error";

	/* libyaml could not allocate: the file may be fine */
	if (p->error == YAML_MEMORY_ERROR)
		return ydoc_nomem(b->err, b->name);
	if (p->error == YAML_READER_ERROR) {
		/* the reader reports a byte offset, not a mark */
		size_t end = TCX_MIN(p->problem_offset, b->len);

		line = col = 1;
		for (size_t k = 0; k < end; k++) {
			if (b->text[k] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		return ydoc_fail(b->err, TCX_EPARSE, b->name, line, col, "malformed YAML: %s",
				 problem);
	}
	if (p->context)
		return ydoc_fail(b->err, TCX_EPARSE, b->name, line, col,
				 "malformed YAML: %s (%s at %u:%u)", problem, p->context,
				 (unsigned)p->context_mark.line + 1,
				 (unsigned)p->context_mark.column + 1);
	return ydoc_fail(b->err, TCX_EPARSE, b->name, line, col, "malformed YAML: %s", problem);
}

static enum tcx_status node_new(struct builder *b, enum ynode_kind kind, const yaml_mark_t *mark,
				struct ynode **out)
{
	struct ynode *n;

	*out = NULL;
	if (b->max_nodes && ++b->nodes > b->max_nodes)
		return ydoc_fail(b->err, TCX_EPARSE, b->name, (unsigned)mark->line + 1,
				 (unsigned)mark->column + 1,
				 "too many values: tcx reads at most %zu in a file", b->max_nodes);
	n = calloc(1, sizeof(*n));
	if (!n)
		return ydoc_nomem(b->err, b->name);
	n->kind = kind;
	n->line = (unsigned)mark->line + 1;
	n->col = (unsigned)mark->column + 1;
	*out = n;
	return TCX_OK;
}

/* Hangs n under the innermost open container (or makes it the root).  Takes
 * ownership of n, also on failure. */
static enum tcx_status attach(struct builder *b, struct ynode *n)
{
	struct ynode *parent;

	if (b->depth == 0) {
		b->root = n;
		return TCX_OK;
	}
	parent = b->stack[b->depth - 1];
	if (parent->kind == YNODE_MAP && parent->n % 2 == 0 && n->kind != YNODE_SCALAR) {
		enum tcx_status st =
		    ynode_fail(b->err, b->name, n, "a mapping key must be a plain value, not %s",
			       ynode_what(n));

		ynode_free(n);
		return st;
	}
	if (parent->n == parent->alloc) {
		size_t na = parent->alloc ? parent->alloc * 2 : 8;
		struct ynode **kid = realloc(parent->kid, na * sizeof(*kid));

		if (!kid) {
			ynode_free(n);
			return ydoc_nomem(b->err, b->name);
		}
		parent->kid = kid;
		parent->alloc = na;
	}
	parent->kid[parent->n++] = n;
	return TCX_OK;
}

static int cmp_key(const void *a, const void *b)
{
	const struct ynode *x = *(const struct ynode *const *)a,
			   *y = *(const struct ynode *const *)b;
	int c = strcmp(x->text, y->text);

	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->col < y->col ? -1 : x->col > y->col;
}

/* Keys of one mapping must differ (YAML says so; PyYAML silently keeps the
 * last, which hides mistakes). */
static enum tcx_status check_duplicates(struct builder *b, const struct ynode *m)
{
	size_t nk = ymap_size(m);
	const struct ynode **keys;
	enum tcx_status st = TCX_OK;

	if (nk <= 16) {
		for (size_t k = 1; k < nk; k++)
			for (size_t j = 0; j < k; j++)
				if (strcmp(ymap_key(m, j)->text, ymap_key(m, k)->text) == 0)
					return ynode_fail(b->err, b->name, ymap_key(m, k),
							  "duplicate key '%s' (first at line %u)",
							  ymap_key(m, k)->text,
							  ymap_key(m, j)->line);
		return TCX_OK;
	}
	keys = malloc(nk * sizeof(*keys));
	if (!keys)
		return ydoc_nomem(b->err, b->name);
	for (size_t k = 0; k < nk; k++)
		keys[k] = ymap_key(m, k);
	qsort(keys, nk, sizeof(*keys), cmp_key);
	for (size_t k = 1; k < nk; k++)
		if (strcmp(keys[k - 1]->text, keys[k]->text) == 0) {
			st = ynode_fail(b->err, b->name, keys[k],
					"duplicate key '%s' (first at line %u)", keys[k]->text,
					keys[k - 1]->line);
			break;
		}
	free(keys);
	return st;
}

static enum tcx_status handle_event(struct builder *b, const yaml_event_t *ev)
{
	unsigned line = (unsigned)ev->start_mark.line + 1,
		 col = (unsigned)ev->start_mark.column + 1;
	yaml_scalar_style_t style;
	struct ynode *n;
	enum tcx_status st;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->ndocs++)
			return ydoc_fail(b->err, TCX_EPARSE, b->name, line, col,
					 "a second YAML document: a file holds one");
		return TCX_OK;
	case YAML_ALIAS_EVENT:
		return ydoc_fail(b->err, TCX_EPARSE, b->name, line, col,
				 "aliases ('*%s') are not supported: write the value out",
				 (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		if (strlen((const char *)ev->data.scalar.value) != ev->data.scalar.length)
			return ydoc_fail(b->err, TCX_EPARSE, b->name, line, col,
					 "a NUL character in a value is not allowed");
		st = node_new(b, YNODE_SCALAR, &ev->start_mark, &n);
		if (st)
			return st;
		style = ev->data.scalar.style;
		n->plain = ev->data.scalar.plain_implicit;
		n->style = style == YAML_PLAIN_SCALAR_STYLE ? YSTYLE_PLAIN
			   : style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
				   style == YAML_DOUBLE_QUOTED_SCALAR_STYLE
			       ? YSTYLE_QUOTED
			       : YSTYLE_BLOCK;
		n->text = strdup((const char *)ev->data.scalar.value);
		if (!n->text) {
			ynode_free(n);
			return ydoc_nomem(b->err, b->name);
		}
		return attach(b, n);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (b->depth >= YDOC_MAX_DEPTH)
			return ydoc_fail(b->err, TCX_EPARSE, b->name, line, col,
					 "lists and mappings nested more than %d deep",
					 YDOC_MAX_DEPTH);
		st = node_new(b, ev->type == YAML_MAPPING_START_EVENT ? YNODE_MAP : YNODE_SEQ,
			      &ev->start_mark, &n);
		if (st)
			return st;
		st = attach(b, n);
		if (st)
			return st;
		b->stack[b->depth++] = n;
		return TCX_OK;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth == 0)
			return ydoc_fail(b->err, TCX_EPARSE, b->name, line, col,
					 "malformed YAML: unbalanced end");
		n = b->stack[--b->depth];
		return n->kind == YNODE_MAP ? check_duplicates(b, n) : TCX_OK;
	default:
		return TCX_OK;
	}
}

enum tcx_status ydoc_parse(const char *text, size_t len, const char *name, size_t max_nodes,
			   struct ynode **out, struct tcx_error *err)
{
	struct builder b = {
	    .name = name, .err = err, .text = text, .len = len, .max_nodes = max_nodes};
	yaml_parser_t parser;
	yaml_event_t ev;
	enum tcx_status st = TCX_OK;

	*out = NULL;
	if (!yaml_parser_initialize(&parser))
		return ydoc_nomem(err, name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	for (;;) {
		bool end;

		if (!yaml_parser_parse(&parser, &ev)) {
			st = parse_fail(&b, &parser);
			break;
		}
		end = ev.type == YAML_STREAM_END_EVENT;
		st = handle_event(&b, &ev);
		yaml_event_delete(&ev);
		if (st || end)
			break;
	}
	yaml_parser_delete(&parser);
	if (st) {
		ynode_free(b.root);
		return st;
	}
	*out = b.root;
	return TCX_OK;
}

/* ---- documents as JSON --------------------------------------------------- */

enum tcx_status ydoc_load(const char *text, size_t len, const char *name, struct ynode **tree,
			  json_t **json, struct tcx_error *err)
{
	struct ynode *root;
	enum tcx_status st;

	if (tree)
		*tree = NULL;
	if (json)
		*json = NULL;
	if (len > YDOC_MAX_TEXT)
		return tcx_fail(err, TCX_EINVAL, "%s: larger than %zu MiB", name,
				YDOC_MAX_TEXT >> 20);
	st = ydoc_parse(text, len, name, 0, &root, err);
	if (st)
		return st;
	if (!root)
		return tcx_fail_at(err, TCX_EPARSE, 1, 1, "%s: empty document", name);
	if (json && (st = ynode_to_json(root, name, json, err))) {
		ynode_free(root);
		return st;
	}
	if (tree)
		*tree = root;
	else
		ynode_free(root);
	return TCX_OK;
}

enum tcx_status yaml_to_json(const char *text, size_t len, const char *name, json_t **out,
			     struct tcx_error *err)
{
	return ydoc_load(text, len, name, NULL, out, err);
}

enum tcx_status ydoc_load_file(const char *path, struct ynode **tree, json_t **json,
			       struct tcx_error *err)
{
	char *text;
	size_t len;
	enum tcx_status st;

	if (tree)
		*tree = NULL;
	if (json)
		*json = NULL;
	st = common_read_file(path, &text, &len, err);
	if (st)
		return st;
	st = ydoc_load(text, len, path, tree, json, err);
	free(text);
	return st;
}

enum tcx_status yaml_file_to_json(const char *path, json_t **out, struct tcx_error *err)
{
	return ydoc_load_file(path, NULL, out, err);
}
