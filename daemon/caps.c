// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"

#define MAX_CAP 63 /* the sets are 64 bits wide */

static uint64_t join(uint32_t lo, uint32_t hi)
{
	return lo | (uint64_t)hi << 32;
}

int caps_get(struct caps_state *ret)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &h, data) < 0)
		return -errno;
	ret->effective = join(data[0].effective, data[1].effective);
	ret->permitted = join(data[0].permitted, data[1].permitted);
	ret->inheritable = join(data[0].inheritable, data[1].inheritable);
	ret->bounding = 0;
	ret->ambient = 0;
	for (int c = 0; c <= MAX_CAP; c++) {
		int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);

		if (r < 0)
			break; /* EINVAL past the kernel's last capability */
		if (r)
			ret->bounding |= CAPS_BIT(c);
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) > 0)
			ret->ambient |= CAPS_BIT(c);
	}
	return 0;
}

int caps_restrict(uint64_t keep, struct caps_state *ret)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3
	};
	struct __user_cap_data_struct data[2] = { 0 };
	struct caps_state now;
	uint64_t set;
	int r;

	r = caps_get(&now);
	if (r < 0)
		return r;
	/* The bounding set first: dropping from it needs CAP_SETPCAP, which
	 * the capset() below takes away. */
	if (now.effective & CAPS_BIT(CAP_SETPCAP))
		for (int c = 0; c <= MAX_CAP; c++)
			if ((now.bounding & CAPS_BIT(c)) &&
			    !(keep & CAPS_BIT(c)) &&
			    prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
				return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return -errno;
	set = now.permitted & keep;
	data[0].permitted = data[0].effective = (uint32_t)set;
	data[1].permitted = data[1].effective = (uint32_t)(set >> 32);
	if (syscall(SYS_capset, &h, data) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return ret ? caps_get(ret) : 0;
}

void caps_format(uint64_t set, char *buf, size_t size)
{
	static const char *const names[] = {
		[CAP_SYS_NICE] = "cap_sys_nice",
		[CAP_SYS_PTRACE] = "cap_sys_ptrace",
		[CAP_BPF] = "cap_bpf",
		[CAP_PERFMON] = "cap_perfmon",
	};
	size_t o = 0;

	buf[0] = '\0';
	for (int c = 0; c <= MAX_CAP && o < size; c++) {
		if (!(set & CAPS_BIT(c)))
			continue;
		if (c < (int)(sizeof(names) / sizeof(names[0])) && names[c])
			o += snprintf(buf + o, size - o, "%s%s", o ? "," : "",
				      names[c]);
		else
			o += snprintf(buf + o, size - o, "%scap_%d",
				      o ? "," : "", c);
	}
	if (!o)
		snprintf(buf, size, "none");
}
