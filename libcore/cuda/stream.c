/* gpup2p — CUDA streams, copies, events, kernels and launches, through the driver API cuda.c binds
 * (gp_cu, drv.h). */
#include <errno.h>
#include <stdlib.h>

#include "gpup2p/cuda.h"
#include "cuda/drv.h"

struct gp_cuda_stream {
	gp_cu_stream s;
	int g;
	gp_dptr word;                  /* gp_cuda_stream_word's, 0 until asked for */
};

int gp_cuda_stream_new(struct gp_cuda *c, int g, gp_cuda_stream **s, struct gp_err *e)
{
	struct gp_cuda_stream *n = calloc(1, sizeof(*n));
	gp_cu_result r;

	if (!n)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	if (gp_cuda_use(c, g, e)) {
		free(n);
		return -EIO;
	}
	r = gp_cu.p_cuStreamCreate(&n->s, GP_CU_STREAM_NON_BLOCKING);
	if (r != GP_CUDA_SUCCESS) {
		free(n);
		return gp_cu_fail(e, "cuStreamCreate", r);
	}
	n->g = g;
	*s = n;
	return 0;
}

void gp_cuda_stream_free(struct gp_cuda *c, gp_cuda_stream *s)
{
	if (!s)
		return;
	if (gp_cu.p_cuCtxSetCurrent(c->gpu[s->g].ctx) == GP_CUDA_SUCCESS)
		(void)gp_cu.p_cuStreamDestroy(s->s);
	gp_cuda_free(c, s->g, s->word);
	free(s);
}

int gp_cuda_sync(struct gp_cuda *c, gp_cuda_stream *s, struct gp_err *e)
{
	(void)c;
	CU(cuStreamSynchronize, (s->s));
	return 0;
}

int gp_cuda_h2d(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr dst, const void *src, size_t n, struct gp_err *e)
{
	if (gp_cuda_use(c, s->g, e))
		return -EIO;
	CU(cuMemcpyHtoDAsync, ((gp_cu_dptr)dst, src, n, s->s));
	return 0;
}

int gp_cuda_d2h(struct gp_cuda *c, gp_cuda_stream *s, void *dst, gp_dptr src, size_t n, struct gp_err *e)
{
	if (gp_cuda_use(c, s->g, e))
		return -EIO;
	CU(cuMemcpyDtoHAsync, (dst, (gp_cu_dptr)src, n, s->s));
	return 0;
}

int gp_cuda_d2d(struct gp_cuda *c, gp_cuda_stream *s, int gdst, gp_dptr dst, int gsrc, gp_dptr src, size_t n,
		struct gp_err *e)
{
	if (gp_cuda_use(c, s->g, e))
		return -EIO;
	CU(cuMemcpyPeerAsync, ((gp_cu_dptr)dst, c->gpu[gdst].ctx, (gp_cu_dptr)src, c->gpu[gsrc].ctx, n, s->s));
	return 0;
}

int gp_cuda_gate(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr flag, struct gp_err *e)
{
	if (gp_cuda_use(c, s->g, e))
		return -EIO;
	CU(cuStreamWaitValue32, (s->s, (gp_cu_dptr)flag, 1, GP_CU_STREAM_WAIT_VALUE_GEQ));
	return 0;
}

int gp_cuda_mark(struct gp_cuda *c, gp_cuda_stream *s, void **ev, struct gp_err *e)
{
	if (gp_cuda_use(c, s->g, e))
		return -EIO;
	if (!*ev)
		CU(cuEventCreate, ((gp_cu_event *)ev, GP_CU_EVENT_DEFAULT));
	CU(cuEventRecord, ((gp_cu_event)*ev, s->s));
	return 0;
}

int gp_cuda_wait(struct gp_cuda *c, gp_cuda_stream *s, void *ev, struct gp_err *e)
{
	if (gp_cuda_use(c, s->g, e))
		return -EIO;
	CU(cuStreamWaitEvent, (s->s, (gp_cu_event)ev, 0));
	return 0;
}

int gp_cuda_elapsed(struct gp_cuda *c, void *a, void *b, float *ms, struct gp_err *e)
{
	(void)c;
	CU(cuEventSynchronize, ((gp_cu_event)b));
	CU(cuEventElapsedTime, (ms, (gp_cu_event)a, (gp_cu_event)b));
	return 0;
}

int gp_cuda_kernel(struct gp_cuda *c, int g, const char *ptx, const char *name, void **fn, struct gp_err *e)
{
	struct gp_cuda_gpu *u = &c->gpu[g];
	gp_cu_function f;
	int k = 0;

	if (gp_cuda_use(c, g, e))
		return -EIO;
	while (k < GP_CUDA_MODULES && u->module_ptx[k] && u->module_ptx[k] != ptx)
		k++;
	if (k == GP_CUDA_MODULES)
		return gp_err_set(e, GP_E_FAIL, ENOSPC, "more than %d PTX modules on one GPU", GP_CUDA_MODULES);
	if (!u->module_ptx[k]) {
		gp_cu_module m = NULL;

		u->module_rc[k] = gp_cu.p_cuModuleLoadData(&m, ptx);
		u->module[k] = u->module_rc[k] == GP_CUDA_SUCCESS ? m : NULL;
		/* out of memory may pass: only a text the JIT refused is not tried again */
		u->module_ptx[k] = u->module_rc[k] == GP_CUDA_ERROR_OUT_OF_MEMORY ? NULL : ptx;
	}
	if (!u->module[k])
		return gp_cu_fail(e, "cuModuleLoadData", (gp_cu_result)u->module_rc[k]);
	CU(cuModuleGetFunction, (&f, (gp_cu_module)u->module[k], name));
	*fn = f;
	return 0;
}

int gp_cuda_kernel_smem(struct gp_cuda *c, int g, void *fn, int bytes, struct gp_err *e)
{
	if (gp_cuda_use(c, g, e))
		return -EIO;
	CU(cuFuncSetAttribute, ((gp_cu_function)fn, GP_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
	return 0;
}

int gp_cuda_launch(struct gp_cuda *c, gp_cuda_stream *s, void *fn, unsigned grid, unsigned block, unsigned smem,
		   void **params, struct gp_err *e)
{
	if (gp_cuda_use(c, s->g, e))
		return -EIO;
	CU(cuLaunchKernel, ((gp_cu_function)fn, grid, 1, 1, block, 1, 1, smem, s->s, params, NULL));
	return 0;
}

int gp_cuda_stream_word(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr *word, struct gp_err *e)
{
	if (!s->word) {
		gp_dptr p;
		gp_cu_result r;

		if (gp_cuda_alloc(c, s->g, 8, &p, e))
			return -EIO;
		r = gp_cu.p_cuMemsetD32Async((gp_cu_dptr)p, 0, 2, s->s);
		if (r != GP_CUDA_SUCCESS) {
			gp_cuda_free(c, s->g, p);
			return gp_cu_fail(e, "cuMemsetD32Async", r);
		}
		s->word = p;
	}
	*word = s->word;
	return 0;
}

int gp_cuda_stream_gpu(const gp_cuda_stream *s)
{
	return s->g;
}

int gp_cuda_dmabuf_fd(struct gp_cuda *c, int g, gp_dptr p, size_t n, int *fd, struct gp_err *e)
{
	int h = -1;

	if (!gp_cu.p_cuMemGetHandleForAddressRange)
		return gp_err_set(e, GP_E_UNAVAIL, ENOSYS, "this driver cannot export dma-bufs (no cuMemGetHandleForAddressRange)");
	if (gp_cuda_use(c, g, e))
		return -EIO;
	CU(cuMemGetHandleForAddressRange, (&h, (gp_cu_dptr)p, n, GP_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
	*fd = h;
	return 0;
}

void gp_cuda_event_free(struct gp_cuda *c, void *ev)
{
	(void)c;
	if (ev)
		(void)gp_cu.p_cuEventDestroy((gp_cu_event)ev);
}
