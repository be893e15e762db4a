// SPDX-License-Identifier: GPL-2.0-only
/* Trace I/O: text, gzip, binary round trips and strict errors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "machine.h"
#include "test.h"
#include "trace.h"

static char dir[] = "/tmp/sim-trace-XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

static const char text[] =
	"# time_us,tenant,page,accesses\n"
	"0,/a,5,3\n"
	"\n"
	"1000,/b/c,100000,1\n"
	"1000,/a,2,7\n"
	"2500,/a,5,18446744073709551615\n";

static void check_recs(const struct sim_trace *t)
{
	CHECK_EQ_U64(t->nr_recs, 4);
	CHECK_EQ_U64(t->nr_tenants, 2);
	if (t->nr_recs != 4 || t->nr_tenants != 2)
		return;
	CHECK_EQ_STR(t->tenants[1], "/b/c");
	CHECK_EQ_U64(t->recs[1].page, 100000);
	CHECK_EQ_U64(t->recs[1].tenant, 1);
	CHECK_EQ_U64(t->recs[2].page, 2);
	CHECK_EQ_U64(t->recs[3].time_us, 2500);
	CHECK_EQ_U64(t->recs[3].accesses, UINT64_MAX);
}

static void test_text_and_binary(void)
{
	struct sim_trace t = { 0 }, b = { 0 };
	char p[256], pb[256], err[SIM_ERR_LEN];

	snprintf(p, sizeof(p), "%s/t.csv", dir);
	snprintf(pb, sizeof(pb), "%s/t.bin", dir);
	write_file(p, text);
	CHECK_EQ_INT(sim_trace_read(p, &t, err), 0);
	check_recs(&t);
	CHECK_EQ_INT(sim_trace_write_bin(pb, &t), 0);
	CHECK_EQ_INT(sim_trace_read(pb, &b, err), 0);
	check_recs(&b);
	sim_trace_free(&b);
	CHECK_EQ_INT(sim_trace_write_text(p, &t), 0);
	CHECK_EQ_INT(sim_trace_read(p, &b, err), 0);
	check_recs(&b);
	sim_trace_free(&b);
	sim_trace_free(&t);
}

static void test_gzip(void)
{
	struct sim_trace t = { 0 };
	char p[256], err[SIM_ERR_LEN];
	gzFile g;

	snprintf(p, sizeof(p), "%s/t.csv.gz", dir);
	g = gzopen(p, "wb");
	gzputs(g, text);
	gzclose(g);
	CHECK_EQ_INT(sim_trace_read(p, &t, err), 0);
	check_recs(&t);
	sim_trace_free(&t);
}

static void expect_err(const char *body, const char *want)
{
	struct sim_trace t = { 0 };
	char p[256], e[SIM_ERR_LEN], full[512];

	snprintf(p, sizeof(p), "%s/bad.csv", dir);
	write_file(p, body);
	CHECK_EQ_INT(sim_trace_read(p, &t, e), -EINVAL);
	snprintf(full, sizeof(full), "%s:%s", p, want);
	CHECK_EQ_STR(e, full);
	sim_trace_free(&t);
}

static void test_errors(void)
{
	expect_err("0,/a,1,1\n0,/a,1\n",
		   "2: fewer than 4 fields (time_us,tenant,page,accesses)");
	expect_err("# x\n0,/a,1,1,9\n",
		   "2: more than 4 fields (time_us,tenant,page,accesses)");
	expect_err("5,/a,1,1\n4,/a,1,1\n", "2: time_us: earlier than the previous record");
	expect_err("0,a,1,1\n", "1: tenant: not a path starting with '/' without blanks");
	expect_err("0,/a,-1,1\n", "1: page: not an unsigned decimal integer");
	expect_err("0,/a,1,1x\n", "1: accesses: not an unsigned decimal integer");
	expect_err("0,/a,1,18446744073709551616\n",
		   "1: accesses: not an unsigned decimal integer");
}

static void test_binary_truncated(void)
{
	struct sim_trace t = { 0 };
	char p[256], err[SIM_ERR_LEN];
	long size;
	FILE *f;

	snprintf(p, sizeof(p), "%s/t.bin", dir);
	f = fopen(p, "r+");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	CHECK_EQ_INT(truncate(p, size - 1), 0);
	CHECK_EQ_INT(sim_trace_read(p, &t, err), -EINVAL);
	CHECK(strstr(err, "record 3: truncated or bad") != NULL);
	sim_trace_free(&t);
}

int main(void)
{
	char cmd[256];

	if (!mkdtemp(dir))
		return 1;
	RUN(test_text_and_binary);
	RUN(test_gzip);
	RUN(test_errors);
	RUN(test_binary_truncated);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return TEST_EXIT();
}
