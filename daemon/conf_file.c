// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loading a config: read the file, let libyaml build the document, walk it
 * (conf.c), and hand back the errors sorted in file order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_schema.h"

#define CONF_MAX_FILE (1 << 20)

void conf_error(struct conf_ctx *ctx, struct conf_mark mark, const char *path,
		const char *key, const char *fmt, ...)
{
	struct conf_error *e;
	va_list ap;
	int n;

	if (ctx->nr_errors++ >= CONF_MAX_ERRORS)
		return;
	e = &ctx->errors[ctx->nr_errors - 1];
	e->mark = mark;
	e->seq = ctx->nr_errors;
	n = snprintf(e->text, sizeof(e->text), "%s:%u:%u: %s%s%s: ", ctx->name,
		     mark.line, mark.column, path, *path && *key ? "." : "",
		     key);
	if (n < 0 || (size_t)n >= sizeof(e->text))
		return;
	va_start(ap, fmt);
	vsnprintf(e->text + n, sizeof(e->text) - n, fmt, ap);
	va_end(ap);
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

/* The errors in file order, one per line; NULL when out of memory. */
static char *format_errors(struct conf_ctx *ctx)
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

static void yaml_problem(struct conf_ctx *ctx, yaml_parser_t *p)
{
	yaml_mark_t m = p->problem ? p->problem_mark : p->context_mark;

	conf_error(ctx, (struct conf_mark){ m.line + 1, m.column + 1 }, "yaml",
		   "", "%s%s%s", p->problem ? p->problem : "syntax error",
		   p->context ? " " : "", p->context ? p->context : "");
}

int conf_parse(const char *name, const char *text, size_t len,
	       struct tierd_conf *conf, char **ret_errors)
{
	yaml_document_t doc, extra;
	struct conf_ctx *ctx;
	yaml_parser_t parser;
	yaml_node_t *root;
	int ret = 0;

	*ret_errors = NULL;
	conf_defaults(conf);
	snprintf(conf->path, sizeof(conf->path), "%s", name);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->name = name;
	if (!yaml_parser_initialize(&parser)) {
		free(ctx);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_problem(ctx, &parser);
		goto out_parser;
	}
	ctx->doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (root && root->type == YAML_MAPPING_NODE)
		conf_walk_map(ctx, &conf_root_table, conf, root, "");
	else if (root && !conf_node_is_empty(root))
		conf_error(ctx, conf_mark_of(root), "yaml", "",
			   "the file must be a mapping of keys");
	if (root) {
		if (!yaml_parser_load(&parser, &extra)) {
			yaml_problem(ctx, &parser);
		} else {
			yaml_node_t *r2 = yaml_document_get_root_node(&extra);

			if (r2)
				conf_error(ctx, conf_mark_of(r2), "yaml", "",
					   "only one document is allowed");
			yaml_document_delete(&extra);
		}
	}
	yaml_document_delete(&doc);
out_parser:
	yaml_parser_delete(&parser);
	if (ctx->nr_errors) {
		*ret_errors = format_errors(ctx);
		ret = *ret_errors ? -EINVAL : -ENOMEM;
	}
	free(ctx);
	return ret;
}

int conf_load(const char *path, struct tierd_conf *conf, char **ret_errors)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int ret;

	*ret_errors = NULL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	for (;;) {
		size_t n;

		if (len == cap) {
			char *p;

			if (cap >= CONF_MAX_FILE) {
				ret = -EFBIG;
				goto out;
			}
			cap = cap ? cap * 2 : 4096;
			p = realloc(text, cap);
			if (!p) {
				ret = -ENOMEM;
				goto out;
			}
			text = p;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0) {
			if (ferror(f)) {
				ret = -EIO;
				goto out;
			}
			break;
		}
	}
	ret = conf_parse(path, text ? text : "", len, conf, ret_errors);
out:
	fclose(f);
	free(text);
	return ret;
}
