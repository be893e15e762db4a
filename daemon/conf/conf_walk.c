// SPDX-License-Identifier: GPL-2.0-only
/*
 * A strict YAML walker driven by tables of keys (conf_walk.h): every key of
 * the document is looked up in its table and converted; unknown keys,
 * duplicates, wrong types and out-of-range values are errors that name the
 * file, line, column and the dotted key.  Errors do not stop
 * the walk, so one run reports all of them.  The schema's depth bounds the
 * walk, whatever aliases the document holds.  The scalar values themselves
 * are converted in conf_scalar.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_scalar.h"
#include "conf_walk.h"

static yaml_node_t *child(struct conf_ctx *ctx, yaml_node_item_t *item)
{
	return yaml_document_get_node(ctx->doc, *item);
}

static bool want_seq(struct conf_ctx *ctx, yaml_node_t *v, const char *path,
		     const char *name)
{
	if (v->type == YAML_SEQUENCE_NODE)
		return true;
	if (!conf_node_is_empty(v))
		conf_error(ctx, conf_mark_of(v), path, name, "expected a list");
	return false;
}

static void walk_list(struct conf_ctx *ctx, const struct conf_key *k,
		      char *base, yaml_node_t *v, const char *path)
{
	int *count = (int *)(base + k->count_offset);
	char sub[256];

	if (!want_seq(ctx, v, path, k->name))
		return;
	for (yaml_node_item_t *it = v->data.sequence.items.start;
	     it < v->data.sequence.items.top; it++) {
		yaml_node_t *e = child(ctx, it);
		char *elem = base + k->offset + (size_t)*count * k->size;

		if (*count == k->max_count) {
			conf_error(ctx, conf_mark_of(e), path, k->name,
				   "more than %d entries", k->max_count);
			return;
		}
		snprintf(sub, sizeof(sub), "%s%s%s[%d]", path, *path ? "." : "",
			 k->name, *count);
		conf_table_defaults(k->sub, elem);
		(*count)++;
		if (e->type != YAML_MAPPING_NODE) {
			conf_error(ctx, conf_mark_of(e), sub, "",
				   "expected a mapping");
			continue;
		}
		conf_walk_map(ctx, k->sub, elem, e, sub);
	}
}

static void walk_strlist(struct conf_ctx *ctx, const struct conf_key *k,
			 char *base, yaml_node_t *v, const char *path)
{
	struct conf_strlist *l = (struct conf_strlist *)(base + k->offset);

	if (!want_seq(ctx, v, path, k->name))
		return;
	for (yaml_node_item_t *it = v->data.sequence.items.start;
	     it < v->data.sequence.items.top; it++) {
		yaml_node_t *e = child(ctx, it);

		if (l->n == CONF_MAX_PATTERNS) {
			conf_error(ctx, conf_mark_of(e), path, k->name,
				   "more than %d entries", CONF_MAX_PATTERNS);
			return;
		}
		if (e->type != YAML_SCALAR_NODE || conf_node_is_empty(e)) {
			conf_error(ctx, conf_mark_of(e), path, k->name,
				   "expected a non-empty string");
			continue;
		}
		l->marks[l->n] = conf_mark_of(e);
		conf_set_string(ctx, l->s[l->n++], CONF_PATTERN_MAX, e, path,
			   k->name);
	}
}

static void walk_nodelist(struct conf_ctx *ctx, const struct conf_key *k,
			  char *base, yaml_node_t *v, const char *path)
{
	int *count = (int *)(base + k->count_offset);
	int *ids = (int *)(base + k->offset);
	struct conf_mark *marks =
		k->marks_offset ?
			(struct conf_mark *)(base + k->marks_offset - 1) :
			NULL;

	if (!want_seq(ctx, v, path, k->name))
		return;
	for (yaml_node_item_t *it = v->data.sequence.items.start;
	     it < v->data.sequence.items.top; it++) {
		yaml_node_t *e = child(ctx, it);
		uint64_t id;

		if (!conf_get_uint(ctx, e, path, k->name, k->min, k->max,
				   false, &id))
			continue;
		for (int i = 0; i < *count; i++)
			if (ids[i] == (int)id) {
				conf_error(ctx, conf_mark_of(e), path, k->name,
					   "node %d listed twice", (int)id);
				id = UINT64_MAX;
				break;
			}
		if (id == UINT64_MAX)
			continue;
		if (*count == k->max_count) {
			conf_error(ctx, conf_mark_of(e), path, k->name,
				   "more than %d nodes", k->max_count);
			return;
		}
		if (marks)
			marks[*count] = conf_mark_of(e);
		ids[(*count)++] = id;
	}
}

static void set_value(struct conf_ctx *ctx, const struct conf_key *k,
		      char *base, yaml_node_t *v, const char *path)
{
	void *dst = base + k->offset;
	uint64_t u;

	switch (k->type) {
	case CONF_U32:
	case CONF_U64:
	case CONF_SIZE:
	case CONF_NODE:
		if (!conf_get_uint(ctx, v, path, k->name, k->min, k->max,
				   k->type == CONF_SIZE, &u))
			return;
		if (k->type == CONF_U32)
			*(uint32_t *)dst = u;
		else if (k->type == CONF_NODE)
			*(int *)dst = u;
		else
			*(uint64_t *)dst = u;
		return;
	case CONF_DOUBLE:
		conf_set_double(ctx, k, dst, v, path);
		return;
	case CONF_BOOL:
		conf_set_bool(ctx, k, dst, v, path);
		return;
	case CONF_STRING:
		conf_set_string(ctx, dst, k->size, v, path, k->name);
		return;
	case CONF_ENUM:
		conf_set_enum(ctx, k, dst, v, path);
		return;
	case CONF_MAP: {
		char sub[256];

		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "",
			 k->name);
		if (v->type == YAML_MAPPING_NODE)
			conf_walk_map(ctx, k->sub, base, v, sub);
		else if (!conf_node_is_empty(v))
			conf_error(ctx, conf_mark_of(v), sub, "",
				   "expected a mapping");
		return;
	}
	case CONF_LIST:
		walk_list(ctx, k, base, v, path);
		return;
	case CONF_STRLIST:
		walk_strlist(ctx, k, base, v, path);
		return;
	case CONF_NODELIST:
		walk_nodelist(ctx, k, base, v, path);
		return;
	}
}

void conf_walk_map(struct conf_ctx *ctx, const struct conf_table *t, void *base,
		   yaml_node_t *n, const char *path)
{
	struct conf_mark marks[32] = { 0 };

	if (t->mark_offset)
		*(struct conf_mark *)((char *)base + t->mark_offset - 1) =
			conf_mark_of(n);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(ctx->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(ctx->doc, p->value);
		size_t i;

		if (k->type != YAML_SCALAR_NODE) {
			conf_error(ctx, conf_mark_of(k), path, "",
				   "keys must be plain strings");
			continue;
		}
		for (i = 0; i < t->nr_keys; i++)
			if (!strcmp(t->keys[i].name, conf_scalar(k)))
				break;
		if (i == t->nr_keys) {
			conf_error(ctx, conf_mark_of(k), path, conf_scalar(k),
				   "unknown key");
			continue;
		}
		if (marks[i].line) {
			conf_error(ctx, conf_mark_of(k), path, conf_scalar(k),
				   "duplicate key (first at line %u)",
				   marks[i].line);
			continue;
		}
		marks[i] = conf_mark_of(v);
		if (t->keys[i].type == CONF_STRING && t->keys[i].marks_offset)
			*(struct conf_mark *)((char *)base +
					      t->keys[i].marks_offset - 1) =
				marks[i];
		set_value(ctx, &t->keys[i], base, v, path);
	}
	if (t->check)
		t->check(ctx, base, marks, path);
}

void conf_table_defaults(const struct conf_table *t, void *base)
{
	for (size_t i = 0; i < t->nr_keys; i++) {
		const struct conf_key *k = &t->keys[i];
		char *dst = (char *)base + k->offset;

		switch (k->type) {
		case CONF_U32:
			*(uint32_t *)dst = k->def;
			break;
		case CONF_U64:
		case CONF_SIZE:
			*(uint64_t *)dst = k->def;
			break;
		case CONF_NODE:
		case CONF_ENUM:
			*(int *)dst = k->def;
			break;
		case CONF_DOUBLE:
			*(double *)dst = k->ddef;
			break;
		case CONF_BOOL:
			*(bool *)dst = k->def;
			break;
		case CONF_STRING:
			snprintf(dst, k->size, "%s", k->sdef ? k->sdef : "");
			break;
		case CONF_MAP:
			conf_table_defaults(k->sub, base);
			break;
		case CONF_LIST:
		case CONF_NODELIST:
			*(int *)((char *)base + k->count_offset) = 0;
			break;
		case CONF_STRLIST:
			((struct conf_strlist *)dst)->n = 0;
			break;
		}
	}
}

/*
 * Keys and values come from the file: a control character in them (a YAML
 * scalar may hold a newline) would split one error into two lines, or forge
 * a log line.  Copy @src into @dst with each written as \n, \t or \xNN.
 */
static void copy_escaped(char *dst, size_t size, const char *src)
{
	size_t o = 0;

	for (; *src; src++) {
		unsigned char c = *src;
		char esc[5];
		size_t n;

		if (c >= 0x20 && c != 0x7f) {
			esc[0] = c;
			n = 1;
		} else if (c == '\n' || c == '\t') {
			esc[0] = '\\';
			esc[1] = c == '\n' ? 'n' : 't';
			n = 2;
		} else {
			n = snprintf(esc, sizeof(esc), "\\x%02x", c);
		}
		if (o + n >= size)
			break;
		memcpy(dst + o, esc, n);
		o += n;
	}
	dst[o] = '\0';
}

void conf_error(struct conf_ctx *ctx, struct conf_mark mark, const char *path,
		const char *key, const char *fmt, ...)
{
	struct conf_error *e;
	char raw[sizeof(e->text)];
	va_list ap;
	int n;

	if (ctx->nr_errors++ >= CONF_MAX_ERRORS)
		return;
	e = &ctx->errors[ctx->nr_errors - 1];
	e->mark = mark;
	e->seq = ctx->nr_errors;
	n = snprintf(raw, sizeof(raw), "%s:%u:%u: %s%s%s: ", ctx->name,
		     mark.line, mark.column, path, *path && *key ? "." : "",
		     key);
	if (n >= 0 && (size_t)n < sizeof(raw)) {
		va_start(ap, fmt);
		vsnprintf(raw + n, sizeof(raw) - n, fmt, ap);
		va_end(ap);
	}
	copy_escaped(e->text, sizeof(e->text), raw);
}

static int cmp_error(const void *a, const void *b)
{
	const struct conf_error *x = a, *y = b;

	if (x->mark.line != y->mark.line)
		return x->mark.line < y->mark.line ? -1 : 1;
	if (x->mark.column != y->mark.column)
		return x->mark.column < y->mark.column ? -1 : 1;
	return x->seq - y->seq;
}

char *conf_format_errors(struct conf_ctx *ctx)
{
	int n = ctx->nr_errors < CONF_MAX_ERRORS ? ctx->nr_errors :
						   CONF_MAX_ERRORS;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	qsort(ctx->errors, n, sizeof(ctx->errors[0]), cmp_error);
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\n", ctx->errors[i].text);
	if (ctx->nr_errors > n)
		fprintf(f, "%s: %d more errors not shown\n", ctx->name,
			ctx->nr_errors - n);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
