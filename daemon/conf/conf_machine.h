/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A parsed policy against the machine it is to run on.  `tierd
 * --check-config` and a load or reload of the policy call the same
 * function, so the check and the reload give the same verdict for the same
 * file on the same machine.
 */
#ifndef TIERD_CONF_MACHINE_H
#define TIERD_CONF_MACHINE_H

#include <sys/types.h>

#include "conf.h"

/*
 * Check @conf against this machine: @topo, as topo_read() gives it (its
 * tier part is filled here, by tiers_derive()), the groups of the name
 * service, and the cgroups below ROOT/sys/fs/cgroup (@root "/" on a real
 * system, a fixture tree in tests).
 *
 * Errors, each "FILE:LINE:COLUMN: KEY: reason\n" in *ret_errors: a node in
 * tiers: or gpu_nodes: that is not a memory node of @topo, a control.group
 * that does not exist.  Warnings, the same form in *ret_warnings: a cgroup
 * the policy names that does not exist (yet); the policy runs, and applies
 * to the cgroup once it exists.  Either is NULL when there is none; the
 * caller frees both, whatever the return.
 *
 * Returns 0 with *ret_gid the group's id ((gid_t)-1 when control.group is
 * empty); -ENODEV for a missing node, else -ENOENT for a missing group or
 * the -errno of the group lookup, each with *ret_errors; -ENOMEM, with
 * neither text.
 */
int conf_check_machine(const struct tierd_conf *conf, struct topology *topo,
		       const char *root, gid_t *ret_gid, char **ret_errors,
		       char **ret_warnings);

#endif
