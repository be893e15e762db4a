/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which memory mode NVIDIA's driver runs a coherent GPU's memory in
 * (Grace Hopper, Grace Blackwell: HBM coherent over NVLink-C2C):
 *
 *   numa  the HBM is onlined as a CPU-less NUMA node: the kernel allocates
 *         from it, move_pages(2) moves pages to it, tierd's gpu_nodes rules
 *         place pages there;
 *   cdmm  coherent driver-managed memory: the driver keeps the HBM to itself
 *         and it is no NUMA node at all; gpu_nodes rules have nothing to act
 *         on and stay inert.
 *
 * Read from the driver's ROOT/proc/driver/nvidia/params, which tests point
 * at a fixture tree.
 */
#ifndef TIERD_SYS_GPU_MODE_H
#define TIERD_SYS_GPU_MODE_H

#include <stddef.h>

enum gpu_mode {
	GPU_MODE_NONE, /* no NVIDIA driver loaded */
	GPU_MODE_NUMA,
	GPU_MODE_CDMM,
};

struct gpu_mode_info {
	enum gpu_mode mode;
	char why[160]; /* what it was told by, for the journal and status */
};

/* The driver's mode under @root.  0 (GPU_MODE_NONE when the driver is not
 * loaded), or a negative errno when its params file cannot be read. */
int gpu_mode_read(const char *root, struct gpu_mode_info *ret);

/* "none", "numa", "cdmm" */
const char *gpu_mode_name(enum gpu_mode m);

#endif
