// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pipeline's modules, in tick order (see daemon.h).  Each helper adds
 * one line here and a `extern const struct tierd_module NAME_module;` in its
 * header; nothing else in daemon/ changes.
 */
#include <stddef.h>

#include "daemon.h"
#include "threads.h"

const struct tierd_module *const tierd_modules[] = {
	/* 1. sample:  sys/sampler_bpf.c, sys/sampler_damon.c -> core/hotness.c */
	/* 2. decide:  core/policy.c, core/batch.c, core/budget.c */
	/* 3. migrate: sys/migrate.c -> core/account.c */
	/* 4. threads: copy-thread controller, sys/knobs.c */
	&threads_module,
	NULL,
};
