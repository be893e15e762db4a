// SPDX-License-Identifier: GPL-2.0-only
/*
 * The scalar values of a policy file: integers, sizes with K/M/G/T
 * suffixes, numbers, booleans, names from a list and strings, each checked
 * against its key's range and reported with conf_error() when it is wrong.
 * The walk over mappings and lists is in conf_walk.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_scalar.h"

bool conf_node_is_empty(const yaml_node_t *n)
{
	/* "key:" with nothing after it, or an explicit null. */
	return n->type == YAML_SCALAR_NODE &&
	       n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*conf_scalar(n) || !strcmp(conf_scalar(n), "~") ||
		!strcmp(conf_scalar(n), "null"));
}

static int parse_u64(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*s - '0');
	}
	*ret = v;
	return 0;
}

static int parse_size(const char *s, uint64_t *ret)
{
	static const char suffixes[] = "KMGT";
	char num[32];
	size_t len = strlen(s);
	const char *p;
	int shift = 0, r;
	uint64_t v;

	if (len == 0 || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len + 1);
	p = strchr(suffixes, num[len - 1]);
	if (p && num[len - 1]) {
		shift = 10 * (int)(p - suffixes + 1);
		num[len - 1] = '\0';
	}
	r = parse_u64(num, &v);
	if (r < 0)
		return r;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*ret = v << shift;
	return 0;
}

bool conf_get_uint(struct conf_ctx *ctx, yaml_node_t *v, const char *path,
		   const char *name, uint64_t min, uint64_t max, bool size,
		   uint64_t *ret)
{
	int r;

	if (v->type != YAML_SCALAR_NODE ||
	    v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
		conf_error(
			ctx, conf_mark_of(v), path, name,
			size ? "expected a size in bytes such as 64M (suffixes K, M, G, T)" :
			       "expected a non-negative integer");
		return false;
	}
	r = size ? parse_size(conf_scalar(v), ret) :
		   parse_u64(conf_scalar(v), ret);
	if (r == -ERANGE && max == UINT64_MAX) {
		conf_error(ctx, conf_mark_of(v), path, name, "%s is too large",
			   conf_scalar(v));
		return false;
	}
	if (r == -ERANGE || (r == 0 && (*ret < min || *ret > max))) {
		conf_error(ctx, conf_mark_of(v), path, name,
			   "%s is out of range %llu..%llu", conf_scalar(v),
			   (unsigned long long)min, (unsigned long long)max);
		return false;
	}
	if (r < 0) {
		conf_error(
			ctx, conf_mark_of(v), path, name,
			size ? "'%s' is not a size in bytes such as 64M (suffixes K, M, G, T)" :
			       "'%s' is not a non-negative integer",
			conf_scalar(v));
		return false;
	}
	return true;
}

void conf_set_string(struct conf_ctx *ctx, char *dst, size_t size,
		     yaml_node_t *v, const char *path, const char *name)
{
	if (v->type != YAML_SCALAR_NODE) {
		conf_error(ctx, conf_mark_of(v), path, name,
			   "expected a string");
		return;
	}
	if (strlen(conf_scalar(v)) >= size) {
		conf_error(ctx, conf_mark_of(v), path, name,
			   "longer than %zu characters", size - 1);
		return;
	}
	if (strlen(conf_scalar(v)) != v->data.scalar.length) {
		conf_error(ctx, conf_mark_of(v), path, name,
			   "contains a NUL character");
		return;
	}
	/* Names and paths end up in status text, JSON, metric labels, logs. */
	for (const char *c = conf_scalar(v); *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			conf_error(ctx, conf_mark_of(v), path, name,
				   "'%s' contains a control character",
				   conf_scalar(v));
			return;
		}
	strcpy(dst, conf_node_is_empty(v) ? "" : conf_scalar(v));
}

void conf_set_double(struct conf_ctx *ctx, const struct conf_key *k, void *dst,
		     yaml_node_t *v, const char *path)
{
	char *end;
	double d;

	if (v->type != YAML_SCALAR_NODE ||
	    v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
		conf_error(ctx, conf_mark_of(v), path, k->name,
			   "expected a number");
		return;
	}
	errno = 0;
	d = strtod(conf_scalar(v), &end);
	if (!*conf_scalar(v) || *end || errno || !isfinite(d)) {
		conf_error(ctx, conf_mark_of(v), path, k->name,
			   "'%s' is not a number", conf_scalar(v));
		return;
	}
	if (d < k->dmin || d > k->dmax) {
		conf_error(ctx, conf_mark_of(v), path, k->name,
			   "%s is out of range %g..%g", conf_scalar(v),
			   k->dmin, k->dmax);
		return;
	}
	*(double *)dst = d;
}

void conf_set_bool(struct conf_ctx *ctx, const struct conf_key *k, void *dst,
		   yaml_node_t *v, const char *path)
{
	if (v->type == YAML_SCALAR_NODE &&
	    v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (!strcmp(conf_scalar(v), "true") ||
	     !strcmp(conf_scalar(v), "false"))) {
		*(bool *)dst = !strcmp(conf_scalar(v), "true");
		return;
	}
	conf_error(ctx, conf_mark_of(v), path, k->name,
		   "expected true or false");
}

void conf_set_enum(struct conf_ctx *ctx, const struct conf_key *k, void *dst,
		   yaml_node_t *v, const char *path)
{
	char list[256] = "";

	for (int i = 0; k->names[i]; i++) {
		if (v->type == YAML_SCALAR_NODE &&
		    !strcmp(conf_scalar(v), k->names[i])) {
			*(int *)dst = i;
			return;
		}
		snprintf(list + strlen(list),
			 sizeof(list) - strlen(list), "%s%s",
			 i ? (k->names[i + 1] ? ", " : " or ") : "",
			 k->names[i]);
	}
	conf_error(ctx, conf_mark_of(v), path, k->name, "expected %s",
		   list);
}
