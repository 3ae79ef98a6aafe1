/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html.c — the report as one self-contained HTML page.
 *
 * Inline CSS and SVG only: no script, font, image or style is loaded from
 * anywhere, so the page opens offline and in a mail attachment.  At the top
 * the provenance (version, trace, seed, the flags that made the runs); with
 * two runs or more, an overlay of them (accelerators allocated, and each
 * run's difference from the first on a common time grid) and a table of
 * their figures side by side with the differences.  Then each run as a
 * column: the summary table, the queueing delay table by gang size, the
 * delay's distribution (CDF) per gang size, and the time charts on a shared
 * axis: accelerators allocated, accelerators stranded, and the largest free
 * box per superslice (the first eight).  Times read in days, hours and
 * minutes, not raw seconds.  Text from the report is escaped.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kernel/sim/sim.h"

#define W 520
#define H 160
#define PAD 44
#define MAX_LINES 8
#define GRID 240 /* points of the overlay's common time grid */

static const char *const colors[MAX_LINES] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
					      "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

/* One line of a plot: y over x (arrays of numbers), named in the legend. */
struct line {
	const json_t *x, *y;
	const char *name;
};

/* A plot's axes: x from 0 to xmax (a time), y from ymin to ymax. */
struct axes {
	double xmax, ymin, ymax;
	bool y_share; /* y is a share (0..1), labelled in percent */
	bool x_log;   /* x drawn as log(1 + x): delays from seconds to days on one axis */
};

static double x_scaled(const struct axes *ax, double x)
{
	return ax->x_log ? log10(1 + fmax(x, 0)) : x;
}

void pk_sim_duration(double s, char *buf, size_t len)
{
	double a = fabs(s);
	const char *sign = s < 0 ? "-" : "";

	if (a < 60)
		snprintf(buf, len, "%s%.0f s", sign, a);
	else if (a < 3600)
		snprintf(buf, len, "%s%.0f min %.0f s", sign, floor(a / 60), fmod(a, 60));
	else if (a < 86400)
		snprintf(buf, len, "%s%.0f h %.0f min", sign, floor(a / 3600), fmod(a, 3600) / 60);
	else
		snprintf(buf, len, "%s%.0f d %.0f h", sign, floor(a / 86400),
			 floor(fmod(a, 86400) / 3600));
}

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

static void duration(FILE *f, double s)
{
	char buf[64];

	pk_sim_duration(s, buf, sizeof(buf));
	fputs(buf, f);
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

/* The axes' labels: y at the top and bottom, x as times at four ticks. */
static void plot_axes(FILE *f, const struct axes *ax)
{
	char buf[64];

	if (ax->y_share)
		fprintf(f, "<text x=\"2\" y=\"14\" class=\"ax\">%.0f%%</text>", 100 * ax->ymax);
	else
		fprintf(f, "<text x=\"2\" y=\"14\" class=\"ax\">%.0f</text>", ax->ymax);
	fprintf(f, "<text x=\"2\" y=\"%d\" class=\"ax\">%.0f</text>\n", H - 4,
		ax->y_share ? 100 * ax->ymin : ax->ymin);
	if (ax->ymin < 0)
		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
			"stroke-dasharray=\"3 3\"/>\n",
			PAD, W - 4, (H - 4) - (H - 8) * (0 - ax->ymin) / (ax->ymax - ax->ymin),
			(H - 4) - (H - 8) * (0 - ax->ymin) / (ax->ymax - ax->ymin));
	for (int k = 0; k <= 4; k++) {
		double at = x_scaled(ax, ax->xmax) * k / 4;

		pk_sim_duration(ax->x_log ? pow(10, at) - 1 : at, buf, sizeof(buf));
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"%s\">%s</text>",
			PAD + (W - PAD - 4) * k / 4, H + 12,
			k == 0	 ? "start"
			: k == 4 ? "end"
				 : "middle",
			buf);
	}
	fputc('\n', f);
}

/* The legend under a plot: each line's name in its colour, side by side. */
static void legend(FILE *f, const struct line *lines, size_t n)
{
	size_t x = PAD;

	for (size_t i = 0; n > 1 && i < n && i < MAX_LINES; i++) {
		if (!lines[i].name)
			continue;
		fprintf(f, "<text x=\"%zu\" y=\"%d\" class=\"ax\" fill=\"%s\">", x, H + 22,
			colors[i]);
		esc(f, lines[i].name);
		fprintf(f, "</text>\n");
		x += 6 * strlen(lines[i].name) + 14; /* about 6 px a character at 10 px */
	}
}

static void plot(FILE *f, const char *title, const struct line *lines, size_t n, struct axes ax)
{
	if (ax.ymax <= ax.ymin)
		ax.ymax = ax.ymin + 1;
	if (ax.xmax <= 0)
		ax.xmax = 1;
	fprintf(f, "<h3>");
	esc(f, title);
	fprintf(f,
		"</h3>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" role=\"img\">\n"
		"<rect x=\"%d\" y=\"4\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
		"stroke=\"#ccc\"/>\n",
		W, H + 24, W, H + 24, PAD, W - PAD - 4, H - 8);
	plot_axes(f, &ax);
	for (size_t i = 0; i < n && i < MAX_LINES; i++) {
		size_t k;
		json_t *v;

		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			colors[i]);
		json_array_foreach(lines[i].y, k, v)
		{
			double x =
			    PAD +
			    (W - PAD - 4) *
				x_scaled(&ax, json_number_value(json_array_get(lines[i].x, k))) /
				x_scaled(&ax, ax.xmax);
			double y = (H - 4) -
				   (H - 8) * (json_number_value(v) - ax.ymin) / (ax.ymax - ax.ymin);

			fprintf(f, "%.1f,%.1f ", x, y);
		}
		fprintf(f, "\"/>\n");
	}
	legend(f, lines, n);
	fprintf(f, "</svg>\n");
}

/* The value a step series (x ascending) holds at time t: its last sample at or before t. */
static double step_at(const json_t *x, const json_t *y, double t)
{
	size_t lo = 0, hi = json_array_size(x);

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (json_number_value(json_array_get(x, mid)) <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? json_number_value(json_array_get(y, lo - 1)) : 0;
}

static void summary_rows(FILE *f, const json_t *run)
{
	fprintf(f, "<tr><th>hosts</th><td>%.0f</td></tr>\n", num(run, "hosts"));
	fprintf(f, "<tr><th>accelerators</th><td>%.0f</td></tr>\n", num(run, "accelerators"));
	fprintf(f, "<tr><th>simulated</th><td>");
	duration(f, num(run, "end"));
	fprintf(f, "</td></tr>\n<tr><th>jobs</th><td>%.0f</td></tr>\n", num(run, "jobs.total"));
	fprintf(f, "<tr><th>completed</th><td>%.0f</td></tr>\n", num(run, "jobs.completed"));
	fprintf(f, "<tr><th>never placed</th><td>%.0f</td></tr>\n", num(run, "jobs.never_placed"));
	fprintf(f, "<tr><th>failed</th><td>%.0f</td></tr>\n", num(run, "jobs.failed"));
	fprintf(f, "<tr><th>preempted jobs (pods)</th><td>%.0f (%.0f)</td></tr>\n",
		num(run, "preemptions.jobs"), num(run, "preemptions.pods"));
	fprintf(f, "<tr><th>allocation mean / peak</th><td>%.1f%% / %.1f%%</td></tr>\n",
		100 * num(run, "allocation.mean"), 100 * num(run, "allocation.peak"));
	fprintf(f, "<tr><th>stranded mean / peak</th><td>%.1f / %.0f</td></tr>\n",
		num(run, "stranded.mean_accelerators"), num(run, "stranded.peak_accelerators"));
}

static void summary(FILE *f, const json_t *run)
{
	size_t k;
	json_t *d;

	fprintf(f, "<table>\n");
	summary_rows(f, run);
	json_array_foreach(json_object_get(run, "levels"), k, d)
	    fprintf(f,
		    "<tr><th>allocated at %.0f%% requested (nothing departing)</th>"
		    "<td>%.2f%%</td></tr>\n",
		    num(d, "arrived_percent"), 100 * num(d, "allocated_ratio"));
	fprintf(f, "</table>\n<h3>Queueing delay by gang size</h3>\n<table>\n"
		   "<tr><th>gang</th><th>jobs</th><th>p50</th><th>p95</th><th>p99</th>"
		   "<th>max</th></tr>\n");
	json_array_foreach(json_object_get(run, "queueing_delay"), k, d)
	{
		static const char *const cols[] = {"p50", "p95", "p99", "max"};

		fprintf(f, "<tr><td>");
		esc(f, json_string_value(json_object_get(d, "gang")));
		fprintf(f, "</td><td>%.0f</td>", num(d, "jobs"));
		for (size_t c = 0; c < 4; c++) {
			fprintf(f, "<td>");
			duration(f, num(d, cols[c]));
			fprintf(f, "</td>");
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n");
}

/* The delay's distribution per gang size: the share of jobs (y) placed within x. */
static void delay_cdf(FILE *f, const json_t *run)
{
	json_t *share = json_array(), *d;
	struct line lines[MAX_LINES];
	struct axes ax = {.ymax = 1, .y_share = true, .x_log = true};
	size_t n = 0, k;

	for (int i = 0; i < 21; i++)
		json_array_append_new(share, json_real(i / 20.0));
	json_array_foreach(json_object_get(run, "queueing_delay"), k, d)
	{
		const json_t *c = json_object_get(d, "cdf");

		if (n == MAX_LINES || json_array_size(c) != json_array_size(share))
			continue;
		lines[n++] = (struct line){c, share, json_string_value(json_object_get(d, "gang"))};
		ax.xmax = fmax(ax.xmax, json_number_value(json_array_get(c, 20)));
	}
	if (n)
		plot(f,
		     "Queueing delay distribution by gang size (share of jobs placed within; "
		     "log time)",
		     lines, n, ax);
	json_decref(share);
}

/* A run with queues: its LocalQueues' waits, ClusterQueues' usage, tenants' shares over time. */
static void queues(FILE *f, const json_t *run, double tmax)
{
	const json_t *q = json_object_get(run, "queues"), *x, *u;
	const json_t *t = pk_get(q, "series.t"), *shares = pk_get(q, "series.dominant_share");
	struct line lines[MAX_LINES];
	const char *name;
	size_t i, k, n = 0;
	double ymax = 0.01;

	if (!q)
		return;
	fprintf(f,
		"<h3>Queues: %s admission</h3>\n<table>\n<tr><th>admitted</th><td>%.0f</td></tr>\n"
		"<tr><th>preempted for quota</th><td>%.0f</td></tr>\n<tr><th>admitted, not placed "
		"at once</th><td>%.0f</td></tr>\n<tr><th>quota held idle</th><td>",
		pk_get_string(q, "admission"), num(q, "admitted"), num(q, "preempted"),
		num(q, "admitted_unplaceable"));
	duration(f, num(q, "admitted_unplaced_seconds.total"));
	fprintf(f, "</td></tr>\n</table>\n<table>\n<tr><th>LocalQueue</th><th>jobs</th><th>never "
		   "placed</th><th>p50 wait</th><th>p95 wait</th></tr>\n");
	json_array_foreach(json_object_get(q, "local_queues"), i, x)
	{
		fprintf(f, "<tr><td>");
		esc(f, pk_get_string(x, "name"));
		fprintf(f, "</td><td>%.0f</td><td>%.0f</td><td>", num(x, "jobs"),
			num(x, "never_placed"));
		duration(f, num(x, "wait_p50"));
		fprintf(f, "</td><td>");
		duration(f, num(x, "wait_p95"));
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n<table>\n<tr><th>ClusterQueue</th><th>resource</th><th>nominal</th>"
		   "<th>mean</th><th>peak</th></tr>\n");
	json_array_foreach(json_object_get(q, "cluster_queues"), i, x)
	    json_array_foreach(json_object_get(x, "usage"), k, u)
	{
		fprintf(f, "<tr><td>");
		esc(f, pk_get_string(x, "name"));
		fprintf(f, "</td><td>");
		esc(f, pk_get_string(u, "resource"));
		fprintf(f, "</td><td>%g</td><td>%.1f (%.0f%%)</td><td>%g</td></tr>\n",
			num(u, "nominal"), num(u, "mean"), 100 * num(u, "mean_of_nominal"),
			num(u, "peak"));
	}
	fprintf(f, "</table>\n");
	json_object_foreach((json_t *)shares, name, x)
	{
		json_t *v;

		json_array_foreach(x, k, v) ymax = fmax(ymax, json_number_value(v));
		if (n < MAX_LINES)
			lines[n++] = (struct line){t, x, name};
	}
	plot(f, "Dominant resource share per tenant", lines, n,
	     (struct axes){tmax, 0, ymax, true, false});
}

static void column(FILE *f, const json_t *run, double tmax, double amax, double smax)
{
	const json_t *ser = json_object_get(run, "series");
	const json_t *t = json_object_get(ser, "t");
	struct line one = {t, json_object_get(ser, "allocated"), NULL};
	struct line two = {t, json_object_get(ser, "stranded"), NULL};
	struct line boxes[MAX_LINES];
	const json_t *b = json_object_get(ser, "largest_free_box");
	size_t i, n = 0;
	json_t *fr;

	fprintf(f, "<div class=\"run\">\n<h2>");
	esc(f, json_string_value(json_object_get(run, "label")));
	fprintf(f, " &middot; ");
	esc(f, json_string_value(json_object_get(run, "strategy")));
	fprintf(f, "</h2>\n");
	summary(f, run);
	queues(f, run, tmax);
	delay_cdf(f, run);
	plot(f, "Accelerators allocated", &one, 1, (struct axes){tmax, 0, amax, false});
	plot(f, "Accelerators stranded (free chips, host CPU or memory full)", &two, 1,
	     (struct axes){tmax, 0, smax, false});
	json_array_foreach(json_object_get(run, "fragmentation"), i, fr)
	{
		if (n == MAX_LINES)
			break;
		boxes[n] = (struct line){t, json_array_get(b, i),
					 json_string_value(json_object_get(fr, "superslice"))};
		n++;
	}
	plot(f, "Largest free box per superslice (hosts)", boxes, n,
	     (struct axes){tmax, 0, series_max(b), false});
	fprintf(f, "</div>\n");
}

/* A run's name in the overlay: its label and strategy. */
static void run_name(const json_t *run, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s", json_string_value(json_object_get(run, "label")),
		 json_string_value(json_object_get(run, "strategy")));
}

/* One figure of every run; scale 0: a time, shown as a duration. */
static void compare_row(FILE *f, const json_t *runs, const char *what, const char *path,
			double scale, int decimals, const char *unit)
{
	size_t i;
	json_t *run;
	double first = num(json_array_get(runs, 0), path) * (scale ? scale : 1);

	fprintf(f, "<tr><th>%s</th>", what);
	json_array_foreach(runs, i, run)
	{
		double v = num(run, path) * (scale ? scale : 1);

		fprintf(f, "<td>");
		if (scale)
			fprintf(f, "%.*f%s", decimals, v, unit);
		else
			duration(f, v);
		if (i && scale) {
			fprintf(f, " (%+.*f)", decimals, v - first);
		} else if (i) {
			fprintf(f, " (%s", v >= first ? "+" : "");
			duration(f, v - first);
			fprintf(f, ")");
		}
		fprintf(f, "</td>");
	}
	fprintf(f, "</tr>\n");
}

static void compare_table(FILE *f, const json_t *runs)
{
	char name[200];
	size_t i;
	json_t *run;

	fprintf(f, "<table>\n<tr><th></th>");
	json_array_foreach(runs, i, run)
	{
		run_name(run, name, sizeof(name));
		fprintf(f, "<th>");
		esc(f, name);
		fprintf(f, "%s</th>", i ? " (difference)" : "");
	}
	fprintf(f, "</tr>\n");
	compare_row(f, runs, "allocation mean", "allocation.mean", 100, 1, "%");
	compare_row(f, runs, "allocation peak", "allocation.peak", 100, 1, "%");
	compare_row(f, runs, "stranded mean", "stranded.mean_accelerators", 1, 1, "");
	compare_row(f, runs, "jobs completed", "jobs.completed", 1, 0, "");
	compare_row(f, runs, "jobs never placed", "jobs.never_placed", 1, 0, "");
	compare_row(f, runs, "preempted jobs", "preemptions.jobs", 1, 0, "");
	compare_row(f, runs, "delay p95, all jobs", "queueing_delay[0].p95", 0, 0, "");
	compare_row(f, runs, "delay p99, all jobs", "queueing_delay[0].p99", 0, 0, "");
	fprintf(f, "</table>\n");
}

/*
 * Two runs or more: their accelerators allocated on one chart, and each
 * run's difference from the first, both sampled on one time grid (the runs
 * sample at their own events).
 */
static void overlay(FILE *f, const json_t *runs, double tmax, double amax)
{
	struct line all[MAX_LINES], diff[MAX_LINES];
	json_t *grid = json_array(), *vals[MAX_LINES] = {0}, *deltas[MAX_LINES] = {0}, *run;
	char names[MAX_LINES][200];
	size_t n = json_array_size(runs) < MAX_LINES ? json_array_size(runs) : MAX_LINES, i;
	double lo = 0, hi = 0;

	for (int g = 0; g <= GRID; g++)
		json_array_append_new(grid, json_real(tmax * g / GRID));
	json_array_foreach(runs, i, run)
	{
		const json_t *t = pk_get(run, "series.t"), *a = pk_get(run, "series.allocated");

		if (i == n)
			break;
		vals[i] = json_array();
		deltas[i] = json_array();
		for (int g = 0; g <= GRID; g++) {
			double v = step_at(t, a, tmax * g / GRID);
			double d = v - json_number_value(json_array_get(vals[0], (size_t)g));

			json_array_append_new(vals[i], json_real(v));
			json_array_append_new(deltas[i], json_real(i ? d : 0));
			lo = fmin(lo, i ? d : 0);
			hi = fmax(hi, i ? d : 0);
		}
		run_name(run, names[i], sizeof(names[i]));
		all[i] = (struct line){grid, vals[i], names[i]};
		diff[i] = (struct line){grid, deltas[i], names[i]};
	}
	fprintf(f, "<div class=\"overlay\">\n<h2>Runs overlaid</h2>\n");
	compare_table(f, runs);
	plot(f, "Accelerators allocated, every run", all, n, (struct axes){tmax, 0, amax, false});
	plot(f, "Accelerators allocated: difference from the first run", diff, n,
	     (struct axes){tmax, lo, hi > lo ? hi : lo + 1, false});
	fprintf(f, "</div>\n");
	for (i = 0; i < n; i++) {
		json_decref(vals[i]);
		json_decref(deltas[i]);
	}
	json_decref(grid);
}

static void provenance_table(FILE *f, const json_t *p)
{
	size_t i;
	json_t *v;

	if (!p)
		return;
	fprintf(f, "<table class=\"prov\">\n<tr><th>podkernel</th><td>");
	esc(f, json_string_value(json_object_get(p, "version")));
	fprintf(f, "</td></tr>\n<tr><th>trace</th><td>");
	esc(f, json_string_value(json_object_get(p, "trace")));
	fprintf(f, "</td></tr>\n<tr><th>seed</th><td>%.0f</td></tr>\n<tr><th>flags</th><td>",
		num(p, "seed"));
	json_array_foreach(json_object_get(p, "flags"), i, v)
	{
		fputs(i ? " " : "", f);
		esc(f, json_string_value(v));
	}
	fprintf(f, "</td></tr>\n</table>\n");
}

int pk_sim_report_html(FILE *f, const json_t *runs, const json_t *provenance)
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
	      ".prov td{text-align:left;font-family:monospace}\n"
	      "h2{font-size:17px;margin:4px 0}h3{font-size:14px;margin:10px 0 2px}"
	      ".ax{font-size:10px;fill:#666}\n</style></head><body>\n"
	      "<h1>Simulation report</h1>\n",
	      f);
	provenance_table(f, provenance);
	if (json_array_size(runs) > 1)
		overlay(f, runs, tmax, amax);
	fputs("<div class=\"runs\">\n", f);
	json_array_foreach(runs, i, run) column(f, run, tmax, amax, smax > 0 ? smax : 1);
	fputs("</div>\n</body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}
