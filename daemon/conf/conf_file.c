// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loading a config: read the file, let libyaml build the document, walk it
 * against tierd.yaml's schema (conf_walk.c, conf_schema.c), and hand back
 * the errors sorted in file order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf_schema.h"
#include "conf_walk.h"

#define CONF_MAX_FILE (1 << 20)
/*
 * libyaml's scanner costs O(depth) per token in flow collections and its
 * loader O(anchors) per anchor, so a 200 KB "[[[[..." or a file of 60 000
 * anchors takes minutes (measured: 369 s and 18 s) and would stall the
 * event loop on reload.  A first pass over the events stops at these
 * bounds, far above anything tierd.yaml needs (its schema is 4 deep).
 */
#define CONF_MAX_DEPTH 32
#define CONF_MAX_ANCHORS 256

static void yaml_problem(struct conf_ctx *ctx, yaml_parser_t *p)
{
	yaml_mark_t m = p->problem ? p->problem_mark : p->context_mark;

	conf_error(ctx, (struct conf_mark){ m.line + 1, m.column + 1 }, "yaml",
		   "", "%s%s%s", p->problem ? p->problem : "syntax error",
		   p->context ? " " : "", p->context ? p->context : "");
}

static struct conf_mark event_mark(const yaml_event_t *ev)
{
	return (struct conf_mark){ ev->start_mark.line + 1,
				   ev->start_mark.column + 1 };
}

/* The bounds above; false after reporting.  Syntax errors are left to the
 * loader, which reports them with their context. */
static bool within_bounds(struct conf_ctx *ctx, const char *text, size_t len)
{
	int depth = 0, anchors = 0;
	yaml_parser_t p;
	yaml_event_t ev;
	bool ok = true, done = false;

	if (!yaml_parser_initialize(&p))
		return true; /* the loader will fail the same way */
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (ok && !done && yaml_parser_parse(&p, &ev)) {
		const yaml_char_t *anchor = NULL;

		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
			anchor = ev.data.sequence_start.anchor;
			depth++;
			break;
		case YAML_MAPPING_START_EVENT:
			anchor = ev.data.mapping_start.anchor;
			depth++;
			break;
		case YAML_SCALAR_EVENT:
			anchor = ev.data.scalar.anchor;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		if (depth > CONF_MAX_DEPTH) {
			conf_error(ctx, event_mark(&ev), "yaml", "",
				   "nested deeper than %d levels",
				   CONF_MAX_DEPTH);
			ok = false;
		} else if (anchor && ++anchors > CONF_MAX_ANCHORS) {
			conf_error(ctx, event_mark(&ev), "yaml", "",
				   "more than %d anchors", CONF_MAX_ANCHORS);
			ok = false;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return ok;
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
	if (!within_bounds(ctx, text, len)) {
		*ret_errors = conf_format_errors(ctx);
		free(ctx);
		return *ret_errors ? -EINVAL : -ENOMEM;
	}
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
		*ret_errors = conf_format_errors(ctx);
		ret = *ret_errors ? -EINVAL : -ENOMEM;
	}
	free(ctx);
	return ret;
}

static int load(const char *path, const uid_t *owner, struct tierd_conf *conf,
		char **ret_errors)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	struct stat st;
	FILE *f;
	int ret;

	*ret_errors = NULL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) < 0) {
		ret = -errno;
		goto out;
	}
	/* fopen() opens a directory for reading; fread() then fails. */
	if (S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		goto out;
	}
	if (owner && (st.st_uid != *owner || (st.st_mode & 022))) {
		ret = -EPERM;
		goto out;
	}
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

int conf_load(const char *path, struct tierd_conf *conf, char **ret_errors)
{
	return load(path, NULL, conf, ret_errors);
}

int conf_load_trusted(const char *path, uid_t owner, struct tierd_conf *conf,
		      char **ret_errors)
{
	return load(path, &owner, conf, ret_errors);
}
