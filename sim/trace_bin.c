// SPDX-License-Identifier: GPL-2.0-only
/*
 * The binary trace form: the magic "TIERSIMT", a version byte, the tenant
 * table, the record count, then per record four LEB128 varints: the time
 * since the previous record (us), the tenant index, the page as a zigzag
 * delta from the previous record's page, the accesses.  A sequential scan
 * of one tenant costs 4 bytes a record against about 25 in text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "trace_bin.h"

#define BIN_MAX_TENANT_NAME 1024

static int get_varint(gzFile f, uint64_t *ret)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		int c = gzgetc(f);

		if (c < 0)
			return -ENODATA;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*ret = v;
			return 0;
		}
	}
	return -EINVAL;
}

static void put_varint(FILE *f, uint64_t v)
{
	while (v >= 0x80) {
		fputc((int)(v & 0x7f) | 0x80, f);
		v >>= 7;
	}
	fputc((int)v, f);
}

static int read_tenants(gzFile f, struct sim_trace *t)
{
	char name[BIN_MAX_TENANT_NAME + 1];
	uint64_t n, len;
	int r;

	if (get_varint(f, &n) || n > SIM_TRACE_MAX_TENANTS)
		return -EINVAL;
	for (uint64_t i = 0; i < n; i++) {
		if (get_varint(f, &len) || !len || len > BIN_MAX_TENANT_NAME)
			return -EINVAL;
		if (gzread(f, name, len) != (int)len)
			return -EINVAL;
		name[len] = '\0';
		if (name[0] != '/' || strlen(name) != len)
			return -EINVAL;
		r = sim_trace_tenant(t, name);
		if (r < 0)
			return r;
		if ((uint64_t)r != i)
			return -EINVAL;	/* the same name twice */
	}
	return 0;
}

int sim_trace_read_bin(gzFile f, const char *path, struct sim_trace *t,
		       char *err)
{
	uint64_t n, dt, ten, zz, acc, page = 0, time = 0;
	struct sim_rec rec;
	int ver = gzgetc(f), r;

	if (ver != SIM_TRACE_VERSION) {
		snprintf(err, SIM_ERR_LEN, "%s: binary trace version %d, expected %d",
			 path, ver, SIM_TRACE_VERSION);
		return -EINVAL;
	}
	r = read_tenants(f, t);
	if (r) {
		snprintf(err, SIM_ERR_LEN, "%s: bad tenant table", path);
		return r;
	}
	if (get_varint(f, &n))
		goto bad;
	for (uint64_t i = 0; i < n; i++) {
		if (get_varint(f, &dt) || get_varint(f, &ten) ||
		    get_varint(f, &zz) || get_varint(f, &acc) ||
		    ten >= t->nr_tenants) {
			snprintf(err, SIM_ERR_LEN, "%s: record %llu: truncated or bad",
				 path, (unsigned long long)i);
			return -EINVAL;
		}
		time += dt;
		page += (zz >> 1) ^ -(zz & 1);
		rec = (struct sim_rec){ .time_us = time, .page = page,
					.accesses = acc, .tenant = ten };
		r = sim_trace_add(t, &rec);
		if (r)
			return r;
	}
	if (gzgetc(f) >= 0)
		goto bad;
	return 0;
bad:
	snprintf(err, SIM_ERR_LEN, "%s: bad record count or trailing bytes", path);
	return -EINVAL;
}

int sim_trace_write_bin(const char *path, const struct sim_trace *t)
{
	uint64_t page = 0, time = 0;
	FILE *f = fopen(path, "we");
	int r = 0;

	if (!f)
		return -errno;
	fwrite(SIM_TRACE_MAGIC, 1, sizeof(SIM_TRACE_MAGIC) - 1, f);
	fputc(SIM_TRACE_VERSION, f);
	put_varint(f, t->nr_tenants);
	for (uint32_t i = 0; i < t->nr_tenants; i++) {
		size_t len = strlen(t->tenants[i]);

		put_varint(f, len);
		fwrite(t->tenants[i], 1, len, f);
	}
	put_varint(f, t->nr_recs);
	for (size_t i = 0; i < t->nr_recs; i++) {
		const struct sim_rec *x = &t->recs[i];
		int64_t d = (int64_t)(x->page - page);

		put_varint(f, x->time_us - time);
		put_varint(f, x->tenant);
		put_varint(f, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
		put_varint(f, x->accesses);
		time = x->time_us;
		page = x->page;
	}
	if (ferror(f))
		r = -EIO;
	if (fclose(f) && !r)
		r = -errno;
	return r;
}
