/* json.c — the JSON tree of report/json.h: constructors, writer, recursive-descent parser.
 * Numbers are doubles (counters stay far below 2^53, so they round-trip exactly); integer literals
 * up to 2^64-1 (seeds) are also kept exactly. */
#include "report/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/fsutil.h"

/* ---- construction ---------------------------------------------------- */

static struct json *json_new(enum json_type type)
{
	struct json *v = calloc(1, sizeof(*v));
	if (v)
		v->type = type;
	return v;
}

struct json *json_null(void) { return json_new(JSON_NULL); }
struct json *json_arr(void) { return json_new(JSON_ARR); }
struct json *json_obj(void) { return json_new(JSON_OBJ); }

struct json *json_bool(bool b)
{
	struct json *v = json_new(JSON_BOOL);
	if (v)
		v->b = b;
	return v;
}

struct json *json_num(double x)
{
	struct json *v = json_new(JSON_NUM);
	if (v)
		v->num = x;
	return v;
}

struct json *json_u64(unsigned long long x)
{
	struct json *v = json_num((double)x);
	if (v) {
		v->is_u64 = true;
		v->u64 = x;
	}
	return v;
}

struct json *json_str(const char *s)
{
	struct json *v = json_new(JSON_STR);
	if (v && !(v->str = strdup(s ? s : ""))) {
		free(v);
		return NULL;
	}
	return v;
}

void json_free(struct json *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}

static int json_grow(struct json *c)
{
	if (c->n < c->cap)
		return 0;
	size_t cap = c->cap ? c->cap * 2 : 8;
	struct json **items = realloc(c->items, cap * sizeof(*items));
	if (!items)
		return -1;
	c->items = items;
	if (c->type == JSON_OBJ) {
		char **keys = realloc(c->keys, cap * sizeof(*keys));
		if (!keys)
			return -1;
		c->keys = keys;
	}
	c->cap = cap;
	return 0;
}

int json_push(struct json *arr, struct json *v)
{
	if (!arr || !v || arr->type != JSON_ARR || json_grow(arr)) {
		json_free(v);
		return -1;
	}
	arr->items[arr->n++] = v;
	return 0;
}

int json_set(struct json *obj, const char *key, struct json *v)
{
	if (!obj || !v || obj->type != JSON_OBJ) {
		json_free(v);
		return -1;
	}
	for (size_t i = 0; i < obj->n; i++) {
		if (strcmp(obj->keys[i], key) == 0) {
			json_free(obj->items[i]);
			obj->items[i] = v;
			return 0;
		}
	}
	char *k = strdup(key);
	if (!k || json_grow(obj)) {
		free(k);
		json_free(v);
		return -1;
	}
	obj->keys[obj->n] = k;
	obj->items[obj->n++] = v;
	return 0;
}

int json_set_num(struct json *o, const char *k, double x) { return json_set(o, k, json_num(x)); }
int json_set_str(struct json *o, const char *k, const char *s) { return json_set(o, k, json_str(s)); }
int json_set_bool(struct json *o, const char *k, bool b) { return json_set(o, k, json_bool(b)); }
int json_set_null(struct json *o, const char *k) { return json_set(o, k, json_null()); }
int json_set_u64(struct json *o, const char *k, unsigned long long x) { return json_set(o, k, json_u64(x)); }

struct json *json_clone(const struct json *v)
{
	if (!v)
		return NULL;
	struct json *c = json_new(v->type);
	if (!c)
		return NULL;
	c->b = v->b;
	c->num = v->num;
	c->is_u64 = v->is_u64;
	c->u64 = v->u64;
	if (v->str && !(c->str = strdup(v->str)))
		goto fail;
	for (size_t i = 0; i < v->n; i++) {
		int rc = v->type == JSON_OBJ ? json_set(c, v->keys[i], json_clone(v->items[i]))
					     : json_push(c, json_clone(v->items[i]));
		if (rc)
			goto fail;
	}
	return c;
fail:
	json_free(c);
	return NULL;
}

/* ---- queries --------------------------------------------------------- */

const struct json *json_get(const struct json *obj, const char *key)
{
	if (!obj || obj->type != JSON_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (strcmp(obj->keys[i], key) == 0)
			return obj->items[i];
	return NULL;
}

const struct json *json_at(const struct json *arr, size_t i)
{
	if (!arr || (arr->type != JSON_ARR && arr->type != JSON_OBJ) || i >= arr->n)
		return NULL;
	return arr->items[i];
}

size_t json_len(const struct json *v)
{
	return v && (v->type == JSON_ARR || v->type == JSON_OBJ) ? v->n : 0;
}

bool json_is_num(const struct json *v) { return v && v->type == JSON_NUM; }
bool json_is_null(const struct json *v) { return !v || v->type == JSON_NULL; }

bool json_as_u64(const struct json *v, unsigned long long *out)
{
	if (!json_is_num(v))
		return false;
	if (v->is_u64) {
		*out = v->u64;
		return true;
	}
	if (!(v->num >= 0 && v->num <= 9007199254740992.0) || v->num != floor(v->num))
		return false;
	*out = (unsigned long long)v->num;
	return true;
}

double json_get_num(const struct json *obj, const char *key, double def)
{
	const struct json *v = json_get(obj, key);
	return json_is_num(v) ? v->num : def;
}

const char *json_get_str(const struct json *obj, const char *key, const char *def)
{
	const struct json *v = json_get(obj, key);
	return v && v->type == JSON_STR ? v->str : def;
}

/* ---- writer ---------------------------------------------------------- */

static void write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

const char *json_num_text(const struct json *v, char *buf, size_t len)
{
	if (!json_is_num(v) || !isfinite(v->num))
		snprintf(buf, len, "-");
	else if (v->is_u64)
		snprintf(buf, len, "%llu", v->u64);
	else if (v->num == floor(v->num) && fabs(v->num) < 9007199254740992.0)
		snprintf(buf, len, "%.0f", v->num);
	else
		snprintf(buf, len, "%.17g", v->num);
	return buf;
}

static void write_number(FILE *f, const struct json *v)
{
	char buf[64];
	fputs(isfinite(v->num) ? json_num_text(v, buf, sizeof(buf)) : "null", f);
}

static bool is_scalar_array(const struct json *v)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->items[i]->type == JSON_ARR || v->items[i]->type == JSON_OBJ)
			return false;
	return true;
}

static void write_value(FILE *f, const struct json *v, int indent, int depth)
{
	switch (v->type) {
	case JSON_NULL: fputs("null", f); return;
	case JSON_BOOL: fputs(v->b ? "true" : "false", f); return;
	case JSON_NUM: write_number(f, v); return;
	case JSON_STR: write_string(f, v->str); return;
	case JSON_ARR:
	case JSON_OBJ: break;
	}
	bool obj = v->type == JSON_OBJ;
	/* Arrays of numbers stay on one line: long columns of means would bury the structure. */
	bool pretty = indent > 0 && v->n > 0 && (obj || !is_scalar_array(v));
	fputc(obj ? '{' : '[', f);
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			fputc(',', f);
		if (pretty)
			fprintf(f, "\n%*s", indent * (depth + 1), "");
		else if (i && indent > 0)
			fputc(' ', f);
		if (obj) {
			write_string(f, v->keys[i]);
			fputs(indent > 0 ? ": " : ":", f);
		}
		write_value(f, v->items[i], indent, depth + 1);
	}
	if (pretty)
		fprintf(f, "\n%*s", indent * depth, "");
	fputc(obj ? '}' : ']', f);
}

void json_write(FILE *f, const struct json *v, int indent)
{
	if (v)
		write_value(f, v, indent, 0);
	else
		fputs("null", f);
}

static int write_cb(FILE *f, void *arg)
{
	const struct json *v = ((const void **)arg)[0];
	int indent = *(const int *)((const void **)arg)[1];
	json_write(f, v, indent);
	fputc('\n', f);
	return 0;
}

int json_write_file(const char *path, const struct json *v, int indent, char *err, size_t errlen)
{
	const void *args[2] = { v, &indent };
	return fs_write_atomic(path, write_cb, (void *)args, err, errlen);
}

/* ---- parser ---------------------------------------------------------- */

struct parser {
	const char *s, *end, *p;
	char *err;
	size_t errlen;
	int depth;
	size_t values;
};

static void perr(struct parser *ps, const char *what)
{
	if (ps->err[0])
		return;
	int line = 1, col = 1;
	for (const char *q = ps->s; q < ps->p && q < ps->end; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(ps->err, ps->errlen, "line %d col %d: %s", line, col, what);
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static bool match(struct parser *ps, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, lit, n) == 0) {
		ps->p += n;
		return true;
	}
	return false;
}

static int hex4(struct parser *ps, unsigned *out)
{
	unsigned x = 0;
	for (int i = 0; i < 4; i++) {
		if (ps->p >= ps->end)
			return -1;
		char c = *ps->p++;
		x <<= 4;
		if (c >= '0' && c <= '9') x |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f') x |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F') x |= (unsigned)(c - 'A' + 10);
		else return -1;
	}
	*out = x;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) { o[0] = (char)cp; return 1; }
	if (cp < 0x800) { o[0] = (char)(0xc0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f)); return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* ps->p is just past the opening quote. The decoded string is never longer than
 * its escaped source, so one allocation of the source length suffices. */
static char *parse_string(struct parser *ps)
{
	const char *start = ps->p;
	while (ps->p < ps->end && *ps->p != '"') {
		if (*ps->p == '\\')
			ps->p++;
		ps->p++;
	}
	if (ps->p >= ps->end) {
		perr(ps, "unterminated string");
		return NULL;
	}
	size_t max = (size_t)(ps->p - start);
	char *out = malloc(max + 1), *o = out;
	if (!out) {
		perr(ps, "out of memory");
		return NULL;
	}
	ps->p = start;
	while (*ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p++;
		if (c < 0x20) {
			perr(ps, "control character in string");
			goto fail;
		}
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		char e = *ps->p++;
		unsigned cp;
		switch (e) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (hex4(ps, &cp)) {
				perr(ps, "bad \\u escape");
				goto fail;
			}
			/* A lone surrogate cannot be encoded; keep it as U+FFFD. */
			if (cp >= 0xd800 && cp <= 0xdfff)
				cp = 0xfffd;
			o += put_utf8(o, cp);
			break;
		default:
			perr(ps, "bad escape in string");
			goto fail;
		}
	}
	ps->p++;
	*o = 0;
	return out;
fail:
	free(out);
	return NULL;
}

static struct json *parse_value(struct parser *ps);

static struct json *parse_number(struct parser *ps)
{
	const char *q = ps->p;
	if (q < ps->end && *q == '-')
		q++;
	if (q >= ps->end || *q < '0' || *q > '9') {
		perr(ps, "unexpected character");
		return NULL;
	}
	char buf[64];
	size_t n = 0;
	const char *r = ps->p;
	while (r < ps->end && n < sizeof(buf) - 1 && strchr("+-0123456789.eE", *r))
		buf[n++] = *r++;
	buf[n] = 0;
	char *endp;
	errno = 0;
	double x = strtod(buf, &endp);
	if (endp == buf || errno == ERANGE) {
		perr(ps, "bad number");
		return NULL;
	}
	ps->p += endp - buf;
	/* Digits only: keep the integer exactly when it fits 64 bits (seeds use all of them). */
	size_t ndig = (size_t)(endp - buf);
	if (strspn(buf, "0123456789") == ndig) {
		char save = buf[ndig];
		buf[ndig] = 0;
		errno = 0;
		unsigned long long u = strtoull(buf, NULL, 10);
		buf[ndig] = save;
		if (errno == 0)
			return json_u64(u);
	}
	return json_num(x);
}

static struct json *parse_container(struct parser *ps, bool obj)
{
	struct json *c = obj ? json_obj() : json_arr();
	char close = obj ? '}' : ']';
	if (!c)
		return NULL;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return c;
	}
	for (;;) {
		char *key = NULL;
		skip_ws(ps);
		if (obj) {
			if (ps->p >= ps->end || *ps->p != '"') {
				perr(ps, "expected a member name");
				goto fail;
			}
			ps->p++;
			if (!(key = parse_string(ps)))
				goto fail;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				perr(ps, "expected ':'");
				goto fail;
			}
			ps->p++;
		}
		struct json *v = parse_value(ps);
		if (!v) {
			free(key);
			goto fail;
		}
		int rc = obj ? json_set(c, key, v) : json_push(c, v);
		free(key);
		if (rc) {
			perr(ps, "out of memory");
			goto fail;
		}
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return c;
		}
		perr(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		goto fail;
	}
fail:
	json_free(c);
	return NULL;
}

static struct json *parse_value(struct parser *ps)
{
	skip_ws(ps);
	if (ps->p >= ps->end) {
		perr(ps, "unexpected end of input");
		return NULL;
	}
	if (++ps->depth > 200) {
		perr(ps, "nested too deeply");
		return NULL;
	}
	if (++ps->values > JSON_MAX_VALUES) {
		perr(ps, "more than 16777216 values");
		return NULL;
	}
	struct json *v;
	char c = *ps->p;
	if (c == '{' || c == '[') {
		ps->p++;
		v = parse_container(ps, c == '{');
	} else if (c == '"') {
		ps->p++;
		char *s = parse_string(ps);
		v = s ? json_new(JSON_STR) : NULL;
		if (v)
			v->str = s;
		else
			free(s);
	} else if (match(ps, "true")) {
		v = json_bool(true);
	} else if (match(ps, "false")) {
		v = json_bool(false);
	} else if (match(ps, "null")) {
		v = json_null();
	} else {
		v = parse_number(ps);
	}
	ps->depth--;
	return v;
}

struct json *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = 0;
	struct parser ps = { text, text + len, text, err, errlen, 0, 0 };
	struct json *v = parse_value(&ps);
	if (!v) {
		perr(&ps, "invalid JSON");
		return NULL;
	}
	skip_ws(&ps);
	if (ps.p != ps.end) {
		perr(&ps, "trailing characters after the document");
		json_free(v);
		return NULL;
	}
	return v;
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
