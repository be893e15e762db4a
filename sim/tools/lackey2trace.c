// SPDX-License-Identifier: GPL-2.0-only
/*
 * lackey2trace: valgrind's `--tool=lackey --trace-mem=yes` output on stdin,
 * a tierd-sim text trace (sim/README.md, "Traces") on stdout.
 *
 *   lackey2trace --tenant /NAME [--ips N] [--interval-us N] [--cache BYTES]
 *
 * The model:
 *
 * - Clock.  Lackey has none; it prints one "I  addr,size" line per guest
 *   instruction executed.  Time is that count at --ips instructions a
 *   second (default 1e9: a 3 GHz core at an IPC of 1/3, usual for
 *   memory-bound code; an assumption, not a measurement).  With the
 *   defaults, interval k covers instructions [k x 1e6, (k+1) x 1e6) and
 *   its records carry time_us = (k+1) x 1000, the interval's end.
 *
 * - Accesses.  " L", " S" and " M" lines (load, store, load+store of one
 *   instruction) are one access each, on every 4 KiB page the bytes
 *   [addr, addr+size) touch.  Instruction fetches are not accesses: lackey
 *   prints one per instruction executed, not per miss, so they would
 *   swamp the data pages with a few text pages that a real core serves
 *   from its i-cache, and text is file-backed memory shared with every
 *   process mapping it, not the anonymous memory a tiering policy moves.
 *
 * - Caches.  The machine models bill a load that misses the caches.  With
 *   --cache BYTES, a 16-way LRU cache of 64-byte lines of that size sits in
 *   front of memory (write-allocate: a store miss fetches its line, as an
 *   RFO does), and only its misses count.  Without it, every data access
 *   counts.
 *
 * - Pages.  An x86-64 process's pages lie far apart (heap low, mmap and
 *   stack near 2^47); tierd-sim sizes a tenant by its highest page.  So
 *   the untouched 2 MiB-aligned chunks of the address space are left out:
 *   the touched ones are numbered in address order, each keeping its 512
 *   pages in place.  Page p of the trace is page (p mod 512) of the
 *   (p / 512)th touched chunk, so a 2 MiB range of tierd-sim is one
 *   2 MiB-aligned range of the program.
 *
 * Output: per interval, one record per page accessed in it, pages in
 * increasing order.  The chunk numbering is known only at the end of the
 * input, so the records are kept in memory until then: 16 bytes a record,
 * and the input (gigabytes) streams through.
 *
 * Exit status: 0; 1 on a read or write error or out of memory; 2 on a bad
 * option.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE_SHIFT 12
#define CHUNK_PAGES_SHIFT 9		/* 2 MiB chunks of 4 KiB pages */
#define LINE_SHIFT 6			/* 64-byte cache lines */
#define CACHE_WAYS 16

/* An open-addressing table of u64 keys with a u64 value each. */
struct map {
	uint64_t *keys, *vals;	/* key + 1 stored, 0 is empty */
	size_t cap, n;
};

struct rec {
	uint64_t vpn;
	uint32_t interval;
	uint32_t accesses;
};

struct cache {
	uint64_t *tags;		/* [sets x ways], line + 1, 0 is empty */
	uint32_t *age;		/* [sets x ways], last use */
	uint64_t sets;
	uint32_t clock;
};

struct state {
	struct map page;	/* vpn -> accesses in the current interval */
	struct map chunk;	/* touched chunk -> dense index (at the end) */
	struct rec *recs;
	size_t nr_recs, cap_recs;
	struct cache cache;
	uint64_t instr, data, counted;
};

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static int map_grow(struct map *m)
{
	struct map n = { .cap = m->cap ? m->cap * 2 : 4096 };

	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		for (j = hash64(m->keys[i]) & (n.cap - 1); n.keys[j]; j = (j + 1) & (n.cap - 1))
			;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.n++;
	}
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

/* The value slot of @key, inserted as 0 if new; NULL when out of memory. */
static uint64_t *map_slot(struct map *m, uint64_t key)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return NULL;
	for (j = hash64(key + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key + 1)
			return &m->vals[j];
	m->keys[j] = key + 1;
	m->vals[j] = 0;
	m->n++;
	return &m->vals[j];
}

/* The value of @key, which must be in the table. */
static uint64_t map_get(const struct map *m, uint64_t key)
{
	size_t j;

	for (j = hash64(key + 1) & (m->cap - 1); m->keys[j] != key + 1; j = (j + 1) & (m->cap - 1))
		;
	return m->vals[j];
}

/* Set the value of @key, which must be in the table. */
static void map_set(struct map *m, uint64_t key, uint64_t val)
{
	size_t j;

	for (j = hash64(key + 1) & (m->cap - 1); m->keys[j] != key + 1; j = (j + 1) & (m->cap - 1))
		;
	m->vals[j] = val;
}

static void map_free(struct map *m)
{
	free(m->keys);
	free(m->vals);
}

/* True when @line misses; it is then filled, evicting the LRU way. */
static bool cache_miss(struct cache *c, uint64_t line)
{
	uint64_t *tags = c->tags + (hash64(line) % c->sets) * CACHE_WAYS;
	uint32_t *age = c->age + (tags - c->tags);
	int victim = 0;

	c->clock++;
	for (int w = 0; w < CACHE_WAYS; w++) {
		if (tags[w] == line + 1) {
			age[w] = c->clock;
			return false;
		}
		if (!tags[w] || (tags[victim] && age[w] < age[victim]))
			victim = w;
	}
	tags[victim] = line + 1;
	age[victim] = c->clock;
	return true;
}

static int count_page(struct state *s, uint64_t vpn)
{
	uint64_t *v = map_slot(&s->page, vpn);

	if (!v)
		return -ENOMEM;
	(*v)++;
	s->counted++;
	return 0;
}

static int data_access(struct state *s, uint64_t addr, uint64_t size)
{
	uint64_t last = addr + (size ? size - 1 : 0);
	int r;

	s->data++;
	if (!s->cache.sets) {
		for (uint64_t p = addr >> PAGE_SHIFT; p <= last >> PAGE_SHIFT; p++) {
			r = count_page(s, p);
			if (r)
				return r;
		}
		return 0;
	}
	for (uint64_t l = addr >> LINE_SHIFT; l <= last >> LINE_SHIFT; l++) {
		if (!cache_miss(&s->cache, l))
			continue;
		r = count_page(s, l >> (PAGE_SHIFT - LINE_SHIFT));
		if (r)
			return r;
	}
	return 0;
}

/* Move the current interval's pages into the record list. */
static int close_interval(struct state *s, uint32_t interval)
{
	for (size_t i = 0; i < s->page.cap; i++) {
		uint64_t *c;

		if (!s->page.keys[i])
			continue;
		if (s->nr_recs == s->cap_recs) {
			size_t cap = s->cap_recs ? s->cap_recs * 2 : 65536;
			struct rec *n = realloc(s->recs, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			s->recs = n;
			s->cap_recs = cap;
		}
		c = map_slot(&s->chunk, (s->page.keys[i] - 1) >> CHUNK_PAGES_SHIFT);
		if (!c)
			return -ENOMEM;
		s->recs[s->nr_recs++] = (struct rec){
			.vpn = s->page.keys[i] - 1, .interval = interval,
			.accesses = s->page.vals[i] > UINT32_MAX ? UINT32_MAX : s->page.vals[i] };
		s->page.keys[i] = 0;
	}
	s->page.n = 0;
	return 0;
}

/*
 * One lackey line: 1 for an instruction, 0 for a data access or a line
 * that is neither (valgrind's "==PID==" messages), a negative errno.
 */
static int parse_line(struct state *s, const char *l)
{
	uint64_t addr = 0, size = 0;
	const char *p;

	if (l[0] == 'I' && l[1] == ' ')
		return 1;
	if (l[0] != ' ' || (l[1] != 'L' && l[1] != 'S' && l[1] != 'M') || l[2] != ' ')
		return 0;
	for (p = l + 3; *p && *p != ','; p++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' :
			*p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;

		if (d < 0)
			return 0;
		addr = addr << 4 | d;
	}
	if (*p != ',' || p == l + 3)
		return 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		size = size * 10 + (*p - '0');
	return data_access(s, addr, size);
}

/*
 * Lines of stdin, read a megabyte at a time: lackey writes gigabytes, and
 * stdio's locked getline() costs as much as parsing them.
 */
struct input {
	int fd;
	size_t start, end;
	char buf[1 << 20];
};

/* 1 with *ret_line the next line (NUL for its newline), 0 at the end, or a
 * negative errno.  A line longer than the buffer is cut into pieces. */
static int next_line(struct input *in, char **ret_line)
{
	char *nl;
	ssize_t n;

	for (;;) {
		nl = memchr(in->buf + in->start, '\n', in->end - in->start);
		if (nl) {
			*nl = '\0';
			*ret_line = in->buf + in->start;
			in->start = nl + 1 - in->buf;
			return 1;
		}
		if (in->start == 0 && in->end == sizeof(in->buf) - 1) {
			in->buf[in->end] = '\0';
			*ret_line = in->buf;
			in->start = in->end = 0;
			return 1;
		}
		memmove(in->buf, in->buf + in->start, in->end - in->start);
		in->end -= in->start;
		in->start = 0;
		n = read(in->fd, in->buf + in->end, sizeof(in->buf) - 1 - in->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			if (!in->end)
				return 0;
			in->buf[in->end] = '\0';
			*ret_line = in->buf;
			in->end = 0;
			return 1;
		}
		in->end += n;
	}
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->interval != y->interval)
		return x->interval < y->interval ? -1 : 1;
	return x->vpn < y->vpn ? -1 : x->vpn > y->vpn;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Number the touched chunks in address order and write the trace. */
static int write_trace(struct state *s, const char *tenant, uint64_t interval_us,
		       uint64_t ips, uint64_t cache_bytes)
{
	uint64_t *chunks = malloc((s->chunk.n + 1) * sizeof(*chunks));
	size_t n = 0;

	if (!chunks)
		return -ENOMEM;
	for (size_t i = 0; i < s->chunk.cap; i++)
		if (s->chunk.keys[i])
			chunks[n++] = s->chunk.keys[i] - 1;
	qsort(chunks, n, sizeof(*chunks), cmp_u64);
	for (size_t i = 0; i < n; i++)
		map_set(&s->chunk, chunks[i], i);
	free(chunks);
	qsort(s->recs, s->nr_recs, sizeof(*s->recs), cmp_rec);

	printf("# lackey2trace: valgrind --tool=lackey --trace-mem=yes, reduced\n"
	       "# time: instructions at %" PRIu64 " a second (an assumption); "
	       "interval %" PRIu64 " us\n"
	       "# accesses: data loads and stores, %s; instruction fetches not counted\n"
	       "# pages: 4 KiB, untouched 2 MiB chunks left out\n"
	       "# instructions %" PRIu64 ", data accesses %" PRIu64 ", counted %" PRIu64
	       ", chunks %zu, records %zu\n",
	       ips, interval_us,
	       cache_bytes ? "misses of a 16-way LRU cache of 64 B lines" : "every one",
	       s->instr, s->data, s->counted, n, s->nr_recs);
	if (cache_bytes)
		printf("# cache: %" PRIu64 " bytes\n", cache_bytes);
	for (size_t i = 0; i < s->nr_recs; i++) {
		const struct rec *r = &s->recs[i];
		uint64_t idx = map_get(&s->chunk, r->vpn >> CHUNK_PAGES_SHIFT);

		printf("%" PRIu64 ",%s,%" PRIu64 ",%" PRIu32 "\n",
		       ((uint64_t)r->interval + 1) * interval_us, tenant,
		       idx << CHUNK_PAGES_SHIFT | (r->vpn & ((1u << CHUNK_PAGES_SHIFT) - 1)),
		       r->accesses);
	}
	return fflush(stdout) || ferror(stdout) ? -EIO : 0;
}

static int parse_u64(const char *arg, uint64_t *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	switch (*end) {
	case 'K': v *= 1 << 10; end++; break;
	case 'M': v *= 1 << 20; end++; break;
	case 'G': v *= 1 << 30; end++; break;
	default: break;
	}
	if (errno || end == arg || *end || !(v >= 1 && v < 1e18))
		return -EINVAL;
	*ret = v;
	return 0;
}

static void usage(FILE *f)
{
	fputs("Usage: lackey2trace --tenant /NAME [--ips N] [--interval-us N] [--cache BYTES]\n"
	      "  valgrind --tool=lackey --trace-mem=yes output on stdin, a tierd-sim\n"
	      "  trace on stdout (sim/README.md, \"Traces of real programs\").\n", f);
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "tenant", required_argument, NULL, 't' },
		{ "ips", required_argument, NULL, 'i' },
		{ "interval-us", required_argument, NULL, 'u' },
		{ "cache", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t ips = 1000000000, interval_us = 1000, cache_bytes = 0, per_interval;
	const char *tenant = NULL;
	struct state s = { 0 };
	static struct input in;
	char *line = NULL;
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 't': tenant = optarg; break;
		case 'i': r = parse_u64(optarg, &ips); break;
		case 'u': r = parse_u64(optarg, &interval_us); break;
		case 'c': r = parse_u64(optarg, &cache_bytes); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (r) {
			fprintf(stderr, "lackey2trace: %s: bad value\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc || !tenant || tenant[0] != '/' || strpbrk(tenant, " \t,")) {
		fprintf(stderr, "lackey2trace: --tenant /NAME (no blanks or commas) is required\n");
		return 2;
	}
	per_interval = ips / 1000000 * interval_us;
	if (ips % 1000000 || !per_interval || cache_bytes % (CACHE_WAYS << LINE_SHIFT)) {
		fprintf(stderr, "lackey2trace: --ips must be a multiple of 1e6 and --cache of %d\n",
			CACHE_WAYS << LINE_SHIFT);
		return 2;
	}
	if (cache_bytes) {
		s.cache.sets = cache_bytes / (CACHE_WAYS << LINE_SHIFT);
		s.cache.tags = calloc(s.cache.sets * CACHE_WAYS, sizeof(*s.cache.tags));
		s.cache.age = calloc(s.cache.sets * CACHE_WAYS, sizeof(*s.cache.age));
		if (!s.cache.tags || !s.cache.age)
			r = -ENOMEM;
	}
	while (!r && (r = next_line(&in, &line)) == 1) {
		r = parse_line(&s, line);
		if (r == 1) {
			/* The data accesses after an I line are its own. */
			r = s.instr && !(s.instr % per_interval) ?
			    close_interval(&s, s.instr / per_interval - 1) : 0;
			s.instr++;
		}
	}
	if (!r && s.page.n)
		r = close_interval(&s, (s.instr ? s.instr - 1 : 0) / per_interval);
	if (!r)
		r = write_trace(&s, tenant, interval_us, ips, cache_bytes);
	if (r)
		fprintf(stderr, "lackey2trace: %s\n", strerror(-r));
	free(s.recs);
	free(s.cache.tags);
	free(s.cache.age);
	map_free(&s.page);
	map_free(&s.chunk);
	return r ? 1 : 0;
}
