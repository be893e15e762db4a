/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tierd.yaml's schema: the table of its top-level keys (conf_schema.c),
 * for conf_file.c to walk documents against and the tests to read.
 */
#ifndef TIERD_CONF_SCHEMA_H
#define TIERD_CONF_SCHEMA_H

#include "conf_walk.h"

extern const struct conf_table conf_root_table;

#endif
