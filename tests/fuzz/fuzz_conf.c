// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: tierd.yaml bytes through conf_parse(), the entry point
 * conf_load() and a SIGHUP reload use.  Beyond "no crash, no leak, no UB"
 * (ASan, UBSan, LSan), the result must keep the parser's contract:
 *   - 0: every count within its array, every string NUL-terminated in its
 *     buffer, and conf_tiers_config() accepts the result;
 *   - -EINVAL: a non-empty error text, one "fuzz.yaml:LINE:COLUMN: " line
 *     per error (or the trailing "N more errors" line);
 *   - nothing else.
 * A broken invariant aborts, which libFuzzer reports as a crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

#define NAME "fuzz.yaml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_str(const char *s, size_t size)
{
	if (!memchr(s, '\0', size))
		abort();
}

static void check_ok(const struct tierd_conf *c)
{
	struct tiers_config tc;

	if (c->nr_tiers < 0 || c->nr_tiers > TOPO_MAX_TIERS ||
	    c->nr_gpu_nodes < 0 || c->nr_gpu_nodes > CONF_MAX_GPU_NODES ||
	    c->nr_cgroups < 0 || c->nr_cgroups > CONF_MAX_CGROUPS)
		abort();
	for (int i = 0; i < c->nr_cgroups; i++)
		check_str(c->cgroups[i].path, sizeof(c->cgroups[i].path));
	for (int i = 0; i < c->nr_gpu_nodes; i++)
		if (c->gpu_nodes[i].allow.n < 0 ||
		    c->gpu_nodes[i].allow.n > CONF_MAX_PATTERNS)
			abort();
	if (c->sampling.target_comms.n > CONF_MAX_PATTERNS ||
	    c->sampling.target_cgroups.n > CONF_MAX_PATTERNS)
		abort();
	check_str(c->metrics.textfile_dir, sizeof(c->metrics.textfile_dir));
	check_str(c->control.group, sizeof(c->control.group));
	conf_tiers_config(c, &tc);
}

static void check_errors(const char *e)
{
	if (!e || !*e)
		abort();
	for (const char *line = e; *line; line = strchr(line, '\n') + 1) {
		if (!strchr(line, '\n'))
			abort(); /* every line ends in a newline */
		if (strncmp(line, NAME ":", strlen(NAME ":")))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tierd_conf conf; /* ~100 KB: not on the stack */
	char *errors = NULL;
	int r;

	r = conf_parse(NAME, (const char *)data, size, &conf, &errors);
	if (r == 0 && !errors)
		check_ok(&conf);
	else if (r == -EINVAL)
		check_errors(errors);
	else if (r != -ENOMEM)
		abort();
	free(errors);
	return 0;
}
