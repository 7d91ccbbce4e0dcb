/* parse.c - `tcx parse`: read a contraction, classify its indices, and show
 * the layout, D0/D1/DU and why, Tensile's equivalent and the GEMM it is. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "model/model.h"
#include "notation/notation.h"
#include "plan/merge.h"

static const char *const parse_synopsis[] = {
	"tcx parse [--format <fmt>] [--type <t>] [--layout <layout>] [--sizes <sizes>] "
	"[--strides <strides>] <expr>",
	NULL,
};

static const struct cmd_option parse_options[] = {
	{ "format", 'f', required_argument, "<fmt>", "output as table (default), json or yaml",
	  OV_ENUM, "table json yaml" },
	{ "type", 't', required_argument, "<t>", "element type: s d c z h b (default s)", OV_ENUM,
	  "s d c z h b" },
	{ "layout", 'l', required_argument, "<layout>",
	  "first-fastest (Tensile's default) or last-fastest (einsum's default)", OV_ENUM,
	  "first-fastest last-fastest" },
	{ "sizes", 's', required_argument, "<sizes>",
	  "index sizes, 'i=64,j=32,...' or '64,32,...' in the notation's order", OV_NONE, NULL },
	{ "strides", 0x100, required_argument, "<strides>",
	  "explicit strides in elements, 'A=[1,64],B=[..],C=[..]' (written order)", OV_NONE,
	  NULL },
	{ NULL, 0, 0, NULL, NULL, OV_NONE, NULL },
};

static const char *const parse_examples[] = {
	"tcx parse 'C[ijk]=A[ilk]*B[jlk]'",
	"tcx parse 'C[i,j] = Sum[k] A[i,k] * B[k,j]' --sizes i=1024,j=1024,k=512",
	"tcx parse 'ilk,jlk->ijk' --format json",
	NULL,
};

const struct cmd cmd_parse_def;
int cmd_parse(int argc, char **argv);

const struct cmd cmd_parse_def = {
	"parse", cmd_parse, parse_synopsis,
	"Parse a contraction and classify its indices",
	parse_options, parse_examples, "expr", 0,
	NULL,
};

static const char *role_label(int t)
{
	return t == T_C ? "C" : t == T_A ? "A" : "B";
}

static const char *idx_name(const struct tcx_contraction *c, int id)
{
	return id == IDX_VIRTUAL ? "(size-1)" : c->idx[id].name;
}

static const char *why_free(enum rule_kind k)
{
	switch (k) {
	case RULE_ONLY:
		return "the only free index of %s";
	case RULE_STRIDE:
		return "the free index of %s with the shortest stride in %s";
	case RULE_TIE:
		return "free indices of %s tie on stride; the lowest-numbered wins";
	case RULE_VIRTUAL:
		return "%s has no free index: a size-1 stand-in";
	}
	return "";
}

static json_t *rule_json(const struct tcx_contraction *c, const struct classification *cls,
			 const char *which)
{
	json_t *o = json_object();
	char text[256];
	int id;

	if (strcmp(which, "du") == 0) {
		id = cls->du;
		switch (cls->why_du) {
		case RULE_ONLY:
			snprintf(text, sizeof(text), "the only bound index");
			break;
		case RULE_STRIDE:
			snprintf(text, sizeof(text),
				 "the bound index with the smallest stride in A plus stride in B");
			break;
		case RULE_TIE:
			snprintf(text, sizeof(text),
				 "bound indices tie on stride in A plus stride in B; the "
				 "highest-numbered wins, as in Tensile's position rule");
			break;
		case RULE_VIRTUAL:
			snprintf(text, sizeof(text), "no bound index: a size-1 stand-in");
			break;
		}
		json_object_set_new(o, "index", json_string(idx_name(c, id)));
		json_object_set_new(o, "id", id < 0 ? json_null() : json_integer(id));
		json_object_set_new(o, "rule", json_string(text));
		return o;
	}
	{
		bool d0 = strcmp(which, "d0") == 0;
		bool from_a = d0 ? cls->d0_from_a : !cls->d0_from_a;
		enum tensor_role t = from_a ? T_A : T_B;
		const char *tn = role_label(t);
		char part[160];

		id = d0 ? cls->d0 : cls->d1;
		snprintf(part, sizeof(part), why_free(cls->why_d01[t]), tn, tn);
		if (cls->free01[T_A] != IDX_VIRTUAL && cls->free01[T_B] != IDX_VIRTUAL)
			snprintf(text, sizeof(text), "%s; %s", part,
				 d0 ? "D0 because its stride in C is the shorter of the two"
				    : "D1 because its stride in C is the longer of the two");
		else
			snprintf(text, sizeof(text), "%s", part);
		json_object_set_new(o, "index", json_string(idx_name(c, id)));
		json_object_set_new(o, "id", id < 0 ? json_null() : json_integer(id));
		json_object_set_new(o, "from", json_string(tn));
		json_object_set_new(o, "rule", json_string(text));
		return o;
	}
}

/* The indices that merge (plan/merge.h), with p's sizes and strides, or
 * without sizes by their places alone (every size taken as 2). */
static void merge_json(json_t *o, const struct tcx_contraction *c, const struct problem *p)
{
	struct tcx_contraction *m = NULL;
	struct problem tmp, mp;
	struct merge_map map;
	int64_t two[TCX_MAX_INDICES];
	json_t *arr;

	if (!p) {
		for (int id = 0; id < c->nidx; id++)
			two[id] = 2;
		if (problem_init(&tmp, c, two, NULL) != TCX_OK)
			return;
	}
	if (problem_merge(p ? p : &tmp, &m, &mp, &map, NULL) != TCX_OK || !m)
		return;
	arr = json_array();
	for (int k = 0; k < map.n; k++) {
		json_t *x, *from;

		if (map.count[k] < 2)
			continue;
		x = json_object();
		from = json_array();
		/* in the order the expression writes them */
		for (int j = 0; j < map.count[k]; j++) {
			int f = c->layout == LAYOUT_LAST_FASTEST ? map.count[k] - 1 - j : j;

			json_array_append_new(from, json_string(c->idx[map.from[k][f]].name));
		}
		json_object_set_new(x, "indices", from);
		json_object_set_new(x, "as", json_string(m->idx[k].name));
		if (p)
			json_object_set_new(x, "size", json_integer(mp.size[k]));
		json_array_append_new(arr, x);
	}
	json_object_set_new(o, "merged", arr);
	json_object_set_new(o, "merged_expression", json_string(m->expr));
	contraction_free(m);
}

static json_t *describe(const struct tcx_contraction *c, const struct problem *p)
{
	json_t *o = json_object(), *arr, *t;
	struct classification cls;
	int ids[TCX_MAX_INDICES], n, *tid = cls.tid;
	char buf[512];
	static const enum index_class classes[] = { IDX_FREE_A, IDX_FREE_B, IDX_BATCH, IDX_BOUND };
	static const char *const class_keys[] = { "free_a", "free_b", "batch", "bound" };

	model_classify(c, p, &cls);
	json_object_set_new(o, "expression", json_string(c->expr));
	json_object_set_new(o, "notation",
			    json_string(c->style == NOTATION_TENSILE ? "tensile" : "einsum"));
	json_object_set_new(o, "layout",
			    json_string(p && p->explicit_strides ? "explicit strides"
					: c->layout == LAYOUT_FIRST_FASTEST ? "first-fastest"
									   : "last-fastest"));
	json_object_set_new(o, "type", json_string((char[]){ (char)(dtype_info(c->dtype)->letter + 32), 0 }));
	problem_tensile_name(c, p, buf, sizeof(buf));
	json_object_set_new(o, "problem_type", json_string(buf));
	if (c->conj[T_A] || c->conj[T_B]) {
		json_object_set_new(o, "conj_a", json_boolean(c->conj[T_A]));
		json_object_set_new(o, "conj_b", json_boolean(c->conj[T_B]));
	}
	if (c->implicit_b) {
		/* one input: B is ones over these, made by tcx */
		arr = json_array();
		for (int k = 0; k < c->rank[T_B]; k++)
			json_array_append_new(arr, json_string(c->idx[c->written[T_B][k]].name));
		json_object_set_new(o, "implicit_b", arr);
	}
	json_object_set_new(o, "alpha", json_boolean(c->has_alpha));
	json_object_set_new(o, "beta", json_boolean(c->use_beta));

	arr = json_array();
	for (int id = 0; id < c->nidx; id++) {
		json_t *x = json_object(), *pos = json_object();

		json_object_set_new(x, "id", json_integer(id));
		json_object_set_new(x, "name", json_string(c->idx[id].name));
		json_object_set_new(x, "class", json_string(index_class_name(c->idx[id].cls)));
		for (int r = 0; r < 3; r++) {
			int m = model_memory_order(c, p, (enum tensor_role)r, ids), pos_r = -1;

			for (int k = 0; k < m; k++)
				if (ids[k] == id)
					pos_r = k;
			json_object_set_new(pos, role_label(r),
					    pos_r < 0 ? json_null() : json_integer(pos_r));
		}
		json_object_set_new(x, "memory_position", pos);
		if (p) {
			json_t *st = json_object();

			json_object_set_new(x, "size", json_integer(p->size[id]));
			for (int r = 0; r < 3; r++)
				json_object_set_new(st, role_label(r),
						    c->idx[id].pos[r] < 0
							    ? json_null()
							    : json_integer(p->stride[r][id]));
			json_object_set_new(x, "strides", st);
		}
		json_array_append_new(arr, x);
	}
	json_object_set_new(o, "indices", arr);
	for (size_t k = 0; k < ARRAY_SIZE(classes); k++) {
		arr = json_array();
		for (int id = 0; id < c->nidx; id++)
			if (c->idx[id].cls == classes[k])
				json_array_append_new(arr, json_string(c->idx[id].name));
		json_object_set_new(o, class_keys[k], arr);
	}
	json_object_set_new(o, "d0", rule_json(c, &cls, "d0"));
	json_object_set_new(o, "d1", rule_json(c, &cls, "d1"));
	json_object_set_new(o, "du", rule_json(c, &cls, "du"));

	t = json_object();
	json_object_set_new(t, "NumIndicesC", json_integer(c->rank[T_C]));
	for (int r = T_A; r <= T_B; r++) {
		arr = json_array();
		n = model_memory_order(c, p, (enum tensor_role)r, ids);
		for (int k = 0; k < n; k++)
			json_array_append_new(arr, json_integer(tid[ids[k]]));
		json_object_set_new(t, r == T_A ? "IndexAssignmentsA" : "IndexAssignmentsB", arr);
	}
	json_object_set_new(t, "DataType", json_integer(dtype_info(c->dtype)->tensile_number));
	json_object_set_new(t, "UseBeta", json_boolean(c->use_beta));
	json_object_set_new(t, "ComplexConjugateA", json_boolean(c->conj[T_A]));
	json_object_set_new(t, "ComplexConjugateB", json_boolean(c->conj[T_B]));
	{
		struct strbuf why = STRBUF_INIT;

		if (cls.tensile_d0 != cls.d0)
			strbuf_addf(&why, "Tensile's position rule would take D0 = %s. ",
				    idx_name(c, cls.tensile_d0));
		if (cls.tensile_d1 != cls.d1)
			strbuf_addf(&why, "Tensile's position rule would take D1 = %s. ",
				    idx_name(c, cls.tensile_d1));
		if (cls.tensile_du != cls.du)
			strbuf_addf(&why,
				    "Tensile's position rule would take DU = %s (the highest-numbered "
				    "summation index), not %s. ",
				    idx_name(c, cls.tensile_du), idx_name(c, cls.du));
		if (why.len)
			why.buf[--why.len] = '\0';
		json_object_set_new(t, "position_rule",
				    json_string(why.len ? strbuf_str(&why)
							: "Tensile's position rule picks the same "
							  "D0, D1 and DU"));
		json_object_set_new(t, "agrees", json_boolean(why.len == 0));
		strbuf_release(&why);
	}
	json_object_set_new(o, "tensile", t);
	model_describe_gemm(c, p, &cls, buf, sizeof(buf));
	json_object_set_new(o, "equivalent", json_string(buf));
	if (p) {
		json_object_set_new(o, "flops", json_real(problem_flops(p)));
		json_object_set_new(o, "min_bytes", json_real(problem_min_bytes(p, c->use_beta)));
	}
	merge_json(o, c, p);
	return o;
}

static void print_list(const char *label, json_t *o)
{
	size_t i;
	json_t *v;

	printf("%s", label);
	json_array_foreach(o, i, v) printf("%s%s", i ? ", " : "", json_string_value(v));
	if (json_array_size(o) == 0)
		printf("(none)");
	printf("\n");
}

static void print_int_list(json_t *a)
{
	size_t i;
	json_t *v;

	printf("[");
	json_array_foreach(a, i, v) printf("%s%lld", i ? ", " : "", (long long)json_integer_value(v));
	printf("]");
}

static void print_table(json_t *o, bool sized)
{
	json_t *idx = json_object_get(o, "indices"), *x, *t = json_object_get(o, "tensile");
	size_t i;
	static const char *const roles[] = { "C", "A", "B" };
	const char *layout = json_string_value(json_object_get(o, "layout"));

	printf("expression  %s\n", json_string_value(json_object_get(o, "expression")));
	printf("notation    %s\n", json_string_value(json_object_get(o, "notation")));
	printf("layout      %s%s\n", layout,
	       strcmp(layout, "first-fastest") == 0  ? " (the first index listed moves fastest)"
	       : strcmp(layout, "last-fastest") == 0 ? " (the last index listed moves fastest)"
						     : "");
	printf("type        %s\n", json_string_value(json_object_get(o, "type")));
	printf("problem     %s\n", json_string_value(json_object_get(o, "problem_type")));
	if (json_object_get(o, "implicit_b")) {
		json_t *ib = json_object_get(o, "implicit_b");

		if (json_array_size(ib) == 0)
			printf("inputs      one: B is a single 1 made by tcx (nothing is summed)\n");
		else
			print_list("inputs      one: B is ones over the summed indices, made by "
				   "tcx: ",
				   ib);
	}
	printf("indices     id  name        class   ");
	printf(sized ? "%10s %12s %12s %12s\n" : "%3s %3s %3s\n", sized ? "size" : "C",
	       sized ? "stride C" : "A", sized ? "stride A" : "B", sized ? "stride B" : "");
	json_array_foreach(idx, i, x)
	{
		printf("            %-3lld %-11s %-7s ", (long long)json_integer_value(json_object_get(x, "id")),
		       json_string_value(json_object_get(x, "name")),
		       json_string_value(json_object_get(x, "class")));
		if (sized) {
			printf("%10lld", (long long)json_integer_value(json_object_get(x, "size")));
			for (int r = 0; r < 3; r++) {
				json_t *s = json_object_get(json_object_get(x, "strides"), roles[r]);

				if (json_is_null(s))
					printf(" %12s", "-");
				else
					printf(" %12lld", (long long)json_integer_value(s));
			}
		} else {
			for (int r = 0; r < 3; r++) {
				json_t *s = json_object_get(json_object_get(x, "memory_position"),
							    roles[r]);

				if (json_is_null(s))
					printf("%s%3s", r ? " " : "", "-");
				else
					printf("%s%3lld", r ? " " : "", (long long)json_integer_value(s));
			}
		}
		printf("\n");
	}
	if (!sized)
		printf("            (C A B: memory position, 0 = fastest)\n");
	print_list("free A      ", json_object_get(o, "free_a"));
	print_list("free B      ", json_object_get(o, "free_b"));
	print_list("batch       ", json_object_get(o, "batch"));
	print_list("bound       ", json_object_get(o, "bound"));
	{
		static const char *const keys[] = { "d0", "d1", "du" };
		static const char *const labels[] = { "D0", "D1", "DU" };

		for (int k = 0; k < 3; k++) {
			json_t *d = json_object_get(o, keys[k]);

			printf("%-11s %s: %s\n", labels[k], json_string_value(json_object_get(d, "index")),
			       json_string_value(json_object_get(d, "rule")));
		}
	}
	printf("tensile     NumIndicesC: %lld, IndexAssignmentsA: ",
	       (long long)json_integer_value(json_object_get(t, "NumIndicesC")));
	print_int_list(json_object_get(t, "IndexAssignmentsA"));
	printf(", IndexAssignmentsB: ");
	print_int_list(json_object_get(t, "IndexAssignmentsB"));
	printf("\n            %s\n", json_string_value(json_object_get(t, "position_rule")));
	printf("equivalent  %s\n", json_string_value(json_object_get(o, "equivalent")));
	if (sized) {
		printf("flops       %.6g\n", json_real_value(json_object_get(o, "flops")));
		printf("min bytes   %.6g\n", json_real_value(json_object_get(o, "min_bytes")));
	}
	if (json_object_get(o, "merged")) {
		json_t *m = json_object_get(o, "merged"), *g;
		size_t gi;

		printf("merged      ");
		json_array_foreach(m, gi, g) {
			json_t *from = json_object_get(g, "indices"), *v;
			size_t j;

			printf("%s", gi ? "; " : "");
			json_array_foreach(from, j, v) printf("%s%s", j ? "," : "", json_string_value(v));
			printf(" -> %s", json_string_value(json_object_get(g, "as")));
			if (json_object_get(g, "size"))
				printf(" (one index of %lld)",
				       (long long)json_integer_value(json_object_get(g, "size")));
		}
		if (json_array_size(m) == 0)
			printf("size-1 indices only");
		printf("\n            planned as %s\n",
		       json_string_value(json_object_get(o, "merged_expression")));
	}
}

int cmd_parse(int argc, char **argv)
{
	enum out_format fmt = FMT_TABLE;
	const char *type = NULL, *layout = NULL, *sizes = NULL, *strides = NULL;
	struct tcx_contraction *c = NULL;
	struct problem prob, *p = NULL;
	struct tcx_error err = { 0 };
	int64_t sz[TCX_MAX_INDICES];
	json_t *o;
	int r, ret;

	while ((r = cmd_getopt(&cmd_parse_def, argc, argv)) != -1) {
		switch (r) {
		case 'f':
			if (!parse_format(optarg, &fmt,
					  FMT_ALLOW(FMT_TABLE) | FMT_ALLOW(FMT_JSON) | FMT_ALLOW(FMT_YAML)))
				return option_value_error(&cmd_parse_def, 'f', "format", optarg);
			break;
		case 't':
			type = optarg;
			break;
		case 'l':
			layout = optarg;
			break;
		case 's':
			sizes = optarg;
			break;
		case 0x100:
			strides = optarg;
			break;
		case 'h':
			return 0;
		default:
			return TCX_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		return usage_error(&cmd_parse_def, optind >= argc ? "missing the expression"
								  : "too many arguments");
	ret = load_contraction(argv[optind], type, layout, &c);
	if (ret)
		return ret;
	if (strides && !sizes) {
		for (int id = 0; id < c->nidx; id++)
			sz[id] = 1;
		error("--strides needs --sizes");
		contraction_free(c);
		return TCX_EXIT_USAGE;
	}
	if (sizes) {
		enum tcx_status st = sizes_parse_assign(c, sizes, sz, &err);

		if (!st)
			st = problem_init(&prob, c, sz, &err);
		if (!st && strides)
			st = problem_parse_strides(&prob, strides, &err);
		if (st) {
			contraction_free(c);
			return report(st, &err);
		}
		p = &prob;
	}
	o = describe(c, p);
	if (fmt == FMT_JSON)
		print_json(stdout, o);
	else if (fmt == FMT_YAML)
		print_yaml(stdout, o);
	else
		print_table(o, p != NULL);
	json_decref(o);
	contraction_free(c);
	return 0;
}
