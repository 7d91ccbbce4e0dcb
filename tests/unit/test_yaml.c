/* test_yaml.c - the YAML reader every format shares (lib/yaml/ydoc.h):
 * nodes keep their places, scalars are typed by one schema, and what no tcx
 * file may hold is refused at its place in the same words for all. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "yaml/ydoc.h"

static enum tcx_status parse(const char *text, size_t max_nodes, struct ynode **out,
			     struct tcx_error *err)
{
	memset(err, 0, sizeof(*err));
	return ydoc_parse(text, strlen(text), "t.yaml", max_nodes, out, err);
}

/* The JSON of a one-line document, compact ("[1,\"yes\"]"); the caller frees. */
static char *json_of(const char *text)
{
	struct tcx_error err;
	json_t *v = NULL;
	char *s;

	if (yaml_to_json(text, strlen(text), "t.yaml", &v, &err) != TCX_OK) {
		fprintf(stderr, "%s: %s\n", text, err.msg);
		return NULL;
	}
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(v);
	return s;
}

static void expect_json(const char *text, const char *want)
{
	char *got = json_of(text);

	CHECK_MSG(got && strcmp(got, want) == 0, "%s: got %s, want %s", text, got ? got : "NULL",
		  want);
	free(got);
}

static void expect_refused(const char *text, unsigned line, unsigned col, const char *msg)
{
	struct ynode *root = NULL;
	struct tcx_error err;
	enum tcx_status st = parse(text, 0, &root, &err);

	CHECK_MSG(st == TCX_EPARSE && !root, "%s: status %d", msg, st);
	CHECK_MSG(err.line == line && err.col == col, "%s: at %u:%u, want %u:%u", msg, err.line,
		  err.col, line, col);
	CHECK_MSG(strstr(err.msg, msg) != NULL, "'%s' lacks '%s'", err.msg, msg);
	ynode_free(root);
}

/* The tree: kinds, places, text; mapping lookups. */
static void test_tree(void)
{
	const char *text = "a: 1\nb:\n  - x\n  - 'y z'\nc: {d: ~}\n";
	struct ynode *root = NULL;
	const struct ynode *b, *c;
	struct tcx_error err;

	CHECK(parse(text, 0, &root, &err) == TCX_OK && root);
	if (!root)
		return;
	CHECK(root->kind == YNODE_MAP && ymap_size(root) == 3);
	CHECK(strcmp(ymap_key(root, 1)->text, "b") == 0);
	b = ymap_get(root, "b");
	CHECK(b && b->kind == YNODE_SEQ && b->n == 2 && b->line == 3 && b->col == 3);
	if (b && b->n == 2) {
		CHECK(b->kid[0]->plain && b->kid[0]->style == YSTYLE_PLAIN);
		CHECK(!b->kid[1]->plain && b->kid[1]->style == YSTYLE_QUOTED);
		CHECK(strcmp(b->kid[1]->text, "y z") == 0 && b->kid[1]->line == 4 &&
		      b->kid[1]->col == 5);
		/* column 3 of 'y z' is the file's 8 (the quote comes first) */
		CHECK(ynode_text_col(b->kid[1], 3) == 8);
		CHECK(ynode_text_col(b->kid[0], 1) == 5);
	}
	c = ymap_get(root, "c");
	CHECK(c && ynode_is_null(ymap_get(c, "d")) && !ymap_get(c, "e") && !ymap_get(root, "x"));
	CHECK(strcmp(ynode_what(root), "a mapping") == 0 && strcmp(ynode_what(b), "a list") == 0);
	ynode_free(root);

	/* no document: no tree, and no error */
	CHECK(parse("# a comment\n", 0, &root, &err) == TCX_OK && !root);
	CHECK(ydoc_load("", 0, "t.yaml", NULL, NULL, &err) == TCX_EPARSE &&
	      strcmp(err.msg, "t.yaml: empty document") == 0);
}

/* One schema (YAML 1.2's core, decimal): what PyYAML writes reads back as
 * it was. */
static void test_scalars(void)
{
	expect_json("[true, True, TRUE, false, False, FALSE]", "[true,true,true,false,false,false]");
	expect_json("[~, null, Null, NULL, ]", "[null,null,null,null]");
	expect_json("[12, -3, +4, 007]", "[12,-3,4,7]");
	expect_json("[1.5, .5, 2., 1e3, -1.5E-2]", "[1.5,0.5,2.0,1000.0,-0.014999999999999999]");
	/* YAML 1.1's words, other radixes, infinities and quoted values stay text */
	expect_json("[yes, no, on, off, 0x10, 0o7, .inf, .nan, None]",
		    "[\"yes\",\"no\",\"on\",\"off\",\"0x10\",\"0o7\",\".inf\",\".nan\",\"None\"]");
	expect_json("['1', \"true\", !!str 5, '']", "[\"1\",\"true\",\"5\",\"\"]");
	/* past int64_t: a real; past a double: text */
	expect_json("[99999999999999999999, 1e999]", "[1e20,\"1e999\"]");
	expect_json("{0: a, 1.50: b}", "{\"0\":\"a\",\"1.50\":\"b\"}");
}

/* What no tcx file may hold, refused at its place. */
static void test_refused(void)
{
	struct ynode *root = NULL;
	struct tcx_error err;
	char deep[200];
	size_t n = 0;

	expect_refused("a: [1, 2\nb: 3\n", 2, 2, "t.yaml:2:2: malformed YAML: did not find expected");
	expect_refused("a: 1\nb: 2\na: 3\n", 3, 1, "t.yaml:3:1: duplicate key 'a' (first at line 1)");
	expect_refused("a: 1\n---\nb: 2\n", 2, 1, "a second YAML document");
	expect_refused("a: &x 1\nb: *x\n", 2, 4, "aliases ('*x') are not supported");
	expect_refused("a: \"x\\0y\"\n", 1, 4, "a NUL character in a value is not allowed");
	expect_refused("? [a]\n: 1\n", 1, 3, "a mapping key must be a plain value, not a list");
	/* a byte that is not UTF-8: at the byte, not at the start */
	expect_refused("a: 1\nb: x\xff\n", 2, 5, "t.yaml:2:5: malformed YAML: invalid leading UTF-8");
	n += (size_t)snprintf(deep, sizeof(deep), "a: ");
	for (int k = 0; k < YDOC_MAX_DEPTH + 1; k++)
		deep[n++] = '[';
	deep[n] = '\0';
	/* the mapping and 63 lists are 64 */
	expect_refused(deep, 1, 3 + YDOC_MAX_DEPTH, "lists and mappings nested more than 64 deep");
	/* the node bound */
	CHECK(parse("[1, 2, 3]\n", 3, &root, &err) == TCX_EPARSE && !root &&
	      strstr(err.msg, "t.yaml:1:8: too many values"));
	CHECK(parse("[1, 2, 3]\n", 4, &root, &err) == TCX_OK && root);
	ynode_free(root);
	/* larger than YDOC_MAX_TEXT */
	CHECK(ydoc_load("a: 1", YDOC_MAX_TEXT + 1, "big", NULL, NULL, &err) == TCX_EINVAL);
}

/* What the writer writes reads back the same, strings YAML 1.1 would take
 * for another type included. */
static void test_round_trip(void)
{
	const char *text = "{a: [1, 2.5, true, null, \"yes\", \"0x10\", \"2025-01-31\", \"\"], "
			   "b: {c: 'x: y'}}";
	struct strbuf sb = STRBUF_INIT;
	struct tcx_error err;
	json_t *v = NULL, *back = NULL;

	CHECK(yaml_to_json(text, strlen(text), "t.yaml", &v, &err) == TCX_OK);
	CHECK(v && yaml_from_json(v, &sb, &err) == TCX_OK);
	CHECK(strstr(strbuf_str(&sb), "'yes'") || strstr(strbuf_str(&sb), "\"yes\""));
	CHECK(yaml_to_json(sb.buf, sb.len, "out.yaml", &back, &err) == TCX_OK);
	CHECK_MSG(v && back && json_equal(v, back), "%s", strbuf_str(&sb));
	json_decref(v);
	json_decref(back);
	strbuf_release(&sb);
}

int main(void)
{
	test_tree();
	test_scalars();
	test_refused();
	test_round_trip();
	return check_done();
}
