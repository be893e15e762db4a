// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "knobs.h"

static const struct {
	const char *name;
	const char *path;
	bool boolean;	/* reads "true"/"false" */
} knob_info[KNOB_NR] = {
#define SYSCTL(n, path) { n, "/proc/sys/" path, false }
	[KNOB_COPY_MT] = SYSCTL("vm.migrate_copy_mt", "vm/migrate_copy_mt"),
	[KNOB_COPY_THREADS] = SYSCTL("vm.migrate_copy_threads", "vm/migrate_copy_threads"),
	[KNOB_COPY_PULL] = SYSCTL("vm.migrate_copy_pull", "vm/migrate_copy_pull"),
	[KNOB_BATCH_PAGES] = SYSCTL("vm.migrate_batch_pages", "vm/migrate_batch_pages"),
	[KNOB_NUMA_BALANCING] = SYSCTL("kernel.numa_balancing", "kernel/numa_balancing"),
#undef SYSCTL
	[KNOB_DEMOTION] = { "demotion_enabled", "/sys/kernel/mm/numa/demotion_enabled", true },
};

const char *knob_name(enum knob_id id)
{
	return (unsigned int)id < KNOB_NR ? knob_info[id].name : "?";
}

static int file_read(void *ctx, const char *path, char *buf, size_t len)
{
	size_t n;
	int r = fs_read_at(AT_FDCWD, path, buf, len, &n);

	return r < 0 ? r : (int)n;
}

static int file_write(void *ctx, const char *path, const char *val)
{
	/* O_TRUNC as echo does: sysctl and sysfs ignore it, fixture files need it. */
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), r = 0;
	size_t len = strlen(val);

	if (fd < 0)
		return -errno;
	if (write(fd, val, len) != (ssize_t)len)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

const struct knob_ops knob_file_ops = {
	.read = file_read,
	.write = file_write,
};

static void knob_path(const struct knobs *ks, enum knob_id id, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", ks->root, knob_info[id].path);
}

static int parse_value(enum knob_id id, const char *s, long *ret)
{
	char *end;

	if (knob_info[id].boolean) {
		if (strncmp(s, "true", 4) == 0 || strncmp(s, "1", 1) == 0)
			*ret = 1;
		else if (strncmp(s, "false", 5) == 0 || strncmp(s, "0", 1) == 0)
			*ret = 0;
		else
			return -EINVAL;
		return 0;
	}
	errno = 0;
	*ret = strtol(s, &end, 10);
	if (errno || end == s || (*end && *end != '\n'))
		return -EINVAL;
	return 0;
}

static int read_knob(const struct knobs *ks, enum knob_id id, long *ret)
{
	char path[PATH_MAX + 64], buf[64];
	int r;

	knob_path(ks, id, path, sizeof(path));
	r = ks->ops->read(ks->ctx, path, buf, sizeof(buf));
	if (r < 0)
		return r;
	return parse_value(id, buf, ret);
}

static int write_knob(const struct knobs *ks, enum knob_id id, long v)
{
	char path[PATH_MAX + 64], buf[32];

	knob_path(ks, id, path, sizeof(path));
	if (knob_info[id].boolean)
		snprintf(buf, sizeof(buf), "%s", v ? "true" : "false");
	else
		snprintf(buf, sizeof(buf), "%ld", v);
	return ks->ops->write(ks->ctx, path, buf);
}

/* The state file: what a crashed run would need to undo. */
static int save_state(const struct knobs *ks)
{
	char tmp[PATH_MAX + 8];
	bool any = false;
	FILE *f;

	for (int i = 0; i < KNOB_NR; i++)
		any |= ks->k[i].owned && !ks->k[i].foreign;
	if (!any) {
		if (unlink(ks->state_path) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", ks->state_path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "# tierd: kernel knobs to restore if tierd dies (name original set)\n");
	for (int i = 0; i < KNOB_NR; i++)
		if (ks->k[i].owned && !ks->k[i].foreign)
			fprintf(f, "%s %ld %ld\n", knob_info[i].name, ks->k[i].orig, ks->k[i].set);
	if (fclose(f) != 0 || rename(tmp, ks->state_path) < 0) {
		int r = -errno;

		unlink(tmp);
		return r;
	}
	return 0;
}

int knobs_recover(struct knobs *ks, unsigned int *ret_recovered)
{
	char line[256];
	FILE *f = fopen(ks->state_path, "re");
	unsigned int n = 0;
	int r = 0;

	if (ret_recovered)
		*ret_recovered = 0;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		long orig, set, cur;

		if (line[0] == '#' || sscanf(line, "%63s %ld %ld", name, &orig, &set) != 3)
			continue;
		for (int i = 0; i < KNOB_NR; i++) {
			int w;

			if (strcmp(name, knob_info[i].name) != 0 || !ks->k[i].present)
				continue;
			/* Changed by someone after the crash: theirs. */
			if (read_knob(ks, i, &cur) < 0 || cur != set)
				continue;
			w = write_knob(ks, i, orig);
			if (w < 0 && r == 0)
				r = w;
			else if (w == 0)
				n++;
		}
	}
	fclose(f);
	if (r == 0 && unlink(ks->state_path) < 0)
		r = -errno;
	if (ret_recovered)
		*ret_recovered = n;
	return r;
}

int knobs_open(struct knobs *ks, const struct knob_ops *ops, void *ctx, const char *root,
	       const char *state_dir)
{
	memset(ks, 0, sizeof(*ks));
	ks->ops = ops;
	ks->ctx = ctx;
	if ((size_t)snprintf(ks->root, sizeof(ks->root), "%s", root) >= sizeof(ks->root) ||
	    (size_t)snprintf(ks->state_path, sizeof(ks->state_path), "%s/knobs.state",
			     state_dir) >= sizeof(ks->state_path))
		return -ENAMETOOLONG;
	for (int i = 0; i < KNOB_NR; i++) {
		long v;

		ks->k[i].present = read_knob(ks, i, &v) == 0;
	}
	return 0;
}

int knobs_get(struct knobs *ks, enum knob_id id, long *ret)
{
	if (!ks->k[id].present)
		return -ENOENT;
	return read_knob(ks, id, ret);
}

int knobs_check(struct knobs *ks, enum knob_id id)
{
	struct knob *k = &ks->k[id];
	long cur;
	int r;

	if (!k->managed || k->foreign)
		return 0;
	r = read_knob(ks, id, &cur);
	if (r < 0)
		return r;
	if (cur == k->set)
		return 0;
	k->foreign = true;
	save_state(ks);
	return 1;
}

int knobs_set(struct knobs *ks, enum knob_id id, long v)
{
	struct knob *k = &ks->k[id];
	long cur;
	int r;

	if (!k->present)
		return -ENOENT;
	if (ks->dry_run) {
		k->would = v;
		return 0;
	}
	if (k->foreign)
		return -EBUSY;
	r = read_knob(ks, id, &cur);
	if (r < 0)
		return r;
	/* Managed, not only owned: a knob tierd wanted at the value it
	 * already held is just as much the administrator's once they
	 * change it. */
	if (k->managed && cur != k->set) {
		k->foreign = true;
		save_state(ks);
		return -EBUSY;
	}
	if (cur == v) {
		k->managed = true;
		k->set = v;
		return 0;
	}
	if (!k->owned) {
		/* Record before writing: a crash between the two must still
		 * leave the original on disk. */
		k->orig = cur;
		k->set = v;
		k->owned = true;
		r = save_state(ks);
		if (r < 0) {
			k->owned = false;
			return r;
		}
		r = write_knob(ks, id, v);
		if (r < 0) {
			k->owned = false;
			save_state(ks);
			return r;
		}
		k->managed = true;
		return 0;
	}
	r = write_knob(ks, id, v);
	if (r < 0)
		return r;
	k->set = v;
	k->managed = true;
	return save_state(ks);
}

int knobs_restore(struct knobs *ks)
{
	int r = 0, n = 0;

	/* A dry run owns nothing, and a crashed run's state file stays for
	 * a start that may write. */
	if (ks->dry_run)
		return 0;

	for (int i = 0; i < KNOB_NR; i++) {
		struct knob *k = &ks->k[i];
		long cur;
		int w;

		if (!k->owned || k->foreign)
			continue;
		if (read_knob(ks, i, &cur) < 0 || cur != k->set) {
			k->foreign = true;	/* theirs now: leave it */
			continue;
		}
		w = write_knob(ks, i, k->orig);
		if (w < 0) {
			if (r == 0)
				r = w;
			continue;
		}
		k->owned = false;
		n++;
	}
	if (r == 0) {
		for (int i = 0; i < KNOB_NR; i++)
			ks->k[i].owned = false;
		if (unlink(ks->state_path) < 0 && errno != ENOENT)
			r = -errno;
	} else {
		save_state(ks);
	}
	return r < 0 ? r : n;
}

bool knobs_have_copy(const struct knobs *ks)
{
	return ks->k[KNOB_COPY_MT].present && ks->k[KNOB_COPY_THREADS].present &&
	       ks->k[KNOB_COPY_PULL].present;
}

int knobs_apply_copy(struct knobs *ks, bool mt, unsigned int threads, int pull)
{
	int r;

	if (!knobs_have_copy(ks))
		return -EOPNOTSUPP;
	r = knobs_set(ks, KNOB_COPY_MT, mt ? 1 : 0);
	if (r == 0 && mt)
		r = knobs_set(ks, KNOB_COPY_THREADS, threads);
	if (r == 0 && mt && pull >= 0)
		r = knobs_set(ks, KNOB_COPY_PULL, pull);
	return r;
}

int knobs_coexist(struct knobs *ks, enum knob_coexist mode, struct knob_coexist_status *ret)
{
	long nb = -1, dem = -1;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (knobs_get(ks, KNOB_NUMA_BALANCING, &nb) < 0)
		nb = -1;
	if (knobs_get(ks, KNOB_DEMOTION, &dem) < 0)
		dem = -1;
	ret->numa_balancing = (int)nb;
	ret->demotion_enabled = (int)dem;
	if (nb <= 0) {
		ret->why = nb < 0 ? "kernel has no NUMA balancing; tierd alone promotes" :
				    "NUMA balancing is off; tierd alone promotes";
		return 0;
	}
	if (mode == KNOB_COEXIST) {
		if (nb & KNOB_NUMA_BALANCING_TIERING)
			ret->why = "coexisting with NUMA balancing in tiering mode; "
				   "counting the kernel's promotions";
		else
			ret->why = "coexisting with NUMA balancing (mode 1 moves pages "
				   "toward the CPUs that touch them)";
		return 0;
	}
	r = knobs_set(ks, KNOB_NUMA_BALANCING, 0);
	if (r < 0) {
		ret->why = r == -EBUSY ?
				   "NUMA balancing was changed by an administrator; left alone" :
				   "could not turn NUMA balancing off; coexisting";
		return r;
	}
	if (ks->dry_run) {
		ret->why = "dry run: would turn NUMA balancing off to take over promotion";
		return 0;
	}
	ret->took_over = true;
	ret->why = "took over promotion: NUMA balancing off while tierd runs (restored on exit)";
	return 0;
}

int knobs_read_vmstat(struct knobs *ks, struct knob_vmstat *ret)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
#define F(x) { #x, offsetof(struct knob_vmstat, x) }
		F(pgpromote_success), F(pgpromote_candidate), F(pgdemote_kswapd),
		F(pgdemote_direct), F(pgdemote_khugepaged), F(pgmigrate_success),
		F(pgmigrate_copy_batched), F(pgmigrate_copy_mt), F(pgmigrate_copy_fallback),
#undef F
	};
	char path[PATH_MAX + 16], line[128];
	FILE *f;

	memset(ret, 0, sizeof(*ret));
	snprintf(path, sizeof(path), "%s/proc/vmstat", ks->root);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		unsigned long long v;

		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (strcmp(name, fields[i].name) == 0)
				*(uint64_t *)((char *)ret + fields[i].off) = v;
	}
	fclose(f);
	return 0;
}
