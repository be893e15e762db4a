/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The scalar converters of the config walker (conf_walk.c): each checks one
 * YAML node against its key and stores it, or reports with conf_error().
 */
#ifndef TIERD_CONF_SCALAR_H
#define TIERD_CONF_SCALAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf_walk.h"

static inline const char *conf_scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* Convert an integer (or, with @size, a size such as 64M) in @min..@max;
 * false after reporting. */
bool conf_get_uint(struct conf_ctx *ctx, yaml_node_t *v, const char *path,
		   const char *name, uint64_t min, uint64_t max, bool size,
		   uint64_t *ret);

/* Copy a string of fewer than @size characters, without control
 * characters, into @dst. */
void conf_set_string(struct conf_ctx *ctx, char *dst, size_t size,
		     yaml_node_t *v, const char *path, const char *name);

/* CONF_DOUBLE, CONF_BOOL and CONF_ENUM values of key @k into @dst. */
void conf_set_double(struct conf_ctx *ctx, const struct conf_key *k, void *dst,
		     yaml_node_t *v, const char *path);
void conf_set_bool(struct conf_ctx *ctx, const struct conf_key *k, void *dst,
		   yaml_node_t *v, const char *path);
void conf_set_enum(struct conf_ctx *ctx, const struct conf_key *k, void *dst,
		   yaml_node_t *v, const char *path);

#endif
