// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sample stage between idle ticks: peeks at the source for heat the
 * table has not seen (manager_peek()), and the fds the loop watches.
 */
#include <errno.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "sample_int.h"
#include "stages.h"

/* A peek wakes tierd for new heat in at least this much memory (twice a
 * false alarm's, after one) ... */
#define WAKE_MIN_BYTES TIERD_IDLE_MOVE_BYTES
/* ... that is at least 1/WAKE_SHARE of what the source saw accessed: DAMON
 * moves its region edges every aggregation, and a converged hot set's edges
 * must not wake tierd each time. */
#define WAKE_SHARE 8

static uint64_t wake_min_bytes(const struct sample_stage *m)
{
	return m->wake_bar > WAKE_MIN_BYTES ? m->wake_bar : WAKE_MIN_BYTES;
}

/*
 * Between idle ticks (manager_peek()): has the source seen heat where the
 * table has little, in enough memory to be a hot set arriving or moving?
 * Without it a new hot set waits for the next idle tick, up to
 * idle_interval_ms, before tierd starts to promote it.
 */
int sample_peek(struct sample_stage *m, uint64_t start_ns, uint64_t now_ns)
{
	struct sampler_peek pk;
	int r;

	if (!m->s)
		return 0;
	r = sampler_peek(m->s, &m->hot, now_ns, &pk);
	if (r == -EOPNOTSUPP || r == 0)
		return 0;
	if (r < 0)
		return r;
	if (pk.new_bytes < wake_min_bytes(m) || pk.new_bytes * WAKE_SHARE < pk.accessed_bytes)
		return 0;
	m->woke_new = pk.new_bytes;
	log_debug("peek at %.3f s: new heat in %llu of %llu KiB accessed, ticking now",
		  (double)(now_ns - start_ns) / 1e9, (unsigned long long)(pk.new_bytes >> 10),
		  (unsigned long long)(pk.accessed_bytes >> 10));
	return 1;
}

void sample_peek_arm(struct sample_stage *m, bool on, uint64_t until_ns)
{
	int r;

	if (!m->s)
		return;
	r = sampler_peek_arm(m->s, on ? &m->hot : NULL, until_ns,
			     wake_min_bytes(m), WAKE_SHARE);
	if (r < 0 && r != -EOPNOTSUPP)
		log_debug("peek arm: %s", strerror(-r));
}

/*
 * A woken tick that found nothing to move was woken by heat that was not a
 * hot set: in a footprint larger than the fast tier, the cold memory a
 * sampler hits once or twice between ticks, which a peek counts as new.
 * That much comes again every idle period; the next wake waits for twice
 * as much, so a hot set arriving, heat in memory the noise does not cover,
 * still wakes tierd, and noise alone wakes it once or twice.  A tick that
 * moves memory puts the bar back.
 */
void sample_peek_settle(struct sample_stage *m, bool woken, bool idle)
{
	if (!idle) {
		m->wake_bar = 0;
	} else if (woken) {
		m->wake_bar = m->woke_new > UINT64_MAX / 2 ? UINT64_MAX : 2 * m->woke_new;
		log_debug("peek: a wake found nothing to move; the next needs new heat in %llu KiB",
			  (unsigned long long)(m->wake_bar >> 10));
	}
}

int sample_peek_fd(struct sample_stage *m, uint32_t *gen)
{
	return m->s ? sampler_peek_fd(m->s, gen) : -EOPNOTSUPP;
}

bool sample_peeks(const struct sample_stage *m, const struct tierd_conf *c)
{
	if (!m || !m->s || !m->s->ops->peek)
		return false;
	/* Armed peeks are the DAMON source's program's. */
	return !m->s->ops->peek_arm || c->sampling.damon_idle_peek;
}

bool sample_peeks_timed(const struct sample_stage *m)
{
	return m && m->s && m->s->ops->peek && !m->s->ops->peek_arm;
}

int sample_fd(struct sample_stage *m)
{
	return m->s ? sampler_fd(m->s) : -1;
}
