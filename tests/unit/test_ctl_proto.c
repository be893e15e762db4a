// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control protocol: header layout on the wire, every length and field
 * checked, partial requests, and a response larger than a socket buffer
 * crossing a socketpair with a writer that sends in pieces.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "test.h"

static void test_layout(void)
{
	struct ctl_header h = { .code = CTL_OP_RELOAD,
				.flags = CTL_F_JSON,
				.length = 0x01020304 };
	static const uint8_t want[CTL_HEADER_SIZE] = {
		'T', 'R', 'D', 'C', 1, 0, CTL_OP_RELOAD, 0, 1, 0,
		0,   0,	  4,   3,   2, 1,
	};
	uint8_t buf[CTL_HEADER_SIZE];
	struct ctl_header back;

	ctl_header_encode(&h, buf);
	CHECK(memcmp(buf, want, sizeof(want)) == 0);
	CHECK_EQ_INT(ctl_header_decode(buf, UINT32_MAX, &back), 0);
	CHECK_EQ_INT(back.code, CTL_OP_RELOAD);
	CHECK_EQ_INT(back.flags, CTL_F_JSON);
	CHECK_EQ_U64(back.length, 0x01020304);
	CHECK_EQ_INT(ctl_header_decode(buf, 0x01020303, &back), -EMSGSIZE);
	buf[0] = 'X';
	CHECK_EQ_INT(ctl_header_decode(buf, UINT32_MAX, &back), -EBADMSG);
	buf[0] = 'T';
	buf[4] = 2;
	CHECK_EQ_INT(ctl_header_decode(buf, UINT32_MAX, &back), -EPROTO);
	buf[4] = 1;
	buf[9] = 0x80; /* unknown flag */
	CHECK_EQ_INT(ctl_header_decode(buf, UINT32_MAX, &back), -EBADMSG);
}

static void test_request_parse(void)
{
	const uint8_t *payload = NULL;
	struct ctl_header h;
	uint8_t *msg;
	size_t len;

	CHECK_EQ_INT(ctl_message_build(CTL_OP_DRY_RUN, 0, "on", 2, &msg, &len),
		     0);
	CHECK_EQ_U64(len, CTL_HEADER_SIZE + 2);
	/* Every prefix is incomplete, the whole is one request. */
	for (size_t i = 0; i < len; i++)
		CHECK_EQ_INT(ctl_request_parse(msg, i, &h, &payload), -EAGAIN);
	CHECK_EQ_INT(ctl_request_parse(msg, len, &h, &payload), (int)len);
	CHECK_EQ_INT(h.code, CTL_OP_DRY_RUN);
	CHECK(payload && memcmp(payload, "on", 2) == 0);
	free(msg);

	CHECK_EQ_INT(ctl_message_build(99, 0, NULL, 0, &msg, &len), 0);
	CHECK_EQ_INT(ctl_request_parse(msg, len, &h, &payload), -EOPNOTSUPP);
	free(msg);
	CHECK_EQ_INT(ctl_message_build(0, 0, NULL, 0, &msg, &len), 0);
	CHECK_EQ_INT(ctl_request_parse(msg, len, &h, &payload), -EOPNOTSUPP);
	free(msg);

	/* A request may not announce more than CTL_MAX_REQUEST_PAYLOAD. */
	char big[CTL_MAX_REQUEST_PAYLOAD + 1];

	memset(big, 'a', sizeof(big));
	CHECK_EQ_INT(ctl_message_build(CTL_OP_STATUS, 0, big, sizeof(big), &msg,
				       &len),
		     0);
	CHECK_EQ_INT(ctl_request_parse(msg, CTL_HEADER_SIZE, &h, &payload),
		     -EMSGSIZE);
	free(msg);
	CHECK_EQ_INT(ctl_message_build(CTL_OK, 0, NULL,
				       CTL_MAX_RESPONSE_PAYLOAD + 1, &msg,
				       &len),
		     -EMSGSIZE);
}

static void test_socket_path(void)
{
	char buf[200], dir[150];

	CHECK_EQ_INT(ctl_socket_path("/run/tierd", buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "/run/tierd/control.sock");
	memset(dir, 'd', sizeof(dir) - 1);
	dir[sizeof(dir) - 1] = '\0';
	CHECK_EQ_INT(ctl_socket_path(dir, buf, sizeof(buf)), -ENAMETOOLONG);
	CHECK_EQ_INT(ctl_connect("/nonexistent/tierd/control.sock",
				 &(int){ 0 }),
		     -ENOENT);
}

static void test_round_trip(void)
{
	const size_t big = 3 << 20; /* far more than a socket buffer */
	struct ctl_header h;
	char *payload = NULL;
	int sv[2], status;
	size_t len = 0;
	pid_t pid;

	CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	if (pid == 0) {
		uint8_t req[CTL_HEADER_SIZE + CTL_MAX_REQUEST_PAYLOAD], *msg;
		const uint8_t *pl;
		size_t got = 0, mlen;
		struct ctl_header rh;
		char *text = malloc(big);
		int n = -EAGAIN;

		close(sv[0]);
		while (n == -EAGAIN) {
			ssize_t r = read(sv[1], req + got,
					 1); /* a byte at a time */

			if (r <= 0)
				_exit(2);
			got += r;
			n = ctl_request_parse(req, got, &rh, &pl);
		}
		if (n < 0 || rh.code != CTL_OP_METRICS ||
		    rh.flags != CTL_F_JSON || rh.length != 0)
			_exit(3);
		for (size_t i = 0; i < big; i++)
			text[i] = 'a' + i % 26;
		if (ctl_message_build(CTL_OK, 0, text, big, &msg, &mlen) < 0)
			_exit(4);
		for (size_t off = 0; off < mlen;) {
			ssize_t w =
				write(sv[1], msg + off,
				      mlen - off < 4096 ? mlen - off : 4096);

			if (w <= 0)
				_exit(5);
			off += w;
		}
		_exit(0);
	}
	close(sv[1]);
	CHECK_EQ_INT(ctl_send_request(sv[0], CTL_OP_METRICS, CTL_F_JSON, NULL),
		     0);
	CHECK_EQ_INT(ctl_read_response(sv[0], &h, &payload, &len), 0);
	CHECK_EQ_INT(h.code, CTL_OK);
	CHECK_EQ_U64(len, big);
	CHECK(payload && payload[0] == 'a' &&
	      payload[big - 1] == 'a' + (big - 1) % 26 && payload[big] == '\0');
	free(payload);
	/* The server closed: another read is a reset, not a hang. */
	CHECK_EQ_INT(ctl_read_response(sv[0], &h, &payload, &len), -ECONNRESET);
	close(sv[0]);
	CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* No op takes a path or free text; only the read-only ones are open to all. */
static void test_ops_and_args(void)
{
	static const char *const args[] = { "/etc/shadow", "../x", "on ",
					    "of", "1" };

	for (int op = CTL_OP_STATUS; op <= CTL_OP_MAX; op++) {
		CHECK_EQ_INT(ctl_op_check_arg(op, ""), 0);
		for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
			CHECK_EQ_INT(ctl_op_check_arg(op, args[i]), -EINVAL);
		CHECK_EQ_INT(ctl_op_check_arg(op, "on"),
			     op == CTL_OP_DRY_RUN ? 0 : -EINVAL);
		CHECK_EQ_INT(ctl_op_check_arg(op, "off"),
			     op == CTL_OP_DRY_RUN ? 0 : -EINVAL);
	}
	CHECK(!ctl_op_mutates(CTL_OP_STATUS, ""));
	CHECK(!ctl_op_mutates(CTL_OP_NODES, ""));
	CHECK(!ctl_op_mutates(CTL_OP_CGROUPS, ""));
	CHECK(!ctl_op_mutates(CTL_OP_METRICS, ""));
	CHECK(!ctl_op_mutates(CTL_OP_DRY_RUN, ""));
	CHECK(ctl_op_mutates(CTL_OP_DRY_RUN, "on"));
	CHECK(ctl_op_mutates(CTL_OP_DRY_RUN, "off"));
	CHECK(ctl_op_mutates(CTL_OP_RELOAD, ""));
	/* Fail closed for an op this build does not know. */
	CHECK(ctl_op_mutates(0, ""));
	CHECK(ctl_op_mutates(CTL_OP_MAX + 1, ""));
}

/* The argument as a C string; a NUL inside it is refused. */
static void test_request_arg(void)
{
	char arg[CTL_MAX_REQUEST_PAYLOAD + 1];
	struct ctl_header h = { .code = CTL_OP_DRY_RUN, .length = 3 };

	CHECK_EQ_INT(ctl_request_arg(&h, (const uint8_t *)"off", arg), 0);
	CHECK_EQ_STR(arg, "off");
	CHECK_EQ_INT(ctl_request_arg(&h, (const uint8_t *)"o\0n", arg),
		     -EBADMSG);
	h.length = 0;
	CHECK_EQ_INT(ctl_request_arg(&h, (const uint8_t *)"", arg), 0);
	CHECK_EQ_STR(arg, "");
	h.length = CTL_MAX_REQUEST_PAYLOAD + 1;
	CHECK_EQ_INT(ctl_request_arg(&h, (const uint8_t *)"", arg), -EMSGSIZE);
}

int main(void)
{
	RUN(test_layout);
	RUN(test_request_parse);
	RUN(test_socket_path);
	RUN(test_round_trip);
	RUN(test_ops_and_args);
	RUN(test_request_arg);
	return TEST_EXIT();
}
