// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading a machine model.  The file is strict the way tierd.yaml is: every
 * key is known, every value checked against its range, and an error names
 * FILE:LINE:COL and the key.  libyaml builds the document; the walk below
 * checks it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "machine.h"

#define MACHINE_MAX_FILE (256 << 10)

struct mctx {
	const char *name;
	yaml_document_t *doc;
	char *err;
};

static int fail(struct mctx *c, yaml_node_t *n, const char *key,
		const char *fmt, ...)
{
	int off;
	va_list ap;

	off = snprintf(c->err, SIM_ERR_LEN, "%s:%lu:%lu: %s: ", c->name,
		       (unsigned long)n->start_mark.line + 1,
		       (unsigned long)n->start_mark.column + 1, key);
	if (off > 0 && off < SIM_ERR_LEN) {
		va_start(ap, fmt);
		vsnprintf(c->err + off, SIM_ERR_LEN - off, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int get_u64(struct mctx *c, yaml_node_t *n, const char *key,
		   uint64_t lo, uint64_t hi, uint64_t *ret)
{
	const char *s = (const char *)n->data.scalar.value;
	unsigned long long v;
	char *end;

	if (n->type != YAML_SCALAR_NODE)
		return fail(c, n, key, "expected an integer");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return fail(c, n, key, "'%s' is not an integer", s);
	if (v < lo || v > hi)
		return fail(c, n, key, "%llu is out of range [%llu, %llu]", v,
			    (unsigned long long)lo, (unsigned long long)hi);
	*ret = v;
	return 0;
}

static int get_double(struct mctx *c, yaml_node_t *n, const char *key,
		      double lo, double hi, double *ret)
{
	const char *s = (const char *)n->data.scalar.value;
	char *end;
	double v;

	if (n->type != YAML_SCALAR_NODE)
		return fail(c, n, key, "expected a number");
	v = strtod(s, &end);
	if (end == s || *end)
		return fail(c, n, key, "'%s' is not a number", s);
	if (!(v >= lo && v <= hi))
		return fail(c, n, key, "%s is out of range [%g, %g]", s, lo, hi);
	*ret = v;
	return 0;
}

static int get_bool(struct mctx *c, yaml_node_t *n, const char *key, bool *ret)
{
	const char *s = (const char *)n->data.scalar.value;

	if (n->type == YAML_SCALAR_NODE && !strcmp(s, "true"))
		*ret = true;
	else if (n->type == YAML_SCALAR_NODE && !strcmp(s, "false"))
		*ret = false;
	else
		return fail(c, n, key, "expected true or false");
	return 0;
}

#define for_each_pair(c, map, p)                                               \
	for (yaml_node_pair_t *p = (map)->data.mapping.pairs.start;            \
	     p < (map)->data.mapping.pairs.top; p++)

static const char *key_of(struct mctx *c, yaml_node_pair_t *p)
{
	yaml_node_t *k = yaml_document_get_node(c->doc, p->key);

	return k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value :
					     "?";
}

static yaml_node_t *val_of(struct mctx *c, yaml_node_pair_t *p)
{
	return yaml_document_get_node(c->doc, p->value);
}

static int parse_node(struct mctx *c, yaml_node_t *map, struct sim_node *nd)
{
	uint64_t v;
	int r = 0;

	if (map->type != YAML_MAPPING_NODE)
		return fail(c, map, "nodes", "expected a mapping");
	memset(nd, 0, sizeof(*nd));
	nd->id = -1;
	for_each_pair(c, map, p) {
		const char *k = key_of(c, p);
		yaml_node_t *n = val_of(c, p);

		if (!strcmp(k, "id")) {
			r = get_u64(c, n, k, 0, 1023, &v);
			nd->id = v;
		} else if (!strcmp(k, "tier")) {
			r = get_u64(c, n, k, 0, 7, &v);
			nd->tier = v;
		} else if (!strcmp(k, "capacity_mib")) {
			r = get_u64(c, n, k, 2, 1ull << 32, &v);
			nd->capacity_bytes = v << 20;
		} else if (!strcmp(k, "latency_ns")) {
			r = get_u64(c, n, k, 1, 100000, &v);
			nd->latency_ns = v;
		} else if (!strcmp(k, "bandwidth_gbps")) {
			r = get_double(c, n, k, 0.001, 100000,
				       &nd->bandwidth_gbps);
		} else if (!strcmp(k, "cpuless")) {
			r = get_bool(c, n, k, &nd->cpuless);
		} else {
			r = fail(c, yaml_document_get_node(c->doc, p->key), k,
				 "unknown key");
		}
		if (r)
			return r;
	}
	if (nd->id < 0 || !nd->capacity_bytes || !nd->latency_ns ||
	    nd->bandwidth_gbps <= 0)
		return fail(c, map, "nodes",
			    "id, capacity_mib, latency_ns and bandwidth_gbps are required");
	return 0;
}

static int parse_migcost(struct mctx *c, yaml_node_t *map, bool patched,
			 struct sim_migcost *mc)
{
	uint64_t v;
	int r = 0;

	if (map->type != YAML_MAPPING_NODE)
		return fail(c, map, "migration", "expected a mapping");
	memset(mc, 0, sizeof(*mc));
	mc->copy_threads = 1;
	for_each_pair(c, map, p) {
		const char *k = key_of(c, p);
		yaml_node_t *n = val_of(c, p);

		if (!strcmp(k, "call_ns")) {
			r = get_u64(c, n, k, 0, 1000000000, &mc->call_ns);
		} else if (!strcmp(k, "folio_ns")) {
			r = get_u64(c, n, k, 0, 1000000000, &mc->folio_ns);
		} else if (!strcmp(k, "copy_gbps")) {
			r = get_double(c, n, k, 0.001, 10000, &mc->copy_gbps);
		} else if (!strcmp(k, "copy_threads") && patched) {
			r = get_u64(c, n, k, 1, 256, &v);
			mc->copy_threads = v;
		} else {
			r = fail(c, yaml_document_get_node(c->doc, p->key), k,
				 "unknown key");
		}
		if (r)
			return r;
	}
	if (mc->copy_gbps <= 0)
		return fail(c, map, "migration", "copy_gbps is required");
	return 0;
}

static int parse_migration(struct mctx *c, yaml_node_t *map,
			   struct sim_machine *m)
{
	bool seen[SIM_NR_KERNELS] = { false, false };
	int r;

	if (map->type != YAML_MAPPING_NODE)
		return fail(c, map, "migration", "expected a mapping");
	for_each_pair(c, map, p) {
		const char *k = key_of(c, p);
		int kern;

		if (!strcmp(k, "vanilla"))
			kern = SIM_KERNEL_VANILLA;
		else if (!strcmp(k, "patched"))
			kern = SIM_KERNEL_PATCHED;
		else
			return fail(c, yaml_document_get_node(c->doc, p->key),
				    k, "unknown kernel (vanilla or patched)");
		r = parse_migcost(c, val_of(c, p), kern == SIM_KERNEL_PATCHED,
				  &m->mig[kern]);
		if (r)
			return r;
		seen[kern] = true;
	}
	if (!seen[SIM_KERNEL_VANILLA] || !seen[SIM_KERNEL_PATCHED])
		return fail(c, map, "migration", "both vanilla and patched are required");
	return 0;
}

static int parse_nodes(struct mctx *c, yaml_node_t *seq, struct sim_machine *m)
{
	int r;

	if (seq->type != YAML_SEQUENCE_NODE)
		return fail(c, seq, "nodes", "expected a list");
	for (yaml_node_item_t *i = seq->data.sequence.items.start;
	     i < seq->data.sequence.items.top; i++) {
		yaml_node_t *n = yaml_document_get_node(c->doc, *i);

		if (m->nr_nodes == SIM_MAX_NODES)
			return fail(c, n, "nodes", "more than %d nodes",
				    SIM_MAX_NODES);
		r = parse_node(c, n, &m->nodes[m->nr_nodes]);
		if (r)
			return r;
		for (int j = 0; j < m->nr_nodes; j++)
			if (m->nodes[j].id == m->nodes[m->nr_nodes].id)
				return fail(c, n, "nodes", "node %d twice",
					    m->nodes[j].id);
		m->nr_nodes++;
	}
	if (m->nr_nodes < 2)
		return fail(c, seq, "nodes", "a tiered machine needs two nodes");
	return 0;
}

static int parse_top_key(struct mctx *c, const char *k, yaml_node_t *n,
			 struct sim_machine *m)
{
	uint64_t v;
	int r;

	if (!strcmp(k, "name")) {
		if (n->type != YAML_SCALAR_NODE ||
		    n->data.scalar.length >= sizeof(m->name))
			return fail(c, n, k, "expected a name under 64 bytes");
		memcpy(m->name, n->data.scalar.value, n->data.scalar.length + 1);
		return 0;
	}
	if (!strcmp(k, "base_page_kib")) {
		r = get_u64(c, n, k, 4, 64, &v);
		if (!r && v != 4 && v != 16 && v != 64)
			r = fail(c, n, k, "must be 4, 16 or 64");
		m->base_page_bytes = v << 10;
		return r;
	}
	if (!strcmp(k, "thp_kib")) {
		r = get_u64(c, n, k, 0, 1 << 20, &v);
		m->thp_bytes = v << 10;
		return r;
	}
	if (!strcmp(k, "nodes"))
		return parse_nodes(c, n, m);
	if (!strcmp(k, "migration"))
		return parse_migration(c, n, m);
	return -ENOENT;
}

static int parse_doc(struct mctx *c, struct sim_machine *m)
{
	yaml_node_t *root = yaml_document_get_root_node(c->doc);
	int r;

	if (!root || root->type != YAML_MAPPING_NODE) {
		snprintf(c->err, SIM_ERR_LEN, "%s:1:1: expected a mapping",
			 c->name);
		return -EINVAL;
	}
	for_each_pair(c, root, p) {
		r = parse_top_key(c, key_of(c, p), val_of(c, p), m);
		if (r == -ENOENT)
			r = fail(c, yaml_document_get_node(c->doc, p->key),
				 key_of(c, p), "unknown key");
		if (r)
			return r;
	}
	if (!m->name[0] || !m->base_page_bytes || !m->nr_nodes ||
	    !m->mig[SIM_KERNEL_VANILLA].copy_gbps)
		return fail(c, root, "machine",
			    "name, base_page_kib, nodes and migration are required");
	if (m->thp_bytes && (m->thp_bytes % m->base_page_bytes ||
			     m->thp_bytes <= m->base_page_bytes))
		return fail(c, root, "thp_kib",
			    "must be a multiple of the base page above it");
	return 0;
}

int sim_machine_parse(const char *name, const char *buf, size_t len,
		      struct sim_machine *m, char *err)
{
	struct mctx c = { .name = name, .err = err };
	yaml_parser_t parser;
	yaml_document_t doc;
	int r;

	memset(m, 0, sizeof(*m));
	err[0] = '\0';
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, SIM_ERR_LEN, "%s:%lu:%lu: %s", name,
			 (unsigned long)parser.problem_mark.line + 1,
			 (unsigned long)parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "invalid YAML");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	c.doc = &doc;
	r = parse_doc(&c, m);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

int sim_machine_load(const char *path, struct sim_machine *m, char *err)
{
	char *buf;
	size_t len;
	FILE *f;
	int r;

	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		snprintf(err, SIM_ERR_LEN, "%s: %s", path, strerror(-r));
		return r;
	}
	buf = malloc(MACHINE_MAX_FILE);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	len = fread(buf, 1, MACHINE_MAX_FILE, f);
	if (len == MACHINE_MAX_FILE) {
		snprintf(err, SIM_ERR_LEN, "%s: larger than %d bytes", path,
			 MACHINE_MAX_FILE);
		r = -EFBIG;
	} else {
		r = sim_machine_parse(path, buf, len, m, err);
	}
	free(buf);
	fclose(f);
	return r;
}

uint64_t sim_migcost_ns(const struct sim_migcost *c, uint64_t folios,
			uint64_t bytes)
{
	return c->call_ns + folios * c->folio_ns +
	       (uint64_t)((double)bytes / c->copy_gbps);
}

int sim_machine_fast_node(const struct sim_machine *m)
{
	int best = 0;

	for (int i = 1; i < m->nr_nodes; i++) {
		const struct sim_node *a = &m->nodes[i], *b = &m->nodes[best];

		if (a->tier < b->tier ||
		    (a->tier == b->tier && a->latency_ns < b->latency_ns))
			best = i;
	}
	return best;
}
