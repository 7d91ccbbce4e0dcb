/* fault.c - the TCX_FAULT switches of fault.h: which call of each kind
 * fails, parsed once from the environment, counted atomically. */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "fault.h"

#ifdef TCX_FAULT_INJECTION
#include <pthread.h>

#define MAX_RULES 16

static const char *const kind_names[FAULT_KINDS] = {
    [FAULT_ALLOC] = "alloc",   [FAULT_BUILD] = "build",
    [FAULT_LAUNCH] = "launch", [FAULT_LAUNCH_HANG] = "launch-hang",
    [FAULT_WRITE] = "write",
};

struct rule {
	enum fault_kind kind;
	long n;
	bool onward; /* "N+": the Nth and every later call */
};

static struct rule rules[MAX_RULES];
static int nrules;
static long counts[FAULT_KINDS];
static double hang_s = 30;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool loaded;

static bool parse_rule(const char *s, size_t len, struct rule *r)
{
	char buf[64], *colon, *end;

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	colon = strrchr(buf, ':');
	if (!colon)
		return false;
	*colon = '\0';
	for (int k = 0; k < FAULT_KINDS; k++)
		if (strcmp(buf, kind_names[k]) == 0) {
			r->kind = (enum fault_kind)k;
			r->n = strtol(colon + 1, &end, 10);
			r->onward = *end == '+';
			if (r->onward)
				end++;
			return end != colon + 1 && *end == '\0' && r->n >= 1;
		}
	return false;
}

/* Called with the lock held. */
static void load(void)
{
	const char *spec = getenv("TCX_FAULT"), *hang = getenv("TCX_FAULT_HANG_S"), *p;
	double h;

	loaded = true;
	nrules = 0;
	memset(counts, 0, sizeof(counts));
	if (hang && common_parse_double(hang, &h) && h >= 0)
		hang_s = h;
	if (!spec)
		return;
	for (p = spec; *p;) {
		size_t n = strcspn(p, ",");

		if (nrules < MAX_RULES && parse_rule(p, n, &rules[nrules]))
			nrules++;
		else
			tcx_log(TCX_LOG_WARN,
				"TCX_FAULT: '%.*s' ignored (expected kind:N or kind:N+ "
				"with kind alloc, build, launch, launch-hang or write)",
				(int)n, p);
		p += n;
		p += *p == ',';
	}
}

bool fault_hit(enum fault_kind k)
{
	bool hit = false;
	long n;

	pthread_mutex_lock(&lock);
	if (!loaded)
		load();
	n = ++counts[k];
	for (int i = 0; i < nrules; i++)
		if (rules[i].kind == k && (n == rules[i].n || (rules[i].onward && n > rules[i].n)))
			hit = true;
	pthread_mutex_unlock(&lock);
	if (hit)
		tcx_log(TCX_LOG_DEBUG, "TCX_FAULT: failing %s call %ld", kind_names[k], n);
	return hit;
}

double fault_hang_seconds(void)
{
	double h;

	pthread_mutex_lock(&lock);
	if (!loaded)
		load();
	h = hang_s;
	pthread_mutex_unlock(&lock);
	return h;
}

void fault_reset(void)
{
	pthread_mutex_lock(&lock);
	load();
	pthread_mutex_unlock(&lock);
}
#else
/* ISO C forbids an empty translation unit. */
typedef int fault_unused;
#endif
