// SPDX-License-Identifier: GPL-2.0-only
/*
 * The crowded floor of a source whose heat counts samples
 * (POLICY_CROWDED_BACKGROUND): the heat that the memory which cannot fit
 * the fast tier reaches by chance.
 *
 * Of a footprint of F bytes, a fast tier with room for R holds at best the
 * hottest R; the coldest F - R bytes have no business there, and whatever
 * heat they show is what chance gives memory of their rate.  Take each
 * entry's samples there as Poisson arrivals: its heat, the samples decayed
 * with the table's half-life, is then close to a Poisson count (less
 * spread, for the decay: the safe side), whose mean lambda is the mean
 * heat of those bytes, at the table's mean entry size.  The table's
 * histogram (policy_input.table_hist) gives it: memory the table does not
 * hold at heat 0 first, then the bins from the coldest up, until F - R
 * bytes are counted.  The floor is the least t at which the F - R bytes
 * would, by chance, bring under POLICY_NOISE_SHARE of the room at heat t
 * or more:
 *
 *   (F - R) P(X >= t | lambda) <= POLICY_NOISE_SHARE R
 *
 * The coldest of the cold run low, and with them lambda and the floor;
 * the further the cold memory's heat is from uniform, the more.  Where
 * most of the cold memory holds no sample at a moment, the coldest F - R
 * bytes hold none and their lambda is 0, whatever the cold memory's rate:
 * picked by their heat, they are the ones chance passed by.  So lambda is
 * also taken over the cold memory whole, all of it outside the hottest
 * entries that hold 1 - POLICY_NOISE_HELD of the table's heat (memory the
 * table does not hold at heat 0), and the larger of the two counts.  At one
 * access in 1000 over dram+cxl's 1 TiB in tierd-sim the cold ranges' lambda
 * is about 0.3: the coldest F - R bytes alone give a floor of 2, and the
 * cold ranges that drew two samples by chance took DRAM's free room, 1.3
 * to 1.7 times the oracle's bytes at its run time; with the whole, 3, and
 * 1.00 to 1.07 (docs/sim-results.md).  Not while a new hot set arrives
 * (policy_input.news_since_ns, below): its first samples sit outside the
 * hottest entries too, and counted as chance's they would raise the floor
 * against the hot set itself (tierd-sim's shift within the CPU budget:
 * 1.06 of the oracle's run time instead of 1.05 at 1 TiB, 1.07 instead of
 * 1.02 on grace-hopper).  Never
 * under POLICY_NOISE_MIN_FLOOR: the estimate is of one moment, and every
 * sample the cold memory draws lifts an entry to heat 1 for a while; over
 * the time a promoted range stays, many do.  Except while a new hot set
 * arrives (policy_input.news_since_ns, core/discover.h): the samples since
 * it began are news more than chance, and one is the least for them
 * (policy_promote.c leaves out the older lone samples).
 *
 * Memory the table does not hold counts as heat 0, also in the first
 * seconds, before the sampler has reached the cold memory: the floor is
 * low then.  Hardware sampling at one access in 1000 of a footprint 2.7
 * times an HBM node gives 3 and 4 in the first seconds, then 6 and 7
 * (lambda ~1.5); over dram+cxl's 1 TiB 3 or 4; at the period a 2 % CPU
 * budget allows over 1 TiB, where a hot range draws a sample or two a
 * half-life and the coldest half of the footprint draws none, 2
 * (docs/sim-results.md).
 *
 * A floor is worth its wait only while what it holds back is chance's.
 * Where the hot memory itself is sampled so thinly that the entries under
 * the floor hold more than POLICY_NOISE_HELD of the table's heat, the
 * floor would keep the fast tier from most of what the sampler sees: a
 * Zipf tail past a small fast tier (its ranges just below the room are
 * nearly as hot as those in it), or any hot set of a footprint the budget
 * samples sparsely, whose ranges draw a sample a minute.  The floor is
 * then the heat at which the hottest entries hold the rest of the heat
 * (at least 1), below chance's and below POLICY_NOISE_MIN_FLOOR too:
 * chance's samples cost bytes, a floor over the hot set costs the hot
 * set.  Not where the heat is about as even as chance makes it
 * (heat_dispersion()): memory read evenly all over has all its heat under
 * a floor and none of it says more than chance.  A hot set beside cold
 * memory keeps its samples on the hot set (98 % of them in tierd-sim's
 * uniform workloads), far above the floor, and keeps chance's floor.
 */
#include "policy_int.h"

#define POLICY_NOISE_MAX_LAMBDA 16.0
/* Heat this much more spread than a Poisson count's is not chance's. */
#define POLICY_NOISE_UNEVEN 2.0

/* e^@x for x in [0, POLICY_NOISE_MAX_LAMBDA], without libm (as
 * hotness_decay.c's exp2): its Taylor series, every term positive. */
static double exp_series(double x)
{
	double term = 1.0, sum = 1.0;

	for (int n = 1; n < 80; n++) {
		term *= x / n;
		sum += term;
	}
	return sum;
}

/* The table's histogram summed over its bins. */
struct table_sum {
	uint64_t bytes, entries;
	double heat;
};

static struct table_sum table_sum(const struct hot_heat_bin *th)
{
	struct table_sum s = { 0 };

	for (int b = 0; b < POLICY_HEAT_BINS; b++) {
		s.bytes += th[b].bytes;
		s.entries += th[b].entries;
		s.heat += th[b].heat;
	}
	return s;
}

/* @heat spread over @over bytes, per entry of the table's mean size. */
static double lambda_of(double heat, const struct table_sum *s, uint64_t over)
{
	double lambda;

	if (!s->entries || !over)
		return 0.0;
	lambda = heat * ((double)s->bytes / (double)s->entries) / (double)over;
	return lambda < POLICY_NOISE_MAX_LAMBDA ? lambda : POLICY_NOISE_MAX_LAMBDA;
}

/* The memory the table does not hold: at heat 0. */
static uint64_t untracked(const struct policy_input *in, const struct table_sum *s)
{
	return in->footprint_bytes > s->bytes ? in->footprint_bytes - s->bytes : 0;
}

/* The mean heat of the coldest @want bytes of the footprint, per entry. */
static double coldest_mean(const struct policy_input *in, const struct table_sum *s,
			   uint64_t want)
{
	const struct hot_heat_bin *th = in->table_hist;
	uint64_t got = untracked(in, s);
	double heat = 0.0;

	if (!s->entries)
		return 0.0;
	for (int b = 0; b < POLICY_HEAT_BINS && got < want; b++) {
		uint64_t take = th[b].bytes < want - got ? th[b].bytes : want - got;

		if (take)
			heat += th[b].heat * (double)take / (double)th[b].bytes;
		got += take;
	}
	return lambda_of(heat, s, want);
}

/*
 * The bin in which the hottest entries come to hold 1 - POLICY_NOISE_HELD
 * of the table's heat; -1 for a table without heat.
 */
static int held_bin(const struct hot_heat_bin *th, const struct table_sum *s)
{
	double sum = 0.0;

	for (int b = POLICY_HEAT_BINS - 1; s->heat > 0.0 && b >= 0; b--) {
		sum += th[b].heat;
		if (th[b].entries && sum >= (1.0 - POLICY_NOISE_HELD) * s->heat)
			return b;
	}
	return -1;
}

/*
 * The mean heat, per entry, of the memory outside the hottest entries that
 * hold 1 - POLICY_NOISE_HELD of the table's heat: the bins below @held
 * (held_bin()) and the memory the table does not hold.
 */
static double cold_mean(const struct policy_input *in, const struct table_sum *s, int held)
{
	const struct hot_heat_bin *th = in->table_hist;
	uint64_t cold = untracked(in, s);
	double heat = 0.0;

	if (held < 0)
		return 0.0;
	for (int b = 0; b < held; b++) {
		heat += th[b].heat;
		cold += th[b].bytes;
	}
	return lambda_of(heat, s, cold);
}

/* The least t >= 1 with P(X >= t | @lambda) <= @limit, X Poisson. */
static uint32_t poisson_floor(double lambda, double limit)
{
	double p_t = 1.0 / exp_series(lambda);	/* P(X = 0) */
	double tail = 1.0 - p_t;		/* P(X >= 1) */
	uint32_t t;

	for (t = 1; t < POLICY_NOISE_MAX_FLOOR && tail > limit; t++) {
		p_t *= lambda / t;	/* P(X = t) */
		tail -= p_t;		/* P(X >= t + 1) */
	}
	return t;
}

/*
 * The variance of the footprint's heat over its mean, per entry of the
 * table's mean size, memory the table does not hold at heat 0 and each
 * bin's entries at the bin's mean (the spread within a bin left out: the
 * low side).  About 1 for memory read evenly (a Poisson count; less, for
 * the decay), far more where some memory is hotter than the rest.
 */
static double heat_dispersion(const struct policy_input *in, const struct table_sum *s)
{
	const struct hot_heat_bin *th = in->table_hist;
	double sq = 0.0, n, mean;

	for (int b = 0; b < POLICY_HEAT_BINS; b++)
		if (th[b].entries)
			sq += th[b].heat * th[b].heat / (double)th[b].entries;
	if (!s->entries || s->heat <= 0.0)
		return 0.0;
	n = (double)s->entries * (double)(s->bytes + untracked(in, s)) / (double)s->bytes;
	mean = s->heat / n;
	return (sq / n - mean * mean) / mean;
}

/*
 * The heat at which the hottest entries hold all but POLICY_NOISE_HELD of
 * the table's heat: the mean heat of the bin where that share is reached,
 * at least 1.  UINT32_MAX for an empty table, and for heat spread about
 * evenly (heat_dispersion() under POLICY_NOISE_UNEVEN): there the heat
 * under the floor is chance's.
 */
static uint32_t held_floor(const struct policy_input *in, const struct table_sum *s, int held)
{
	const struct hot_heat_bin *th = in->table_hist;
	double mean;

	if (held < 0 || heat_dispersion(in, s) < POLICY_NOISE_UNEVEN)
		return UINT32_MAX;
	mean = th[held].heat / (double)th[held].entries;
	if (mean < 2.0)
		return 1;
	return mean < POLICY_NOISE_MAX_FLOOR ? (uint32_t)mean : POLICY_NOISE_MAX_FLOOR;
}

uint32_t pol_noise_floor(const struct policy_input *in, uint64_t room, struct policy_stats *st)
{
	struct table_sum sum = table_sum(in->table_hist);
	uint64_t cold = in->footprint_bytes - room;
	double limit = POLICY_NOISE_SHARE * (double)room / (double)cold;
	double lambda = coldest_mean(in, &sum, cold), whole;
	uint32_t least = in->news_since_ns ? 1 : POLICY_NOISE_MIN_FLOOR;
	int bin = held_bin(in->table_hist, &sum);
	uint32_t held = held_floor(in, &sum, bin), t;

	if (!in->news_since_ns) {
		whole = cold_mean(in, &sum, bin);
		lambda = whole > lambda ? whole : lambda;
	}
	t = poisson_floor(lambda, limit);
	t = t > least ? t : least;
	st->thin = held < t;
	if (st->thin)
		t = held;
	st->discovering = !st->thin && t < POLICY_NOISE_MIN_FLOOR;
	return t;
}
