// SPDX-License-Identifier: GPL-2.0-only
/*
 * The chart (report.h): the share of the hot set on the fast tier over
 * simulated time, one line per system, from each row's series.  Axes in
 * seconds and percent, the machine and the workload in the title, a legend
 * on the right.  Drawn on a palette canvas (png.h): integer pixel
 * positions from fixed number formats, so the same rows give the same
 * bytes.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "png.h"
#include "report.h"

#define CHART_W 1120
#define CHART_H 640
/* The plot's box; the legend fills the right margin. */
#define PLOT_L 96
#define PLOT_T 80
#define PLOT_R (CHART_W - 320)
#define PLOT_B (CHART_H - 80)
#define TEXT_SCALE 2
#define TEXT_H (PNG_FONT_H * TEXT_SCALE)

enum { WHITE, BLACK, GRID, FIRST_LINE };

static const uint8_t palette[][3] = {
	[WHITE] = { 0xff, 0xff, 0xff },
	[BLACK] = { 0x00, 0x00, 0x00 },
	[GRID] = { 0xdd, 0xdd, 0xdd },
	/* Lines: ten hues apart (Tableau 10), then again. */
	{ 0x1f, 0x77, 0xb4 }, { 0xff, 0x7f, 0x0e }, { 0x2c, 0xa0, 0x2c },
	{ 0xd6, 0x27, 0x28 }, { 0x94, 0x67, 0xbd }, { 0x8c, 0x56, 0x4b },
	{ 0xe3, 0x77, 0xc2 }, { 0x7f, 0x7f, 0x7f }, { 0xbc, 0xbd, 0x22 },
	{ 0x17, 0xbe, 0xcf },
};

#define NR_COLOURS ((int)(sizeof(palette) / sizeof(palette[0])))

static uint8_t line_colour(size_t i)
{
	return FIRST_LINE + i % (NR_COLOURS - FIRST_LINE);
}

/* A step of 1, 2 or 5 x 10^k giving at most @max ticks over [0, @span]. */
static double tick_step(double span, int max)
{
	double raw = span / max, p = pow(10, floor(log10(raw))), m = raw / p;

	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static int x_of(double t_s, double span_s)
{
	return PLOT_L + (int)lround(t_s / span_s * (PLOT_R - PLOT_L));
}

static int y_of(double share)
{
	return PLOT_B - (int)lround(share * (PLOT_B - PLOT_T));
}

static void axes(struct png_canvas *c, double span_s)
{
	const char *ylabel = "hot set on the fast tier (%)";
	double step = tick_step(span_s, 8);
	char label[32];

	for (int pct = 0; pct <= 100; pct += 20) {
		int y = y_of(pct / 100.0);

		png_line(c, PLOT_L, y, PLOT_R, y, 1, GRID);
		snprintf(label, sizeof(label), "%d", pct);
		png_text(c, PLOT_L - 8 - png_text_width(label, TEXT_SCALE),
			 y - TEXT_H / 2, label, TEXT_SCALE, false, BLACK);
	}
	for (int k = 0; k * step <= span_s * (1 + 1e-9); k++) {
		int x = x_of(k * step, span_s);

		png_line(c, x, PLOT_T, x, PLOT_B, 1, GRID);
		png_line(c, x, PLOT_B, x, PLOT_B + 5, 1, BLACK);
		snprintf(label, sizeof(label), "%g", k * step);
		png_text(c, x - png_text_width(label, TEXT_SCALE) / 2, PLOT_B + 10,
			 label, TEXT_SCALE, false, BLACK);
	}
	png_line(c, PLOT_L, PLOT_T, PLOT_L, PLOT_B, 1, BLACK);
	png_line(c, PLOT_L, PLOT_B, PLOT_R, PLOT_B, 1, BLACK);
	png_text(c, (PLOT_L + PLOT_R - png_text_width("time (s)", TEXT_SCALE)) / 2,
		 PLOT_B + 20 + TEXT_H, "time (s)", TEXT_SCALE, false, BLACK);
	png_text(c, 16, (PLOT_T + PLOT_B - png_text_width(ylabel, TEXT_SCALE)) / 2,
		 ylabel, TEXT_SCALE, true, BLACK);
}

/* Consecutive points joined; a point without a share breaks the line. */
static void series_line(struct png_canvas *c, const struct sim_series *s,
			double span_s, uint8_t colour)
{
	int px = 0, py = 0;
	bool have = false;

	for (uint32_t k = 0; k < s->nr; k++) {
		double share;
		int64_t t_ns;
		int x, y;

		if (!sim_series_point(s, k, &share, &t_ns)) {
			have = false;
			continue;
		}
		x = x_of(t_ns / 1e9, span_s);
		y = y_of(share);
		if (have)
			png_line(c, px, py, x, y, 3, colour);
		else
			png_fill(c, x - 1, y - 1, 3, 3, colour);
		px = x;
		py = y;
		have = true;
	}
}

/* The sampler most rows name; a row's own one goes with its legend. */
static const char *title_sampler(const struct sim_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].sampler, "own"))
			return rows[i].sampler;
	return NULL;
}

static void title(struct png_canvas *c, const struct sim_row *rows, size_t n,
		  const char *sampler)
{
	char buf[256];
	int scale = TEXT_SCALE;

	if (!n)
		snprintf(buf, sizeof(buf), "tierd-sim: no rows");
	else if (sampler)
		snprintf(buf, sizeof(buf), "%s, %s, sampler %s", rows[0].machine,
			 rows[0].trace, sampler);
	else
		snprintf(buf, sizeof(buf), "%s, %s", rows[0].machine, rows[0].trace);
	/* A long workload spec still fits, smaller. */
	if (png_text_width(buf, scale) > CHART_W - 32)
		scale = 1;
	png_text(c, 16, 16, buf, scale, false, BLACK);
	png_text(c, 16, 16 + TEXT_H + 8,
		 "model: tierd-sim estimates on a machine model, not measurements",
		 1, false, BLACK);
}

static void legend(struct png_canvas *c, const struct sim_row *rows, size_t n,
		   const char *sampler)
{
	char buf[96];

	for (size_t i = 0; i < n; i++) {
		int x = PLOT_R + 24, y = PLOT_T + (int)i * (TEXT_H + 10);

		if (sampler && !strcmp(rows[i].sampler, sampler))
			snprintf(buf, sizeof(buf), "%s", rows[i].system);
		else
			snprintf(buf, sizeof(buf), "%s (%s)", rows[i].system,
				 rows[i].sampler);
		png_line(c, x, y + TEXT_H / 2, x + 28, y + TEXT_H / 2, 3, line_colour(i));
		png_text(c, x + 36, y, buf, TEXT_SCALE, false, BLACK);
	}
}

int sim_report_png(FILE *f, const struct sim_row *rows, size_t n)
{
	const char *sampler = title_sampler(rows, n);
	struct png_canvas c;
	double span_s = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		const struct sim_series *s = rows[i].res->series;
		double end_s = s->intervals * (s->interval_ns / 1e9);

		if (end_s > span_s)
			span_s = end_s;
	}
	if (span_s <= 0)
		span_s = 1;
	r = png_canvas_init(&c, CHART_W, CHART_H);
	if (r)
		return r;
	title(&c, rows, n, sampler);
	axes(&c, span_s);
	for (size_t i = 0; i < n; i++)
		series_line(&c, rows[i].res->series, span_s, line_colour(i));
	legend(&c, rows, n, sampler);
	r = png_write(f, &c, palette, NR_COLOURS);
	png_canvas_free(&c);
	return r;
}
