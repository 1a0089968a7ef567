/* fuzz_numbers.c — libFuzzer target for the number parser behind every CLI flag
 * (tools/numparse.c): any bytes must give a clean verdict, and an accepted value must agree. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"

/* What a parsed text must satisfy: its first byte is a digit, it has only digits, at
 * most one '.', then 'e'/'E' with an optional '+' and digits, and the value is in range. */
static void check_accepted(const char *text, uint64_t min, uint64_t max, uint64_t v)
{
	if (v < min || v > max || text[0] < '0' || text[0] > '9')
		abort();
	for (const char *p = text; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+'))
			abort();
	/* digits alone must round-trip exactly (leading zeros aside) */
	if (!strpbrk(text, ".eE")) {
		char buf[32];
		const char *t = text;
		while (t[0] == '0' && t[1])
			t++;
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
		if (strcmp(buf, t) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the first 2 bytes pick the range; the rest, NUL-terminated, is the text */
	if (size < 2 || size > 4096)
		return 0;
	static const uint64_t bounds[] = { 0, 1, 10, 100000, 1000000000ULL, 9000000000000000ULL, UINT64_MAX };
	uint64_t min = bounds[data[0] % 7], max = bounds[data[1] % 7];
	char *text = malloc(size - 1);
	if (!text)
		return 0;
	memcpy(text, data + 2, size - 2);
	text[size - 2] = 0;
	uint64_t v = 0xdeadbeef;
	int rc = num_parse_u64(text, min, max, &v);
	if (rc == NUM_OK)
		check_accepted(text, min, max, v);
	else if (rc != NUM_SYNTAX && rc != NUM_FRACTION && rc != NUM_RANGE)
		abort();
	else if (v != 0xdeadbeef)
		abort(); /* a refused text leaves *out alone */
	char err[256];
	uint64_t w;
	if (num_flag_u64("--flag", text, min, max, &w, err, sizeof err) != rc)
		abort();
	free(text);
	return 0;
}
