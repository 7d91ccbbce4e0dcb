/* npy.c - reading and writing NumPy .npy files (format versions 1.0 to 3.0),
 * with a small parser for the header's Python dict literal. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/npy.h"
#include "model/model.h"

#define NPY_MAGIC     "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN     64
/* numpy.save leaves room for the growing axis to reach this many digits
 * (numpy.lib.format.GROWTH_AXIS_MAX_DIGITS, NumPy >= 1.23). */
#define NPY_GROWTH_DIGITS 21
#define NPY_DESCR_MAX	  64

static const struct {
	const char *descr;
	enum tcx_dtype dtype;
} npy_types[] = {
    {"<f4", TCX_DTYPE_S},  {"<f8", TCX_DTYPE_D}, {"<c8", TCX_DTYPE_C},
    {"<c16", TCX_DTYPE_Z}, {"<f2", TCX_DTYPE_H},
};

#define NPY_TYPES_TEXT "'<f2', '<f4', '<f8', '<c8' and '<c16'"

static const char *src_name(const char *name)
{
	return name ? name : "<memory>";
}

/* Copies text from a header into `buf` for a message, with anything that
 * is not printable ASCII written as \xNN, cut short when too long. */
static const char *printable(const char *s, size_t n, char *buf, size_t cap)
{
	size_t o = 0, k;

	/* cap is at least 16: room for one escape and "..." */
	for (k = 0; k < n && o + 8 < cap; k++) {
		unsigned char c = (unsigned char)s[k];

		if (c >= 0x20 && c < 0x7f)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
	}
	if (k < n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

/* ---- the header dict ---------------------------------------------------- */

struct hparse {
	const char *s; /* the header text (not NUL-terminated) */
	size_t n, i;
	const char *name;
	struct tcx_error *err;
	char descr[NPY_DESCR_MAX];
	size_t descr_len;
	bool fortran_order;
	int ndim;
	int64_t shape[NPY_MAX_DIMS];
};

static enum tcx_status hp_fail(struct hparse *hp, enum tcx_status code, const char *fmt, ...)
    TCX_PRINTF(3, 4);

static enum tcx_status hp_fail(struct hparse *hp, enum tcx_status code, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return tcx_fail_at(hp->err, code, 1, (unsigned)hp->i + 1,
			   "cannot parse the header of '%s': %s at byte %zu", hp->name, what,
			   hp->i + 1);
}

static int hp_peek(const struct hparse *hp)
{
	return hp->i < hp->n ? (unsigned char)hp->s[hp->i] : -1;
}

static void hp_skip_ws(struct hparse *hp)
{
	while (hp->i < hp->n) {
		char c = hp->s[hp->i];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f')
			break;
		hp->i++;
	}
}

static enum tcx_status hp_expect(struct hparse *hp, char c, const char *what)
{
	hp_skip_ws(hp);
	if (hp_peek(hp) != (unsigned char)c)
		return hp_fail(hp, TCX_EPARSE, "expected %s", what);
	hp->i++;
	return TCX_OK;
}

/* A Python string literal in single or double quotes, without escapes.
 * Sets *start and *len to its contents within the header. */
static enum tcx_status hp_string(struct hparse *hp, const char **start, size_t *len)
{
	int q = hp_peek(hp);
	size_t from;

	if (q != '\'' && q != '"')
		return hp_fail(hp, TCX_EPARSE, "expected a quoted string");
	from = ++hp->i;
	while (hp->i < hp->n && hp->s[hp->i] != q) {
		if (hp->s[hp->i] == '\\')
			return hp_fail(hp, TCX_EPARSE, "escape sequences are not supported");
		if (hp->s[hp->i] == '\n' || hp->s[hp->i] == '\0')
			return hp_fail(hp, TCX_EPARSE, "unterminated string");
		hp->i++;
	}
	if (hp->i >= hp->n)
		return hp_fail(hp, TCX_EPARSE, "unterminated string");
	*start = hp->s + from;
	*len = hp->i - from;
	hp->i++;
	return TCX_OK;
}

static enum tcx_status hp_descr(struct hparse *hp)
{
	const char *s;
	size_t len;
	enum tcx_status st;
	char shown[96];

	if (hp_peek(hp) == '[')
		return tcx_fail(
		    hp->err, TCX_EUNSUPPORTED,
		    "structured dtype in '%s' is not supported: tcx reads " NPY_TYPES_TEXT,
		    hp->name);
	if (hp_peek(hp) != '\'' && hp_peek(hp) != '"')
		return hp_fail(hp, TCX_EPARSE, "'descr' is not a dtype string");
	st = hp_string(hp, &s, &len);
	if (st)
		return st;
	if (len >= sizeof(hp->descr))
		return tcx_fail(hp->err, TCX_EUNSUPPORTED, "unsupported dtype '%s' in '%s'",
				printable(s, len, shown, sizeof(shown)), hp->name);
	memcpy(hp->descr, s, len);
	hp->descr[len] = '\0';
	hp->descr_len = len;
	return TCX_OK;
}

static enum tcx_status hp_bool(struct hparse *hp, bool *out)
{
	size_t from = hp->i;

	while (hp->i < hp->n &&
	       ((hp->s[hp->i] >= 'A' && hp->s[hp->i] <= 'Z') ||
		(hp->s[hp->i] >= 'a' && hp->s[hp->i] <= 'z') ||
		(hp->s[hp->i] >= '0' && hp->s[hp->i] <= '9') || hp->s[hp->i] == '_'))
		hp->i++;
	if (hp->i - from == 4 && memcmp(hp->s + from, "True", 4) == 0) {
		*out = true;
		return TCX_OK;
	}
	if (hp->i - from == 5 && memcmp(hp->s + from, "False", 5) == 0) {
		*out = false;
		return TCX_OK;
	}
	hp->i = from;
	return hp_fail(hp, TCX_EPARSE, "'fortran_order' is not True or False");
}

/* One dimension: a Python int (an 'L' suffix, as Python 2 wrote, is
 * allowed); negative values and values beyond int64 are refused. */
static enum tcx_status hp_dim(struct hparse *hp, int64_t *out)
{
	size_t from = hp->i;
	bool neg = false;
	uint64_t v = 0;
	char shown[64];

	if (hp_peek(hp) == '-' || hp_peek(hp) == '+') {
		neg = hp_peek(hp) == '-';
		hp->i++;
	}
	if (hp_peek(hp) < '0' || hp_peek(hp) > '9')
		return hp_fail(hp, TCX_EPARSE, "expected an integer in 'shape'");
	while (hp_peek(hp) >= '0' && hp_peek(hp) <= '9') {
		unsigned d = (unsigned)(hp->s[hp->i] - '0');

		if (v > ((uint64_t)INT64_MAX - d) / 10) {
			while (hp_peek(hp) >= '0' && hp_peek(hp) <= '9')
				hp->i++;
			return tcx_fail(hp->err, TCX_ERANGE,
					"dimension %s in the shape of '%s' is out of range",
					printable(hp->s + from, hp->i - from, shown, sizeof(shown)),
					hp->name);
		}
		v = v * 10 + d;
		hp->i++;
	}
	if (hp_peek(hp) == 'L' || hp_peek(hp) == 'l')
		hp->i++;
	if (neg && v != 0)
		return tcx_fail(hp->err, TCX_EPARSE,
				"negative dimension -%" PRIu64 " in the shape of '%s'", v,
				hp->name);
	*out = (int64_t)v;
	return TCX_OK;
}

/* A tuple of ints: "()", "(3,)", "(2, 3)", "(2, 3,)". */
static enum tcx_status hp_shape(struct hparse *hp)
{
	enum tcx_status st;

	if (hp_peek(hp) != '(')
		return hp_fail(hp, TCX_EPARSE, "'shape' is not a tuple");
	hp->i++;
	hp->ndim = 0;
	hp_skip_ws(hp);
	if (hp_peek(hp) == ')') {
		hp->i++;
		return TCX_OK;
	}
	for (;;) {
		if (hp->ndim == NPY_MAX_DIMS)
			return tcx_fail(hp->err, TCX_EUNSUPPORTED,
					"'%s' has more than %d dimensions", hp->name, NPY_MAX_DIMS);
		st = hp_dim(hp, &hp->shape[hp->ndim]);
		if (st)
			return st;
		hp->ndim++;
		hp_skip_ws(hp);
		if (hp_peek(hp) == ')') {
			if (hp->ndim == 1)
				return hp_fail(hp, TCX_EPARSE,
					       "'shape' is not a tuple (a one-element tuple "
					       "needs a comma)");
			hp->i++;
			return TCX_OK;
		}
		if (hp_peek(hp) != ',')
			return hp_fail(hp, TCX_EPARSE, "expected ',' or ')' in 'shape'");
		hp->i++;
		hp_skip_ws(hp);
		if (hp_peek(hp) == ')') {
			hp->i++;
			return TCX_OK;
		}
	}
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static enum tcx_status hp_dict(struct hparse *hp)
{
	static const struct {
		const char *name;
		unsigned bit;
	} keys[] = {{"descr", KEY_DESCR}, {"fortran_order", KEY_FORTRAN}, {"shape", KEY_SHAPE}};
	unsigned seen = 0;
	enum tcx_status st;
	char shown[96];

	if ((st = hp_expect(hp, '{', "'{'")))
		return st;
	for (;;) {
		const char *key;
		size_t klen, key_at;
		unsigned bit = 0;

		hp_skip_ws(hp);
		if (hp_peek(hp) == '}') {
			hp->i++;
			break;
		}
		key_at = hp->i;
		if ((st = hp_string(hp, &key, &klen)))
			return st;
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
			if (strlen(keys[k].name) == klen && memcmp(keys[k].name, key, klen) == 0)
				bit = keys[k].bit;
		if (!bit) {
			hp->i = key_at;
			return hp_fail(hp, TCX_EPARSE, "unexpected key '%s'",
				       printable(key, klen, shown, sizeof(shown)));
		}
		if (seen & bit) {
			hp->i = key_at;
			return hp_fail(hp, TCX_EPARSE, "duplicate key '%s'",
				       printable(key, klen, shown, sizeof(shown)));
		}
		seen |= bit;
		if ((st = hp_expect(hp, ':', "':' after a key")))
			return st;
		hp_skip_ws(hp);
		if (bit == KEY_DESCR)
			st = hp_descr(hp);
		else if (bit == KEY_FORTRAN)
			st = hp_bool(hp, &hp->fortran_order);
		else
			st = hp_shape(hp);
		if (st)
			return st;
		hp_skip_ws(hp);
		if (hp_peek(hp) == ',') {
			hp->i++;
			continue;
		}
		if (hp_peek(hp) == '}') {
			hp->i++;
			break;
		}
		return hp_fail(hp, TCX_EPARSE, "expected ',' or '}'");
	}
	hp_skip_ws(hp);
	if (hp->i != hp->n)
		return hp_fail(hp, TCX_EPARSE, "unexpected text after the dictionary");
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
		if (!(seen & keys[k].bit))
			return tcx_fail(hp->err, TCX_EPARSE, "the header of '%s' has no '%s' key",
					hp->name, keys[k].name);
	return TCX_OK;
}

/* Maps a descr string to a dtype, or explains why tcx does not read it. */
static enum tcx_status descr_dtype(const char *descr, size_t len, const char *name,
				   enum tcx_dtype *out, struct tcx_error *err)
{
	char shown[96];
	const char *kind;

	for (size_t k = 0; k < ARRAY_SIZE(npy_types); k++)
		if (strcmp(npy_types[k].descr, descr) == 0 && strlen(descr) == len) {
			*out = npy_types[k].dtype;
			return TCX_OK;
		}
	printable(descr, len, shown, sizeof(shown));
	kind = len > 0 && strchr("<>|=", descr[0]) ? descr + 1 : descr;
	if (descr[0] == '>')
		for (size_t k = 0; k < ARRAY_SIZE(npy_types); k++)
			if (strcmp(npy_types[k].descr + 1, kind) == 0)
				return tcx_fail(err, TCX_EUNSUPPORTED,
						"big-endian dtype '%s' in '%s' is not supported: "
						"save the array as little-endian ('<%s')",
						shown, name, kind);
	if (strcmp(kind, "u2") == 0)
		return tcx_fail(
		    err, TCX_EUNSUPPORTED,
		    "unsupported dtype '%s' in '%s': it is uint16, and .npy has no bf16 "
		    "type, so bf16 data cannot be read from .npy files",
		    shown, name);
	return tcx_fail(err, TCX_EUNSUPPORTED,
			"unsupported dtype '%s' in '%s': tcx reads " NPY_TYPES_TEXT, shown, name);
}

/* Parses the header text (after the length field) into `out`'s dtype,
 * order, shape and nbytes. */
static enum tcx_status parse_header(const char *h, size_t n, const char *name,
				    struct npy_array *out, struct tcx_error *err)
{
	struct hparse hp = {.s = h, .n = n, .name = name, .err = err};
	const struct dtype_info *di;
	enum tcx_status st;
	int64_t count = 1, bytes;
	bool overflow = false;

	if (n == 0 || h[n - 1] != '\n')
		return tcx_fail(err, TCX_EPARSE, "the header of '%s' does not end with a newline",
				name);
	if ((st = hp_dict(&hp)))
		return st;
	if ((st = descr_dtype(hp.descr, hp.descr_len, name, &out->dtype, err)))
		return st;
	di = dtype_info(out->dtype);
	for (int k = 0; k < hp.ndim && !overflow; k++)
		overflow = common_mul_overflows_i64(count, hp.shape[k], &count);
	if (overflow || common_mul_overflows_i64(count, di->bytes, &bytes) ||
	    (uint64_t)bytes > SIZE_MAX)
		return tcx_fail(err, TCX_ERANGE,
				"the shape of '%s' is too large: its size in bytes overflows",
				name);
	out->ndim = hp.ndim;
	memcpy(out->shape, hp.shape, sizeof(hp.shape));
	out->fortran_order = hp.fortran_order;
	out->nbytes = (size_t)bytes;
	return TCX_OK;
}

static enum tcx_status truncated_header(const char *name, struct tcx_error *err)
{
	return tcx_fail(err, TCX_ECORRUPT, "'%s' is truncated: the header is incomplete", name);
}

/* The fixed part: magic, version and header length.  `p` holds `avail`
 * bytes of the start of a source `total` bytes long.  Sets *hoff to where
 * the header text starts and *hlen to its length, checked against total. */
static enum tcx_status parse_prefix(const unsigned char *p, size_t avail, uint64_t total,
				    const char *name, size_t *hoff, size_t *hlen,
				    struct tcx_error *err)
{
	size_t lsize;
	uint64_t len;

	if (total == 0)
		return tcx_fail(err, TCX_EPARSE, "'%s' is empty, not a NumPy .npy file", name);
	if (avail < NPY_MAGIC_LEN && memcmp(p, NPY_MAGIC, avail) == 0)
		return truncated_header(name, err);
	if (avail < NPY_MAGIC_LEN || memcmp(p, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
		return tcx_fail(err, TCX_EPARSE, "'%s' is not a NumPy .npy file (bad magic)", name);
	if (avail < NPY_MAGIC_LEN + 2)
		return truncated_header(name, err);
	if (p[6] < 1 || p[6] > 3 || p[7] != 0)
		return tcx_fail(err, TCX_EUNSUPPORTED,
				"unsupported .npy format version %u.%u in '%s' (tcx reads 1.0, "
				"2.0 and 3.0)",
				p[6], p[7], name);
	lsize = p[6] == 1 ? 2 : 4;
	if (avail < NPY_MAGIC_LEN + 2 + lsize)
		return truncated_header(name, err);
	len = (uint64_t)p[8] | (uint64_t)p[9] << 8;
	if (lsize == 4)
		len |= (uint64_t)p[10] << 16 | (uint64_t)p[11] << 24;
	*hoff = NPY_MAGIC_LEN + 2 + lsize;
	*hlen = (size_t)len;
	if (len > total - *hoff)
		return tcx_fail(err, TCX_ECORRUPT,
				"'%s' is truncated: expected a header of %" PRIu64
				" bytes, found %" PRIu64,
				name, len, total - *hoff);
	return TCX_OK;
}

static enum tcx_status check_data_len(const char *name, size_t want, uint64_t found,
				      struct tcx_error *err)
{
	if (found < want)
		return tcx_fail(err, TCX_ECORRUPT,
				"'%s' is truncated: expected %zu bytes of data, found %" PRIu64,
				name, want, found);
	if (found > want)
		return tcx_fail(err, TCX_ECORRUPT,
				"'%s' has %" PRIu64 " bytes after the data (expected %zu bytes of "
				"data, found %" PRIu64 ")",
				name, found - want, want, found);
	return TCX_OK;
}

void npy_release(struct npy_array *a)
{
	if (!a)
		return;
	free(a->data);
	memset(a, 0, sizeof(*a));
}

enum tcx_status npy_read_mem(const void *buf, size_t len, const char *name, struct npy_array *out,
			     struct tcx_error *err)
{
	const unsigned char *p = buf;
	size_t hoff = 0, hlen = 0, off;
	enum tcx_status st;

	memset(out, 0, sizeof(*out));
	name = src_name(name);
	if ((st = parse_prefix(p, len, len, name, &hoff, &hlen, err)))
		return st;
	if ((st = parse_header((const char *)p + hoff, hlen, name, out, err)))
		goto out_clear;
	off = hoff + hlen;
	if ((st = check_data_len(name, out->nbytes, len - off, err)))
		goto out_clear;
	out->data = malloc(out->nbytes ? out->nbytes : 1);
	if (!out->data) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory reading '%s'", name);
		goto out_clear;
	}
	memcpy(out->data, p + off, out->nbytes);
	return TCX_OK;
out_clear:
	memset(out, 0, sizeof(*out));
	return st;
}

/* A stream that is not a regular file (standard input, a pipe): read it
 * whole, then parse it from memory. */
static enum tcx_status read_stream(const char *path, struct npy_array *out, struct tcx_error *err)
{
	char *buf;
	size_t len;
	enum tcx_status st;

	if ((st = common_read_file(path, &buf, &len, err)))
		return st;
	st = npy_read_mem(buf, len, strcmp(path, "-") == 0 ? "<stdin>" : path, out, err);
	free(buf);
	return st;
}

static enum tcx_status read_failed(const char *path, struct tcx_error *err)
{
	return tcx_fail(err, TCX_EIO, "cannot read '%s': %s", path, strerror(errno));
}

enum tcx_status npy_read(const char *path, struct npy_array *out, struct tcx_error *err)
{
	unsigned char pre[12];
	char *hdr;
	size_t n, hoff = 0, hlen = 0, got;
	uint64_t size;
	struct stat sb;
	enum tcx_status st;
	FILE *fp;

	memset(out, 0, sizeof(*out));
	if (strcmp(path, "-") == 0)
		return read_stream(path, out, err);
	fp = fopen(path, "rb");
	if (!fp)
		return tcx_fail(err, TCX_EIO, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fileno(fp), &sb) != 0) {
		st = read_failed(path, err);
		goto out_close;
	}
	if (S_ISDIR(sb.st_mode)) {
		st = tcx_fail(err, TCX_EIO, "cannot read '%s': %s", path, strerror(EISDIR));
		goto out_close;
	}
	if (!S_ISREG(sb.st_mode)) {
		fclose(fp);
		return read_stream(path, out, err);
	}

	/* the header: checked against the file's size before anything big is
	 * allocated */
	n = fread(pre, 1, sizeof(pre), fp);
	if (ferror(fp)) {
		st = read_failed(path, err);
		goto out_close;
	}
	size = TCX_MAX((uint64_t)sb.st_size, n);
	if ((st = parse_prefix(pre, n, size, path, &hoff, &hlen, err)))
		goto out_close;
	hdr = malloc(hlen + 1);
	if (!hdr) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory reading '%s'", path);
		goto out_close;
	}
	if (fseek(fp, (long)hoff, SEEK_SET) != 0) {
		st = read_failed(path, err);
	} else {
		got = fread(hdr, 1, hlen, fp);
		if (ferror(fp))
			st = read_failed(path, err);
		else if (got < hlen)
			st = truncated_header(path, err);
		else
			st = parse_header(hdr, hlen, path, out, err);
	}
	free(hdr);
	if (st)
		goto out_clear;

	/* the data */
	if ((st = check_data_len(path, out->nbytes, size - hoff - hlen, err)))
		goto out_clear;
	out->data = malloc(out->nbytes ? out->nbytes : 1);
	if (!out->data) {
		st = tcx_fail(err, TCX_ENOMEM, "out of memory reading '%s'", path);
		goto out_clear;
	}
	got = fread(out->data, 1, out->nbytes, fp);
	if (ferror(fp)) {
		st = read_failed(path, err);
		goto out_clear;
	}
	/* the file may have changed since fstat */
	if (got < out->nbytes) {
		st = check_data_len(path, out->nbytes, got, err);
		goto out_clear;
	}
	if (fgetc(fp) != EOF || ferror(fp)) {
		st = ferror(fp) ? read_failed(path, err)
				: tcx_fail(err, TCX_ECORRUPT,
					   "'%s' has bytes after the data (expected %zu bytes "
					   "of data)",
					   path, out->nbytes);
		goto out_clear;
	}
	fclose(fp);
	return TCX_OK;

out_clear:
	npy_release(out);
out_close:
	fclose(fp);
	return st;
}

/* ---- writing ------------------------------------------------------------ */

/* numpy.save's header text for `a`: the dict as repr() writes it, keys
 * sorted, the growth padding, then spaces and '\n' up to a multiple of 64.
 * Fills `prefix` (magic, version, length) and sets *plen. */
static void build_header(const struct npy_array *a, const char *descr, struct strbuf *sb,
			 unsigned char *prefix, size_t *plen)
{
	char num[32];
	size_t hlen, pad, len;
	int grow;

	strbuf_addf(sb, "{'descr': '%s', 'fortran_order': %s, 'shape': (", descr,
		    a->fortran_order ? "True" : "False");
	for (int k = 0; k < a->ndim; k++)
		strbuf_addf(sb, "%s%" PRId64, k ? ", " : "", a->shape[k]);
	if (a->ndim == 1)
		strbuf_addc(sb, ',');
	strbuf_adds(sb, "), }");
	if (a->ndim > 0) {
		grow = snprintf(num, sizeof(num), "%" PRId64,
				a->shape[a->fortran_order ? a->ndim - 1 : 0]);
		for (int k = grow; k < NPY_GROWTH_DIGITS; k++)
			strbuf_addc(sb, ' ');
	}
	hlen = sb->len + 1;
	pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + 2 + hlen) % NPY_ALIGN;
	memcpy(prefix, NPY_MAGIC, NPY_MAGIC_LEN);
	prefix[7] = 0;
	if (hlen + pad <= 65535) {
		len = hlen + pad;
		prefix[6] = 1;
		prefix[8] = (unsigned char)(len & 0xff);
		prefix[9] = (unsigned char)(len >> 8);
		*plen = 10;
	} else {
		pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + 4 + hlen) % NPY_ALIGN;
		len = hlen + pad;
		prefix[6] = 2;
		for (int k = 0; k < 4; k++)
			prefix[8 + k] = (unsigned char)(len >> (8 * k));
		*plen = 12;
	}
	for (size_t k = 0; k < pad; k++)
		strbuf_addc(sb, ' ');
	strbuf_addc(sb, '\n');
}

enum tcx_status npy_write(const char *path, const struct npy_array *a, struct tcx_error *err)
{
	const char *descr = NULL;
	const struct dtype_info *di;
	struct strbuf sb = STRBUF_INIT;
	struct atomic_file af;
	unsigned char prefix[12];
	size_t plen;
	int64_t count = 1, bytes;
	enum tcx_status st;

	for (size_t k = 0; k < ARRAY_SIZE(npy_types); k++)
		if (npy_types[k].dtype == a->dtype)
			descr = npy_types[k].descr;
	di = dtype_info(a->dtype);
	if (!descr && di)
		return tcx_fail(err, TCX_EUNSUPPORTED, "cannot write '%s': %s has no NumPy dtype",
				path, di->name);
	if (!descr)
		return tcx_fail(err, TCX_EINVAL, "cannot write '%s': unknown element type %d", path,
				(int)a->dtype);
	if (a->ndim < 0 || a->ndim > NPY_MAX_DIMS)
		return tcx_fail(err, TCX_EINVAL,
				"cannot write '%s': %d dimensions (0 to %d allowed)", path, a->ndim,
				NPY_MAX_DIMS);
	for (int k = 0; k < a->ndim; k++) {
		if (a->shape[k] < 0)
			return tcx_fail(err, TCX_EINVAL,
					"cannot write '%s': negative dimension %" PRId64, path,
					a->shape[k]);
		if (common_mul_overflows_i64(count, a->shape[k], &count))
			return tcx_fail(err, TCX_ERANGE, "cannot write '%s': the shape overflows",
					path);
	}
	if (common_mul_overflows_i64(count, di->bytes, &bytes))
		return tcx_fail(err, TCX_ERANGE, "cannot write '%s': the shape overflows", path);
	if ((uint64_t)bytes != a->nbytes)
		return tcx_fail(err, TCX_EINVAL,
				"cannot write '%s': %zu bytes of data for a shape of %" PRId64
				" bytes",
				path, a->nbytes, bytes);
	if (a->nbytes && !a->data)
		return tcx_fail(err, TCX_EINVAL, "cannot write '%s': no data", path);

	build_header(a, descr, &sb, prefix, &plen);
	if ((st = strbuf_status(&sb, err)))
		goto out_free_sb;
	if ((st = atomic_file_open(&af, path, err)))
		goto out_free_sb;
	if (fwrite(prefix, 1, plen, af.fp) != plen || fwrite(sb.buf, 1, sb.len, af.fp) != sb.len ||
	    (a->nbytes && fwrite(a->data, 1, a->nbytes, af.fp) != a->nbytes)) {
		st = tcx_fail(err, TCX_EIO, "cannot write '%s': %s", path, strerror(errno));
		atomic_file_abort(&af);
		goto out_free_sb;
	}
	st = atomic_file_commit(&af, err);
out_free_sb:
	strbuf_release(&sb);
	return st;
}
