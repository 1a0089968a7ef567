/* numparse.h — the one number parser behind every integer flag of `taskhop` (run, compare,
 * the workloads' options): strict syntax, exact 64-bit values, range-checked. */
#ifndef TASKHOP_NUMPARSE_H
#define TASKHOP_NUMPARSE_H

#include <stddef.h>
#include <stdint.h>

/* Accepted: decimal digits ("20000000"), or a mantissa with an exponent as the article
 * writes counts ("1e7", "2.5e6", "1E3"), when the value is a whole number. Nothing else:
 * no sign, no spaces, no hex or octal, no fraction without an exponent, no "inf".
 * Returns 0 and sets *out, or one of these, leaving *out alone: */
enum num_status {
	NUM_OK = 0,
	NUM_SYNTAX = -1,   /* not in the syntax above (includes NULL and "") */
	NUM_FRACTION = -2, /* "2.5e0": a valid number that is not whole */
	NUM_RANGE = -3,    /* whole, but outside [min, max] (or above 2^64-1) */
};
int num_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/* The same for a flag: on error, err gets one line such as
 * "--seed must be a whole number in 0..18446744073709551615 (digits or 1e7 form), not '0x10'". */
int num_flag_u64(const char *flag, const char *text, uint64_t min, uint64_t max, uint64_t *out,
		 char *err, size_t errlen);

#endif
