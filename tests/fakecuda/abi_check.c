/* libcore/cuda/drv.h against a real cuda.h (tests/cli/test_cuda_abi.sh compiles this with the toolkit's
 * include directory, when there is one). Every value, size and signature that gpup2p declares must be
 * cuda.h's, or this file does not compile: each _Static_assert names what differs. Also checked: that
 * each API name is bound to the symbol cuda.h maps it to today (cuMemAlloc -> cuMemAlloc_v2), so a new
 * _v3 in a later toolkit is noticed. gcc or clang (__builtin_types_compatible_p, __typeof__). */
#include <stdio.h>

#include <cuda.h>

#include "cuda/drv.h"

#if CUDA_VERSION < 12000
#error "cuda.h older than CUDA 12.0: the check needs a newer toolkit"
#endif
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM) || defined(__CUDA_API_VERSION_INTERNAL)
#error "compile without CUDA_API_PER_THREAD_DEFAULT_STREAM: gpup2p binds the legacy-stream symbols"
#endif

#define SAME_TYPE(a, b) __builtin_types_compatible_p(a, b)

/* Values: GP_<name> == <name>. */
#define CHECK_VALUE(name, v) \
	_Static_assert((long long)GP_##name == (long long)name, "GP_" #name " differs from cuda.h: " #name);
GP_CU_RESULTS(CHECK_VALUE)
GP_CU_FLAGS(CHECK_VALUE)
GP_CU_RANGE_TYPES(CHECK_VALUE)
GP_CU_DEV_ATTRS(CHECK_VALUE)
GP_CU_FUNC_ATTRS(CHECK_VALUE)

/* Scalars and handles are the very same types. */
_Static_assert(SAME_TYPE(gp_cu_device, CUdevice), "gp_cu_device is not CUdevice");
_Static_assert(SAME_TYPE(gp_cu_dptr, CUdeviceptr), "gp_cu_dptr is not CUdeviceptr");
_Static_assert(SAME_TYPE(gp_cu_context, CUcontext), "gp_cu_context is not CUcontext");
_Static_assert(SAME_TYPE(gp_cu_stream, CUstream), "gp_cu_stream is not CUstream");
_Static_assert(SAME_TYPE(gp_cu_event, CUevent), "gp_cu_event is not CUevent");
_Static_assert(SAME_TYPE(gp_cu_u32, cuuint32_t), "gp_cu_u32 is not cuuint32_t");
_Static_assert(SAME_TYPE(gp_cu_module, CUmodule), "gp_cu_module is not CUmodule");
_Static_assert(SAME_TYPE(gp_cu_function, CUfunction), "gp_cu_function is not CUfunction");

/* The enums are different types of the same size, alignment and underlying type (the same ABI): +x
 * promotes an enum to its underlying integer type. */
#define CHECK_ENUM(mine, theirs) \
	_Static_assert(sizeof(mine) == sizeof(theirs), #mine ": size differs from " #theirs); \
	_Static_assert(_Alignof(mine) == _Alignof(theirs), #mine ": alignment differs from " #theirs); \
	_Static_assert(SAME_TYPE(__typeof__(+(mine)0), __typeof__(+(theirs)0)), #mine ": integer type differs from " #theirs);
CHECK_ENUM(gp_cu_result, CUresult)
CHECK_ENUM(gp_cu_mem_range_handle_type, CUmemRangeHandleType)
CHECK_ENUM(gp_cu_device_attribute, CUdevice_attribute)
CHECK_ENUM(gp_cu_function_attribute, CUfunction_attribute)

/* Bound names: CAT(bound_, cuMemAlloc) expands cuda.h's macro first, to bound_cuMemAlloc_v2. */
#if CUDA_VERSION < 12080 /* cuEventElapsedTime_v2 is 12.8's; the first version has the same parameters */
#define cuEventElapsedTime_v2 cuEventElapsedTime
static const char bound_cuEventElapsedTime = 1;
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define BOUND(api, sym, args) static const char bound_##sym = 1;
GP_CU_FUNCS(BOUND)
GP_CU_FUNCS_OPTIONAL(BOUND)

/* Signatures: from here on the enums read as cuda.h's, so that whole function types compare. */
#define gp_cu_result CUresult
#define gp_cu_mem_range_handle_type CUmemRangeHandleType
#define gp_cu_device_attribute CUdevice_attribute
#define gp_cu_function_attribute CUfunction_attribute
#define CHECK_FUNC(api, sym, args) \
	_Static_assert(SAME_TYPE(__typeof__(&sym), CUresult(*) args), #sym ": parameters differ from cuda.h");
GP_CU_FUNCS(CHECK_FUNC)
GP_CU_FUNCS_OPTIONAL(CHECK_FUNC)

#define COUNT(...) + 1
int main(void)
{
#define USE_BOUND(api, sym, args) (void)CAT(bound_, api);
	GP_CU_FUNCS(USE_BOUND)
	GP_CU_FUNCS_OPTIONAL(USE_BOUND)
	printf("CUDA %d: %d values, 12 types, %d entry points\n", CUDA_VERSION,
	       0 GP_CU_RESULTS(COUNT) GP_CU_FLAGS(COUNT) GP_CU_RANGE_TYPES(COUNT) GP_CU_DEV_ATTRS(COUNT) GP_CU_FUNC_ATTRS(COUNT),
	       0 GP_CU_FUNCS(COUNT) GP_CU_FUNCS_OPTIONAL(COUNT));
	return 0;
}
