// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_proto.h"

#define CLIENT_TIMEOUT_MS 30000

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static uint16_t get16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

void ctl_header_encode(const struct ctl_header *h, uint8_t out[CTL_HEADER_SIZE])
{
	put32(out, CTL_MAGIC);
	put16(out + 4, CTL_VERSION);
	put16(out + 6, h->code);
	put32(out + 8, h->flags);
	put32(out + 12, h->length);
}

int ctl_header_decode(const uint8_t in[CTL_HEADER_SIZE], uint32_t max_payload,
		      struct ctl_header *ret)
{
	if (get32(in) != CTL_MAGIC)
		return -EBADMSG;
	if (get16(in + 4) != CTL_VERSION)
		return -EPROTO;
	ret->code = get16(in + 6);
	ret->flags = get32(in + 8);
	ret->length = get32(in + 12);
	if (ret->flags & ~CTL_F_ALL)
		return -EBADMSG;
	if (ret->length > max_payload)
		return -EMSGSIZE;
	return 0;
}

int ctl_request_parse(const uint8_t *buf, size_t len, struct ctl_header *ret,
		      const uint8_t **ret_payload)
{
	int r;

	if (len < CTL_HEADER_SIZE)
		return -EAGAIN;
	r = ctl_header_decode(buf, CTL_MAX_REQUEST_PAYLOAD, ret);
	if (r < 0)
		return r;
	if (ret->code < CTL_OP_STATUS || ret->code > CTL_OP_MAX)
		return -EOPNOTSUPP;
	if (len < CTL_HEADER_SIZE + (size_t)ret->length)
		return -EAGAIN;
	*ret_payload = buf + CTL_HEADER_SIZE;
	return CTL_HEADER_SIZE + ret->length;
}

int ctl_request_arg(const struct ctl_header *h, const uint8_t *payload,
		    char buf[CTL_MAX_REQUEST_PAYLOAD + 1])
{
	if (h->length > CTL_MAX_REQUEST_PAYLOAD)
		return -EMSGSIZE;
	if (memchr(payload, '\0', h->length))
		return -EBADMSG;
	memcpy(buf, payload, h->length);
	buf[h->length] = '\0';
	return 0;
}

int ctl_op_check_arg(int op, const char *arg)
{
	if (!*arg)
		return 0;
	if (op == CTL_OP_DRY_RUN && (!strcmp(arg, "on") || !strcmp(arg, "off")))
		return 0;
	return -EINVAL;
}

bool ctl_op_mutates(int op, const char *arg)
{
	switch (op) {
	case CTL_OP_STATUS:
	case CTL_OP_NODES:
	case CTL_OP_CGROUPS:
	case CTL_OP_METRICS:
		return false;
	case CTL_OP_DRY_RUN:
		return *arg; /* "" queries */
	default:
		return true;
	}
}

int ctl_message_build(uint16_t code, uint32_t flags, const void *payload,
		      size_t len, uint8_t **ret_buf, size_t *ret_len)
{
	struct ctl_header h = { .code = code, .flags = flags, .length = len };
	uint8_t *buf;

	if (len > CTL_MAX_RESPONSE_PAYLOAD)
		return -EMSGSIZE;
	buf = malloc(CTL_HEADER_SIZE + len);
	if (!buf)
		return -ENOMEM;
	ctl_header_encode(&h, buf);
	if (len)
		memcpy(buf + CTL_HEADER_SIZE, payload, len);
	*ret_buf = buf;
	*ret_len = CTL_HEADER_SIZE + len;
	return 0;
}

int ctl_socket_path(const char *runtime_dir, char *buf, size_t size)
{
	struct sockaddr_un sa;
	int n = snprintf(buf, size, "%s/" CTL_SOCKET_NAME, runtime_dir);

	if (n < 0 || (size_t)n >= size || (size_t)n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	return 0;
}

int ctl_connect(const char *socket_path, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static int io_full(int fd, void *buf, size_t len, bool out)
{
	size_t done = 0;

	while (done < len) {
		struct pollfd p = { .fd = fd,
				    .events = out ? POLLOUT : POLLIN };
		ssize_t n;
		int r = poll(&p, 1, CLIENT_TIMEOUT_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		n = out ? send(fd, (char *)buf + done, len - done,
			       MSG_NOSIGNAL) :
			  recv(fd, (char *)buf + done, len - done, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET; /* closed before the message ended */
		done += n;
	}
	return 0;
}

int ctl_send_request(int fd, enum ctl_op op, uint32_t flags,
		     const char *payload)
{
	size_t plen = payload ? strlen(payload) : 0;
	uint8_t *buf;
	size_t len;
	int r;

	if (plen > CTL_MAX_REQUEST_PAYLOAD)
		return -EMSGSIZE;
	r = ctl_message_build(op, flags, payload, plen, &buf, &len);
	if (r < 0)
		return r;
	r = io_full(fd, buf, len, true);
	free(buf);
	return r;
}

int ctl_read_response(int fd, struct ctl_header *ret, char **ret_payload,
		      size_t *ret_len)
{
	uint8_t hdr[CTL_HEADER_SIZE];
	char *payload;
	int r;

	r = io_full(fd, hdr, sizeof(hdr), false);
	if (r < 0)
		return r;
	r = ctl_header_decode(hdr, CTL_MAX_RESPONSE_PAYLOAD, ret);
	if (r < 0)
		return r;
	if (ret->code > CTL_RESULT_MAX)
		return -EBADMSG;
	payload = malloc(ret->length + 1);
	if (!payload)
		return -ENOMEM;
	r = io_full(fd, payload, ret->length, false);
	if (r < 0) {
		free(payload);
		return r;
	}
	payload[ret->length] = '\0';
	*ret_payload = payload;
	if (ret_len)
		*ret_len = ret->length;
	return 0;
}

const char *ctl_op_name(enum ctl_op op)
{
	static const char *const names[] = {
		[CTL_OP_STATUS] = "status",   [CTL_OP_NODES] = "nodes",
		[CTL_OP_CGROUPS] = "cgroups", [CTL_OP_METRICS] = "metrics",
		[CTL_OP_RELOAD] = "reload",   [CTL_OP_DRY_RUN] = "dry-run",
	};

	return op >= CTL_OP_STATUS && op <= CTL_OP_MAX ? names[op] : "unknown";
}
