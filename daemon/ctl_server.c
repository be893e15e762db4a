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

#include "ctl_proto.h"
#include "ctl_server.h"
#include "log.h"
#include "metrics.h"
#include "status.h"

#define MAX_CONNS 16
#define CONN_TIMEOUT_USEC \
	(5 * 1000000ull) /* a client gets 5 s to send and read */
#define MAX_PEER_GROUPS 256

struct conn {
	struct ctl_server *srv;
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
	int nr_conns;
};

static void conn_free(struct conn *c)
{
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	close(c->fd);
	free(c->out);
	c->srv->nr_conns--;
	free(c);
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

static void json_message(FILE *f, bool ok, const char *msg)
{
	fprintf(f, "{\"ok\":%s,\"message\":\"", ok ? "true" : "false");
	for (; *msg; msg++) {
		if (*msg == '"' || *msg == '\\')
			fputc('\\', f);
		if (*msg == '\n')
			fputs("\\n", f);
		else if ((unsigned char)*msg >= 0x20)
			fputc(*msg, f);
	}
	fputs("\"}\n", f);
}

/* Run one request; the text goes to @f; returns an enum ctl_result. */
static int handle(struct conn *c, const struct ctl_header *h, const char *arg,
		  FILE *f)
{
	struct tierd *d = c->srv->d;
	bool json = h->flags & CTL_F_JSON;
	char why[4096];

	switch (h->code) {
	case CTL_OP_STATUS:
		status_render(d, f, json, now_ns());
		return CTL_OK;
	case CTL_OP_NODES:
		status_render_nodes(d, f, json);
		return CTL_OK;
	case CTL_OP_CGROUPS:
		status_render_cgroups(d, f, json);
		return CTL_OK;
	case CTL_OP_METRICS: {
		struct metrics *m = metrics_new();
		char *text = NULL;
		size_t len;
		int r = -ENOMEM;

		if (m) {
			tierd_metrics(d, m);
			r = metrics_render(m, &text, &len);
		}
		metrics_free(m);
		if (r < 0) {
			fprintf(f, "metrics: %s\n", strerror(-r));
			return CTL_FAILED;
		}
		fwrite(text, 1, len, f);
		free(text);
		return CTL_OK;
	}
	case CTL_OP_RELOAD:
	case CTL_OP_DRY_RUN:
		break;
	default:
		return CTL_BAD_REQUEST;
	}

	if (h->code == CTL_OP_DRY_RUN && !*arg) {
		if (json)
			fprintf(f, "{\"dry_run\":%s}\n",
				d->dry_run ? "true" : "false");
		else
			fprintf(f, "dry run: %s\n", d->dry_run ? "on" : "off");
		return CTL_OK;
	}
	if (!c->privileged) {
		log_notice("Refused %s from uid %u (pid %d): not root%s%s",
			   ctl_op_name(h->code), c->cred.uid, c->cred.pid,
			   d->conf->control.group[0] ? " nor in group " : "",
			   d->conf->control.group);
		snprintf(why, sizeof(why),
			 "permission denied: %s needs root%s%s\n",
			 ctl_op_name(h->code),
			 d->conf->control.group[0] ? " or group " : "",
			 d->conf->control.group);
		if (json)
			json_message(f, false, why);
		else
			fputs(why, f);
		return CTL_DENIED;
	}
	if (h->code == CTL_OP_DRY_RUN) {
		if (strcmp(arg, "on") && strcmp(arg, "off")) {
			fprintf(f, "dry-run takes on or off\n");
			return CTL_BAD_REQUEST;
		}
		tierd_set_dry_run(d, !strcmp(arg, "on"));
		snprintf(why, sizeof(why), "dry run: %s\n",
			 d->dry_run ? "on" : "off");
	} else {
		log_info("Reload requested by uid %u (pid %d)", c->cred.uid,
			 c->cred.pid);
		if (tierd_reload(d, why, sizeof(why)) < 0) {
			if (json)
				json_message(f, false, why);
			else
				fprintf(f,
					"%sreload refused: tierd keeps running the previous policy\n",
					why);
			return CTL_FAILED;
		}
		snprintf(why, sizeof(why), "reloaded %s\n", d->config_path);
	}
	if (json)
		json_message(f, true, why);
	else
		fputs(why, f);
	return CTL_OK;
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

	memcpy(arg, payload, h->length);
	arg[h->length] = '\0';
	if (strlen(arg) != h->length) /* a NUL inside the argument */
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

static int on_accept(sd_event_source *s, int fd, uint32_t revents,
		     void *userdata)
{
	struct ctl_server *srv = userdata;
	socklen_t len = sizeof(struct ucred);
	struct conn *c;
	int cfd, r;

	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return 0;
	if (srv->nr_conns >= MAX_CONNS) {
		close(cfd); /* the client sees a reset and may retry */
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(cfd);
		return 0;
	}
	c->srv = srv;
	c->fd = cfd;
	srv->nr_conns++;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0) {
		conn_free(c);
		return 0;
	}
	c->privileged = peer_privileged(srv->d, cfd, &c->cred);
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

int ctl_server_start(struct tierd *d, struct ctl_server **ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl_server *s;
	int r, probe;

	if (mkdir(d->runtime_dir, 0755) < 0 && errno != EEXIST)
		return -errno;
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
	if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(s->path, 0666) < 0 || listen(s->fd, MAX_CONNS) < 0) {
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
	sd_event_source_disable_unref(s->io);
	close(s->fd);
	unlink(s->path);
	free(s);
}
