// SPDX-License-Identifier: GPL-2.0-only
/*
 * move_pages_bench: throughput of one move_pages(2) call over N folios.
 *
 * The method is the one behind the public RFC figures (shared/KERNEL.md):
 * a buffer from aligned_alloc(2 MB) with MADV_HUGEPAGE (2 MB folios) or
 * MADV_NOHUGEPAGE (4 KB folios), first placed on the source node, then one
 * move_pages() call with one address per folio to the target node, timed
 * with CLOCK_MONOTONIC; throughput = bytes / time (GB/s, 1e9 bytes).  The
 * folios go back to the source node between repetitions (that call is timed
 * too and reported as "back_gbps", but it is not the figure).  After every
 * move, outside the timed region, the program checks that every folio is on
 * the node it was sent to, that THPs are still THPs (and 4 KB folios are
 * not), and that every byte still holds the pattern written at the start.
 *
 * One buffer holds the largest count of the sweep; a cell with N folios
 * moves the first N.  Before the first cell, --warmup untimed rounds
 * (default 1) move the whole buffer there and back: in a fresh guest the
 * target node's RAM is not yet backed by the host (QEMU allocates on first
 * touch), and the first moves onto it would time the host's page faults;
 * under TCG the round also translates the migration path's code once.  Output: one JSON line per cell on stdout, e.g.
 *
 *   {"type": "move", "folio_kb": 2048, "folios": 4, "bytes": 8388608,
 *    "ns": [...], "gbps": [...], "back_gbps": [...], "vmstat": {...}}
 *
 * "vmstat" is the /proc/vmstat delta over the cell's timed calls, so a
 * reader can see which migration path ran (pgmigrate_copy_* exist only on
 * the patched kernel).  Any failed check prints a reason on stderr and exits
 * 1: a number is only printed for a move that was verified.
 */
#include "benchlib.h"

#include <errno.h>
#include <getopt.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CELLS 32
#define MAX_REPS 1000
#define SEED 0x7469657264ULL /* "tierd" */

struct opts {
	unsigned long folio_bytes;
	long folios[MAX_CELLS];
	size_t n_cells;
	int reps;
	int warmup;
	int src;
	int dst;
	int flags;
	bool check_thp;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: move_pages_bench --folio-kb 4|2048 --folios LIST [--reps N]\n"
		"                        [--warmup N] [--src NODE] [--dst NODE]\n"
		"                        [--flags N] [--no-thp-check]\n"
		"  LIST: 1,2,4 or FROM-TO (powers of two, e.g. 1-256)\n");
}

static int move_all(void **addrs, int *nodes, int *status, size_t n, int node,
		    int flags, uint64_t *ret_ns)
{
	uint64_t t0, t1;
	long ret;
	size_t i;

	for (i = 0; i < n; i++)
		nodes[i] = node;
	t0 = bench_now_ns();
	ret = move_pages(0, n, addrs, nodes, status, flags);
	t1 = bench_now_ns();
	if (ret < 0) {
		ret = -errno;
		fprintf(stderr, "move_pages_bench: move_pages(%zu folios -> node %d): %s\n",
			n, node, strerror(errno));
		return (int)ret;
	}
	if (ret > 0) {
		fprintf(stderr, "move_pages_bench: move_pages(%zu folios -> node %d): %ld not migrated\n",
			n, node, ret);
		return -EAGAIN;
	}
	*ret_ns = t1 - t0;
	return 0;
}

/* Everything a move must leave true, checked outside the timed region. */
static int verify(const struct opts *o, void *buf, void **addrs, size_t n,
		  int node, const char *what)
{
	size_t bad = 0;
	int st = 0, ret;

	ret = bench_check_node(addrs, n, node, &bad, &st);
	if (ret == -EFAULT) {
		fprintf(stderr, "move_pages_bench: %s: folio %zu is on %d, not node %d\n",
			what, bad, st, node);
		return ret;
	}
	if (ret < 0) {
		fprintf(stderr, "move_pages_bench: %s: node query: %s\n", what,
			strerror(-ret));
		return ret;
	}
	if (o->check_thp) {
		bool thp = o->folio_bytes == BENCH_THP_BYTES;

		ret = bench_check_thp(addrs, n, thp, &bad);
		if (ret == -EFAULT) {
			fprintf(stderr, "move_pages_bench: %s: folio %zu is %s a THP\n",
				what, bad, thp ? "not" : "unexpectedly");
			return ret;
		}
		if (ret < 0) {
			fprintf(stderr, "move_pages_bench: %s: THP check: %s%s\n",
				what, strerror(-ret),
				ret == -EPERM ? " (needs root; or --no-thp-check)" : "");
			return ret;
		}
	}
	ret = bench_check(buf, n * o->folio_bytes, SEED, &bad);
	if (ret < 0) {
		fprintf(stderr, "move_pages_bench: %s: wrong byte at offset %zu of %zu\n",
			what, bad, n * o->folio_bytes);
		return ret;
	}
	return 0;
}

static void print_array(const char *key, const double *v, int n)
{
	int i;

	printf(", \"%s\": [", key);
	for (i = 0; i < n; i++)
		printf("%s%.6f", i ? ", " : "", v[i]);
	printf("]");
}

static int run_cell(const struct opts *o, void *buf, void **addrs, int *nodes,
		    int *status, size_t n, int warmup, bool print)
{
	static double gbps[MAX_REPS], back[MAX_REPS], ns[MAX_REPS];
	struct bench_vmstat v0, v1;
	size_t bytes = n * o->folio_bytes;
	char what[96];
	int r, ret;

	bench_vmstat_read(&v0);
	for (r = -warmup; r < (print ? o->reps : 0); r++) {
		uint64_t t_fwd, t_back;

		ret = move_all(addrs, nodes, status, n, o->dst, o->flags, &t_fwd);
		if (ret < 0)
			return ret;
		snprintf(what, sizeof(what), "%zu x %lu KB, rep %d, after move to node %d",
			 n, o->folio_bytes >> 10, r, o->dst);
		ret = verify(o, buf, addrs, n, o->dst, what);
		if (ret < 0)
			return ret;
		ret = move_all(addrs, nodes, status, n, o->src, o->flags, &t_back);
		if (ret < 0)
			return ret;
		snprintf(what, sizeof(what), "%zu x %lu KB, rep %d, after move back to node %d",
			 n, o->folio_bytes >> 10, r, o->src);
		ret = verify(o, buf, addrs, n, o->src, what);
		if (ret < 0)
			return ret;
		if (r < 0) {
			/* The warm-up's moves are not in the vmstat delta either. */
			bench_vmstat_read(&v0);
			continue;
		}
		ns[r] = (double)t_fwd;
		gbps[r] = (double)bytes / (double)t_fwd;
		back[r] = (double)bytes / (double)t_back;
	}
	bench_vmstat_read(&v1);
	if (!print)
		return 0;

	printf("{\"type\": \"move\", \"folio_kb\": %lu, \"folios\": %zu, \"bytes\": %zu",
	       o->folio_bytes >> 10, n, bytes);
	print_array("ns", ns, o->reps);
	print_array("gbps", gbps, o->reps);
	print_array("back_gbps", back, o->reps);
	printf(", \"vmstat\": ");
	bench_vmstat_json(stdout, &v0, &v1);
	printf("}\n");
	fflush(stdout);
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "folio-kb", required_argument, NULL, 'k' },
		{ "folios", required_argument, NULL, 'n' },
		{ "reps", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "src", required_argument, NULL, 's' },
		{ "dst", required_argument, NULL, 'd' },
		{ "flags", required_argument, NULL, 'f' },
		{ "no-thp-check", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	*o = (struct opts){ .reps = 5, .warmup = 1, .src = 0, .dst = 1,
			    .flags = MPOL_MF_MOVE, .check_thp = true };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'k':
			o->folio_bytes = strtoul(optarg, NULL, 10) << 10;
			break;
		case 'n':
			if (bench_parse_list(optarg, o->folios, MAX_CELLS, &o->n_cells) < 0) {
				fprintf(stderr, "move_pages_bench: bad --folios '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'r':
			o->reps = atoi(optarg);
			break;
		case 'w':
			o->warmup = atoi(optarg);
			break;
		case 's':
			o->src = atoi(optarg);
			break;
		case 'd':
			o->dst = atoi(optarg);
			break;
		case 'f':
			o->flags = (int)strtol(optarg, NULL, 0);
			break;
		case 'T':
			o->check_thp = false;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc || !o->n_cells ||
	    (o->folio_bytes != BENCH_BASE_BYTES && o->folio_bytes != BENCH_THP_BYTES) ||
	    o->reps < 1 || o->reps > MAX_REPS || o->warmup < 0 || o->src == o->dst) {
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int *nodes, *status;
	size_t i, max_n = 0;
	void **addrs, *buf;
	struct opts o;
	int ret;

	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	for (i = 0; i < o.n_cells; i++)
		if ((size_t)o.folios[i] > max_n)
			max_n = o.folios[i];

	ret = bench_alloc_on_node(max_n * o.folio_bytes, o.src,
				  o.folio_bytes == BENCH_THP_BYTES, SEED, &buf);
	if (ret < 0) {
		fprintf(stderr, "move_pages_bench: %zu x %lu KB on node %d: %s\n",
			max_n, o.folio_bytes >> 10, o.src, strerror(-ret));
		return 1;
	}
	addrs = calloc(max_n, sizeof(*addrs));
	nodes = calloc(max_n, sizeof(*nodes));
	status = calloc(max_n, sizeof(*status));
	if (!addrs || !nodes || !status) {
		fprintf(stderr, "move_pages_bench: out of memory\n");
		return 1;
	}
	for (i = 0; i < max_n; i++)
		addrs[i] = (char *)buf + i * o.folio_bytes;
	if (verify(&o, buf, addrs, max_n, o.src, "initial placement") < 0)
		return 1;

	if (o.warmup && run_cell(&o, buf, addrs, nodes, status, max_n,
				 o.warmup, false) < 0)
		return 1;
	for (i = 0; i < o.n_cells; i++)
		if (run_cell(&o, buf, addrs, nodes, status, o.folios[i], 0,
			     true) < 0)
			return 1;
	return 0;
}
