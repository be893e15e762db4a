// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "ctl_cmd.h"
#include "ctl_proto.h"
#include "ctl_server.h"
#include "log.h"

/*
 * Connection bounds.  Any local user may connect, so no user may take every
 * slot: an unprivileged uid holds at most MAX_CONNS_PER_UID connections and
 * all of them together MAX_CONNS; privileged peers (root, control.group)
 * have MAX_PRIV_CONNS more on top, so `tierctl reload` (ExecReload=) gets
 * through a flood.  Each connection lives at most CONN_TIMEOUT_USEC.
 */
#define MAX_CONNS 16
#define MAX_CONNS_PER_UID 4
#define MAX_PRIV_CONNS 8
#define CONN_TIMEOUT_USEC \
	(5 * 1000000ull) /* a client gets 5 s to send and read */
#define MAX_PEER_GROUPS 256
/* How long the socket is not watched after accept4() ran out of fds or memory. */
#define ACCEPT_PAUSE_USEC (250 * 1000ull)
/* Refusals are logged at most LOG_BURST times per LOG_WINDOW_NS. */
#define LOG_BURST 10
#define LOG_WINDOW_NS (10 * 1000000000ull)

struct conn {
	struct ctl_server *srv;
	struct conn *next;
	int fd;
	sd_event_source *io, *timer;
	struct ucred cred;
	bool privileged;
	uint8_t in[CTL_HEADER_SIZE + CTL_MAX_REQUEST_PAYLOAD];
	size_t in_len;
	uint8_t *out;
	size_t out_len, out_off;
};

struct ctl_server {
	struct tierd *d;
	int fd;
	char path[108];
	sd_event_source *io;
	sd_event_source *resume; /* while accepting is paused, see accept_pause() */
	bool accept_failing; /* accept4() failed for want of fds or memory, not since succeeded */
	struct conn *conns;
	int nr_conns, nr_unpriv;
	uint64_t log_window_ns;
	int log_count, log_suppressed;
};

static uint64_t now_ns(void);

static void conn_free(struct conn *c)
{
	struct conn **p;

	for (p = &c->srv->conns; *p != c; p = &(*p)->next)
		;
	*p = c->next;
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	close(c->fd);
	free(c->out);
	c->srv->nr_conns--;
	if (!c->privileged)
		c->srv->nr_unpriv--;
	free(c);
}

/* Whether to log one more refusal now; says how many were not logged. */
static bool refusal_log_ok(struct ctl_server *s)
{
	uint64_t now = now_ns();

	if (now - s->log_window_ns >= LOG_WINDOW_NS) {
		if (s->log_suppressed)
			log_notice(
				"Control socket: %d more refusals not logged",
				s->log_suppressed);
		s->log_window_ns = now;
		s->log_count = 0;
		s->log_suppressed = 0;
	}
	if (s->log_count < LOG_BURST) {
		s->log_count++;
		return true;
	}
	s->log_suppressed++;
	return false;
}

/* Room for one more connection from @cred? */
static bool conn_admit(struct ctl_server *s, const struct ucred *cred,
		       bool privileged)
{
	int same = 0;

	if (privileged)
		return s->nr_conns < MAX_CONNS + MAX_PRIV_CONNS;
	if (s->nr_unpriv >= MAX_CONNS)
		return false;
	for (struct conn *c = s->conns; c; c = c->next)
		if (c->cred.uid == cred->uid)
			same++;
	return same < MAX_CONNS_PER_UID;
}

/* Root, or the peer's primary or supplementary groups include control.group. */
static bool peer_privileged(struct tierd *d, int fd, const struct ucred *cred)
{
	gid_t groups[MAX_PEER_GROUPS];
	socklen_t len = sizeof(groups);

	if (cred->uid == 0)
		return true;
	if (d->control_gid == (gid_t)-1)
		return false;
	if (cred->gid == d->control_gid)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == d->control_gid)
			return true;
	return false;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Say why a peer may not run @h's request, and log it (rate-limited). */
static int deny(struct conn *c, const struct ctl_header *h, bool json, FILE *f)
{
	const struct tierd *d = c->srv->d;
	char why[4096];

	if (refusal_log_ok(c->srv))
		log_notice(
			"Refused %s from uid %u (pid %d): not root%s%s",
			ctl_op_name(h->code), c->cred.uid, c->cred.pid,
			d->conf->control.group[0] ? " nor in group " :
						    "",
			d->conf->control.group);
	snprintf(why, sizeof(why),
		 "permission denied: %s needs root%s%s\n",
		 ctl_op_name(h->code),
		 d->conf->control.group[0] ? " or group " : "",
		 d->conf->control.group);
	if (json)
		ctl_json_message(f, false, why);
	else
		fputs(why, f);
	return CTL_DENIED;
}

/* Check one request and the peer's right to it, then run it; the text goes
 * to @f; returns an enum ctl_result. */
static int handle(struct conn *c, const struct ctl_header *h, const char *arg,
		  FILE *f)
{
	if (ctl_op_check_arg(h->code, arg) < 0) {
		fprintf(f, "%s takes %s\n", ctl_op_name(h->code),
			h->code == CTL_OP_DRY_RUN ? "on, off or nothing" :
						    "no argument");
		return CTL_BAD_REQUEST;
	}
	if (ctl_op_mutates(h->code, arg) && !c->privileged)
		return deny(c, h, h->flags & CTL_F_JSON, f);
	return ctl_cmd_run(c->srv->d, h, arg, &c->cred, now_ns(), f);
}

static int conn_respond(struct conn *c, int code, const char *text, size_t len)
{
	int r = ctl_message_build(code, 0, text, len, &c->out, &c->out_len);

	if (r < 0)
		return r;
	return sd_event_source_set_io_events(c->io, EPOLLOUT);
}

static int on_request(struct conn *c, const struct ctl_header *h,
		      const uint8_t *payload)
{
	char arg[CTL_MAX_REQUEST_PAYLOAD + 1], *text = NULL;
	size_t len = 0;
	int code, r;
	FILE *f;

	if (ctl_request_arg(h, payload, arg) < 0) /* a NUL inside it */
		return conn_respond(c, CTL_BAD_REQUEST, "bad argument\n", 13);
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	code = handle(c, h, arg, f);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	r = conn_respond(c, code, text, len);
	free(text);
	return r;
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents,
		      void *userdata)
{
	struct conn *c = userdata;
	struct ctl_header h;
	const uint8_t *payload;
	ssize_t n;
	int r;

	if (c->out) {
		n = send(fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n < 0 || (c->out_off += n) == c->out_len)
			conn_free(c);
		return 0;
	}
	n = recv(fd, c->in + c->in_len, sizeof(c->in) - c->in_len,
		 MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		conn_free(c);
		return 0;
	}
	c->in_len += n;
	r = ctl_request_parse(c->in, c->in_len, &h, &payload);
	if (r == -EAGAIN)
		return 0;
	if (r < 0) {
		char msg[128];
		int len = snprintf(msg, sizeof(msg), "bad request: %s\n",
				   strerror(-r));

		r = conn_respond(c, CTL_BAD_REQUEST, msg, len);
	} else if ((size_t)r != c->in_len) {
		r = conn_respond(c, CTL_BAD_REQUEST,
				 "bad request: trailing bytes\n", 28);
	} else {
		r = on_request(c, &h, payload);
	}
	if (r < 0) {
		log_warn("Control connection from pid %d: %s", c->cred.pid,
			 strerror(-r));
		conn_free(c);
	}
	return 0;
}

static int on_conn_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	conn_free(userdata);
	return 0;
}

static int on_accept_resume(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct ctl_server *srv = userdata;

	srv->resume = sd_event_source_disable_unref(srv->resume);
	return sd_event_source_set_enabled(srv->io, SD_EVENT_ON);
}

/*
 * accept4() failed for want of a file descriptor or of memory.  The client
 * stays queued and the socket readable, so sd-event would call on_accept()
 * again at once, and again: a busy loop for as long as the shortage lasts
 * (measured on the host with RLIMIT_NOFILE 20 and 30 clients queued: 70-96% of
 * a CPU, the ticks failing to open their files meanwhile).  Instead the
 * socket is not watched for ACCEPT_PAUSE_USEC; queued clients wait, or give
 * up.  Said once per shortage.
 */
static void accept_pause(struct ctl_server *srv, int err)
{
	int r;

	if (!srv->accept_failing)
		log_warn("Control socket: cannot accept a connection: %s; trying again every %llu ms",
			 strerror(err), ACCEPT_PAUSE_USEC / 1000);
	srv->accept_failing = true;
	if (srv->resume)
		return;
	r = sd_event_source_set_enabled(srv->io, SD_EVENT_OFF);
	if (r >= 0)
		r = sd_event_add_time_relative(srv->d->event, &srv->resume, CLOCK_MONOTONIC,
					       ACCEPT_PAUSE_USEC, 0, on_accept_resume, srv);
	if (r < 0) /* a busy loop rather than a deaf socket */
		sd_event_source_set_enabled(srv->io, SD_EVENT_ON);
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents,
		     void *userdata)
{
	struct ctl_server *srv = userdata;
	socklen_t len = sizeof(struct ucred);
	struct conn *c;
	int cfd, r;

	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			accept_pause(srv, errno);
		return 0;
	}
	if (srv->accept_failing) {
		log_notice("Control socket: accepting connections again");
		srv->accept_failing = false;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(cfd);
		return 0;
	}
	c->srv = srv;
	c->fd = cfd;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0) {
		close(cfd);
		free(c);
		return 0;
	}
	c->privileged = peer_privileged(srv->d, cfd, &c->cred);
	if (!conn_admit(srv, &c->cred, c->privileged)) {
		if (refusal_log_ok(srv))
			log_notice(
				"Control socket: refused a connection from uid %u (pid %d): too many open",
				c->cred.uid, c->cred.pid);
		close(cfd); /* the client sees a reset and may retry */
		free(c);
		return 0;
	}
	c->next = srv->conns;
	srv->conns = c;
	srv->nr_conns++;
	if (!c->privileged)
		srv->nr_unpriv++;
	r = sd_event_add_io(srv->d->event, &c->io, cfd, EPOLLIN, on_conn_io, c);
	if (r >= 0)
		r = sd_event_add_time_relative(srv->d->event, &c->timer,
					       CLOCK_MONOTONIC,
					       CONN_TIMEOUT_USEC, 0,
					       on_conn_timeout, c);
	if (r < 0)
		conn_free(c);
	return 0;
}

/*
 * The runtime directory must be ours and writable by no one else: whoever
 * can write it can replace the socket under tierctl.  lstat(): not a
 * symbolic link either.
 */
static int check_runtime_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

int ctl_server_start(struct tierd *d, struct ctl_server **ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl_server *s;
	mode_t old_umask;
	int r, probe;

	r = check_runtime_dir(d->runtime_dir);
	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->d = d;
	s->fd = -1;
	r = ctl_socket_path(d->runtime_dir, s->path, sizeof(s->path));
	if (r < 0)
		goto fail;
	if (ctl_connect(s->path, &probe) == 0) {
		close(probe);
		r = -EADDRINUSE;
		goto fail;
	}
	unlink(s->path); /* stale, from a tierd that did not stop cleanly */
	strcpy(sa.sun_path, s->path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		r = -errno;
		goto fail;
	}
	/* srw-rw-rw-: everyone may connect (status is public), set at bind
	 * time rather than by a chmod() on a path that could be swapped. */
	old_umask = umask(0111);
	r = bind(s->fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_umask);
	if (r < 0 || listen(s->fd, MAX_CONNS + MAX_PRIV_CONNS) < 0) {
		r = -errno;
		goto fail;
	}
	r = sd_event_add_io(d->event, &s->io, s->fd, EPOLLIN, on_accept, s);
	if (r < 0)
		goto fail;
	*ret = s;
	return 0;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	return r;
}

void ctl_server_stop(struct ctl_server *s)
{
	if (!s)
		return;
	while (s->conns)
		conn_free(s->conns);
	sd_event_source_disable_unref(s->resume);
	sd_event_source_disable_unref(s->io);
	close(s->fd);
	unlink(s->path);
	free(s);
}
