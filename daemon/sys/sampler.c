// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../core/hot_table.h"
#include "sampler.h"

static void why_append(char *why, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(why, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(why + used, len - used, fmt, ap);
	va_end(ap);
}

int sampler_pick(struct sampler *const *cands, size_t n, char *why, size_t why_len)
{
	return sampler_pick_skipped(cands, n, why, why_len, NULL, 0);
}

int sampler_pick_skipped(struct sampler *const *cands, size_t n, char *why, size_t why_len,
			 char *skipped, size_t skipped_len)
{
	char reason[SAMPLER_WHY_MAX];

	if (why_len)
		why[0] = '\0';
	if (skipped_len)
		skipped[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *name = cands[i]->ops->name;
		int r;

		reason[0] = '\0';
		r = sampler_probe(cands[i], reason, sizeof(reason));
		if (r == 0)
			r = sampler_start(cands[i], reason, sizeof(reason));
		if (r == 0) {
			/* A started source may have a note (e.g. what a crashed
			 * tierd left and it cleaned up). */
			why_append(why, why_len, "using %s%s%s%s", name, reason[0] ? " (" : "",
				   reason, reason[0] ? ")" : "");
			return (int)i;
		}
		why_append(why, why_len, "%s: %s; ", name,
			   reason[0] ? reason : strerror(-r));
		if (skipped_len)
			why_append(skipped, skipped_len, "%s%s: %s", skipped[0] ? "; " : "", name,
				   reason[0] ? reason : strerror(-r));
	}
	why_append(why, why_len, "no hotness source can run");
	return -ENODEV;
}

void sampler_peek_add(struct sampler_peek *ret, const struct hot_table *t, pid_t pid,
		      uint64_t addr, uint64_t bytes, double weight, double scale)
{
	ret->accessed_bytes += bytes;
	if (2 * hot_weight(t, pid, addr) < weight * scale)
		ret->new_bytes += bytes;
}
