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
 * Configurations (--config MODE/THREADS/PUSH_PULL[:KNOB=V,...], repeatable)
 * are interleaved: for each cell, each repetition runs every configuration
 * once, writing its vm.KNOBs to /proc/sys first.  On a shared host the
 * load drifts; interleaving spreads that drift over all configurations
 * instead of charging it to whichever ran last.  Knobs are written only
 * when TIERD_LAB=1 (the lab guest's init sets it): never on the host.
 *
 * One buffer holds the largest count of the sweep; a cell with N folios
 * moves the first N.  Before the first cell, --warmup untimed rounds
 * (default 1) move the whole buffer there and back: in a fresh guest the
 * target node's RAM is not yet backed by the host (QEMU allocates on first
 * touch), and the first moves onto it would time the host's page faults;
 * under TCG the round also translates the migration path's code once.
 * Output: one JSON line per configuration and cell on stdout, e.g.
 *
 *   {"type": "move", "mode": "mt", "threads": 2, "push_pull": "push",
 *    "folio_kb": 2048, "folios": 4, "bytes": 8388608,
 *    "ns": [...], "gbps": [...], "back_gbps": [...], "vmstat": {...}}
 *
 * "vmstat" is the /proc/vmstat delta over that configuration's timed round
 * trips in the cell (both directions), so a reader can see which migration
 * path ran (pgmigrate_copy_* exist only on the patched kernel).  Any failed check prints a reason on stderr and exits
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
#define MAX_CONFIGS 16
#define MAX_KNOBS 8
#define SEED 0x7469657264ULL /* "tierd" */

struct knob {
	char name[48];
	long value;
};

struct config {
	char mode[16];
	int threads;
	char push_pull[8];
	struct knob knobs[MAX_KNOBS];
	int n_knobs;
	double gbps[MAX_REPS], back[MAX_REPS], ns[MAX_REPS];
	struct bench_vmstat vm;	/* summed deltas over this config's moves */
};

struct opts {
	struct config configs[MAX_CONFIGS];
	int n_configs;
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
		"                        [--config MODE/THREADS/PP[:KNOB=V,...]]...\n"
		"  LIST: 1,2,4 or FROM-TO (powers of two, e.g. 1-256)\n"
		"  KNOB: a file in /proc/sys/vm (lab guest only), e.g.\n"
		"        --config mt/2/push:migrate_copy_mt=1,migrate_copy_threads=2\n");
}

static int set_knobs(const struct config *c)
{
	const char *lab = getenv("TIERD_LAB");
	char path[96];
	int i;

	for (i = 0; i < c->n_knobs; i++) {
		FILE *f;
		long got = -1;

		if (!lab || strcmp(lab, "1")) {
			fprintf(stderr, "move_pages_bench: refusing to write vm.%s outside the lab guest (TIERD_LAB!=1)\n",
				c->knobs[i].name);
			return -EPERM;
		}
		snprintf(path, sizeof(path), "/proc/sys/vm/%s", c->knobs[i].name);
		f = fopen(path, "w");
		if (!f || fprintf(f, "%ld\n", c->knobs[i].value) < 0 || fclose(f)) {
			fprintf(stderr, "move_pages_bench: write %s: %s\n", path, strerror(errno));
			return -errno;
		}
		f = fopen(path, "r");
		if (!f || fscanf(f, "%ld", &got) != 1 || got != c->knobs[i].value) {
			fprintf(stderr, "move_pages_bench: %s reads %ld, not %ld\n", path,
				got, c->knobs[i].value);
			if (f)
				fclose(f);
			return -EIO;
		}
		fclose(f);
	}
	return 0;
}

/* MODE/THREADS/PP[:KNOB=V,KNOB=V] */
static int parse_config(const char *s, struct config *c)
{
	const char *colon = strchr(s, ':');
	char *end;

	memset(c, 0, sizeof(*c));
	if (sscanf(s, "%15[a-z]/%d/%7[a-z-]", c->mode, &c->threads, c->push_pull) != 3 ||
	    c->threads < 1)
		return -EINVAL;
	if (!colon || !colon[1])
		return 0;
	s = colon + 1;
	for (;;) {
		const char *eq = strchr(s, '=');
		size_t len;

		if (!eq || c->n_knobs == MAX_KNOBS)
			return -EINVAL;
		len = (size_t)(eq - s);
		if (!len || len >= sizeof(c->knobs[0].name) || memchr(s, '/', len))
			return -EINVAL;
		memcpy(c->knobs[c->n_knobs].name, s, len);
		c->knobs[c->n_knobs].value = strtol(eq + 1, &end, 10);
		if (end == eq + 1)
			return -EINVAL;
		c->n_knobs++;
		if (!*end)
			return 0;
		if (*end != ',')
			return -EINVAL;
		s = end + 1;
	}
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

/* There and back once, each move verified; returns both times. */
static int round_trip(const struct opts *o, void *buf, void **addrs, int *nodes,
		      int *status, size_t n, const char *label, int r,
		      uint64_t *ret_fwd, uint64_t *ret_back)
{
	char what[160];
	int ret;

	ret = move_all(addrs, nodes, status, n, o->dst, o->flags, ret_fwd);
	if (ret < 0)
		return ret;
	snprintf(what, sizeof(what), "%s, %zu x %lu KB, rep %d, after move to node %d",
		 label, n, o->folio_bytes >> 10, r, o->dst);
	ret = verify(o, buf, addrs, n, o->dst, what);
	if (ret < 0)
		return ret;
	ret = move_all(addrs, nodes, status, n, o->src, o->flags, ret_back);
	if (ret < 0)
		return ret;
	snprintf(what, sizeof(what), "%s, %zu x %lu KB, rep %d, after move back to node %d",
		 label, n, o->folio_bytes >> 10, r, o->src);
	return verify(o, buf, addrs, n, o->src, what);
}

/*
 * One cell: @warmup untimed rounds, then o->reps timed rounds; each round
 * runs the first @n_configs configurations in turn.  Prints one line per
 * configuration when @print.
 */
static int run_cell(struct opts *o, void *buf, void **addrs, int *nodes,
		    int *status, size_t n, int warmup, int n_configs, bool print)
{
	size_t bytes = n * o->folio_bytes;
	struct bench_vmstat zero = { 0 };
	char label[64];
	int r, ci, ret;

	for (ci = 0; ci < n_configs; ci++)
		o->configs[ci].vm = zero;
	for (r = -warmup; r < (print ? o->reps : 0); r++) {
		for (ci = 0; ci < n_configs; ci++) {
			struct config *c = &o->configs[ci];
			struct bench_vmstat v0, v1;
			uint64_t t_fwd, t_back;

			snprintf(label, sizeof(label), "%s/%d/%s", c->mode,
				 c->threads, c->push_pull);
			ret = set_knobs(c);
			if (ret < 0)
				return ret;
			bench_vmstat_read(&v0);
			ret = round_trip(o, buf, addrs, nodes, status, n, label,
					 r, &t_fwd, &t_back);
			if (ret < 0)
				return ret;
			bench_vmstat_read(&v1);
			if (r < 0)
				continue;
			bench_vmstat_add(&c->vm, &v0, &v1);
			c->ns[r] = (double)t_fwd;
			c->gbps[r] = (double)bytes / (double)t_fwd;
			c->back[r] = (double)bytes / (double)t_back;
		}
	}
	if (!print)
		return 0;

	for (ci = 0; ci < n_configs; ci++) {
		struct config *c = &o->configs[ci];

		printf("{\"type\": \"move\", \"mode\": \"%s\", \"threads\": %d, "
		       "\"push_pull\": \"%s\", \"folio_kb\": %lu, \"folios\": %zu, "
		       "\"bytes\": %zu",
		       c->mode, c->threads, c->push_pull, o->folio_bytes >> 10, n,
		       bytes);
		print_array("ns", c->ns, o->reps);
		print_array("gbps", c->gbps, o->reps);
		print_array("back_gbps", c->back, o->reps);
		printf(", \"vmstat\": ");
		bench_vmstat_json(stdout, &zero, &c->vm);
		printf("}\n");
	}
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
		{ "config", required_argument, NULL, 'c' },
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
		case 'c':
			if (o->n_configs == MAX_CONFIGS ||
			    parse_config(optarg, &o->configs[o->n_configs]) < 0) {
				fprintf(stderr, "move_pages_bench: bad --config '%s'\n", optarg);
				return -EINVAL;
			}
			o->n_configs++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!o->n_configs) {
		parse_config("serial/1/-", &o->configs[0]);
		o->n_configs = 1;
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
	static struct opts o;
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

	/*
	 * Warm-up: the whole buffer with the first configuration (backs the
	 * target node's RAM), then the first cell once per configuration
	 * (each copy path's code, cheaply).
	 */
	if (o.warmup && run_cell(&o, buf, addrs, nodes, status, max_n,
				 o.warmup, 1, false) < 0)
		return 1;
	for (i = 0; i < o.n_cells; i++)
		if (run_cell(&o, buf, addrs, nodes, status, o.folios[i],
			     i || !o.warmup ? 0 : 1, o.n_configs, true) < 0)
			return 1;
	return 0;
}
