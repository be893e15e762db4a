// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the control protocol, both directions.
 *
 *   1. The bytes as what a client sent tierd: ctl_request_parse() and
 *      ctl_request_arg(), as ctl_server.c calls them.  A parsed request must
 *      be re-encoded byte for byte by ctl_message_build(), and every shorter
 *      prefix of it must be "need more" (-EAGAIN) or the same header error,
 *      since the server parses each time more bytes arrive.
 *   2. The bytes as what tierctl reads back: written into a socketpair,
 *      the writer closed, then ctl_read_response().  A response that is
 *      accepted has a known result code and a NUL-terminated payload of
 *      exactly its header's length.
 * A broken invariant aborts, which libFuzzer reports as a crash.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_proto.h"

/* Stays below a socketpair's buffer, so the write never blocks. */
#define MAX_RESPONSE_INPUT (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void request(const uint8_t *data, size_t size)
{
	char arg[CTL_MAX_REQUEST_PAYLOAD + 1];
	const uint8_t *payload = NULL;
	struct ctl_header h, h2;
	uint8_t *msg;
	size_t len;
	int r, r2;

	r = ctl_request_parse(data, size, &h, &payload);
	if (r == -EAGAIN || r == -EBADMSG || r == -EPROTO || r == -EMSGSIZE ||
	    r == -EOPNOTSUPP) {
		if (r != -EAGAIN && size < CTL_HEADER_SIZE)
			abort();
		return;
	}
	if (r != CTL_HEADER_SIZE + (int)h.length || (size_t)r > size ||
	    h.length > CTL_MAX_REQUEST_PAYLOAD || h.code < CTL_OP_STATUS ||
	    h.code > CTL_OP_MAX || (h.flags & ~CTL_F_ALL) ||
	    payload != data + CTL_HEADER_SIZE)
		abort();
	for (size_t k = 0; k < (size_t)r; k++) {
		r2 = ctl_request_parse(data, k, &h2, &payload);
		if (r2 != -EAGAIN)
			abort();
	}
	payload = data + CTL_HEADER_SIZE;
	if (ctl_message_build(h.code, h.flags, payload, h.length, &msg, &len))
		abort();
	if (len != (size_t)r || memcmp(msg, data, len))
		abort();
	free(msg);
	r = ctl_request_arg(&h, payload, arg);
	if (r == 0 &&
	    (strlen(arg) != h.length || memcmp(arg, payload, h.length)))
		abort();
	if (r == -EBADMSG && !memchr(payload, '\0', h.length))
		abort();
	if (r != 0 && r != -EBADMSG)
		abort();
	/* What the server then allows: no argument but dry-run's on/off,
	 * and only read-only requests without privileges. */
	if (r == 0 && ctl_op_check_arg(h.code, arg) == 0) {
		bool onoff = !strcmp(arg, "on") || !strcmp(arg, "off");

		if (*arg && !(h.code == CTL_OP_DRY_RUN && onoff))
			abort();
		if (!ctl_op_mutates(h.code, arg) && h.code == CTL_OP_RELOAD)
			abort();
		if (ctl_op_mutates(h.code, arg) !=
		    (h.code == CTL_OP_RELOAD || onoff))
			abort();
	}
}

static void response(const uint8_t *data, size_t size)
{
	struct ctl_header h;
	char *payload = NULL;
	size_t len = 0;
	int sv[2], r;

	if (size > MAX_RESPONSE_INPUT)
		return;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	if (size && write(sv[1], data, size) != (ssize_t)size)
		abort();
	close(sv[1]);
	r = ctl_read_response(sv[0], &h, &payload, &len);
	close(sv[0]);
	if (r < 0) {
		if (payload)
			abort();
		return;
	}
	if (h.code > CTL_RESULT_MAX || len != h.length ||
	    CTL_HEADER_SIZE + len > size || payload[len] != '\0' ||
	    memcmp(payload, data + CTL_HEADER_SIZE, len))
		abort();
	free(payload);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	request(data, size);
	response(data, size);
	return 0;
}
