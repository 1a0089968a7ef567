/* figure.c — the leibniz workload's convergence figure: the cumulative estimate of pi and
 * its error against the number of terms summed, drawn by gnuplot as one SVG. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"
#include "workloads/leibniz.h"

int lz_figure(const char *dir, const char *name, const double *terms, const double *estimate,
	      size_t n, char *err, size_t errlen)
{
	if (n == 0) {
		snprintf(err, errlen, "no partial sums to draw");
		return -1;
	}
	/* from a report file: the axes are logarithmic in terms, and the title takes log10 of
	 * the last one, so every term must be a positive finite count */
	for (size_t i = 0; i < n; i++) {
		if (!(terms[i] >= 1 && terms[i] <= 1e18) || !isfinite(estimate[i])) {
			snprintf(err, errlen, "partial sum %zu is not a positive term count and a finite estimate", i + 1);
			return -1;
		}
	}
	/* two inline data blocks: gnuplot reads them from the script itself */
	size_t cap = 4096 + n * 80;
	char *s = malloc(cap);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t k = 0;
#define ADD(...) (k += (size_t)snprintf(s + k, k < cap ? cap - k : 0, __VA_ARGS__))
	ADD("$conv << EOD\n");
	for (size_t i = 0; i < n; i++)
		ADD("%.0f %.17g %.6e\n", terms[i], estimate[i], fabs(estimate[i] - M_PI) + 1e-300);
	ADD("EOD\n");
	/* the title says "2 x 10^8", as the article writes it */
	double last = terms[n - 1];
	int e = (int)floor(log10(last));
	ADD("set multiplot layout 2,1 title 'Leibniz series 4 {/Symbol S} (-1)^{n+1}/(2n-1): %g x 10^{%d} terms'\n",
	    round(last / pow(10, e) * 100) / 100, e);
	ADD("set logscale x\nset format x '10^{%%L}'\nset grid\nset key bottom right\n");
	ADD("set ylabel 'partial sum'\nset format y '%%.4f'\n");
	/* after N terms the sum is within about 1/N of pi: show the last
	 * three decades of approach, not a flat line */
	double lo = M_PI - 1.2 / terms[0] - 1e-4, hi = M_PI + 0.2 / terms[0] + 1e-5;
	ADD("set yrange [%.9f:%.9f]\n", lo, hi);
	ADD("plot $conv using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'estimate after n terms', "
	    "%.15f with lines dt 2 lw 2 lc rgb '#d62728' title '{/Symbol p}'\n", M_PI);
	ADD("set xlabel 'terms summed (n)'\nset ylabel '|estimate - {/Symbol p}|'\n");
	ADD("set logscale y\nset format y '10^{%%L}'\nset yrange [*:*]\nset key top right\n");
	ADD("plot 1/x with lines lw 6 lc rgb '#cccccc' title '1/n', "
	    "$conv using 1:3 with lines lw 2 lc rgb '#1f77b4' title 'error'\n");
	ADD("unset multiplot\n");
#undef ADD
	if (k >= cap) {
		free(s);
		snprintf(err, errlen, "figure script too long");
		return -1;
	}
	int rc = fig_gnuplot(dir, name, 900, 700, s, err, errlen);
	free(s);
	return rc;
}
