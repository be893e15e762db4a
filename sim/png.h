/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A palette canvas and its PNG encoding, for tierd-sim's chart: filled
 * rectangles, thick lines, text in a built-in 5x8 bitmap font (printable
 * ASCII), horizontal or turned a quarter left.  The file holds IHDR, PLTE,
 * IDAT (zlib) and IEND only: no time, no text chunks, so the same canvas
 * gives the same bytes.
 */
#ifndef TIERD_SIM_PNG_H
#define TIERD_SIM_PNG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PNG_FONT_W 5		/* a glyph's pixels across */
#define PNG_FONT_H 8		/* and down, the last row for descenders */
#define PNG_FONT_ADVANCE 6	/* a glyph and its gap */

struct png_canvas {
	uint32_t w, h;
	uint8_t *px;		/* palette indexes, row by row */
};

/* 0 with a canvas of @w x @h pixels of colour 0, or -ENOMEM. */
int png_canvas_init(struct png_canvas *c, uint32_t w, uint32_t h);
void png_canvas_free(struct png_canvas *c);

/* Pixels outside the canvas are clipped, here and below. */
void png_fill(struct png_canvas *c, int x, int y, int w, int h, uint8_t colour);
/* A line @thick pixels wide from (x0, y0) to (x1, y1), ends included. */
void png_line(struct png_canvas *c, int x0, int y0, int x1, int y1, int thick,
	      uint8_t colour);
/*
 * @s with its top left corner at (x, y), each font pixel @scale x @scale;
 * @turned: turned a quarter left (read bottom to top) in the box from
 * (x, y), PNG_FONT_H x @scale across and png_text_width() down.
 * Characters outside printable ASCII are drawn as '?'.
 */
void png_text(struct png_canvas *c, int x, int y, const char *s, int scale,
	      bool turned, uint8_t colour);
/* The pixels @s takes along its line at @scale. */
int png_text_width(const char *s, int scale);

/*
 * Write @c as an 8-bit palette PNG with @nr_colours RGB triples from @rgb.
 * 0, -ENOMEM, or -EIO when a write fails.
 */
int png_write(FILE *f, const struct png_canvas *c, const uint8_t (*rgb)[3],
	      int nr_colours);

#endif
