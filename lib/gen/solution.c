/* solution.c - solution parameters: the table that names them, defaults,
 * parsing (text and JSON), the canonical key and Tensile v2 translation. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gen/solution.h"

enum ptype { PT_INT, PT_BOOL, PT_INTS, PT_EDGE, PT_NAME };

struct param_def {
	const char *name;
	const char *abbrev; /* accepted in --params, e.g. "WG" */
	enum ptype type;
	size_t offset;
	int count;          /* for PT_INTS */
	bool keyed;         /* part of the canonical key and of logic files */
	int lo, hi;         /* allowed range of each integer */
};

#define OFF(f) offsetof(struct solution, f)

static const struct param_def params[] = {
	{ "WorkGroup", "WG", PT_INTS, OFF(wg), 3, true, 1, 4096 },
	{ "ThreadTile", "TT", PT_INTS, OFF(tt), 2, true, 1, 32 },
	{ "DepthU", "DU", PT_INT, OFF(depth_u), 1, true, -16, 1024 },
	{ "VectorWidth", "VW", PT_INT, OFF(vw), 1, true, -1, 16 },
	{ "GlobalSplitU", "GSU", PT_INT, OFF(gsu), 1, true, 1, 1024 },
	{ "PrefetchGlobalRead", "PGR", PT_BOOL, OFF(pgr), 1, true, 0, 1 },
	{ "PrefetchLocalRead", "PLR", PT_BOOL, OFF(plr), 1, true, 0, 1 },
	{ "EdgeType", "ET", PT_EDGE, OFF(edge), 1, true, 0, 2 },
	{ "WorkGroupMapping", "WGM", PT_INT, OFF(wgm), 1, true, -1024, 1024 },
	{ "NumLoadsCoalescedA", "NLCA", PT_INT, OFF(nlc[0]), 1, true, -1, 64 },
	{ "NumLoadsCoalescedB", "NLCB", PT_INT, OFF(nlc[1]), 1, true, -1, 64 },
	{ "LoopTail", "LT", PT_BOOL, OFF(loop_tail), 1, true, 0, 1 },
	{ "LdsPad", "LP", PT_INT, OFF(lds_pad), 1, true, 0, 64 },
	{ "MacroTileShapeMin", NULL, PT_INT, OFF(mt_shape[0]), 1, true, 1, 1024 },
	{ "MacroTileShapeMax", NULL, PT_INT, OFF(mt_shape[1]), 1, true, 1, 1024 },
	{ "UseLDS", "LDS", PT_BOOL, OFF(use_lds), 1, true, 0, 1 },
	{ "ConstantSizes", "CS", PT_BOOL, OFF(const_sizes), 1, true, 0, 1 },
	{ "MatrixInstruction", "MI", PT_INTS, OFF(mi), 4, true, 0, 1024 },
	{ "Occupancy", "OCC", PT_INT, OFF(occupancy), 1, true, 0, 32 },
	{ "TF32x3", NULL, PT_BOOL, OFF(tf32x3), 1, true, 0, 1 },
	{ "PackFreeIndices", NULL, PT_BOOL, OFF(pack_free), 1, true, 0, 1 },
	{ "TileIndexA", NULL, PT_NAME, OFF(tile_index[0]), 1, true, 0, 0 },
	{ "TileIndexB", NULL, PT_NAME, OFF(tile_index[1]), 1, true, 0, 0 },
	{ "UnrollIndex", NULL, PT_NAME, OFF(unroll_index), 1, true, 0, 0 },
	{ "TestSkipLastU", NULL, PT_INT, OFF(test_skip_last_u), 1, true, 0, 1 },
	/* join-only: checked against the WorkGroup and ThreadTile it joins */
	{ "MacroTile", "MT", PT_INTS, OFF(mt_join), 2, false, 1, 4096 },
	/* LocalSplitU alone sets WorkGroup[2] */
	{ "LocalSplitU", "LSU", PT_INT, OFF(wg[2]), 1, false, 1, 64 },
	/* Tensile v2 */
	{ "NumThreads", NULL, PT_INT, OFF(v2_num_threads), 1, false, 1, 4096 },
	{ "GroupShape", NULL, PT_INT, OFF(v2_group_shape), 1, false, -64, 64 },
	{ "WorkGroupShape", NULL, PT_INT, OFF(v2_group_shape), 1, false, -64, 64 },
	{ "ThreadTileNumElements", NULL, PT_INT, OFF(v2_tt_elems), 1, false, 1, 1024 },
	{ "ThreadTileShape", NULL, PT_INT, OFF(v2_tt_shape), 1, false, -64, 64 },
	{ "SplitU", NULL, PT_INT, OFF(v2_split_u), 1, false, 1, 64 },
	{ "WorkGroupEdge", NULL, PT_INT, OFF(v2_wg_edge), 1, false, 1, 1024 },
	{ "ThreadTileEdge", NULL, PT_INT, OFF(v2_tt_edge), 1, false, 1, 64 },
	{ "LoopUnroll", NULL, PT_INT, OFF(v2_loop_unroll), 1, false, 1, 1024 },
};

/* Tensile parameters tcx accepts but cannot honour (they describe AMD
 * assembly kernels or Tensile's own code generator). */
static const char *const ignored[] = {
	"LoopDoWhile", "GlobalReadCoalesceVectorA", "GlobalReadCoalesceVectorB",
	"GlobalReadCoalesceGroupA", "GlobalReadCoalesceGroupB", "UnrollMemFence",
	"GlobalSplitUWorkGroupMappingRoundRobin", "GlobalSplitUSummationAssignmentRoundRobin",
	"MaxOccupancy", "KernelLanguage", "WorkGroupMappingType", "GlobalRead2A", "GlobalRead2B",
	"LocalWrite2A", "LocalWrite2B", "LocalRead2A", "LocalRead2B", "PerformanceSyncLocation",
	"PerformanceWaitLocation", "PerformanceWaitCount", "ISA", "EdgeMultiKernel",
	"WorkGroupSchedule", "MaxMacroTileRatio", "GlobalReadVectorWidth", "DirectToLds",
	"UseSgprForGRO", "AssertSummationElementMultiple", "AssertFree0ElementMultiple",
	"AssertFree1ElementMultiple", "StaggerU", "StaggerUStride", "StaggerUMapping",
	"WaveSeparateGlobalReadA", "WaveSeparateGlobalReadB", "InnerUnroll", "ScheduleIterAlg",
	"1LDSBuffer", "StoreVectorWidth", "SourceSwap", "TransposeLDS", "ExpandPointerSwap",
	"PersistentKernel", "FractionalLoad", "OptNoLoadLoop", "BufferLoad", "BufferStore",
	"PackFreeDims", /* Tensile's; tcx's own is PackFreeIndices */
};

/* What Tensile writes into a solution besides its parameters: values it
 * derives from them, and bookkeeping.  Reading them is not an error. */
static const char *const derived[] = {
	"MacroTile0", "MacroTile1", "MacroTileA", "MacroTileB", "LoopUnroll", "LoopIters",
	"NumLoadsA", "NumLoadsB", "NumLoadsPerpendicularA", "NumLoadsPerpendicularB",
	"LdsNumElements", "LdsNumElementsAlignedA", "LdsNumElementsAlignedB", "LdsOffsetA",
	"LdsOffsetB", "LdsOffsetA_Blk", "LdsOffsetB_Blk", "SubGroup0", "SubGroup1", "SubGroupA",
	"SubGroupB", "ThreadTile0", "ThreadTile1", "ThreadTileA", "ThreadTileB", "Valid",
	"ProblemType", "SolutionIndex", "SolutionNameMin", "AssignedDerivedParameters",
	"AssignedProblemIndependentDerivedParameters", "GlobalLoadVectorWidthA",
	"GlobalLoadVectorWidthB", "LSCA", "LSCB", "LSPA", "LSPB", "LVCA", "LVCB", "LVPA", "LVPB",
	"PVA", "PVB", "NumElementsPerThread", "NumGlobalWriteVectorsPerThread", "NumThreads",
	"LdsPadA", "LdsPadB", "EnableMatrixInstruction", "MIArchVgpr", "name",
};

bool param_derived_key(const char *name)
{
	if (name[0] == '_')
		return true;
	for (size_t k = 0; k < ARRAY_SIZE(derived); k++)
		if (strcmp(derived[k], name) == 0)
			return true;
	return false;
}

const struct param_doc param_docs[] = {
	{ "WorkGroup", "[d0,d1,LSU]", "work-items per group along D0 and D1, and LocalSplitU" },
	{ "ThreadTile", "[t0,t1]", "outputs per work-item along D0 and D1" },
	{ "DepthU", "n", "bound-index elements per loop iteration (the unroll depth)" },
	{ "VectorWidth", "1|2|4|8|16|-1", "elements per vector access (-1: automatic)" },
	{ "GlobalSplitU", "n", "split the bound loop over n work-groups, then reduce" },
	{ "PrefetchGlobalRead", "True|False", "read the next tile while computing this one" },
	{ "PrefetchLocalRead", "True|False", "read the next local-memory slice ahead" },
	{ "EdgeType", "Branch|ShiftPtr|None", "edge tiles: guard, shift inside, or no checks" },
	{ "WorkGroupMapping", "n", "walk work-groups in bands of n for cache reuse" },
	{ "NumLoadsCoalescedA", "n|1|-1", "global loads of A along the coalesced direction" },
	{ "NumLoadsCoalescedB", "n|1|-1", "global loads of B along the coalesced direction" },
	{ "LoopTail", "True|False", "handle a bound size that is not a multiple of DepthU" },
	{ "LdsPad", "n", "elements of padding per local-memory row" },
	{ "MacroTileShapeMin", "n", "smallest allowed ratio of the macro tile's sides" },
	{ "MacroTileShapeMax", "n", "largest allowed ratio of the macro tile's sides" },
	{ "UseLDS", "True|False", "tcx: stage tiles in local memory (False: read directly)" },
	{ "ConstantSizes", "True|False", "tcx: compile the problem's sizes into the kernel" },
	{ "MatrixInstruction", "[m,n,k,b]", "tensor-core instruction shape (CUDA; 0 = none)" },
	{ "Occupancy", "n", "tcx: work-groups per compute unit to fit registers for (CUDA; 0: any)" },
	{ "TF32x3", "True|False", "tcx: fp32 on tensor cores as three tf32 products (fp32 accuracy)" },
	{ "PackFreeIndices", "True|False", "tcx: tile two free indices of each operand as one (warpgroups, SIMT with LDS)" },
	{ "TileIndexA", "<index>", "tcx: the free index of A its tiles run along (default: automatic)" },
	{ "TileIndexB", "<index>", "tcx: the free index of B its tiles run along (default: automatic)" },
	{ "UnrollIndex", "<index>", "tcx: the bound index of the unrolled loop (default: automatic)" },
	{ NULL, NULL, NULL },
};

void solution_default(struct solution *s)
{
	memset(s, 0, sizeof(*s));
	s->wg[0] = 16;
	s->wg[1] = 16;
	s->wg[2] = 1;
	s->tt[0] = 4;
	s->tt[1] = 4;
	s->depth_u = 16;
	s->vw = 1;
	s->gsu = 1;
	s->pgr = true;
	s->plr = true;
	s->edge = EDGE_BRANCH;
	s->wgm = 1;
	s->nlc[0] = 1;
	s->nlc[1] = 1;
	s->loop_tail = true;
	s->lds_pad = 0;
	s->mt_shape[0] = 1;
	s->mt_shape[1] = 64;
	s->use_lds = true;
}

static const struct param_def *find_param(const char *name)
{
	for (size_t k = 0; k < ARRAY_SIZE(params); k++)
		if (strcasecmp(params[k].name, name) == 0 ||
		    (params[k].abbrev && strcasecmp(params[k].abbrev, name) == 0))
			return &params[k];
	return NULL;
}

enum param_use param_lookup(const char *name)
{
	if (find_param(name))
		return PARAM_HONOURED;
	for (size_t k = 0; k < ARRAY_SIZE(ignored); k++)
		if (strcmp(ignored[k], name) == 0)
			return PARAM_IGNORED;
	return PARAM_UNKNOWN;
}

const char *param_hint(const char *name, char *buf, size_t len)
{
	struct suggest sg;

	suggest_init(&sg, name);
	for (size_t k = 0; k < ARRAY_SIZE(params); k++)
		suggest_add(&sg, params[k].name);
	for (size_t k = 0; k < ARRAY_SIZE(ignored); k++)
		suggest_add(&sg, ignored[k]);
	return suggest_hint(&sg, buf, len);
}

static const char *const edge_names[] = { "Branch", "ShiftPtr", "None" };

static bool json_to_int(json_t *v, int *out)
{
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);

		if (x < -1000000 || x > 1000000)
			return false;
		*out = (int)x;
		return true;
	}
	if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
	    fabs(json_real_value(v)) < 1e6) {
		*out = (int)json_real_value(v);
		return true;
	}
	return false;
}

static bool json_to_bool(json_t *v, bool *out)
{
	const char *s;

	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return true;
	}
	if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1)) {
		*out = json_integer_value(v) == 1;
		return true;
	}
	if (!json_is_string(v))
		return false;
	s = json_string_value(v);
	if (strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0) {
		*out = true;
		return true;
	}
	if (strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0) {
		*out = false;
		return true;
	}
	return false;
}

enum tcx_status solution_set(struct solution *s, const char *name, json_t *value,
			     struct tcx_error *err)
{
	const struct param_def *p = find_param(name);
	char *field;
	char *text;
	enum tcx_status st;

	if (!p) {
		char hint[96];

		if (param_lookup(name) == PARAM_IGNORED)
			return TCX_OK;
		return tcx_fail(err, TCX_EINVAL, "unknown solution parameter '%s'%s", name,
				param_hint(name, hint, sizeof(hint)));
	}
	field = (char *)s + p->offset;
	switch (p->type) {
	case PT_INT: {
		int v;

		if (!json_to_int(value, &v))
			goto bad;
		if (v < p->lo || v > p->hi)
			goto range;
		*(int *)field = v;
		if (strcmp(p->name, "GroupShape") == 0 || strcmp(p->name, "WorkGroupShape") == 0)
			s->v2_group_shape_set = true;
		if (strcmp(p->name, "ThreadTileShape") == 0)
			s->v2_tt_shape_set = true;
		return TCX_OK;
	}
	case PT_BOOL:
		if (!json_to_bool(value, (bool *)field))
			goto bad;
		return TCX_OK;
	case PT_EDGE:
		if (json_is_string(value)) {
			const char *v = json_string_value(value);

			/* v2.4 spelled ShiftPtr "Shift" */
			for (int k = 0; k < 3; k++)
				if (strcasecmp(v, edge_names[k]) == 0 ||
				    (k == EDGE_SHIFTPTR && strcasecmp(v, "Shift") == 0)) {
					*(enum edge_type *)field = (enum edge_type)k;
					return TCX_OK;
				}
		}
		goto bad;
	case PT_NAME: {
		const char *v = json_is_string(value) ? json_string_value(value) : NULL;
		size_t n = v ? strlen(v) : 0;

		/* an index name as the notation takes it; "" is automatic */
		if (!v || n >= TCX_INDEX_NAME_MAX)
			goto bad;
		for (size_t k = 0; k < n; k++)
			if (!isalnum((unsigned char)v[k]) && v[k] != '_')
				goto bad;
		memcpy(field, v, n + 1);
		return TCX_OK;
	}
	case PT_INTS: {
		int tmp[8];

		if (!json_is_array(value) || (int)json_array_size(value) != p->count) {
			/* MatrixInstruction may be given as [] or 0 for none */
			if (strcmp(p->name, "MatrixInstruction") == 0 &&
			    ((json_is_array(value) && json_array_size(value) == 0) ||
			     (json_is_integer(value) && json_integer_value(value) == 0))) {
				memset(field, 0, sizeof(int) * (size_t)p->count);
				return TCX_OK;
			}
			goto bad;
		}
		for (int k = 0; k < p->count; k++) {
			if (!json_to_int(json_array_get(value, (size_t)k), &tmp[k]))
				goto bad;
			if (tmp[k] < p->lo || tmp[k] > p->hi)
				goto range;
		}
		memcpy(field, tmp, sizeof(int) * (size_t)p->count);
		return TCX_OK;
	}
	}
bad:
	text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
	st = tcx_fail(err, TCX_EINVAL, "bad value %s for solution parameter '%s'%s",
		      text ? text : "?", p->name,
		      p->type == PT_INTS   ? (p->count == 2   ? " (expected [a, b])"
					      : p->count == 3 ? " (expected [a, b, c])"
							      : " (expected a list)")
		      : p->type == PT_BOOL ? " (expected True or False)"
		      : p->type == PT_EDGE ? " (expected Branch, ShiftPtr or None)"
		      : p->type == PT_NAME ? " (expected an index name)"
					   : " (expected a whole number)");
	free(text);
	return st;
range:
	return tcx_fail(err, TCX_EINVAL, "value of solution parameter '%s' out of range %d..%d",
			p->name, p->lo, p->hi);
}

/* A value from --params text: JSON, or Tensile's True/False, or a word. */
static json_t *value_from_text(const char *t)
{
	json_t *v;
	json_error_t je;
	char *fixed = strdup(t), *p;

	if (!fixed)
		return NULL;
	/* Tensile's spelling of booleans, inside lists too */
	for (p = fixed; (p = strstr(p, "True")); p += 4)
		memcpy(p, "true", 4);
	for (p = fixed; (p = strstr(p, "False")); p += 5)
		memcpy(p, "false", 5);
	v = json_loads(fixed, JSON_DECODE_ANY, &je);
	free(fixed);
	if (!v)
		v = json_string(t);
	return v;
}

enum tcx_status solution_parse(struct solution *s, const char *text, struct tcx_error *err)
{
	const char *p = text;

	while (*p) {
		const char *eq, *end;
		char name[64], value[256];
		int depth = 0;
		json_t *v;
		enum tcx_status st;

		while (*p == ' ' || *p == ',' || *p == ';')
			p++;
		if (!*p)
			break;
		eq = strchr(p, '=');
		if (!eq || (size_t)(eq - p) >= sizeof(name))
			return tcx_fail(err, TCX_EPARSE,
					"cannot parse parameters '%s': expected NAME=VALUE", text);
		for (end = eq + 1; *end; end++) {
			if (*end == '[')
				depth++;
			else if (*end == ']')
				depth--;
			else if ((*end == ',' || *end == ';') && depth == 0)
				break;
		}
		if (depth != 0)
			return tcx_fail(err, TCX_EPARSE,
					"cannot parse parameters '%s': unbalanced brackets", text);
		memcpy(name, p, (size_t)(eq - p));
		name[eq - p] = '\0';
		while (name[0] && name[strlen(name) - 1] == ' ')
			name[strlen(name) - 1] = '\0';
		if ((size_t)(end - eq - 1) >= sizeof(value))
			return tcx_fail(err, TCX_EPARSE, "value of '%s' is too long", name);
		memcpy(value, eq + 1, (size_t)(end - eq - 1));
		value[end - eq - 1] = '\0';
		v = value_from_text(value);
		if (!v)
			return tcx_fail(err, TCX_ENOMEM, "out of memory");
		st = solution_set(s, name, v, err);
		json_decref(v);
		if (st)
			return st;
		p = end;
	}
	return solution_finalize(s, err);
}

static int isqrt_exact(int n)
{
	int r = (int)lround(sqrt((double)n));

	return r * r == n ? r : -1;
}

/* v2.4: n elements shaped by s: 0 square, s > 0 side1 = side0 * s, s < 0
 * mirrored.  Returns false when n does not split that way. */
static bool v2_shape(int n, int shape, int *side0, int *side1)
{
	int a;

	if (shape == 0) {
		a = isqrt_exact(n);
		if (a < 0)
			return false;
		*side0 = *side1 = a;
		return true;
	}
	if (n % abs(shape))
		return false;
	a = isqrt_exact(n / abs(shape));
	if (a < 0)
		return false;
	if (shape > 0) {
		*side0 = a;
		*side1 = a * shape;
	} else {
		*side1 = a;
		*side0 = a * -shape;
	}
	return true;
}

enum tcx_status solution_finalize(struct solution *s, struct tcx_error *err)
{
	int lsu = s->v2_split_u ? s->v2_split_u : s->wg[2];

	if (s->v2_num_threads) {
		int sub = s->v2_num_threads / lsu;

		if (sub * lsu != s->v2_num_threads ||
		    !v2_shape(sub, s->v2_group_shape, &s->wg[0], &s->wg[1]))
			return tcx_fail(err, TCX_EREJECT,
					"NumThreads %d with SplitU %d and GroupShape %d does not make "
					"a work-group",
					s->v2_num_threads, lsu, s->v2_group_shape);
		s->wg[2] = lsu;
	} else if (s->v2_wg_edge) {
		/* v2.0: an edge and a shape (0 square) */
		int e = s->v2_wg_edge, sh = s->v2_group_shape;

		s->wg[0] = sh < 0 ? e * -sh : e;
		s->wg[1] = sh > 0 ? e * sh : e;
		s->wg[2] = lsu;
	} else if (s->v2_split_u) {
		s->wg[2] = s->v2_split_u;
	}
	if (s->v2_tt_elems) {
		if (!v2_shape(s->v2_tt_elems, s->v2_tt_shape, &s->tt[0], &s->tt[1]))
			return tcx_fail(err, TCX_EREJECT,
					"ThreadTileNumElements %d with ThreadTileShape %d does not "
					"make a thread tile",
					s->v2_tt_elems, s->v2_tt_shape);
	} else if (s->v2_tt_edge) {
		int e = s->v2_tt_edge, sh = s->v2_tt_shape;

		s->tt[0] = sh < 0 ? e * -sh : e;
		s->tt[1] = sh > 0 ? e * sh : e;
	}
	if (s->v2_loop_unroll)
		s->depth_u = s->v2_loop_unroll * s->wg[2];
	s->v2_num_threads = s->v2_group_shape = s->v2_tt_elems = s->v2_tt_shape = 0;
	s->v2_split_u = s->v2_wg_edge = s->v2_tt_edge = s->v2_loop_unroll = 0;
	s->v2_group_shape_set = s->v2_tt_shape_set = false;
	return TCX_OK;
}

json_t *solution_to_json(const struct solution *s)
{
	json_t *o = json_object();

	for (size_t k = 0; k < ARRAY_SIZE(params); k++) {
		const struct param_def *p = &params[k];
		const char *field = (const char *)s + p->offset;

		if (!p->keyed)
			continue;
		/* tcx's later switches appear only when on, so that the keys
		 * of solutions written before them stay as they were */
		if ((strcmp(p->name, "TestSkipLastU") == 0 && !s->test_skip_last_u) ||
		    (strcmp(p->name, "TF32x3") == 0 && !s->tf32x3) ||
		    (strcmp(p->name, "PackFreeIndices") == 0 && !s->pack_free) ||
		    (p->type == PT_NAME && !*field))
			continue;
		switch (p->type) {
		case PT_INT:
			json_object_set_new(o, p->name, json_integer(*(const int *)field));
			break;
		case PT_BOOL:
			json_object_set_new(o, p->name, json_boolean(*(const bool *)field));
			break;
		case PT_EDGE:
			json_object_set_new(o, p->name,
					    json_string(edge_names[*(const enum edge_type *)field]));
			break;
		case PT_NAME:
			json_object_set_new(o, p->name, json_string(field));
			break;
		case PT_INTS: {
			json_t *a = json_array();

			for (int i = 0; i < p->count; i++)
				json_array_append_new(a, json_integer(((const int *)field)[i]));
			json_object_set_new(o, p->name, a);
			break;
		}
		}
	}
	return o;
}

enum tcx_status solution_from_json(struct solution *s, json_t *obj, struct tcx_error *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return tcx_fail(err, TCX_EINVAL, "a solution must be a mapping of parameters");
	solution_default(s);
	json_object_foreach(obj, key, v)
	{
		enum tcx_status st;

		if (!find_param(key))
			continue; /* Tensile's derived keys and ignored parameters */
		st = solution_set(s, key, v, err);
		if (st)
			return st;
	}
	return solution_finalize(s, err);
}

void solution_key(const struct solution *s, char *buf, size_t len)
{
	json_t *o = solution_to_json(s);
	char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);

	snprintf(buf, len, "%s", t ? t : "");
	free(t);
	json_decref(o);
}

void solution_store_key(const struct tcx_contraction *c, const struct solution *s, char *buf,
			size_t len)
{
	struct solution x = *s;
	char *names[3] = { x.tile_index[0], x.tile_index[1], x.unroll_index };
	int tid[TCX_MAX_INDICES];

	model_tensile_ids(c, NULL, tid);
	for (int k = 0; k < 3; k++) {
		int id = names[k][0] ? contraction_find(c, names[k]) : -1;

		if (id >= 0)
			snprintf(names[k], TCX_INDEX_NAME_MAX, "%c", model_tensile_char(tid[id]));
	}
	solution_key(&x, buf, len);
}

void solution_name(const struct solution *s, char *buf, size_t len)
{
	static const char edge_letter[] = { 'B', 'S', 'N' };

	char occ[16] = "", mi[56] = "", roles[64] = "";

	if (s->occupancy)
		snprintf(occ, sizeof(occ), "_OCC%d", s->occupancy);
	if (s->mi[0])
		snprintf(mi, sizeof(mi), "_MI%dx%dx%dx%d%s", s->mi[0], s->mi[1], s->mi[2],
			 s->mi[3], s->tf32x3 ? "_TF32X3" : "");
	if (s->tile_index[0][0] || s->tile_index[1][0] || s->unroll_index[0])
		snprintf(roles, sizeof(roles), "_I%s.%s.%s", s->tile_index[0][0] ? s->tile_index[0] : "*",
			 s->tile_index[1][0] ? s->tile_index[1] : "*",
			 s->unroll_index[0] ? s->unroll_index : "*");
	snprintf(buf, len,
		 "MT%dx%dx%d_WG%dx%dx%d_TT%dx%d_VW%d_GSU%d_PGR%d_PLR%d_E%c_WGM%d_NLC%dx%d_LT%d%s%s%s%s%s%s%s",
		 s->wg[0] * s->tt[0], s->wg[1] * s->tt[1], s->depth_u, s->wg[0], s->wg[1], s->wg[2],
		 s->tt[0], s->tt[1], s->vw, s->gsu, s->pgr, s->plr, edge_letter[s->edge], s->wgm,
		 s->nlc[0], s->nlc[1], s->loop_tail, s->use_lds ? "" : "_DIRECT",
		 s->const_sizes ? "_CS" : "", s->lds_pad ? "_PAD" : "", occ, mi, s->pack_free ? "_PK" : "", roles);
}

bool solution_equal(const struct solution *a, const struct solution *b)
{
	char ka[1024], kb[1024];

	solution_key(a, ka, sizeof(ka));
	solution_key(b, kb, sizeof(kb));
	return strcmp(ka, kb) == 0;
}
