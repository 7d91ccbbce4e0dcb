/* clerr.h - the names of OpenCL's error codes, as cl.h spells them, and
 * of its devices, for tcx's OpenCL backend (lib/backend/opencl/) and the
 * OpenCL libraries tcx export-lib writes (runtime.c), so that both name a
 * failure and a device alike.  Include it after CL/cl.h.  A template: tcx
 * export-lib copies it unchanged.  C99. */
#ifndef TL_CLERR_H
#define TL_CLERR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVIDIA's queries, spelled out in case an older cl_ext.h lacks them. */
#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#endif
#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#endif

/* The name of OpenCL error code rc; "unknown OpenCL error" for others. */
static const char *tl_cl_error(cl_int rc)
{
#define E(code) { code, #code }
	static const struct {
		cl_int rc;
		const char *name;
	} names[] = {
		E(CL_SUCCESS), E(CL_DEVICE_NOT_FOUND), E(CL_DEVICE_NOT_AVAILABLE),
		E(CL_COMPILER_NOT_AVAILABLE), E(CL_MEM_OBJECT_ALLOCATION_FAILURE),
		E(CL_OUT_OF_RESOURCES), E(CL_OUT_OF_HOST_MEMORY),
		E(CL_PROFILING_INFO_NOT_AVAILABLE), E(CL_MEM_COPY_OVERLAP),
		E(CL_IMAGE_FORMAT_MISMATCH), E(CL_IMAGE_FORMAT_NOT_SUPPORTED),
		E(CL_BUILD_PROGRAM_FAILURE), E(CL_MAP_FAILURE), E(CL_MISALIGNED_SUB_BUFFER_OFFSET),
		E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), E(CL_COMPILE_PROGRAM_FAILURE),
		E(CL_LINKER_NOT_AVAILABLE), E(CL_LINK_PROGRAM_FAILURE),
		E(CL_DEVICE_PARTITION_FAILED), E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE),
		E(CL_INVALID_VALUE), E(CL_INVALID_DEVICE_TYPE), E(CL_INVALID_PLATFORM),
		E(CL_INVALID_DEVICE), E(CL_INVALID_CONTEXT), E(CL_INVALID_QUEUE_PROPERTIES),
		E(CL_INVALID_COMMAND_QUEUE), E(CL_INVALID_HOST_PTR), E(CL_INVALID_MEM_OBJECT),
		E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR), E(CL_INVALID_IMAGE_SIZE),
		E(CL_INVALID_SAMPLER), E(CL_INVALID_BINARY), E(CL_INVALID_BUILD_OPTIONS),
		E(CL_INVALID_PROGRAM), E(CL_INVALID_PROGRAM_EXECUTABLE), E(CL_INVALID_KERNEL_NAME),
		E(CL_INVALID_KERNEL_DEFINITION), E(CL_INVALID_KERNEL), E(CL_INVALID_ARG_INDEX),
		E(CL_INVALID_ARG_VALUE), E(CL_INVALID_ARG_SIZE), E(CL_INVALID_KERNEL_ARGS),
		E(CL_INVALID_WORK_DIMENSION), E(CL_INVALID_WORK_GROUP_SIZE),
		E(CL_INVALID_WORK_ITEM_SIZE), E(CL_INVALID_GLOBAL_OFFSET),
		E(CL_INVALID_EVENT_WAIT_LIST), E(CL_INVALID_EVENT), E(CL_INVALID_OPERATION),
		E(CL_INVALID_GL_OBJECT), E(CL_INVALID_BUFFER_SIZE), E(CL_INVALID_MIP_LEVEL),
		E(CL_INVALID_GLOBAL_WORK_SIZE), E(CL_INVALID_PROPERTY),
		E(CL_INVALID_IMAGE_DESCRIPTOR), E(CL_INVALID_COMPILER_OPTIONS),
		E(CL_INVALID_LINKER_OPTIONS), E(CL_INVALID_DEVICE_PARTITION_COUNT),
#ifdef CL_PLATFORM_NOT_FOUND_KHR
		E(CL_PLATFORM_NOT_FOUND_KHR),
#endif
	};
#undef E

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (names[k].rc == rc)
			return names[k].name;
	return "unknown OpenCL error";
}

/* A heap copy of the string-valued query `what` of device d ("" when the
 * runtime does not say; NULL only when out of memory). */
static char *tl_cl_str(cl_device_id d, cl_device_info what)
{
	size_t n = 0;
	char *s;

	if (clGetDeviceInfo(d, what, 0, NULL, &n) != CL_SUCCESS)
		n = 0;
	s = (char *)malloc(n + 1);
	if (!s)
		return NULL;
	if (n && clGetDeviceInfo(d, what, n, s, NULL) != CL_SUCCESS)
		n = 0;
	s[n] = '\0';
	return s;
}

/* The query `what` of device d into buf ("" when the runtime does not say). */
static void tl_cl_str_into(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
	char *s = tl_cl_str(d, what);

	snprintf(buf, len, "%s", s ? s : "");
	free(s);
}

/* True when the space-separated list `exts` names `ext`. */
static int tl_cl_has_ext(const char *exts, const char *ext)
{
	size_t n = strlen(ext);
	const char *p;

	for (p = exts; p && (p = strstr(p, ext)) != NULL; p += n)
		if ((p == exts || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

/* Collapses runs of spaces and trims the ends, in place: "a  b " -> "a b". */
static void tl_squeeze(char *s)
{
	char *w = s;
	const char *r;

	for (r = s; *r; r++)
		if (*r != ' ' || (w > s && w[-1] != ' '))
			*w++ = *r;
	while (w > s && w[-1] == ' ')
		w--;
	*w = '\0';
}

/* Names device d as tcx does, by which a library picks the logic tuned for
 * it: its name and vendor, spaces squeezed, and the architecture kernels
 * are compiled for into arch. */
static void tl_cl_ident(cl_device_id d, char *name, size_t nlen, char *vendor, size_t vlen,
			char *arch, size_t alen)
{
	char *exts = tl_cl_str(d, CL_DEVICE_EXTENSIONS), *ver = tl_cl_str(d, CL_DEVICE_VERSION);
	const char *hstr = ver ? strstr(ver, "HSTR: ") : NULL;

	tl_cl_str_into(d, CL_DEVICE_NAME, name, nlen);
	tl_squeeze(name);
	tl_cl_str_into(d, CL_DEVICE_VENDOR, vendor, vlen);
	tl_squeeze(vendor);
	if (tl_cl_has_ext(exts, "cl_nv_device_attribute_query")) {
		cl_uint major = 0, minor = 0;

		clGetDeviceInfo(d, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof(major), &major,
				NULL);
		clGetDeviceInfo(d, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof(minor), &minor,
				NULL);
		snprintf(arch, alen, "sm_%u%u", (unsigned)major, (unsigned)minor);
	} else if (hstr) {
		/* PoCL: "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512" */
		snprintf(arch, alen, "%s", hstr + strlen("HSTR: "));
		arch[strcspn(arch, " ")] = '\0';
	} else {
		/* AMD names devices "gfx90a:sramecc+:xnack-"; others by model */
		snprintf(arch, alen, "%s", name);
		if (strncmp(arch, "gfx", 3) == 0)
			arch[strcspn(arch, ":")] = '\0';
	}
	free(exts);
	free(ver);
}

#endif /* TL_CLERR_H */
