/* SPDX-License-Identifier: GPL-2.0-only */
/* The pipeline's modules (pipeline.h says what each does). */
#ifndef TIERD_MODULES_H
#define TIERD_MODULES_H

#include "daemon.h"

extern const struct tierd_module sample_module;
extern const struct tierd_module decide_module;
extern const struct tierd_module migrate_module;
/* threads_module: threads.h */

#endif
