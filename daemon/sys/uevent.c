// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "uevent.h"

/* The kernel's uevent multicast group (udevd rebroadcasts on group 2). */
#define UEVENT_GROUP_KERNEL 1
#define UEVENT_DRAIN_MAX 256

int uevent_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = UEVENT_GROUP_KERNEL };
	int fd, r;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    NETLINK_KOBJECT_UEVENT);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/* The value of KEY= among the message's NUL-separated fields, or NULL. */
static const char *field(const char *buf, size_t len, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < len;) {
		const char *f = buf + i;
		size_t flen = strnlen(f, len - i);

		if (flen > klen && !memcmp(f, key, klen) && f[klen] == '=' &&
		    i + flen < len)
			return f + klen + 1;
		i += flen + 1;
	}
	return NULL;
}

bool uevent_is_topology(const char *buf, size_t len)
{
	static const char *const actions[] = { "add", "remove", "online", "offline" };
	const char *subsystem = field(buf, len, "SUBSYSTEM"), *action;

	if (!subsystem || (strcmp(subsystem, "memory") && strcmp(subsystem, "node")))
		return false;
	action = field(buf, len, "ACTION");
	if (!action)
		return false;
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!strcmp(action, actions[i]))
			return true;
	return false;
}

int uevent_drain(int fd)
{
	char buf[8192];
	int changed = 0;

	for (int n = 0; n < UEVENT_DRAIN_MAX; n++) {
		struct sockaddr_nl from;
		socklen_t flen = sizeof(from);
		ssize_t len = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
				       (struct sockaddr *)&from, &flen);

		if (len < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS) { /* messages lost: look again */
				changed = 1;
				continue;
			}
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* The kernel sends as port 0; anyone else is not the kernel. */
		if (flen != sizeof(from) || from.nl_pid != 0)
			continue;
		if (uevent_is_topology(buf, (size_t)len))
			changed = 1;
	}
	return changed;
}
