/* form.c - a plan's form in words (form.h). */
#include <string.h>
#include <stdio.h>

#include "plan/form.h"

/* The words of a form, one per PLAN_FORM_* bit, in its order. */
static const char *const form_words[] = { "permute-A", "permute-B", "permute-C", "c-b-first",
					  "c-by-c" };

void plan_form_name(const struct plan_form *f, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "merged");

	for (int b = 0; b < 5; b++)
		if (f->permute >> b & 1 && n < len)
			n += (size_t)snprintf(buf + n, len - n, "+%s", form_words[b]);
	if (f->ttm && n < len)
		snprintf(buf + n, len - n, "+ttm");
}

bool plan_form_parse(const char *text, struct plan_form *out)
{
	const char *w = text;

	memset(out, 0, sizeof(*out));
	out->on = true;
	if (strncmp(w, "merged", 6) != 0 || (w[6] != '\0' && w[6] != '+'))
		return false;
	w += 6;
	while (*w == '+') {
		const char *e = strchr(w + 1, '+');
		size_t n = e ? (size_t)(e - w - 1) : strlen(w + 1);
		bool known = false;

		for (int b = 0; b < 5 && !known; b++)
			if (strlen(form_words[b]) == n && strncmp(w + 1, form_words[b], n) == 0 &&
			    !(out->permute >> b & 1)) {
				out->permute |= 1u << b;
				known = true;
			}
		if (!known && n == 3 && strncmp(w + 1, "ttm", 3) == 0 && !out->ttm)
			known = out->ttm = true;
		if (!known)
			return false;
		w += 1 + n;
	}
	/* C's orders come with permuting C */
	return *w == '\0' && (!(out->permute & (PLAN_FORM_C_BFIRST | PLAN_FORM_C_BYC)) || (out->permute & PLAN_FORM_C));
}

bool plan_form_equal(const struct plan_form *a, const struct plan_form *b)
{
	if (!a->on || !b->on)
		return a->on == b->on;
	return a->permute == b->permute && a->ttm == b->ttm;
}
