/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control socket's message format, written once for tierd and tierctl.
 *
 * A message is a 16-byte header and a payload:
 *
 *   offset size  field
 *   0      4     magic   "TRDC" (0x43445254 little-endian)
 *   4      2     version CTL_VERSION
 *   6      2     code    request: enum ctl_op; response: enum ctl_result
 *   8      4     flags   CTL_F_*
 *   12     4     length  payload bytes that follow
 *
 * All fields little-endian.  A request's payload is at most
 * CTL_MAX_REQUEST_PAYLOAD bytes (dry-run's "on"/"off"); a response's at most
 * CTL_MAX_RESPONSE_PAYLOAD bytes of UTF-8 text (human or JSON, per CTL_F_JSON).
 * One request per connection; the server answers and closes.
 *
 * Functions return 0 (or a byte count) or a negative errno.
 */
#ifndef TIERD_CTL_PROTO_H
#define TIERD_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_MAGIC 0x43445254u
#define CTL_VERSION 1
#define CTL_HEADER_SIZE 16
#define CTL_MAX_REQUEST_PAYLOAD 64
#define CTL_MAX_RESPONSE_PAYLOAD (4u << 20)
#define CTL_SOCKET_NAME "control.sock"

#define CTL_F_JSON 0x1u
#define CTL_F_ALL (CTL_F_JSON)

enum ctl_op {
	CTL_OP_STATUS = 1,
	CTL_OP_NODES,
	CTL_OP_CGROUPS,
	CTL_OP_METRICS,
	CTL_OP_RELOAD, /* privileged */
	CTL_OP_DRY_RUN, /* payload "" queries; "on"/"off" sets (privileged) */
	CTL_OP_MAX = CTL_OP_DRY_RUN,
};

enum ctl_result {
	CTL_OK = 0,
	CTL_FAILED = 1, /* the request was valid but did not succeed */
	CTL_DENIED = 2, /* the peer may not do this */
	CTL_BAD_REQUEST = 3,
	CTL_RESULT_MAX = CTL_BAD_REQUEST,
};

struct ctl_header {
	uint16_t code;
	uint32_t flags;
	uint32_t length;
};

/* Write @h into @out. */
void ctl_header_encode(const struct ctl_header *h,
		       uint8_t out[CTL_HEADER_SIZE]);

/* Read and check a header: -EBADMSG for a wrong magic or unknown flags,
 * -EPROTO for another version, -EMSGSIZE when length exceeds @max_payload. */
int ctl_header_decode(const uint8_t in[CTL_HEADER_SIZE], uint32_t max_payload,
		      struct ctl_header *ret);

/*
 * A complete request in the @len bytes at @buf?  Returns the bytes it takes
 * (header + payload) and fills *ret and *ret_payload (pointing into @buf);
 * -EAGAIN when more bytes are needed; -EBADMSG/-EPROTO/-EMSGSIZE for a bad
 * header; -EOPNOTSUPP for an unknown op.
 */
int ctl_request_parse(const uint8_t *buf, size_t len, struct ctl_header *ret,
		      const uint8_t **ret_payload);

/*
 * The request's argument as a C string in @buf (CTL_MAX_REQUEST_PAYLOAD + 1
 * bytes): -EBADMSG when the payload holds a NUL byte.
 */
int ctl_request_arg(const struct ctl_header *h, const uint8_t *payload,
		    char buf[CTL_MAX_REQUEST_PAYLOAD + 1]);

/*
 * 0 when @arg is an argument @op takes: "" for every op, "on" or "off" for
 * dry-run; -EINVAL for anything else.  No request carries a path or other
 * free text, so no client can point tierd at a file.
 */
int ctl_op_check_arg(int op, const char *arg);

/*
 * Whether @op with @arg changes tierd's state, and so needs root or
 * control.group.  Only the ops listed as read-only here are open to
 * everyone: an op added later is refused to unprivileged peers until it is.
 */
bool ctl_op_mutates(int op, const char *arg);

/* Header + payload into one malloc'd buffer, for sending. */
int ctl_message_build(uint16_t code, uint32_t flags, const void *payload,
		      size_t len, uint8_t **ret_buf, size_t *ret_len);

/* "@runtime_dir/control.sock"; -ENAMETOOLONG when it will not fit a sun_path. */
int ctl_socket_path(const char *runtime_dir, char *buf, size_t size);

/* Blocking client side (tierctl): connect, send one request, read the
 * response.  ctl_connect: -ENOENT/-ECONNREFUSED when tierd is not running. */
int ctl_connect(const char *socket_path, int *ret_fd);
int ctl_send_request(int fd, enum ctl_op op, uint32_t flags,
		     const char *payload);
/* *ret_payload is malloc'd and NUL-terminated; *ret_len excludes the NUL. */
int ctl_read_response(int fd, struct ctl_header *ret, char **ret_payload,
		      size_t *ret_len);

const char *ctl_op_name(enum ctl_op op);

#endif
