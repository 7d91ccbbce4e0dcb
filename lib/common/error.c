/* error.c - status texts and the tcx_fail idiom that fills struct tcx_error. */
#include <stdio.h>
#include <string.h>

#include "common.h"

static const char *const status_text[TCX_STATUS_COUNT] = {
	[TCX_OK] = "success",
	[TCX_ENOMEM] = "out of memory",
	[TCX_EINVAL] = "invalid argument",
	[TCX_EPARSE] = "parse error",
	[TCX_ENODEV] = "no usable device",
	[TCX_EBUILD] = "kernel build failed",
	[TCX_ELAUNCH] = "kernel launch failed",
	[TCX_EMISMATCH] = "result mismatch",
	[TCX_EIO] = "input/output error",
	[TCX_EDEVICE] = "device or runtime error",
	[TCX_EUNSUPPORTED] = "not supported",
	[TCX_ERANGE] = "value out of range",
	[TCX_EREJECT] = "solution rejected",
	[TCX_EREGRESS] = "performance regression",
	[TCX_EINTR] = "interrupted",
	[TCX_EBUSY] = "resource busy",
	[TCX_ETIMEOUT] = "timed out",
	[TCX_ECORRUPT] = "damaged file",
	[TCX_ELIMIT] = "beyond a device limit",
	[TCX_EINCOMPLETE] = "incomplete: more measurements are needed",
};

const char *tcx_status_str(enum tcx_status s)
{
	if ((unsigned)s < TCX_STATUS_COUNT && status_text[s])
		return status_text[s];
	return "unknown status";
}

const char *tcx_version(void)
{
	return TCX_VERSION_STRING;
}

enum tcx_status tcx_vfail(struct tcx_error *err, enum tcx_status code, const char *fmt,
			  va_list ap)
{
	if (err) {
		err->code = code;
		err->native = 0;
		err->line = err->col = 0;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	}
	return code;
}

enum tcx_status tcx_fail(struct tcx_error *err, enum tcx_status code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tcx_vfail(err, code, fmt, ap);
	va_end(ap);
	return code;
}

enum tcx_status tcx_fail_at(struct tcx_error *err, enum tcx_status code, unsigned line,
			    unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tcx_vfail(err, code, fmt, ap);
	va_end(ap);
	if (err) {
		err->line = line;
		err->col = col;
	}
	return code;
}

void tcx_error_prefix(struct tcx_error *err, const char *fmt, ...)
{
	char head[TCX_ERROR_SIZE], old[TCX_ERROR_SIZE];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", head, old);
}

void tcx_error_clear(struct tcx_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}
