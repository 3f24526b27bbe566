/* gpup2p — the part of the CUDA driver API that gpup2p calls (not installed). libcuda is loaded with
 * dlopen at run time, so the build needs only these declarations, not the CUDA toolkit's cuda.h.
 * Names are cuda.h's with a gp_/GP_ prefix (GP_CUDA_SUCCESS is cuda.h's CUDA_SUCCESS); struct tags
 * are cuda.h's own, so the handle types are the very same pointer types. Linux ABI (CUDAAPI is empty
 * there; __LP64__: CUdeviceptr is 64 bits). tests/fakecuda/abi_check.c compiles this header against
 * a real cuda.h, when one is found, and fails on any value, size or signature that differs. */
#ifndef GPUP2P_CUDA_DRV_H
#define GPUP2P_CUDA_DRV_H

#include <stddef.h>
#include <stdint.h>

/* Handles and scalars (cuda.h: CUdevice, CUdeviceptr, CUcontext, CUstream, CUevent, CUmodule, CUfunction,
 * cuuint32_t). */
typedef int gp_cu_device;
typedef unsigned long long gp_cu_dptr;
typedef struct CUctx_st *gp_cu_context;
typedef struct CUstream_st *gp_cu_stream;
typedef struct CUevent_st *gp_cu_event;
typedef struct CUmod_st *gp_cu_module;
typedef struct CUfunc_st *gp_cu_function;
typedef uint32_t gp_cu_u32;

/* CUresult values gpup2p and its test double name: X(cuda.h name, value) makes GP_<name>. */
#define GP_CU_RESULTS(X) \
	X(CUDA_SUCCESS, 0) \
	X(CUDA_ERROR_INVALID_VALUE, 1) \
	X(CUDA_ERROR_OUT_OF_MEMORY, 2) \
	X(CUDA_ERROR_NOT_INITIALIZED, 3) \
	X(CUDA_ERROR_NO_DEVICE, 100) \
	X(CUDA_ERROR_INVALID_DEVICE, 101) \
	X(CUDA_ERROR_INVALID_CONTEXT, 201) \
	X(CUDA_ERROR_INVALID_HANDLE, 400) \
	X(CUDA_ERROR_NOT_FOUND, 500) \
	X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704) \
	X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 705) \
	X(CUDA_ERROR_NOT_SUPPORTED, 801) \
	X(CUDA_ERROR_UNKNOWN, 999)

/* Flags and enum values passed to the calls below: X(cuda.h name, value) makes GP_<name>. */
#define GP_CU_FLAGS(X) \
	X(CU_MEMHOSTALLOC_PORTABLE, 0x01) \
	X(CU_MEMHOSTALLOC_DEVICEMAP, 0x02) \
	X(CU_STREAM_NON_BLOCKING, 0x1) \
	X(CU_STREAM_WAIT_VALUE_GEQ, 0x0) \
	X(CU_EVENT_DEFAULT, 0x0)

/* CUmemRangeHandleType: X(cuda.h name, value) makes GP_<name>. */
#define GP_CU_RANGE_TYPES(X) \
	X(CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0x1) \
	X(CU_MEM_RANGE_HANDLE_TYPE_MAX, 0x7fffffff)

/* CUdevice_attribute values gpup2p reads: X(cuda.h name, value) makes GP_<name>. */
#define GP_CU_DEV_ATTRS(X) \
	X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16) \
	X(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38) \
	X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 39) \
	X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75) \
	X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76) \
	X(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, 116) \
	X(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 124)

/* CUfunction_attribute values gpup2p sets: X(cuda.h name, value) makes GP_<name>. */
#define GP_CU_FUNC_ATTRS(X) \
	X(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)

#define GP_CU_ENUMERATOR_(name, value) GP_##name = value,
/* CUresult (cuda.h: enum cudaError_enum; no negative value, so the same size and signedness). */
typedef enum gp_cu_result { GP_CU_RESULTS(GP_CU_ENUMERATOR_) } gp_cu_result;
enum { GP_CU_FLAGS(GP_CU_ENUMERATOR_) };
typedef enum gp_cu_mem_range_handle_type { GP_CU_RANGE_TYPES(GP_CU_ENUMERATOR_) } gp_cu_mem_range_handle_type;
typedef enum gp_cu_device_attribute { GP_CU_DEV_ATTRS(GP_CU_ENUMERATOR_) } gp_cu_device_attribute;
typedef enum gp_cu_function_attribute { GP_CU_FUNC_ATTRS(GP_CU_ENUMERATOR_) } gp_cu_function_attribute;
#undef GP_CU_ENUMERATOR_

/* The entry points, X(API name, exported symbol, parameters), each returning gp_cu_result. The symbol
 * is the version cuda.h binds the API name to (cuMemAlloc is cuMemAlloc_v2 since CUDA 3.2). */
#define GP_CU_FUNCS(X) \
	X(cuInit, cuInit, (unsigned)) \
	X(cuDriverGetVersion, cuDriverGetVersion, (int *)) \
	X(cuGetErrorName, cuGetErrorName, (gp_cu_result, const char **)) \
	X(cuDeviceGetCount, cuDeviceGetCount, (int *)) \
	X(cuDeviceGet, cuDeviceGet, (gp_cu_device *, int)) \
	X(cuDeviceGetName, cuDeviceGetName, (char *, int, gp_cu_device)) \
	X(cuDeviceGetPCIBusId, cuDeviceGetPCIBusId, (char *, int, gp_cu_device)) \
	X(cuDeviceCanAccessPeer, cuDeviceCanAccessPeer, (int *, gp_cu_device, gp_cu_device)) \
	X(cuDeviceGetAttribute, cuDeviceGetAttribute, (int *, gp_cu_device_attribute, gp_cu_device)) \
	X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, (gp_cu_context *, gp_cu_device)) \
	X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, (gp_cu_device)) \
	X(cuCtxSetCurrent, cuCtxSetCurrent, (gp_cu_context)) \
	X(cuCtxEnablePeerAccess, cuCtxEnablePeerAccess, (gp_cu_context, unsigned)) \
	X(cuCtxDisablePeerAccess, cuCtxDisablePeerAccess, (gp_cu_context)) \
	X(cuMemAlloc, cuMemAlloc_v2, (gp_cu_dptr *, size_t)) \
	X(cuMemFree, cuMemFree_v2, (gp_cu_dptr)) \
	X(cuMemHostAlloc, cuMemHostAlloc, (void **, size_t, unsigned)) \
	X(cuMemFreeHost, cuMemFreeHost, (void *)) \
	X(cuMemHostGetDevicePointer, cuMemHostGetDevicePointer_v2, (gp_cu_dptr *, void *, unsigned)) \
	X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, (gp_cu_dptr, const void *, size_t, gp_cu_stream)) \
	X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, (void *, gp_cu_dptr, size_t, gp_cu_stream)) \
	X(cuMemcpyPeerAsync, cuMemcpyPeerAsync, (gp_cu_dptr, gp_cu_context, gp_cu_dptr, gp_cu_context, size_t, \
						 gp_cu_stream)) \
	X(cuStreamCreate, cuStreamCreate, (gp_cu_stream *, unsigned)) \
	X(cuStreamDestroy, cuStreamDestroy_v2, (gp_cu_stream)) \
	X(cuStreamSynchronize, cuStreamSynchronize, (gp_cu_stream)) \
	X(cuMemsetD32Async, cuMemsetD32Async, (gp_cu_dptr, unsigned, size_t, gp_cu_stream)) \
	X(cuStreamWaitValue32, cuStreamWaitValue32_v2, (gp_cu_stream, gp_cu_dptr, gp_cu_u32, unsigned)) \
	X(cuStreamWaitEvent, cuStreamWaitEvent, (gp_cu_stream, gp_cu_event, unsigned)) \
	X(cuEventCreate, cuEventCreate, (gp_cu_event *, unsigned)) \
	X(cuEventDestroy, cuEventDestroy_v2, (gp_cu_event)) \
	X(cuEventRecord, cuEventRecord, (gp_cu_event, gp_cu_stream)) \
	X(cuEventSynchronize, cuEventSynchronize, (gp_cu_event)) \
	X(cuEventElapsedTime, cuEventElapsedTime_v2, (float *, gp_cu_event, gp_cu_event)) \
	X(cuModuleLoadData, cuModuleLoadData, (gp_cu_module *, const void *)) \
	X(cuModuleUnload, cuModuleUnload, (gp_cu_module)) \
	X(cuModuleGetFunction, cuModuleGetFunction, (gp_cu_function *, gp_cu_module, const char *)) \
	X(cuFuncSetAttribute, cuFuncSetAttribute, (gp_cu_function, gp_cu_function_attribute, int)) \
	X(cuLaunchKernel, cuLaunchKernel, (gp_cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
					   unsigned, gp_cu_stream, void **, void **))

/* Entry points gpup2p does without (older drivers): CUDA 11.7+. */
#define GP_CU_FUNCS_OPTIONAL(X) \
	X(cuMemGetHandleForAddressRange, cuMemGetHandleForAddressRange, \
	  (void *, gp_cu_dptr, size_t, gp_cu_mem_range_handle_type, unsigned long long))

/* Drivers before 12.8 export cuEventElapsedTime only under its first name: gpup2p falls back to it. */
#define GP_CU_ELAPSED_V1 "cuEventElapsedTime"

/* libcore/cuda's own, not the driver's: the bound entry points and how a failed call is reported,
 * shared by cuda.c (which binds them) and stream.c. */
struct gp_err;

#define GP_CU_FIELD_(f, sym, args) gp_cu_result (*p_##f) args;
/* The driver API bound from libcuda, gp_cu.p_<API name>; an optional entry point is NULL when absent. */
struct gp_cu_api {
	GP_CU_FUNCS(GP_CU_FIELD_)
	GP_CU_FUNCS_OPTIONAL(GP_CU_FIELD_)
};
#undef GP_CU_FIELD_
extern struct gp_cu_api gp_cu;

/* Fill e with the failed call and its CUDA error name (GP_E_FAIL, EIO); returns -EIO. */
int gp_cu_fail(struct gp_err *e, const char *call, gp_cu_result r);

/* Call gp_cu.p_<call> args; on an error, return gp_cu_fail(e, ...) from the calling function. */
#define CU(call, args) do { \
	gp_cu_result r_ = gp_cu.p_##call args; \
	if (r_ != GP_CUDA_SUCCESS) \
		return gp_cu_fail(e, #call, r_); \
} while (0)

#endif
