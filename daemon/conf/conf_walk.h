/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine under tierd.yaml: a schema as tables of keys, the walk of a
 * YAML document against them (conf_walk.c), and the errors it reports.  It
 * knows no key of tierd.yaml: conf_schema.c holds those tables, conf_file.c
 * reads a file and walks it, conf_machine.c checks the result against the
 * machine.  Each of them includes this header; it includes none of theirs.
 */
#ifndef TIERD_CONF_WALK_H
#define TIERD_CONF_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "conf.h"

enum conf_type {
	CONF_U32, /* decimal integer in [min, max] */
	CONF_U64,
	CONF_SIZE, /* uint64_t bytes, K/M/G/T suffixes */
	CONF_DOUBLE, /* in [dmin, dmax] */
	CONF_BOOL, /* true | false */
	CONF_STRING, /* char[size] */
	CONF_ENUM, /* int, index into names[] */
	CONF_NODE, /* int node id in [0, TOPO_MAX_NODES * 16) */
	CONF_MAP, /* sub table, same base */
	CONF_LIST, /* list of sub-table mappings at base + i * size */
	CONF_STRLIST, /* struct conf_strlist */
	CONF_NODELIST, /* int count at count_offset, int ids at offset */
};

#define CONF_MAX_ERRORS 50

struct conf_error {
	struct conf_mark mark;
	int seq; /* report order, for errors at one place */
	char text[512];
};

/* One parse: the document and the errors found so far. */
struct conf_ctx {
	const char *name;
	yaml_document_t *doc;
	int nr_errors; /* may exceed CONF_MAX_ERRORS; the rest are counted */
	struct conf_error errors[CONF_MAX_ERRORS];
};

struct conf_table;

struct conf_key {
	const char *name;
	enum conf_type type;
	size_t offset; /* field offset from the table's base */
	size_t size; /* CONF_STRING: buffer; CONF_LIST: element */
	uint64_t min, max;
	double dmin, dmax;
	const char *const *names; /* CONF_ENUM, NULL-terminated */
	const struct conf_table *sub; /* CONF_MAP, CONF_LIST */
	size_t count_offset; /* CONF_LIST, CONF_NODELIST: int count */
	int max_count;
	/* Where the value was: CONF_NODELIST: struct conf_mark[] (one per
	 * node) + 1; CONF_STRING: struct conf_mark + 1; 0 = not kept.
	 * CONF_STRLIST keeps its marks in struct conf_strlist. */
	size_t marks_offset;
	/* Defaults; lists and maps default to empty / their own keys. */
	uint64_t def;
	double ddef;
	const char *sdef;
};

struct conf_table {
	const struct conf_key *keys;
	size_t nr_keys;
	size_t mark_offset; /* struct conf_mark of the mapping + 1; 0 = none */
	/* Cross-key checks once the mapping at @base is parsed; @marks[i] is
	 * where key i was (line 0 when absent), @path names the mapping. */
	void (*check)(struct conf_ctx *ctx, void *base,
		      const struct conf_mark *marks, const char *path);
};

/* Report one error at @mark: "NAME:LINE:COLUMN: PATH[.KEY]: reason". */
void conf_error(struct conf_ctx *ctx, struct conf_mark mark, const char *path,
		const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static inline struct conf_mark conf_mark_of(const yaml_node_t *n)
{
	return (struct conf_mark){ n->start_mark.line + 1,
				   n->start_mark.column + 1 };
}

/* Walk mapping @n against @t, storing into @base; errors into @ctx. */
void conf_walk_map(struct conf_ctx *ctx, const struct conf_table *t, void *base,
		   yaml_node_t *n, const char *path);

/* "key:" with nothing after it, "~" or "null". */
bool conf_node_is_empty(const yaml_node_t *n);

/* Set every key of @t at @base to its default. */
void conf_table_defaults(const struct conf_table *t, void *base);

/* The errors of @ctx in file order, one per line (qsort()s them); NULL when
 * out of memory.  Caller frees. */
char *conf_format_errors(struct conf_ctx *ctx);

#endif
