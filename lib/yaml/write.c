/* write.c - writes a jansson value as block-style YAML through libyaml's
 * emitter (correct quoting without a hand-written writer). */
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "yaml/ydoc.h"

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	strbuf_add(data, (const char *)buffer, size);
	return 1;
}

static int emit_scalar(yaml_emitter_t *em, const char *text, bool plain_ok)
{
	yaml_event_t ev;

	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text),
				     plain_ok, !plain_ok,
				     plain_ok ? YAML_ANY_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	return yaml_emitter_emit(em, &ev);
}

/* Strings that YAML would read back as another type are quoted: YAML 1.1's
 * booleans, nulls, numbers (also .inf and .nan) and timestamps, as PyYAML
 * (Tensile's reader) resolves them. */
static bool needs_quotes(const char *s)
{
	static const char *const special[] = {
		"true", "false", "True", "False", "TRUE", "FALSE", "yes", "no", "Yes", "No", "YES",
		"NO", "on", "off", "On", "Off", "ON", "OFF", "null", "Null", "NULL", "~", "",
		".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", ".nan", ".NaN", ".NAN",
	};
	char *end;

	for (size_t k = 0; k < sizeof(special) / sizeof(special[0]); k++)
		if (strcmp(s, special[k]) == 0)
			return true;
	/* a timestamp: 2025-01-31, 2025-01-31T12:00:00Z */
	if (strlen(s) >= 8 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' &&
	    s[2] >= '0' && s[2] <= '9' && s[3] >= '0' && s[3] <= '9' && s[4] == '-' &&
	    strspn(s, "0123456789-:.TtZz +") == strlen(s))
		return true;
	(void)strtod(s, &end);
	return end != s && *end == '\0';
}

static int emit_value(yaml_emitter_t *em, json_t *v, int depth)
{
	yaml_event_t ev;
	char buf[64];

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *val;

		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
		if (!yaml_emitter_emit(em, &ev))
			return 0;
		json_object_foreach(v, key, val)
		{
			if (!emit_scalar(em, key, !needs_quotes(key)) ||
			    !emit_value(em, val, depth + 1))
				return 0;
		}
		yaml_mapping_end_event_initialize(&ev);
		return yaml_emitter_emit(em, &ev);
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *val;
		bool flat = true;

		json_array_foreach(v, i, val) flat &= !json_is_object(val) && !json_is_array(val);
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
						     flat && json_array_size(v) <= 16
							     ? YAML_FLOW_SEQUENCE_STYLE
							     : YAML_BLOCK_SEQUENCE_STYLE);
		if (!yaml_emitter_emit(em, &ev))
			return 0;
		json_array_foreach(v, i, val) if (!emit_value(em, val, depth + 1)) return 0;
		yaml_sequence_end_event_initialize(&ev);
		return yaml_emitter_emit(em, &ev);
	}
	case JSON_STRING:
		return emit_scalar(em, json_string_value(v), !needs_quotes(json_string_value(v)));
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return emit_scalar(em, buf, true);
	case JSON_REAL:
		snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
		if (!strpbrk(buf, ".eEn"))
			strcat(buf, ".0");
		return emit_scalar(em, buf, true);
	case JSON_TRUE:
		return emit_scalar(em, "true", true);
	case JSON_FALSE:
		return emit_scalar(em, "false", true);
	case JSON_NULL:
		return emit_scalar(em, "null", true);
	}
	return 0;
}

enum tcx_status yaml_from_json(json_t *v, struct strbuf *out, struct tcx_error *err)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	int ok;

	if (!yaml_emitter_initialize(&em))
		return tcx_fail(err, TCX_ENOMEM, "cannot start the YAML writer");
	yaml_emitter_set_output(&em, write_handler, out);
	yaml_emitter_set_width(&em, 100);
	yaml_emitter_set_unicode(&em, 1);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	ok = yaml_emitter_emit(&em, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	ok = ok && yaml_emitter_emit(&em, &ev);
	ok = ok && emit_value(&em, v, 0);
	yaml_document_end_event_initialize(&ev, 1);
	ok = ok && yaml_emitter_emit(&em, &ev);
	yaml_stream_end_event_initialize(&ev);
	ok = ok && yaml_emitter_emit(&em, &ev);
	ok = ok && yaml_emitter_flush(&em);
	if (!ok) {
		enum tcx_status st = tcx_fail(err, TCX_EIO, "cannot write YAML: %s",
					      em.problem ? em.problem : "unknown error");

		yaml_emitter_delete(&em);
		return st;
	}
	yaml_emitter_delete(&em);
	return strbuf_status(out, err);
}
