// SPDX-License-Identifier: GPL-2.0-only
/* The table of systems tierd-sim knows, by name. */
#include <string.h>

#include "damos.h"
#include "numab.h"
#include "system.h"

extern const struct sim_system sim_sys_none, sim_sys_all_dram, sim_sys_oracle,
	sim_sys_oracle_fill, sim_sys_oracle_seen, sim_sys_tierd_vanilla, sim_sys_tierd_patched;

const struct sim_system *const sim_systems[] = {
	&sim_sys_none, &sim_sys_all_dram, &sim_sys_oracle, &sim_sys_oracle_fill,
	&sim_sys_oracle_seen,
	&sim_sys_numab, &sim_sys_damos, &sim_sys_tierd_vanilla, &sim_sys_tierd_patched, NULL,
};

const struct sim_system *sim_system_find(const char *name)
{
	for (int i = 0; sim_systems[i]; i++)
		if (!strcmp(sim_systems[i]->name, name))
			return sim_systems[i];
	return NULL;
}
