/* test_status.c - every status code of include/tcx.h has its own text, and
 * values outside the enum get a text too (tcx_status_str never returns
 * NULL).  tests/docs/drift.sh checks that tcx(1) maps each code to an exit
 * status. */
#include <string.h>

#include "check.h"
#include "common/common.h"

int main(void)
{
	static const char unknown[] = "unknown status";

	for (int s = 0; s < TCX_STATUS_COUNT; s++) {
		const char *text = tcx_status_str((enum tcx_status)s);

		CHECK_MSG(text != NULL, "status %d", s);
		if (!text)
			continue;
		CHECK_MSG(text[0] != '\0', "status %d has an empty text", s);
		CHECK_MSG(strcmp(text, unknown) != 0, "status %d has no text of its own", s);
		/* git-style messages: lowercase, no full stop */
		CHECK_MSG(!(text[0] >= 'A' && text[0] <= 'Z'), "status %d: '%s' starts uppercase",
			  s, text);
		CHECK_MSG(text[strlen(text) - 1] != '.', "status %d: '%s' ends with a full stop", s,
			  text);
		for (int t = 0; t < s; t++)
			CHECK_MSG(strcmp(text, tcx_status_str((enum tcx_status)t)) != 0,
				  "statuses %d and %d share the text '%s'", t, s, text);
	}
	CHECK(strcmp(tcx_status_str(TCX_OK), "success") == 0);
	CHECK(strcmp(tcx_status_str(TCX_STATUS_COUNT), unknown) == 0);
	CHECK(strcmp(tcx_status_str((enum tcx_status)-1), unknown) == 0);
	CHECK(strcmp(tcx_status_str((enum tcx_status)100000), unknown) == 0);
	return check_done();
}
