/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's uevents for memory hotplug: a NETLINK_KOBJECT_UEVENT socket
 * on the kernel's multicast group, and which of its messages say the NUMA
 * topology may have changed.
 *
 * A DIMM, a CXL region or a GPU's HBM that comes online shows up as a node
 * device added (subsystem "node", the first memory of a node), memory block
 * devices added ("memory"), then each block onlined (ACTION=online); going
 * away is the same backwards.  The kernel's own messages are read rather
 * than udev's (libudev, sd-device's monitor): those are udevd's rebroadcast,
 * which needs systemd-udevd running, and tierd needs only the fact, not
 * udev's database.  Messages from any sender but the kernel are ignored.
 */
#ifndef TIERD_SYS_UEVENT_H
#define TIERD_SYS_UEVENT_H

#include <stdbool.h>
#include <stddef.h>

/* A non-blocking, close-on-exec socket on the kernel's uevents: its
 * descriptor, or a negative errno (-EAFNOSUPPORT where the service's
 * sandbox denies AF_NETLINK). */
int uevent_open(void);

/* Does the message @buf of @len bytes ("ACTION@DEVPATH\0KEY=VALUE\0...")
 * announce a node or memory block added, removed, onlined or offlined? */
bool uevent_is_topology(const char *buf, size_t len);

/*
 * Read what is waiting on @fd, at most 256 messages.  Returns 1 when one
 * of them may change the topology (or messages were lost: the socket's
 * buffer overflowed), 0 when none did, or a negative errno.
 */
int uevent_drain(int fd);

#endif
