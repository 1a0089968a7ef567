/* fuzz_report.c — libFuzzer target: a report.json as `taskhop report` takes it (parse, single
 * run or report, the run reader, aggregate, every rendering), with gnuplot replaced by a
 * checker; each run that passes the reader must pass it again once the run writer wrote it;
 * a report that fails it still goes through the lenient reader of the JSON entry points. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/hist.h"
#include "report/json.h"
#include "report/report.h"
#include "report/run.h"
#include "workload.h"

/* Outside single-quoted strings a script holds only taskhop's own words: a double quote or
 * a backquote (shell substitution), or any of these words, means input escaped a quote. */
static const char *const forbidden[] = { "system", "shell", "load", "call", "print", "output",
					 "pipe", "cd", "eval", "`", "\"", NULL };

static void bad_script(const char *why, const char *line)
{
	fprintf(stderr, "unsafe gnuplot script (%s): %.200s\n", why, line);
	abort();
}

/* Data block lines hold numbers only (a string there could end the block). */
static void check_data_line(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789 .+-eENaninf", line[i]))
			bad_script("non-number in a data block", line);
}

static bool word_char(char c)
{
	return c == '_' || ((c | 32) >= 'a' && (c | 32) <= 'z') || (c >= '0' && c <= '9');
}

static void check_command_line(const char *line, size_t len)
{
	char outside[4096];
	size_t o = 0;
	bool quoted = false;
	for (size_t i = 0; i < len; i++) {
		char c = line[i];
		if ((unsigned char)c < 0x20)
			bad_script("control character", line);
		if (c == '\'') {
			if (quoted && i + 1 < len && line[i + 1] == '\'') {
				i++;
				continue;
			}
			quoted = !quoted;
			continue;
		}
		if (!quoted && o + 1 < sizeof(outside))
			outside[o++] = c;
	}
	if (quoted)
		bad_script("unterminated string", line);
	outside[o] = 0;
	for (int k = 0; forbidden[k]; k++) {
		const char *w = strstr(outside, forbidden[k]);
		size_t n = strlen(forbidden[k]);
		/* words, not parts of words ("cd" in "abcd") */
		while (w && n > 1 && ((w > outside && word_char(w[-1])) || word_char(w[n])))
			w = strstr(w + 1, forbidden[k]);
		if (w)
			bad_script(forbidden[k], line);
	}
}

/* The writer's run must pass the reader that passed the run it was read from. */
static void check_round_trip(const struct json *report)
{
	const struct json *runs = json_get(report, "runs");
	char err[512];
	for (size_t i = 0; i < json_len(runs); i++) {
		struct run r, back;
		if (run_read(json_at(runs, i), i, &r, err, sizeof(err))) {
			fprintf(stderr, "a run of a valid report fails the reader: %s\n", err);
			abort();
		}
		struct json *again = run_to_json(&r);
		if (run_read(again, i, &back, err, sizeof(err))) {
			fprintf(stderr, "the writer's run fails the reader: %s\n", err);
			abort();
		}
		run_release(&back);
		json_free(again);
		run_release(&r);
	}
}

static int check_script(const char *dir, const char *name, const char *script, char *err, size_t errlen)
{
	(void)dir;
	(void)name;
	(void)err;
	(void)errlen;
	bool in_block = false;
	for (const char *p = script; *p;) {
		size_t len = strcspn(p, "\n");
		if (in_block && len == 3 && memcmp(p, "EOD", 3) == 0)
			in_block = false;
		else if (in_block)
			check_data_line(p, len);
		else if (p[0] == '$' && len > 7 && memcmp(p + len - 7, " << EOD", 7) == 0)
			in_block = true;
		else
			check_command_line(p, len);
		p += len + (p[len] == '\n');
	}
	if (in_block)
		bad_script("data block without its end", script);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null) {
		null = fopen("/dev/null", "w");
		fig_set_runner(check_script);
	}
	char err[512];
	struct json *j = json_parse((const char *)data, size, err, sizeof(err));
	if (!j)
		return 0;
	/* what cmd_report does with it, short of writing files */
	if (!json_get(j, "taskhop_report") && json_get(j, TH_RUN_KEY(tasks)))
		j = report_from_run(j);
	if (report_validate(j, err, sizeof(err)) == 0) {
		report_run_text(json_at(json_get(j, "runs"), 0), null);
		report_aggregate(j);
		report_text(j, null);
		hist_text(j, null);
		struct report_figs figs;
		memset(&figs, 0, sizeof(figs));
		report_figures(j, "/nonexistent/taskhop-fuzz", &figs, err, sizeof(err));
		report_markdown(j, &figs, null);
		report_html(j, &figs, "/nonexistent/taskhop-fuzz", null);
		report_csv(j, null);
		json_free(report_trace(j));
		check_round_trip(j);
	} else {
		/* the renderers' JSON entry points read leniently: they must not trust more */
		report_run_text(j, null);
		hist_text(j, null);
		report_markdown(j, NULL, null);
		json_free(report_trace(j));
	}
	json_free(j);
	return 0;
}
