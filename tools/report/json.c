/* json.c — report/json.h over json-c: a struct json is a json_object; this file adds what the
 * reports need on top of the library (exact u64 seeds, RFC 8259 strictness, size limits,
 * line:column errors, numbers written as before). */
/* json-c names a type json_type and a typedef json_bool, as json.h does: rename json-c's. */
#define json_type json_c_type
#define json_bool json_c_bool
#include <json-c/json_object.h>
#include <json-c/json_tokener.h>
#include <json-c/linkhash.h>
#include <json-c/printbuf.h>
#undef json_type
#undef json_bool

#include "report/json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/fsutil.h"

/* A struct json is never dereferenced here: it is the library's object under another name. */
static struct json_object *jo(const struct json *v) { return (struct json_object *)(uintptr_t)v; }
static struct json *jv(struct json_object *o) { return (struct json *)o; }

/* ---- construction ---------------------------------------------------- */

static int write_num(struct json_object *o, struct printbuf *pb, int level, int flags);

/* json-c's null is a NULL pointer, which json.h's callers take for "absent" (a member that
 * is null is not a member that is missing) or "out of memory". A null here is a double that
 * carries this mark as its serializer's data and is written as null. */
static const char null_mark = 'n';

static int write_null(struct json_object *o, struct printbuf *pb, int level, int flags)
{
	(void)o;
	(void)level;
	(void)flags;
	return printbuf_strappend(pb, "null");
}

static bool is_null_mark(struct json_object *o)
{
	return json_object_is_type(o, json_type_double) && json_object_get_userdata(o) == &null_mark;
}

struct json *json_null(void)
{
	struct json_object *o = json_object_new_double(NAN);
	if (o)
		json_object_set_serializer(o, write_null, (void *)&null_mark, NULL);
	return jv(o);
}

struct json *json_arr(void) { return jv(json_object_new_array()); }
struct json *json_obj(void) { return jv(json_object_new_object()); }
struct json *json_bool(bool b) { return jv(json_object_new_boolean(b)); }
struct json *json_u64(unsigned long long x) { return jv(json_object_new_uint64(x)); }
struct json *json_str(const char *s) { return jv(json_object_new_string(s ? s : "")); }

/* Doubles are written as taskhop always wrote them (whole numbers without ".0", NaN and the
 * infinities as null), not in json-c's "%.17g" + ".0". */
struct json *json_num(double x)
{
	struct json_object *o = json_object_new_double(x);
	if (o)
		json_object_set_serializer(o, write_num, NULL, NULL);
	return jv(o);
}

void json_free(struct json *v) { json_object_put(jo(v)); }

int json_push(struct json *arr, struct json *v)
{
	if (!arr || !v || !json_object_is_type(jo(arr), json_type_array) ||
	    json_object_array_add(jo(arr), jo(v))) {
		json_free(v);
		return -1;
	}
	return 0;
}

int json_put_at(struct json *arr, size_t i, struct json *v)
{
	if (!arr || !v || !json_object_is_type(jo(arr), json_type_array) ||
	    i >= json_object_array_length(jo(arr)) || json_object_array_put_idx(jo(arr), i, jo(v))) {
		json_free(v);
		return -1;
	}
	return 0;
}

int json_pop(struct json *arr)
{
	size_t n = json_len(arr);
	if (!n || !json_object_is_type(jo(arr), json_type_array))
		return -1;
	return json_object_array_del_idx(jo(arr), n - 1, 1);
}

int json_remove(struct json *obj, const char *key)
{
	if (!json_get(obj, key))
		return -1;
	json_object_object_del(jo(obj), key);
	return 0;
}

int json_set(struct json *obj, const char *key, struct json *v)
{
	/* json_object_object_add keeps the member's place when it replaces one. */
	if (!obj || !v || !json_object_is_type(jo(obj), json_type_object) ||
	    json_object_object_add(jo(obj), key, jo(v))) {
		json_free(v);
		return -1;
	}
	return 0;
}

int json_set_num(struct json *o, const char *k, double x) { return json_set(o, k, json_num(x)); }
int json_set_str(struct json *o, const char *k, const char *s) { return json_set(o, k, json_str(s)); }
int json_set_bool(struct json *o, const char *k, bool b) { return json_set(o, k, json_bool(b)); }
int json_set_u64(struct json *o, const char *k, unsigned long long x) { return json_set(o, k, json_u64(x)); }
int json_set_null(struct json *o, const char *k) { return json_set(o, k, json_null()); }

/* json-c copies serializers, but not the data of one it does not know: the null mark. */
static int copy_value(struct json_object *src, struct json_object *parent, const char *key,
		      size_t index, struct json_object **dst)
{
	if (!is_null_mark(src))
		return json_c_shallow_copy_default(src, parent, key, index, dst);
	*dst = jo(json_null());
	return *dst ? 2 : -1;
}

struct json *json_clone(const struct json *v)
{
	struct json_object *c = NULL;
	if (!v || json_object_deep_copy(jo(v), &c, copy_value))
		return NULL;
	return jv(c);
}

/* ---- queries --------------------------------------------------------- */

enum json_type json_type_of(const struct json *v)
{
	switch (json_object_get_type(jo(v))) {
	case json_type_boolean: return JSON_BOOL;
	case json_type_int: return JSON_NUM;
	case json_type_double: return is_null_mark(jo(v)) ? JSON_NULL : JSON_NUM;
	case json_type_string: return JSON_STR;
	case json_type_array: return JSON_ARR;
	case json_type_object: return JSON_OBJ;
	case json_type_null: break;
	}
	return JSON_NULL;
}

/* json-c keeps an object's members in insertion order; the i-th is found by walking them. */
static struct lh_entry *member_at(const struct json *obj, size_t i)
{
	if (json_type_of(obj) != JSON_OBJ)
		return NULL;
	struct lh_entry *e = lh_table_head(json_object_get_object(jo(obj)));
	while (e && i--)
		e = lh_entry_next(e);
	return e;
}

const struct json *json_get(const struct json *obj, const char *key)
{
	struct json_object *v = NULL;
	if (json_type_of(obj) != JSON_OBJ || !json_object_object_get_ex(jo(obj), key, &v))
		return NULL;
	return jv(v);
}

const struct json *json_at(const struct json *c, size_t i)
{
	if (json_type_of(c) == JSON_ARR)
		return i < json_object_array_length(jo(c)) ? jv(json_object_array_get_idx(jo(c), i)) : NULL;
	struct lh_entry *e = member_at(c, i);
	return e ? jv((struct json_object *)(uintptr_t)lh_entry_v(e)) : NULL;
}

const char *json_key_at(const struct json *obj, size_t i)
{
	struct lh_entry *e = member_at(obj, i);
	return e ? (const char *)lh_entry_k(e) : NULL;
}

size_t json_len(const struct json *v)
{
	switch (json_type_of(v)) {
	case JSON_ARR: return json_object_array_length(jo(v));
	case JSON_OBJ: return (size_t)json_object_object_length(jo(v));
	default: return 0;
	}
}

bool json_is_num(const struct json *v) { return json_type_of(v) == JSON_NUM; }
bool json_is_null(const struct json *v) { return json_type_of(v) == JSON_NULL; }
double json_num_of(const struct json *v) { return json_is_num(v) ? json_object_get_double(jo(v)) : 0; }
bool json_bool_of(const struct json *v) { return json_type_of(v) == JSON_BOOL && json_object_get_boolean(jo(v)); }

const char *json_str_of(const struct json *v)
{
	return json_type_of(v) == JSON_STR ? json_object_get_string(jo(v)) : NULL;
}

/* An integer object holds an int64 or (above INT64_MAX only) a uint64; json-c clamps each
 * getter to its own range, so INT64_MAX from the signed one means "ask the unsigned one". */
static bool int_as_u64(const struct json *v, unsigned long long *out)
{
	int64_t i = json_object_get_int64(jo(v));
	if (i < 0)
		return false;
	*out = i == INT64_MAX ? json_object_get_uint64(jo(v)) : (unsigned long long)i;
	return true;
}

static bool is_int(const struct json *v) { return json_object_is_type(jo(v), json_type_int); }

bool json_as_u64(const struct json *v, unsigned long long *out)
{
	if (!json_is_num(v))
		return false;
	if (is_int(v))
		return int_as_u64(v, out);
	double x = json_object_get_double(jo(v));
	if (!(x >= 0 && x <= 9007199254740992.0) || x != floor(x))
		return false;
	*out = (unsigned long long)x;
	return true;
}

double json_get_num(const struct json *obj, const char *key, double def)
{
	const struct json *v = json_get(obj, key);
	return json_is_num(v) ? json_num_of(v) : def;
}

const char *json_get_str(const struct json *obj, const char *key, const char *def)
{
	const char *s = json_str_of(json_get(obj, key));
	return s ? s : def;
}

/* ---- writer ---------------------------------------------------------- */

const char *json_num_text(const struct json *v, char *buf, size_t len)
{
	unsigned long long u;
	double x = json_num_of(v);
	if (!json_is_num(v) || !isfinite(x))
		snprintf(buf, len, "-");
	else if (is_int(v) && int_as_u64(v, &u))
		snprintf(buf, len, "%llu", u);
	else if (is_int(v))
		snprintf(buf, len, "%lld", (long long)json_object_get_int64(jo(v)));
	else if (x == floor(x) && fabs(x) < 9007199254740992.0)
		snprintf(buf, len, "%.0f", x);
	else
		snprintf(buf, len, "%.17g", x);
	return buf;
}

static int write_num(struct json_object *o, struct printbuf *pb, int level, int flags)
{
	(void)level;
	(void)flags;
	char buf[64];
	const char *s = isfinite(json_object_get_double(o)) ? json_num_text(jv(o), buf, sizeof(buf)) : "null";
	return printbuf_memappend(pb, s, (int)strlen(s));
}

static bool is_number_array(struct json_object *a)
{
	size_t n = json_object_array_length(a);
	for (size_t i = 0; i < n; i++) {
		enum json_type t = json_type_of(jv(json_object_array_get_idx(a, i)));
		if (t != JSON_NUM && t != JSON_NULL && t != JSON_BOOL)
			return false;
	}
	return true;
}

/* An empty object on one line, "{}" (json-c's pretty printer opens a line inside). */
static int write_empty_object(struct json_object *o, struct printbuf *pb, int level, int flags)
{
	(void)o;
	(void)level;
	(void)flags;
	return printbuf_strappend(pb, "{}");
}

/* Arrays of numbers stay on one line in pretty output: long columns of means would bury the
 * structure (json-c's own pretty printer puts every element on a line of its own). */
static int write_number_array(struct json_object *a, struct printbuf *pb, int level, int flags)
{
	(void)level;
	(void)flags;
	char buf[64];
	size_t n = json_object_array_length(a);
	printbuf_strappend(pb, "[");
	for (size_t i = 0; i < n; i++) {
		const struct json *e = jv(json_object_array_get_idx(a, i));
		const char *s = json_type_of(e) == JSON_BOOL ? (json_bool_of(e) ? "true" : "false")
				: json_is_num(e) && isfinite(json_num_of(e)) ? json_num_text(e, buf, sizeof(buf))
				: "null";
		if (i)
			printbuf_strappend(pb, ", ");
		printbuf_memappend(pb, s, (int)strlen(s));
	}
	printbuf_strappend(pb, "]");
	return 0;
}

/* Sets write_number_array on every array of numbers (or empty) below v, write_empty_object
 * on every empty object (a tree is at most JSON_MAX_DEPTH deep when parsed, and shallow
 * when built). */
static void compact_number_arrays(struct json_object *v)
{
	enum json_type t = json_type_of(jv(v));
	if (t != JSON_ARR && t != JSON_OBJ)
		return;
	if (t == JSON_ARR && is_number_array(v)) {
		json_object_set_serializer(v, write_number_array, NULL, NULL);
		return;
	}
	if (t == JSON_OBJ && !json_len(jv(v))) {
		json_object_set_serializer(v, write_empty_object, NULL, NULL);
		return;
	}
	for (size_t i = 0, n = json_len(jv(v)); i < n; i++)
		compact_number_arrays(t == JSON_ARR ? json_object_array_get_idx(v, i)
						    : jo(json_at(jv(v), i)));
}

void json_write(FILE *f, const struct json *v, int indent)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE;
	if (indent > 0) {
		flags |= JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED;
		compact_number_arrays(jo(v));
	}
	size_t len = 0;
	const char *s = json_object_to_json_string_length(jo(v), flags, &len);
	fwrite(s, 1, len, f);
}

static int write_cb(FILE *f, void *arg)
{
	const void **args = arg;
	json_write(f, args[0], *(const int *)args[1]);
	fputc('\n', f);
	return 0;
}

int json_write_file(const char *path, const struct json *v, int indent, char *err, size_t errlen)
{
	const void *args[2] = { v, &indent };
	return fs_write_atomic(path, write_cb, (void *)args, err, errlen);
}

/* ---- parser ---------------------------------------------------------- */

static void error_at(const char *text, size_t pos, const char *what, char *err, size_t errlen)
{
	int line = 1, col = 1;
	for (size_t i = 0; i < pos; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(err, errlen, "line %d col %d: %s", line, col, what);
}

/* What json-c does not check, found in one pass before it allocates anything: it takes NaN,
 * Infinity, comments, control characters in strings, numbers out of range (clamped or
 * infinite), and has no size limit. The tree's size is estimated from what json-c allocates
 * per value (an object's hash table is the largest). Returns 0, or the offending offset + 1
 * with *what set. */
#define TREE_OBJECT_BYTES 800
#define TREE_ARRAY_BYTES 350
#define TREE_VALUE_BYTES 64

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* A string starting at text[i] (the quote); returns the offset past its end, or 0. */
static size_t scan_string(const char *text, size_t len, size_t i, size_t *bad, const char **what)
{
	for (i++; i < len && text[i] != '"'; i++) {
		if ((unsigned char)text[i] < 0x20) {
			*bad = i;
			*what = "control character in string";
			return 0;
		}
		if (text[i] == '\\')
			i++;
	}
	if (i >= len) {
		*bad = len;
		*what = "unterminated string";
		return 0;
	}
	return i + 1;
}

/* A number at text[i]: finite, and an integer literal within 64 bits (json-c would clamp it). */
static size_t scan_number(const char *text, size_t len, size_t i, size_t *bad, const char **what)
{
	char buf[64];
	size_t n = 0;
	while (i + n < len && strchr("+-0123456789.eE", text[i + n]) && text[i + n]) {
		if (n < sizeof(buf) - 1)
			buf[n] = text[i + n];
		n++;
	}
	buf[n < sizeof(buf) ? n : sizeof(buf) - 1] = 0;
	bool integer = strspn(buf + (buf[0] == '-'), "0123456789") == strlen(buf + (buf[0] == '-'));
	errno = 0;
	double x = strtod(buf, NULL);
	if (integer && errno == 0) {
		if (buf[0] == '-')
			(void)strtoll(buf, NULL, 10);
		else
			(void)strtoull(buf, NULL, 10);
	}
	if (n >= sizeof(buf) || errno == ERANGE || !isfinite(x)) {
		*bad = i;
		*what = integer ? "integer out of 64-bit range" : "number out of range";
		return 0;
	}
	return i + n;
}

static size_t scan_literal(const char *text, size_t len, size_t i, size_t *bad, const char **what)
{
	static const char *const words[] = { "true", "false", "null" };
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(words[k]);
		if (len - i >= n && memcmp(text + i, words[k], n) == 0)
			return i + n;
	}
	*bad = i;
	*what = "unexpected character";
	return 0;
}

static int prescan(const char *text, size_t len, size_t *bad, const char **what)
{
	unsigned long long bytes = TREE_VALUE_BYTES;
	for (size_t i = 0; i < len;) {
		char c = text[i];
		if (c == '{' || c == '[')
			bytes += c == '{' ? TREE_OBJECT_BYTES : TREE_ARRAY_BYTES;
		else if (c == ',')
			bytes += TREE_VALUE_BYTES;
		if (bytes > JSON_MAX_TREE) {
			*bad = i;
			*what = "the document would take more than " JSON_MAX_TREE_TEXT " in memory";
			return -1;
		}
		if (is_ws(c) || (c && strchr("{}[],:", c)))
			i++;
		else if (c == '"')
			i = scan_string(text, len, i, bad, what);
		else if (c == '-' || (c >= '0' && c <= '9'))
			i = scan_number(text, len, i, bad, what);
		else
			i = scan_literal(text, len, i, bad, what);
		if (!i)
			return -1;
	}
	return 0;
}

static size_t skip_ws(const char *text, size_t len, size_t i)
{
	while (i < len && is_ws(text[i]))
		i++;
	return i;
}

/* Replaces json-c's NULL members and items below o by null objects (see null_mark). */
static int mark_nulls(struct json_object *o)
{
	enum json_type t = json_type_of(jv(o));
	if (t == JSON_ARR) {
		for (size_t i = 0, n = json_object_array_length(o); i < n; i++) {
			struct json_object *e = json_object_array_get_idx(o, i);
			if (e ? mark_nulls(e) : json_object_array_put_idx(o, i, jo(json_null())))
				return -1;
		}
	} else if (t == JSON_OBJ) {
		/* replacing a member's value keeps the table as it is, so the walk stays valid */
		json_object_object_foreach(o, key, val) {
			if (val ? mark_nulls(val) : json_object_object_add(o, key, jo(json_null())))
				return -1;
		}
	}
	return 0;
}

/* json-c cannot know that a value at the very end is complete ("12" may go on): a space
 * tells it. *end is where parsing stopped in text. */
static struct json_object *tokenize(struct json_tokener *tok, const char *text, size_t len, size_t *end)
{
	struct json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	*end = json_tokener_get_parse_end(tok);
	if (!o && json_tokener_get_error(tok) == json_tokener_continue) {
		o = json_tokener_parse_ex(tok, " ", 1);
		*end = len;
	}
	return o;
}

struct json *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = 0;
	size_t bad = 0;
	const char *what = NULL;
	if (len > INT_MAX - 1) {
		snprintf(err, errlen, "line 1 col 1: document larger than %d bytes", INT_MAX - 1);
		return NULL;
	}
	if (prescan(text, len, &bad, &what)) {
		error_at(text, bad, what, err, errlen);
		return NULL;
	}
	if (skip_ws(text, len, 0) == len) {
		error_at(text, len, "unexpected end of input", err, errlen);
		return NULL;
	}
	struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	size_t end;
	struct json_object *o = tokenize(tok, text, len, &end);
	enum json_tokener_error e = json_tokener_get_error(tok);
	json_tokener_free(tok);
	/* null is a NULL object in json-c: success tells it from an error */
	if (e == json_tokener_success && end <= len && skip_ws(text, len, end) != len) {
		json_object_put(o);
		error_at(text, end, "trailing characters after the document", err, errlen);
		return NULL;
	}
	if (e != json_tokener_success) {
		json_object_put(o);
		error_at(text, end < len ? end : len,
			 e == json_tokener_continue ? "unexpected end of input" : json_tokener_error_desc(e),
			 err, errlen);
		return NULL;
	}
	if (!o)
		return json_null();
	if (mark_nulls(o)) {
		json_object_put(o);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return jv(o);
}

struct json *json_parse_file(const char *path, char *err, size_t errlen)
{
	size_t len;
	char *text = fs_read_max(path, JSON_MAX_FILE, &len, err, errlen);
	if (!text)
		return NULL;
	char perr_buf[200];
	struct json *v = json_parse(text, len, perr_buf, sizeof(perr_buf));
	free(text);
	if (!v)
		snprintf(err, errlen, "%s: not valid JSON: %s", path, perr_buf);
	return v;
}
