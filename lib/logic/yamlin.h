/* yamlin.h - a YAML document read into a jansson value (mappings become
 * objects, sequences arrays, plain scalars integers, reals, booleans or
 * null as YAML 1.1 spells them, everything else strings). */
#ifndef TCX_YAMLIN_H
#define TCX_YAMLIN_H

#include <jansson.h>

#include "common/common.h"

/* Parses text (len bytes; `name` for messages).  On error: TCX_EPARSE with
 * "NAME:LINE:COL: problem" and err->line/col set. */
enum tcx_status yaml_to_json(const char *text, size_t len, const char *name, json_t **out,
			     struct tcx_error *err);
/* The same for a file. */
enum tcx_status yaml_file_to_json(const char *path, json_t **out, struct tcx_error *err);
/* The JSON value of one plain YAML scalar ("True" -> true, "12" -> 12). */
json_t *yaml_scalar_to_json(const char *text, size_t len, bool plain);

#endif
