/* The OpenCL plugin's internals: the ICD loader's functions (dlopened, never
 * linked), the per-context state, the launch helpers and every slot.
 *
 * Files (the Vulkan plugin has the same): plugin.c (the table, the entry),
 * probe.c, device.c (loader, device choice, open/close), program.c (the
 * embedded program and its kernels), memory.c (buffers), submit.c (kernel
 * arguments and launches), ops_common.c (views, per-dtype kernel tables,
 * index checks) and ops_<family>.c (operators, the CPU framework's
 * families). The kernels are listed in kernels/opencl/kernels.list.
 *
 * Programs are never built from source: the kernels of kernels/opencl/ are
 * compiled at build time to SPIR-V and to SPIR 1.2 bitcode, linked into one
 * module each and embedded (ocl_programs.c, generated). A device takes the
 * SPIR-V through clCreateProgramWithIL when it reports an IL version, the
 * bitcode through clCreateProgramWithBinary + "-x spir" when it has
 * cl_khr_spir, and is refused otherwise. SPEC/OPENCL.md has the rest. */
#ifndef GLLMK_OCL_PLUGIN_H
#define GLLMK_OCL_PLUGIN_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#include "gllmk_plugin.h"
#include "ocl_kernel_list.h" /* generated from kernels/opencl/kernels.list */

#define OCL_LOADER "libOpenCL.so.1"

/* ICD loader entry points the plugin uses; X(name, required). */
#define OCL_FUNCS(X)                           \
	X(clGetPlatformIDs, 1)                 \
	X(clGetPlatformInfo, 1)                \
	X(clGetDeviceIDs, 1)                   \
	X(clGetDeviceInfo, 1)                  \
	X(clCreateContext, 1)                  \
	X(clReleaseContext, 1)                 \
	X(clCreateCommandQueue, 1)             \
	X(clReleaseCommandQueue, 1)            \
	X(clCreateProgramWithBinary, 1)        \
	X(clCreateProgramWithIL, 0)            \
	X(clBuildProgram, 1)                   \
	X(clGetProgramBuildInfo, 1)            \
	X(clReleaseProgram, 1)                 \
	X(clCreateKernel, 1)                   \
	X(clReleaseKernel, 1)                  \
	X(clSetKernelArg, 1)                   \
	X(clEnqueueNDRangeKernel, 1)           \
	X(clCreateBuffer, 1)                   \
	X(clReleaseMemObject, 1)               \
	X(clEnqueueWriteBuffer, 1)             \
	X(clEnqueueReadBuffer, 1)              \
	X(clEnqueueCopyBuffer, 1)              \
	X(clFinish, 1)                         \
	X(clFlush, 1)

struct ocl_api {
	void *dl;
#define OCL_API_MEMBER(name, req) __typeof__(name) *name;
	OCL_FUNCS(OCL_API_MEMBER)
#undef OCL_API_MEMBER
};

/* device.c: loader and device choice */
int ocl_api_open(struct ocl_api *api, char *reason, size_t reason_len);
void ocl_api_close(struct ocl_api *api);

enum ocl_program_path {
	OCL_PATH_NONE = 0,
	OCL_PATH_SPIRV,  /* clCreateProgramWithIL */
	OCL_PATH_SPIR12, /* clCreateProgramWithBinary, "-x spir -spir-std=1.2" */
};

struct ocl_device {
	cl_platform_id platform;
	cl_device_id id;
	cl_device_type type;
	enum ocl_program_path path;
	cl_ulong memory;
	char name[96];
	char vendor[48];
	char version[96];
};

/* The device open() uses: the first GPU or accelerator that takes one of
 * the embedded programs, else the first such CPU device. 0 and a reason
 * when none can. */
int ocl_choose_device(const struct ocl_api *api, struct ocl_device *dev, char *reason, size_t reason_len);
int ocl_device_is_cpu(const struct ocl_device *dev);
const char *ocl_path_name(enum ocl_program_path path);
void ocl_describe(const struct ocl_device *dev, char *out, size_t len);
const char *ocl_error_name(cl_int err);

/* ------------------------------------------------------------- state */

/* Every kernel, OCL_KERNEL_<NAME> for kernels.list's `name`. */
enum ocl_kernel {
#define OCL_KERNEL_ENUM(ID, name) OCL_KERNEL_##ID,
	OCL_KERNELS(OCL_KERNEL_ENUM)
#undef OCL_KERNEL_ENUM
	OCL_KERNEL_COUNT
};

struct ocl_ctx {
	const gllmk_host *host;
	struct ocl_api api;
	struct ocl_device dev;
	cl_context ctx;
	cl_command_queue queue;
	cl_program program;
	cl_kernel kernels[OCL_KERNEL_COUNT];
	/* Index data a kernel checks itself (matmul_id's expert ids, get_rows'
	 * ids, kv_store's slots: reading them back would block the queue):
	 * OCL_STATUS_WORDS i32, [0] the op (OCL_STATUS_*) of the first offence,
	 * then [1] row, [2] slot, [3] value, [4] limit.
	 * status_armed: a kernel that may raise it was enqueued since the last
	 * look; ocl_sync and ocl_buffer_read then read it (SPEC/OPENCL.md). */
	cl_mem status;
	int status_armed;
};
#define OCL_STATUS_WORDS 8
/* the op in status word 0: kernels/opencl/common.h's STATUS_* */
#define OCL_STATUS_EXPERT_IDS 1
#define OCL_STATUS_GET_ROWS 2
#define OCL_STATUS_KV_SLOTS 3

/* program.c */
cl_int ocl_program_load(struct ocl_ctx *s, char *reason, size_t reason_len);
void ocl_program_release(struct ocl_ctx *s);

/* ------------------------------------------------------ launch helpers */

/* Kernel arguments in order; the first failure is kept and reported by
 * ocl_launch, so op code reads as a list of arguments. */
struct ocl_args {
	struct ocl_ctx *s;
	cl_kernel k;
	cl_uint n;
	cl_int err;
	const char *what; /* the clSetKernelArg that failed */
};

/* ------------------------------------------------------ ops helpers */
/* ops_common.c */

/* A tensor folded to three outer dims (d[0..2]) and its row length d[3];
 * strides of size-1 dims are zeroed, which also makes a lower-rank tensor
 * broadcast against a higher-rank one aligned at the innermost dim. */
struct ocl_view {
	cl_mem mem;
	uint64_t off;
	int64_t d[4];
	int64_t s[3];
};

struct ocl_view ocl_view(const gllmk_tensor *t);
int64_t ocl_rows(const struct ocl_view *v);

/* The kernels of each weight dtype and of each K/V cache dtype, indexed by
 * dtype: built from abi/gllmk_dtypes.def's WEIGHT and KV columns
 * (ops_common.c); kernels/opencl/kernels.list has a variant of each family
 * for every such dtype, named after its enum. */
struct ocl_weight_kernels {
	enum ocl_kernel dequant, get_rows, matmul, matvec, matvec_id;
};
struct ocl_kv_kernels {
	enum ocl_kernel attention, kv_store;
};
extern const struct ocl_weight_kernels ocl_weight_kernels[GLLMK_DTYPE_LIMIT];
extern const struct ocl_kv_kernels ocl_kv_kernels[GLLMK_DTYPE_LIMIT];

/* ------------------------------------------------------ submit.c */

struct ocl_args ocl_args(struct ocl_ctx *s, enum ocl_kernel k);
void ocl_arg_mem(struct ocl_args *a, cl_mem m);
void ocl_arg_long(struct ocl_args *a, int64_t v);
void ocl_arg_int(struct ocl_args *a, int32_t v);
void ocl_arg_float(struct ocl_args *a, float v);
/* mem, offset and the three outer strides: the kernels' TENSOR(t) */
void ocl_arg_tensor(struct ocl_args *a, const struct ocl_view *v);
/* total work-items rounded up to the group size; group 0: the default */
gllmk_status ocl_launch(struct ocl_args *a, const char *op, uint64_t items);
/* one work-group of OCL_WG items per row */
gllmk_status ocl_launch_rows(struct ocl_args *a, const char *op, uint64_t rows);
#define OCL_WG 64

gllmk_status ocl_fail(struct ocl_ctx *s, const char *op, const char *call, cl_int err);
/* Host check of device-held index data (ids, block tables): a blocking
 * read of n i32 at t's first byte, after every earlier op. */
gllmk_status ocl_read_i32(struct ocl_ctx *s, const char *op, const gllmk_tensor *t, int64_t n, int32_t *out);
/* After the queue has finished: GLLMK_E_BOUNDS if a kernel raised the
 * status (and clears it), else OK. Reads it only when armed. */
gllmk_status ocl_check_status(struct ocl_ctx *s);

/* ------------------------------------------------------------- slots */

gllmk_probe_result ocl_probe(gllmk_probe_info *info);
gllmk_status ocl_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len);
void ocl_close(void *st);

gllmk_status ocl_buffer_alloc(void *st, uint64_t size, void **impl);
void ocl_buffer_free(void *st, void *impl);
gllmk_status ocl_buffer_write(void *st, void *impl, uint64_t off, const void *src, uint64_t size);
gllmk_status ocl_buffer_read(void *st, void *impl, uint64_t off, void *dst, uint64_t size);
gllmk_status ocl_buffer_copy(void *st, void *dst, uint64_t dst_off, void *src, uint64_t src_off, uint64_t size);
gllmk_status ocl_sync(void *st);

/* ocl_<op> for every op of GLLMK_OPS (abi/gllmk_plugin.h), with the slot's
 * type: defined in ops_<family>.c, put in the table by plugin.c. */
#define OCL_OP_DECLARE(op, type) __typeof__(*(type)0) ocl_##op;
GLLMK_OPS(OCL_OP_DECLARE)
#undef OCL_OP_DECLARE

static inline cl_mem ocl_mem(const gllmk_tensor *t)
{
	return (cl_mem)t->buf->impl;
}

#endif
