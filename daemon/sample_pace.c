// SPDX-License-Identifier: GPL-2.0-only
/*
 * How the sample stage's source samples (sample.c): its pace while there
 * is nothing to move, and the table's half-life for the period it samples
 * at.
 */
#include "daemon.h"
#include "log.h"
#include "sample_int.h"
#include "sample_period.h"
#include "stages.h"

#define NSEC_PER_MSEC 1000000ull

/*
 * Nothing to move for a while (see idle_interval_ms): sample less.  Once
 * slow, less than TIERD_IDLE_MOVE_BYTES moved since the pace was last set
 * (a range or two at a settled hot set's edge, found by a tick a peek
 * brought forward; the ticks of a backlog, which do not sample, count too)
 * does not end that, though the ticks come sooner for a while; more does:
 * one such 2 MiB move after the hot set has settled would otherwise put
 * the kdamond back at full pace for seconds.
 */
int sample_set_pace(struct sample_stage *m, const struct tierd_conf *c,
		    const struct sample_in *in, uint64_t now_ns)
{
	uint64_t moved = in->moved_bytes_total - m->moved_at_pace;
	bool slow = in->idle_ticks >= 2 || (m->pace > 1 && moved < TIERD_IDLE_MOVE_BYTES);
	unsigned int pace = slow ? c->sampling.damon_idle_slowdown : 1;
	int r = sampler_set_pace(m->s, pace);

	if (r < 0)
		return r;
	if (pace != m->pace)
		log_debug("sample at %.3f s: pace 1/%u (%u idle ticks, %llu bytes moved since "
			  "the last pace)", (double)(now_ns - in->start_ns) / 1e9, pace,
			  in->idle_ticks, (unsigned long long)moved);
	m->pace = pace;
	m->moved_at_pace = in->moved_bytes_total;
	return 0;
}

void sample_fit_half_life(struct sample_stage *m, const struct tierd_conf *c, uint64_t period,
			  uint64_t now_ns)
{
	uint64_t want = sample_half_life_ns(c->sampling.half_life_ms * NSEC_PER_MSEC, period);
	uint64_t cur = m->hot.params.half_life_ns;

	/* A quarter apart at least: each change is a pass over the table. */
	if ((want > cur ? want - cur : cur - want) * 4 < cur)
		return;
	hot_set_half_life(&m->hot, want, now_ns);
	log_info("Hotness table: heat halves every %.1f s (one event in %llu sampled)",
		 (double)want / 1e9, (unsigned long long)period);
}

void sample_watch_news(struct sample_stage *m, uint64_t now_ns)
{
	bool was = m->news.on;

	if (sample_crowded_hot(m) != POLICY_CROWDED_BACKGROUND)
		return;
	if (discover_step(&m->news, m->hot.st.samples, m->hot.st.fresh, now_ns) == was)
		return;
	if (m->news.on)
		log_info("Hot set: %.1f%% of the samples on memory without heat (the last "
			 "minute's least: %.1f%%): a new hot set, one sample promotes",
			 m->news.share * 100.0, m->news.quiet * 100.0);
	else
		log_info("Hot set: found (%.1f%% of the samples on memory without heat, the "
			 "last minute's least: %.1f%%)", m->news.share * 100.0,
			 m->news.quiet * 100.0);
}
