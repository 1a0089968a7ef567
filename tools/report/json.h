/* json.h — the JSON tree of the reports: build, write (atomically to a file), parse, query.
 * report.json is the source of truth of every taskhop report, so both directions live here.
 * A thin layer over json-c (json.c says what it adds); callers never see json-c itself. */
#ifndef TASKHOP_JSON_H
#define TASKHOP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

/* A JSON value: a json-c object (see json.c); read it through the functions below. */
struct json;

/* Constructors return NULL only on out of memory; every container function
 * accepts a NULL value (and then does nothing but report failure). */
struct json *json_null(void);
struct json *json_bool(bool b);
struct json *json_num(double x);   /* NaN and infinities become null when written */
struct json *json_u64(unsigned long long x); /* written with every digit */
struct json *json_str(const char *s);
struct json *json_arr(void);
struct json *json_obj(void);
/* Takes ownership of v. Returns 0, or -1 (v freed). */
int json_push(struct json *arr, struct json *v);
/* Replaces item i (< json_len) of arr by v. Takes ownership of v. Returns 0, or -1 (v freed). */
int json_put_at(struct json *arr, size_t i, struct json *v);
/* Removes (and frees) the last item of arr. Returns 0, or -1 when arr is not a non-empty array. */
int json_pop(struct json *arr);
/* Removes (and frees) member key. Returns 0, or -1 when obj has no such member. */
int json_remove(struct json *obj, const char *key);
/* Sets key to v, replacing (and freeing) an existing member. Takes ownership of v. */
int json_set(struct json *obj, const char *key, struct json *v);
/* Shorthands for the common member types. */
int json_set_num(struct json *obj, const char *key, double x);
int json_set_str(struct json *obj, const char *key, const char *s);
int json_set_bool(struct json *obj, const char *key, bool b);
int json_set_null(struct json *obj, const char *key);
int json_set_u64(struct json *obj, const char *key, unsigned long long x);
struct json *json_clone(const struct json *v);
void json_free(struct json *v);

/* Queries: NULL/def when missing or of another type. */
const struct json *json_get(const struct json *obj, const char *key);
const struct json *json_at(const struct json *arr, size_t i);
size_t json_len(const struct json *v);          /* items of an array/object, else 0 */
enum json_type json_type_of(const struct json *v); /* JSON_NULL for NULL too */
/* The value itself: 0, false, NULL when v is of another type (or NULL). */
double json_num_of(const struct json *v);
bool json_bool_of(const struct json *v);
const char *json_str_of(const struct json *v);
/* The key of member i of an object (members keep their insertion order); NULL past the end.
 * json_at(obj, i) is its value. Both walk the members: O(i). */
const char *json_key_at(const struct json *obj, size_t i);
double json_get_num(const struct json *obj, const char *key, double def);
const char *json_get_str(const struct json *obj, const char *key, const char *def);
bool json_is_num(const struct json *v);
/* An unsigned integer exactly: true with *out set for an exact u64 or a whole double in
 * [0, 2^53]; false otherwise. */
bool json_as_u64(const struct json *v, unsigned long long *out);
/* A number as report.json writes it ("-" when not a number): integers with every digit. */
const char *json_num_text(const struct json *v, char *buf, size_t len);
bool json_is_null(const struct json *v);        /* true for NULL too */

/* Writes v; indent > 0 pretty-prints (json-c's two spaces a level; arrays of numbers and
 * empty containers on one line), 0 writes one line.
 * Whole numbers up to 2^53 are written without a fraction. */
void json_write(FILE *f, const struct json *v, int indent);
/* Writes to path via path.tmp.PID + rename, so readers never see half a file.
 * Returns 0, or -1 with err set. */
int json_write_file(const char *path, const struct json *v, int indent, char *err, size_t errlen);

/* Parses a complete document (RFC 8259: no NaN, comments or control characters in strings;
 * trailing garbage is an error) nested at most JSON_MAX_DEPTH deep, whose tree would take at
 * most JSON_MAX_TREE bytes (estimated before anything is allocated, so a hostile file cannot
 * make it exhaust memory). Integer literals must fit 64 bits (signed, or unsigned for seeds).
 * Returns the tree, or NULL with "line L col C: what" in err. */
#define JSON_MAX_DEPTH 200
#define JSON_MAX_TREE (1ull << 30)
#define JSON_MAX_TREE_TEXT "1 GiB"
struct json *json_parse(const char *text, size_t len, char *err, size_t errlen);
/* The same for a file of at most JSON_MAX_FILE bytes. */
#define JSON_MAX_FILE (256u << 20)
struct json *json_parse_file(const char *path, char *err, size_t errlen);

#endif
