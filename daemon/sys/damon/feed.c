// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loader of bpf/damon.bpf.c: size the two-half regions array, load, attach
 * to the damon:damon_aggregated tracepoint, map the array and the program's
 * .bss into tierd, and copy out the newest complete aggregation when the
 * DAMON source drains (see the program's essay for the protocol).
 *
 * Loading happens in a child.  To load a tp_btf program libbpf parses the
 * whole kernel BTF; it frees it afterwards, but the peak stays: in the lab
 * guest (a 2.9 MB /sys/kernel/btf/vmlinux) loading put 6.5 MB on top of the
 * loader's RSS, about twice the BTF's size, so some 12 MB on a distribution
 * kernel's 5-6 MB.  tierd promises a small, steady footprint (and locks
 * what it has), so a forked child opens, loads and attaches the program,
 * sends tierd the link and the two maps over a socket pair (SCM_RIGHTS) and
 * exits; tierd maps the maps, and the program stays attached for as long as
 * tierd holds the link.  The child inherits no memory locks (mlockall's are
 * not inherited) and its libbpf messages go to tierd's log as usual.
 *
 * Memory then: 2 * half_cap * 32 bytes of kernel memory (930 KiB at
 * tierd's defaults: 2000 regions, 200 a target at the least, 64 targets),
 * mapped here; a read touches only the pages of the records it copies: every
 * region of the newest aggregation, the idle ones too (their ages are what
 * demotion of untouched memory goes by).  The known-heat sketch (damon.h), 32 KiB
 * up to 2 MiB by the machine's memory, is another mapped array, which
 * tierd writes at each idle tick.  The wake ring is one page of data;
 * libbpf's ring_buffer consumes it here, and its epoll descriptor is what
 * tierd's event loop watches for wakes.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../damon_feed.h"

#ifdef TIERD_HAVE_BPF_SKEL
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "damon.skel.h"

#define READ_TRIES 3
#define LOAD_TIMEOUT_MS 30000	/* the child's load and attach, at the most */

typedef struct damon_bpf__bss feed_bss;

/* The descriptors the child sends, in this order. */
enum { FD_LINK, FD_REGIONS, FD_BSS, FD_WAKE, FD_KNOWN, NR_FDS };

struct feed_bpf {
	struct damon_feed base;
	const char *btf_path;
	int fd[NR_FDS];		/* -1 when not started */
	const struct damon_feed_rec *regions;	/* mmap()ed, 2 * half_cap */
	size_t regions_len;
	feed_bss *bss;			/* mmap()ed, bss_len */
	size_t bss_len;
	__u8 *known;			/* mmap()ed, known_cells */
	uint32_t known_cells;
	struct ring_buffer *wake;	/* the wake ring, consumed here */
	uint32_t half_cap;
	uint64_t retries;
};

#define FB(f) ((struct feed_bpf *)(f))

/* A mapping's length: @len up to whole pages. */
static size_t page_round(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) / page * page;
}

/* What the child sends with the descriptors (none when it failed). */
struct load_reply {
	int err;		/* 0, or -errno with why */
	uint32_t bss_size;	/* the .bss map's value size */
	char why[200];
};

/* The ring holds pass numbers; that one came is all there is to know. */
static int wake_one(void *ctx, void *data, size_t size)
{
	return 0;
}

/* ring_buffer__consume() counts the records it took. */
static int feed_wake_take(struct damon_feed *f)
{
	struct feed_bpf *b = FB(f);

	return b->wake ? ring_buffer__consume(b->wake) : 0;
}

static void feed_stop(struct damon_feed *f)
{
	struct feed_bpf *b = FB(f);

	if (b->regions)
		munmap((void *)b->regions, b->regions_len);
	if (b->bss)
		munmap(b->bss, b->bss_len);
	if (b->known)
		munmap(b->known, page_round(b->known_cells * sizeof(*b->known)));
	b->regions = NULL;
	b->bss = NULL;
	b->known = NULL;
	ring_buffer__free(b->wake);
	b->wake = NULL;
	/* Closing the link detaches the program; the maps go with the last fd. */
	for (int i = 0; i < NR_FDS; i++) {
		if (b->fd[i] >= 0)
			close(b->fd[i]);
		b->fd[i] = -1;
	}
}

/* In the child: load and attach, then send the link and maps to tierd. */
static int child_load(int sock, const char *btf_path, uint32_t half_cap, uint32_t known_cells)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct load_reply rep = { 0 };
	union {
		char buf[CMSG_SPACE(NR_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { &rep, sizeof(rep) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct damon_bpf *skel;
	int fds[NR_FDS];

	if (btf_path)
		opts.btf_custom_path = btf_path;
	skel = damon_bpf__open_opts(&opts);
	if (!skel) {
		rep.err = -errno;
		snprintf(rep.why, sizeof(rep.why), "opening bpf/damon.bpf.c: %s",
			 strerror(-rep.err));
		goto send;
	}
	skel->rodata->half_cap = half_cap;
	skel->rodata->known_mask = known_cells - 1;
	rep.err = bpf_map__set_max_entries(skel->maps.regions, 2 * half_cap);
	if (rep.err == 0)
		rep.err = bpf_map__set_value_size(skel->maps.known,
						  known_cells * sizeof(__u8));
	if (rep.err == 0)
		rep.err = damon_bpf__load(skel);
	if (rep.err < 0) {
		snprintf(rep.why, sizeof(rep.why), "loading the damon_aggregated program: %s "
			 "(needs CONFIG_DAMON's tracepoints in the kernel's BTF, CAP_BPF and "
			 "CAP_PERFMON)", strerror(-rep.err));
		goto send;
	}
	rep.err = damon_bpf__attach(skel);
	if (rep.err < 0) {
		snprintf(rep.why, sizeof(rep.why), "attaching to damon:damon_aggregated: %s",
			 strerror(-rep.err));
		goto send;
	}
	fds[FD_LINK] = bpf_link__fd(skel->links.damon_aggregated);
	fds[FD_REGIONS] = bpf_map__fd(skel->maps.regions);
	fds[FD_BSS] = bpf_map__fd(skel->maps.bss);
	fds[FD_WAKE] = bpf_map__fd(skel->maps.wake);
	fds[FD_KNOWN] = bpf_map__fd(skel->maps.known);
	rep.bss_size = bpf_map__value_size(skel->maps.bss);
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	CMSG_FIRSTHDR(&msg)->cmsg_level = SOL_SOCKET;
	CMSG_FIRSTHDR(&msg)->cmsg_type = SCM_RIGHTS;
	CMSG_FIRSTHDR(&msg)->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(CMSG_FIRSTHDR(&msg)), fds, sizeof(fds));
send:
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(rep) ? 0 : -errno;
}

/* In tierd: the child's reply and descriptors, within LOAD_TIMEOUT_MS. */
static int recv_load(struct feed_bpf *b, int sock, struct load_reply *rep)
{
	union {
		char buf[CMSG_SPACE(NR_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { rep, sizeof(*rep) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct pollfd pfd = { sock, POLLIN, 0 };
	struct cmsghdr *c;
	ssize_t n;
	int r;

	r = poll(&pfd, 1, LOAD_TIMEOUT_MS);
	if (r <= 0) {
		snprintf(rep->why, sizeof(rep->why), "the loader did not answer within %d ms",
			 LOAD_TIMEOUT_MS);
		return r < 0 ? -errno : -ETIMEDOUT;
	}
	n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != sizeof(*rep))
		r = -EPROTO;	/* the child died before it could say */
	if (r < 0) {
		snprintf(rep->why, sizeof(rep->why), "the loader failed: %s", strerror(-r));
		return r;
	}
	rep->why[sizeof(rep->why) - 1] = '\0';
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(b->fd)))
		memcpy(b->fd, CMSG_DATA(c), sizeof(b->fd));
	if (rep->err < 0)
		return rep->err;
	if (b->fd[FD_LINK] < 0 || msg.msg_flags & MSG_CTRUNC) {
		snprintf(rep->why, sizeof(rep->why), "the loader sent no descriptors");
		return -EPROTO;
	}
	return 0;
}

/* Fork the loader child and take what it sends (child_load()). */
static int load_in_child(struct feed_bpf *b, uint32_t max_regions, uint32_t known_cells,
			 struct load_reply *rep, char *why, size_t len)
{
	int sv[2], r, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		snprintf(why, len, "socketpair: %s", strerror(-r));
		return r;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		snprintf(why, len, "fork: %s", strerror(-r));
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0) {
		close(sv[0]);
		/* A forked child leaves by _exit(): tierd's atexit work is not its own. */
		_exit(child_load(sv[1], b->btf_path, max_regions, known_cells) < 0);
	}
	close(sv[1]);
	r = recv_load(b, sv[0], rep);
	close(sv[0]);
	if (r == -ETIMEDOUT)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r < 0)
		snprintf(why, len, "%s", rep->why);
	return r;
}

/* Map what the child sent: the regions array, the .bss, the sketch, the ring. */
static int map_maps(struct feed_bpf *b, uint32_t known_cells, char *why, size_t len)
{
	void *mem;
	int r;

	mem = mmap(NULL, b->regions_len, PROT_READ, MAP_SHARED, b->fd[FD_REGIONS], 0);
	if (mem == MAP_FAILED) {
		r = -errno;
		snprintf(why, len, "mapping the regions array: %s", strerror(-r));
		return r;
	}
	b->regions = mem;
	mem = mmap(NULL, b->bss_len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd[FD_BSS], 0);
	if (mem == MAP_FAILED) {
		r = -errno;
		snprintf(why, len, "mapping the program's .bss: %s", strerror(-r));
		return r;
	}
	b->bss = mem;
	mem = mmap(NULL, page_round(known_cells * sizeof(__u8)), PROT_READ | PROT_WRITE,
		   MAP_SHARED, b->fd[FD_KNOWN], 0);
	if (mem == MAP_FAILED) {
		r = -errno;
		snprintf(why, len, "mapping the known-heat sketch: %s", strerror(-r));
		return r;
	}
	b->known = mem;
	b->known_cells = known_cells;
	b->wake = ring_buffer__new(b->fd[FD_WAKE], wake_one, NULL, NULL);
	if (!b->wake) {
		r = -errno;
		snprintf(why, len, "mapping the wake ring: %s", strerror(-r));
		return r;
	}
	return 0;
}

static int feed_start(struct damon_feed *f, uint32_t max_regions, uint32_t known_cells,
		      char *why, size_t len)
{
	struct feed_bpf *b = FB(f);
	struct load_reply rep = { 0 };
	int r;

	if (b->fd[FD_LINK] >= 0)
		return -EALREADY;
	if (!max_regions || known_cells < DAMON_KNOWN_CELLS_MIN ||
	    known_cells > DAMON_KNOWN_CELLS_MAX || known_cells & (known_cells - 1))
		return -EINVAL;
	if (access(b->btf_path ? b->btf_path : "/sys/kernel/btf/vmlinux", R_OK) < 0) {
		r = -errno;
		snprintf(why, len, "no kernel BTF (%s): the tracepoint program needs it "
			 "(CONFIG_DEBUG_INFO_BTF=y)", strerror(-r));
		return r;
	}
	r = load_in_child(b, max_regions, known_cells, &rep, why, len);
	if (r < 0)
		goto fail;
	b->half_cap = max_regions;
	b->regions_len = page_round((size_t)2 * max_regions * sizeof(struct damon_feed_rec));
	b->bss_len = page_round(rep.bss_size);
	r = -EPROTO;
	if (rep.bss_size < sizeof(feed_bss)) {
		snprintf(why, len, "the loader's .bss has %u bytes, not %zu", rep.bss_size,
			 sizeof(feed_bss));
		goto fail;
	}
	r = map_maps(b, known_cells, why, len);
	if (r == 0)
		return 0;
fail:
	feed_stop(f);
	return r;
}

static int feed_follow(struct damon_feed *f, pid_t kdamond_pid, uint32_t nr_targets,
		       uint64_t *ret_pass)
{
	struct feed_bpf *b = FB(f);

	if (!b->bss)
		return -ENOTCONN;
	__atomic_store_n(&b->bss->nr_targets, nr_targets, __ATOMIC_RELAXED);
	__atomic_store_n(&b->bss->kdamond_pid, (__u32)kdamond_pid, __ATOMIC_RELEASE);
	*ret_pass = __atomic_load_n(&b->bss->pass_seq, __ATOMIC_ACQUIRE);
	return 0;
}

/*
 * A seqlock read: the half of pass `done` stays as it is until pass done + 2
 * begins, so a copy made while pass_seq < done + 2 is whole.
 */
static int feed_read(struct damon_feed *f, uint64_t after, struct damon_feed_rec *buf,
		     size_t cap, uint64_t *ret_pass)
{
	struct feed_bpf *b = FB(f);

	if (!b->bss)
		return -ENOTCONN;
	for (int i = 0; i < READ_TRIES; i++) {
		uint64_t done = __atomic_load_n(&b->bss->done_seq, __ATOMIC_ACQUIRE);
		uint32_t n;

		if (!done || done <= after)
			return -EAGAIN;
		n = __atomic_load_n(&b->bss->pass_n[done & 1], __ATOMIC_ACQUIRE);
		if (n > b->half_cap)
			n = b->half_cap;
		if (n > cap)
			n = (uint32_t)cap;
		memcpy(buf, b->regions + (done & 1) * b->half_cap, n * sizeof(*buf));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&b->bss->pass_seq, __ATOMIC_ACQUIRE) < done + 2) {
			*ret_pass = done;
			return (int)n;
		}
		b->retries++;
	}
	return -EBUSY;
}

static void feed_counters(struct damon_feed *f, struct damon_feed_counters *ret)
{
	struct feed_bpf *b = FB(f);

	memset(ret, 0, sizeof(*ret));
	ret->retries = b->retries;
	if (!b->bss)
		return;
	ret->seen = __atomic_load_n(&b->bss->seen, __ATOMIC_RELAXED);
	ret->overflow = __atomic_load_n(&b->bss->overflow, __ATOMIC_RELAXED);
	ret->wakes = __atomic_load_n(&b->bss->wakes, __ATOMIC_RELAXED);
	ret->wake_drops = __atomic_load_n(&b->bss->wake_drops, __ATOMIC_RELAXED);
}

static __u8 *feed_known(struct damon_feed *f, uint32_t *ret_cells)
{
	struct feed_bpf *b = FB(f);

	*ret_cells = b->known ? b->known_cells : 0;
	return b->known;
}

/* Disarmed first, so that the program never reads bars half written; the
 * sketch is the caller's to write in between (see the essay for a pass
 * that sees it change). */
static int feed_arm(struct damon_feed *f, uint64_t min_bytes, uint32_t share, uint32_t unit)
{
	struct feed_bpf *b = FB(f);

	if (!b->bss)
		return -ENOTCONN;
	__atomic_store_n(&b->bss->wake_armed, 0, __ATOMIC_RELEASE);
	feed_wake_take(f);
	if (!min_bytes)
		return 0;
	b->bss->wake_min_bytes = min_bytes;
	b->bss->wake_share = share ? share : 1;
	b->bss->known_unit = unit ? unit : DAMON_KNOWN_UNIT;
	__atomic_store_n(&b->bss->wake_armed, 1, __ATOMIC_RELEASE);
	return 0;
}

static int feed_wake_fd(struct damon_feed *f)
{
	struct feed_bpf *b = FB(f);

	return b->wake ? ring_buffer__epoll_fd(b->wake) : -1;
}

static void feed_free(struct damon_feed *f)
{
	feed_stop(f);
	free(f);
}

static const struct damon_feed_ops feed_bpf_ops = {
	.start = feed_start,
	.follow = feed_follow,
	.read = feed_read,
	.counters = feed_counters,
	.known = feed_known,
	.arm = feed_arm,
	.wake_fd = feed_wake_fd,
	.wake_take = feed_wake_take,
	.stop = feed_stop,
	.free = feed_free,
};

int damon_feed_bpf_new(const char *btf_path, struct damon_feed **ret)
{
	struct feed_bpf *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->base.ops = &feed_bpf_ops;
	b->btf_path = btf_path;
	for (int i = 0; i < NR_FDS; i++)
		b->fd[i] = -1;
	*ret = &b->base;
	return 0;
}

#else

int damon_feed_bpf_new(const char *btf_path, struct damon_feed **ret)
{
	return -EOPNOTSUPP;	/* built with -Dbpf=disabled */
}

#endif
