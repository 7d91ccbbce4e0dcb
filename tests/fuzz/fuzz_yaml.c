/* fuzz_yaml.c - fuzz target: YAML to JSON (yaml_to_json, lib/yaml/read.c),
 * the reader under solution files and logic, and back out to YAML through
 * yaml_from_json (write.c): what was read must be writable. */
#include "fuzz.h"
#include "yaml/ydoc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *doc = (json_t *)1;
	struct tcx_error err;
	struct strbuf sb = STRBUF_INIT;
	enum tcx_status st;

	memset(&err, 0, sizeof(err));
	st = yaml_to_json((const char *)data, size, "fuzz.yaml", &doc, &err);
	fuzz_check_error(st, &err, "yaml_to_json");
	if (st) {
		if (doc)
			fuzz_fail("yaml_to_json failed but left *out set");
		return 0;
	}
	if (!doc || doc == (json_t *)1)
		fuzz_fail("yaml_to_json succeeded without a document");
	st = yaml_from_json(doc, &sb, &err);
	fuzz_check_error(st, &err, "yaml_from_json");
	strbuf_release(&sb);
	json_decref(doc);
	return 0;
}
