/* numparse.c — strict parsing of the integer flags of `taskhop` (see numparse.h): digits or
 * the 1e7 form, computed exactly in 64 bits (no strtod rounding, no locale, no strtoull sign). */
#include "numparse.h"

#include <stdbool.h>
#include <stdio.h>

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Reads digits into *acc (times 10 each), counting them in *n. False on overflow: the
 * caller then knows the value cannot be in range (a longer mantissa than 2^64 holds). */
static bool read_digits(const char **p, uint64_t *acc, int *n)
{
	bool fits = true;
	for (; digit(**p); (*p)++, (*n)++)
		if (__builtin_mul_overflow(*acc, 10, acc) || __builtin_add_overflow(*acc, (uint64_t)(**p - '0'), acc))
			fits = false;
	return fits;
}

/* mant * 10^exp, exp may be negative (a fraction): NUM_FRACTION when the digits cut
 * off are not zeros, NUM_RANGE on overflow. */
static int scale(uint64_t mant, long exp, uint64_t *out)
{
	for (; exp < 0; exp++) {
		if (mant % 10)
			return NUM_FRACTION;
		mant /= 10;
	}
	for (; exp > 0 && mant; exp--)
		if (__builtin_mul_overflow(mant, 10, &mant))
			return NUM_RANGE;
	*out = mant;
	return NUM_OK;
}

int num_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!text || !digit(*text))
		return NUM_SYNTAX;
	const char *p = text;
	uint64_t mant = 0;
	int nint = 0, nfrac = 0;
	bool fits = read_digits(&p, &mant, &nint);
	if (*p == '.') {
		p++;
		fits &= read_digits(&p, &mant, &nfrac);
		if (!nfrac || (*p != 'e' && *p != 'E'))
			return NUM_SYNTAX; /* "1." and "2.5" alone are not counts */
	}
	long exp = 0;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+')
			p++;
		int nexp = 0;
		/* a huge exponent can only overflow: stop counting it past 4 digits */
		for (; digit(*p); p++, nexp++)
			if (exp < 10000)
				exp = exp * 10 + (*p - '0');
		if (!nexp)
			return NUM_SYNTAX;
	}
	if (*p)
		return NUM_SYNTAX;
	if (!fits)
		return NUM_RANGE;
	uint64_t v;
	int rc = scale(mant, exp - nfrac, &v);
	if (rc != NUM_OK)
		return rc;
	if (v < min || v > max)
		return NUM_RANGE;
	*out = v;
	return NUM_OK;
}

int num_flag_u64(const char *flag, const char *text, uint64_t min, uint64_t max, uint64_t *out,
		 char *err, size_t errlen)
{
	int rc = num_parse_u64(text, min, max, out);
	if (rc != NUM_OK)
		snprintf(err, errlen, "%s must be a whole number in %llu..%llu (digits or 1e7 form), not '%s'",
			 flag, (unsigned long long)min, (unsigned long long)max, text ? text : "");
	return rc;
}
