// SPDX-License-Identifier: GPL-2.0-only
/*
 * The text trace format and the in-memory trace.  Parsing is strict: a
 * line is exactly four comma-separated fields, numbers are decimal without
 * sign, the tenant is a path starting with '/', and time never goes back;
 * anything else is "FILE:LINE: reason".  zlib's gzread reads plain files as
 * they are, so one reader serves plain and gzip text and the binary form.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "machine.h"
#include "trace.h"
#include "trace_bin.h"

void sim_trace_free(struct sim_trace *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->nr_tenants; i++)
		free(t->tenants[i]);
	free(t->tenants);
	free(t->recs);
	memset(t, 0, sizeof(*t));
}

int sim_trace_tenant(struct sim_trace *t, const char *name)
{
	char **n;

	for (uint32_t i = 0; i < t->nr_tenants; i++)
		if (!strcmp(t->tenants[i], name))
			return i;
	if (t->nr_tenants == SIM_TRACE_MAX_TENANTS)
		return -E2BIG;
	n = realloc(t->tenants, (t->nr_tenants + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->tenants = n;
	n[t->nr_tenants] = strdup(name);
	if (!n[t->nr_tenants])
		return -ENOMEM;
	return t->nr_tenants++;
}

int sim_trace_add(struct sim_trace *t, const struct sim_rec *r)
{
	if (t->nr_recs && r->time_us < t->recs[t->nr_recs - 1].time_us)
		return -EINVAL;
	if (r->tenant >= t->nr_tenants)
		return -EINVAL;
	if (t->nr_recs == t->cap_recs) {
		size_t cap = t->cap_recs ? 2 * t->cap_recs : 1024;
		struct sim_rec *n = realloc(t->recs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->recs = n;
		t->cap_recs = cap;
	}
	t->recs[t->nr_recs++] = *r;
	return 0;
}

static int parse_u64(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int valid_tenant(const char *s)
{
	if (s[0] != '/')
		return 0;
	for (; *s; s++)
		if (*s <= ' ' || *s == 0x7f)
			return 0;
	return 1;
}

/* One non-comment line, without its newline; a reason on failure. */
static const char *parse_line(struct sim_trace *t, char *line)
{
	char *field[4], *save = NULL, *tok;
	struct sim_rec r;
	int n = 0, ten;

	for (tok = strtok_r(line, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == 4)
			return "more than 4 fields (time_us,tenant,page,accesses)";
		field[n++] = tok;
	}
	if (n != 4)
		return "fewer than 4 fields (time_us,tenant,page,accesses)";
	if (parse_u64(field[0], &r.time_us))
		return "time_us: not an unsigned decimal integer";
	if (!valid_tenant(field[1]))
		return "tenant: not a path starting with '/' without blanks";
	if (parse_u64(field[2], &r.page))
		return "page: not an unsigned decimal integer";
	if (parse_u64(field[3], &r.accesses))
		return "accesses: not an unsigned decimal integer";
	ten = sim_trace_tenant(t, field[1]);
	if (ten < 0)
		return ten == -E2BIG ? "tenant: too many tenants" : "out of memory";
	r.tenant = ten;
	if (t->nr_recs && r.time_us < t->recs[t->nr_recs - 1].time_us)
		return "time_us: earlier than the previous record";
	if (sim_trace_add(t, &r))
		return "out of memory";
	return NULL;
}

static int read_text(gzFile f, const char *path, struct sim_trace *t,
		     char *err)
{
	char line[SIM_TRACE_LINE];
	unsigned long lineno = 0;
	const char *why;
	size_t len;

	while (gzgets(f, line, sizeof(line))) {
		lineno++;
		len = strlen(line);
		if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
			snprintf(err, SIM_ERR_LEN, "%s:%lu: line longer than %d bytes",
				 path, lineno, SIM_TRACE_LINE - 2);
			return -EINVAL;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len && line[0] == '#') {
			unsigned long long v;

			if (sscanf(line, "# page_bytes: %llu", &v) == 1)
				t->page_bytes = v;
			continue;
		}
		if (!len)
			continue;
		why = parse_line(t, line);
		if (why) {
			snprintf(err, SIM_ERR_LEN, "%s:%lu: %s", path, lineno, why);
			return -EINVAL;
		}
	}
	return 0;
}

int sim_trace_read(const char *path, struct sim_trace *t, char *err)
{
	char magic[sizeof(SIM_TRACE_MAGIC) - 1];
	int r, n;
	gzFile f;

	err[0] = '\0';
	f = gzopen(path, "rb");
	if (!f) {
		r = errno ? -errno : -ENOMEM;
		snprintf(err, SIM_ERR_LEN, "%s: %s", path, strerror(-r));
		return r;
	}
	n = gzread(f, magic, sizeof(magic));
	if (n == (int)sizeof(magic) && !memcmp(magic, SIM_TRACE_MAGIC, n)) {
		r = sim_trace_read_bin(f, path, t, err);
	} else {
		gzrewind(f);
		r = read_text(f, path, t, err);
	}
	gzclose(f);
	return r;
}

int sim_trace_write_text(const char *path, const struct sim_trace *t)
{
	FILE *f = fopen(path, "we");
	int r = 0;

	if (!f)
		return -errno;
	fprintf(f, "# time_us,tenant,page,accesses\n");
	if (t->page_bytes)
		fprintf(f, "# page_bytes: %llu\n", (unsigned long long)t->page_bytes);
	for (size_t i = 0; i < t->nr_recs; i++) {
		const struct sim_rec *x = &t->recs[i];

		fprintf(f, "%llu,%s,%llu,%llu\n", (unsigned long long)x->time_us,
			t->tenants[x->tenant], (unsigned long long)x->page,
			(unsigned long long)x->accesses);
	}
	if (ferror(f))
		r = -EIO;
	if (fclose(f) && !r)
		r = -errno;
	return r;
}
