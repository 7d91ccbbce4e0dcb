/* log.c - the logging hook through which lib/ reports without printing. */
#include <stdio.h>

#include "common.h"

static tcx_log_fn log_fn;
static void *log_ctx;
static enum tcx_log_level log_max = TCX_LOG_WARN;

void tcx_log_set(tcx_log_fn fn, void *ctx, enum tcx_log_level max_level)
{
	log_fn = fn;
	log_ctx = ctx;
	log_max = max_level;
}

bool tcx_log_enabled(enum tcx_log_level level)
{
	return log_fn && level <= log_max;
}

void tcx_log(enum tcx_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!tcx_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_ctx);
}
