/* yamlin.c - YAML into jansson values through libyaml's event parser,
 * with bounded depth and size so that hostile input cannot exhaust memory. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "logic/yamlin.h"

#define MAX_DEPTH 64
#define MAX_TEXT ((size_t)64 << 20)

json_t *yaml_scalar_to_json(const char *text, size_t len, bool plain)
{
	static const char *const trues[] = { "true", "True", "TRUE", "yes", "Yes", "on", "On" };
	static const char *const falses[] = { "false", "False", "FALSE", "no", "No", "off", "Off" };
	char buf[64], *end;

	if (!plain)
		return json_stringn(text, len);
	if (len == 0 || (len == 1 && text[0] == '~') ||
	    (len == 4 && (!memcmp(text, "null", 4) || !memcmp(text, "Null", 4) ||
			  !memcmp(text, "NULL", 4))))
		return json_null();
	for (size_t k = 0; k < ARRAY_SIZE(trues); k++)
		if (strlen(trues[k]) == len && !memcmp(text, trues[k], len))
			return json_true();
	for (size_t k = 0; k < ARRAY_SIZE(falses); k++)
		if (strlen(falses[k]) == len && !memcmp(text, falses[k], len))
			return json_false();
	if (len < sizeof(buf)) {
		long long i;
		double d;

		memcpy(buf, text, len);
		buf[len] = '\0';
		errno = 0;
		i = strtoll(buf, &end, 10);
		if (*end == '\0' && end != buf && errno == 0)
			return json_integer((json_int_t)i);
		errno = 0;
		d = strtod(buf, &end);
		if (*end == '\0' && end != buf && errno == 0 && isfinite(d) &&
		    strpbrk(buf, "0123456789"))
			return json_real(d);
	}
	return json_stringn(text, len);
}

static enum tcx_status nomem(const char *name, struct tcx_error *err)
{
	return tcx_fail(err, TCX_ENOMEM, "out of memory reading '%s'", name);
}

static enum tcx_status parse_error(yaml_parser_t *p, const char *name, struct tcx_error *err)
{
	unsigned line = (unsigned)p->problem_mark.line + 1, col = (unsigned)p->problem_mark.column + 1;

	/* libyaml could not allocate: the file may be fine */
	if (p->error == YAML_MEMORY_ERROR)
		return nomem(name, err);
	return tcx_fail_at(err, TCX_EPARSE, line, col, "%s:%u:%u: %s%s%s", name, line, col,
			   p->problem ? p->problem : "malformed YAML", p->context ? " " : "",
			   p->context ? p->context : "");
}

/* Reads the value whose first event is `ev` (already taken). */
static enum tcx_status read_value(yaml_parser_t *p, yaml_event_t *ev, const char *name,
				  int depth, json_t **out, struct tcx_error *err)
{
	enum tcx_status st = TCX_OK;
	yaml_event_t e;
	json_t *v = NULL;
	unsigned line = (unsigned)ev->start_mark.line + 1, col = (unsigned)ev->start_mark.column + 1;

	*out = NULL;
	if (depth > MAX_DEPTH)
		return tcx_fail_at(err, TCX_EPARSE, line, col, "%s:%u:%u: nesting deeper than %d",
				   name, line, col, MAX_DEPTH);
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		/* libyaml hands over valid UTF-8 only: NULL means memory */
		*out = yaml_scalar_to_json((const char *)ev->data.scalar.value,
					   ev->data.scalar.length,
					   ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE);
		return *out ? TCX_OK : nomem(name, err);
	case YAML_ALIAS_EVENT:
		return tcx_fail_at(err, TCX_EPARSE, line, col,
				   "%s:%u:%u: YAML aliases (*name) are not supported", name, line,
				   col);
	case YAML_SEQUENCE_START_EVENT:
		v = json_array();
		if (!v)
			return nomem(name, err);
		for (;;) {
			json_t *item;

			if (!yaml_parser_parse(p, &e)) {
				st = parse_error(p, name, err);
				break;
			}
			if (e.type == YAML_SEQUENCE_END_EVENT) {
				yaml_event_delete(&e);
				break;
			}
			st = read_value(p, &e, name, depth + 1, &item, err);
			yaml_event_delete(&e);
			if (st)
				break;
			if (json_array_append_new(v, item)) {
				st = nomem(name, err);
				break;
			}
		}
		break;
	case YAML_MAPPING_START_EVENT:
		v = json_object();
		if (!v)
			return nomem(name, err);
		for (;;) {
			json_t *key, *item;
			char *k;

			if (!yaml_parser_parse(p, &e)) {
				st = parse_error(p, name, err);
				break;
			}
			if (e.type == YAML_MAPPING_END_EVENT) {
				yaml_event_delete(&e);
				break;
			}
			st = read_value(p, &e, name, depth + 1, &key, err);
			yaml_event_delete(&e);
			if (st)
				break;
			k = json_is_string(key) ? strdup(json_string_value(key))
						: json_dumps(key, JSON_ENCODE_ANY | JSON_COMPACT);
			json_decref(key);
			if (!k) {
				st = nomem(name, err);
				break;
			}
			if (!yaml_parser_parse(p, &e)) {
				free(k);
				st = parse_error(p, name, err);
				break;
			}
			st = read_value(p, &e, name, depth + 1, &item, err);
			yaml_event_delete(&e);
			if (st) {
				free(k);
				break;
			}
			if (json_object_set_new(v, k, item)) {
				free(k);
				st = nomem(name, err);
				break;
			}
			free(k);
		}
		break;
	default:
		return tcx_fail_at(err, TCX_EPARSE, line, col, "%s:%u:%u: unexpected YAML event", name,
				   line, col);
	}
	if (st) {
		json_decref(v);
		return st;
	}
	*out = v;
	return TCX_OK;
}

enum tcx_status yaml_to_json(const char *text, size_t len, const char *name, json_t **out,
			     struct tcx_error *err)
{
	yaml_parser_t p;
	yaml_event_t e;
	enum tcx_status st = TCX_OK;
	json_t *doc = NULL;

	*out = NULL;
	if (len > MAX_TEXT)
		return tcx_fail(err, TCX_EINVAL, "%s: larger than %zu MiB", name, MAX_TEXT >> 20);
	if (!yaml_parser_initialize(&p))
		return nomem(name, err);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	for (;;) {
		if (!yaml_parser_parse(&p, &e)) {
			st = parse_error(&p, name, err);
			break;
		}
		if (e.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&e);
			break;
		}
		if (e.type == YAML_SCALAR_EVENT || e.type == YAML_SEQUENCE_START_EVENT ||
		    e.type == YAML_MAPPING_START_EVENT || e.type == YAML_ALIAS_EVENT) {
			if (doc) {
				yaml_event_delete(&e);
				continue; /* only the first document */
			}
			st = read_value(&p, &e, name, 0, &doc, err);
		}
		yaml_event_delete(&e);
		if (st)
			break;
	}
	yaml_parser_delete(&p);
	if (st) {
		json_decref(doc);
		return st;
	}
	if (!doc)
		return tcx_fail_at(err, TCX_EPARSE, 1, 1, "%s: empty document", name);
	*out = doc;
	return TCX_OK;
}

enum tcx_status yaml_file_to_json(const char *path, json_t **out, struct tcx_error *err)
{
	char *text;
	size_t len;
	enum tcx_status st = read_file(path, &text, &len, err);

	*out = NULL;
	if (st)
		return st;
	st = yaml_to_json(text, len, path, out, err);
	free(text);
	return st;
}
