/* check.c - counters behind check.h. */
#include "check.h"

int check_failures, check_count;

int check_done(void)
{
	fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}
