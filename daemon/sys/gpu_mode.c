// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the open NVIDIA driver (open-gpu-kernel-modules) shows of its mode:
 * /proc/driver/nvidia/params lists its module parameters one a line, as
 * "Name: value", strings quoted, among them
 *
 *	CoherentGPUMemoryMode: "driver"
 *	EnableUserNUMAManagement: 0
 *
 * NVreg_CoherentGPUMemoryMode=driver selects coherent driver-managed
 * memory (CDMM), and the driver then sets EnableUserNUMAManagement to 0;
 * any other value of it sets EnableUserNUMAManagement to 1, the HBM as a
 * NUMA node (os-registry.c).  Left unset (the line reads ""), recent
 * drivers choose CDMM when a coherent GPU initialises, again by setting
 * EnableUserNUMAManagement to 0 (nv_enable_cdmm_mode()).  So the explicit
 * CoherentGPUMemoryMode decides, else EnableUserNUMAManagement; a driver
 * with neither line predates CDMM and onlines the HBM as a node.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fsutil.h"
#include "gpu_mode.h"

#define PARAMS "proc/driver/nvidia/params"

const char *gpu_mode_name(enum gpu_mode m)
{
	switch (m) {
	case GPU_MODE_NUMA:
		return "numa";
	case GPU_MODE_CDMM:
		return "cdmm";
	default:
		return "none";
	}
}

/* The value of line "@name: value" of @text into @buf, quotes removed;
 * false when there is no such line. */
static bool param(const char *text, const char *name, char *buf, size_t size)
{
	size_t n = strlen(name);

	for (const char *l = text; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n')) {
		size_t len;

		if (strncmp(l, name, n) || l[n] != ':')
			continue;
		l += n + 1;
		l += strspn(l, " \t");
		len = strcspn(l, "\n");
		if (len >= 2 && l[0] == '"' && l[len - 1] == '"') {
			l++;
			len -= 2;
		}
		if (len >= size)
			len = size - 1;
		memcpy(buf, l, len);
		buf[len] = '\0';
		return true;
	}
	return false;
}

int gpu_mode_read(const char *root, struct gpu_mode_info *ret)
{
	char text[16384];
	char mode[64], numa[16];
	bool has_mode, has_numa;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = fs_read(root, PARAMS, text, sizeof(text), NULL);
	if (r == -ENOENT) {
		ret->mode = GPU_MODE_NONE;
		snprintf(ret->why, sizeof(ret->why), "no NVIDIA driver (/%s)", PARAMS);
		return 0;
	}
	if (r < 0)
		return r;
	has_mode = param(text, "CoherentGPUMemoryMode", mode, sizeof(mode));
	has_numa = param(text, "EnableUserNUMAManagement", numa, sizeof(numa));
	if (has_mode && mode[0]) {
		ret->mode = strcmp(mode, "driver") ? GPU_MODE_NUMA : GPU_MODE_CDMM;
		snprintf(ret->why, sizeof(ret->why), "CoherentGPUMemoryMode \"%s\"", mode);
	} else if (has_numa) {
		ret->mode = strcmp(numa, "0") ? GPU_MODE_NUMA : GPU_MODE_CDMM;
		snprintf(ret->why, sizeof(ret->why), "EnableUserNUMAManagement %s%s", numa,
			 has_mode ? ", CoherentGPUMemoryMode unset" : "");
	} else {
		ret->mode = GPU_MODE_NUMA;
		snprintf(ret->why, sizeof(ret->why), "a driver without CDMM");
	}
	return 0;
}
