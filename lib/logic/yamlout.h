/* yamlout.h - JSON values (jansson) written as YAML text. */
#ifndef TCX_YAMLOUT_H
#define TCX_YAMLOUT_H

#include <jansson.h>

#include "common/common.h"

/* Appends v to out as a YAML document. */
enum tcx_status yaml_from_json(json_t *v, struct strbuf *out, struct tcx_error *err);

#endif
