/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html.c — the report as one self-contained HTML page.
 *
 * Inline CSS and SVG only: no script, font, image or style is loaded from
 * anywhere, so the page opens offline and in a mail attachment.  Runs are
 * columns side by side (two strategies, or two boards); each column has the
 * summary table, the queueing delay table by gang size, and three charts
 * drawn as SVG polylines on a shared time axis: accelerators allocated,
 * accelerators stranded, and the largest free box per superslice (the first
 * eight).  Text from the report is escaped.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kernel/sim/sim.h"

#define W 520
#define H 160
#define PAD 36
#define MAX_LINES 8

static const char *const colors[MAX_LINES] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
					      "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static double num(const json_t *o, const char *path)
{
	return json_number_value(pk_get(o, path));
}

static double series_max(const json_t *lines)
{
	double m = 0;
	size_t i, k;
	json_t *l, *v;

	json_array_foreach(lines, i, l) json_array_foreach(l, k, v) if (json_number_value(v) > m)
	    m = json_number_value(v);
	return m;
}

/* One chart: lines (arrays of values) against t, y from 0 to ymax. */
static void chart(FILE *f, const char *title, const json_t *t, const json_t *lines,
		  const json_t *names, double ymax, double tmax)
{
	size_t i, k;
	json_t *l, *v;

	if (ymax <= 0)
		ymax = 1;
	if (tmax <= 0)
		tmax = 1;
	fprintf(f, "<h3>");
	esc(f, title);
	fprintf(f,
		"</h3>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" role=\"img\">\n",
		W, H + 24, W, H + 24);
	fprintf(f,
		"<rect x=\"%d\" y=\"4\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
		"stroke=\"#ccc\"/>\n",
		PAD, W - PAD - 4, H - 8);
	fprintf(f, "<text x=\"2\" y=\"14\" class=\"ax\">%.0f</text>", ymax);
	fprintf(f, "<text x=\"2\" y=\"%d\" class=\"ax\">0</text>", H - 4);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\">0 s</text>", PAD, H + 12);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\">%.0f s</text>\n",
		W - 4, H + 12, tmax);
	json_array_foreach(lines, i, l)
	{
		if (i >= MAX_LINES)
			break;
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			colors[i]);
		json_array_foreach(l, k, v)
		{
			double x =
			    PAD + (W - PAD - 4) * json_number_value(json_array_get(t, k)) / tmax;
			double y = (H - 4) - (H - 8) * json_number_value(v) / ymax;

			fprintf(f, "%.1f,%.1f ", x, y);
		}
		fprintf(f, "\"/>\n");
		if (json_array_size(names) > 1) {
			fprintf(f, "<text x=\"%zu\" y=\"%d\" class=\"ax\" fill=\"%s\">",
				PAD + 60 * i + 40, H + 22, colors[i]);
			esc(f, json_string_value(json_array_get(names, i)));
			fprintf(f, "</text>\n");
		}
	}
	fprintf(f, "</svg>\n");
}

static void summary(FILE *f, const json_t *run)
{
	fprintf(f, "<table>\n");
	fprintf(f, "<tr><th>hosts</th><td>%.0f</td></tr>\n", num(run, "hosts"));
	fprintf(f, "<tr><th>accelerators</th><td>%.0f</td></tr>\n", num(run, "accelerators"));
	fprintf(f, "<tr><th>jobs</th><td>%.0f</td></tr>\n", num(run, "jobs.total"));
	fprintf(f, "<tr><th>completed</th><td>%.0f</td></tr>\n", num(run, "jobs.completed"));
	fprintf(f, "<tr><th>never placed</th><td>%.0f</td></tr>\n", num(run, "jobs.never_placed"));
	fprintf(f, "<tr><th>failed</th><td>%.0f</td></tr>\n", num(run, "jobs.failed"));
	fprintf(f, "<tr><th>preempted jobs (pods)</th><td>%.0f (%.0f)</td></tr>\n",
		num(run, "preemptions.jobs"), num(run, "preemptions.pods"));
	fprintf(f, "<tr><th>allocation mean / peak</th><td>%.1f%% / %.1f%%</td></tr>\n",
		100 * num(run, "allocation.mean"), 100 * num(run, "allocation.peak"));
	fprintf(f, "<tr><th>stranded mean / peak</th><td>%.1f / %.0f</td></tr>\n",
		num(run, "stranded.mean_accelerators"), num(run, "stranded.peak_accelerators"));
	size_t k;
	json_t *d;

	json_array_foreach(json_object_get(run, "levels"), k, d)
	    fprintf(f,
		    "<tr><th>allocated at %.0f%% requested (nothing departing)</th>"
		    "<td>%.2f%%</td></tr>\n",
		    num(d, "arrived_percent"), 100 * num(d, "allocated_ratio"));
	fprintf(f, "</table>\n<h3>Queueing delay (s) by gang size</h3>\n<table>\n"
		   "<tr><th>gang</th><th>jobs</th><th>p50</th><th>p95</th><th>p99</th>"
		   "<th>max</th></tr>\n");

	json_array_foreach(json_object_get(run, "queueing_delay"), k, d)
	{
		fprintf(f, "<tr><td>");
		esc(f, json_string_value(json_object_get(d, "gang")));
		fprintf(
		    f,
		    "</td><td>%.0f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td></tr>\n",
		    num(d, "jobs"), num(d, "p50"), num(d, "p95"), num(d, "p99"), num(d, "max"));
	}
	fprintf(f, "</table>\n");
}

static void column(FILE *f, const json_t *run, double tmax, double amax, double smax)
{
	const json_t *ser = json_object_get(run, "series");
	const json_t *t = json_object_get(ser, "t");
	json_t *one = json_pack("[O]", json_object_get(ser, "allocated"));
	json_t *two = json_pack("[O]", json_object_get(ser, "stranded"));
	json_t *names = json_array(), *fr;
	size_t i;

	fprintf(f, "<div class=\"run\">\n<h2>");
	esc(f, json_string_value(json_object_get(run, "label")));
	fprintf(f, " &middot; ");
	esc(f, json_string_value(json_object_get(run, "strategy")));
	fprintf(f, "</h2>\n");
	summary(f, run);
	chart(f, "Accelerators allocated", t, one, NULL, amax, tmax);
	chart(f, "Accelerators stranded (free chips, host CPU or memory full)", t, two, NULL, smax,
	      tmax);
	json_array_foreach(json_object_get(run, "fragmentation"), i, fr) json_array_append_new(
	    names, json_string(json_string_value(json_object_get(fr, "superslice"))));
	const json_t *boxes = json_object_get(ser, "largest_free_box");

	chart(f, "Largest free box per superslice (hosts)", t, boxes, names, series_max(boxes),
	      tmax);
	fprintf(f, "</div>\n");
	json_decref(one);
	json_decref(two);
	json_decref(names);
}

int pk_sim_report_html(FILE *f, const json_t *runs)
{
	double tmax = 0, amax = 0, smax = 0;
	size_t i;
	json_t *run;

	json_array_foreach(runs, i, run)
	{
		tmax = fmax(tmax, num(run, "end"));
		amax = fmax(amax, num(run, "accelerators"));
		json_t *st = json_pack("[O]", pk_get(run, "series.stranded"));

		smax = fmax(smax, series_max(st));
		json_decref(st);
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>podkernel simulation report</title>\n<style>\n"
	      "body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222}\n"
	      ".runs{display:flex;gap:24px;flex-wrap:wrap}.run{flex:1;min-width:540px}\n"
	      "table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;"
	      "padding:2px 8px;text-align:right}th{background:#f3f3f3;text-align:left}\n"
	      "h2{font-size:17px;margin:4px 0}h3{font-size:14px;margin:10px 0 2px}"
	      ".ax{font-size:10px;fill:#666}\n</style></head><body>\n"
	      "<h1>Simulation report</h1>\n<div class=\"runs\">\n",
	      f);
	json_array_foreach(runs, i, run) column(f, run, tmax, amax, smax > 0 ? smax : 1);
	fputs("</div>\n</body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}
