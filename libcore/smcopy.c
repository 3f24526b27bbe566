/* gpup2p — SM copies and pointer chases: launch geometry and the launches. */
#include <errno.h>

#include "gpup2p/smcopy.h"
#include "cuda_drv.h"

void gp_sm_geometry(int sms, uint64_t size, struct gp_sm_geom *g)
{
	uint64_t words = size / 16, tail = size % 16;
	uint64_t want = (words + GP_SM_UNROLL - 1) / GP_SM_UNROLL;  /* threads with a full group or less */
	uint64_t block, grid, max_grid = (uint64_t)(sms > 0 ? sms : 1) * GP_SM_BLOCKS_PER_SM;

	if (want < tail)
		want = tail;                                         /* one thread per tail byte */
	if (want < 32)
		want = 32;
	block = want < GP_SM_BLOCK ? (want + 31) / 32 * 32 : GP_SM_BLOCK;
	grid = (want + block - 1) / block;
	g->block = (unsigned)block;
	g->grid = (unsigned)(grid < max_grid ? grid : max_grid);
}

int gp_sm_prepare(struct gp_cuda *c, int g, struct gp_err *e)
{
	void *fn;

	return gp_cuda_kernel(c, g, gp_ptx_text, gp_ptx_copy_name, &fn, e) ||
	       gp_cuda_kernel(c, g, gp_ptx_text, gp_ptx_chase_name, &fn, e) ? -EIO : 0;
}

int gp_sm_copy(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr dst, gp_dptr src, size_t n, struct gp_err *e)
{
	int g = gp_cuda_stream_gpu(s), sms;
	struct gp_sm_geom geo;
	uint64_t words = n / 16;
	unsigned tail = (unsigned)(n % 16);
	void *fn, *params[] = { &dst, &src, &words, &tail };

	if ((dst | src) & 15)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "SM copy: buffers must be 16-byte aligned");
	if (gp_cuda_attr(c, g, GP_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms, e) ||
	    gp_cuda_kernel(c, g, gp_ptx_text, gp_ptx_copy_name, &fn, e))
		return -EIO;
	gp_sm_geometry(sms, n, &geo);
	return gp_cuda_launch(c, s, fn, geo.grid, geo.block, params, e) ? -EIO : 0;
}

int gp_sm_chase(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr start, uint64_t hops, gp_dptr out, struct gp_err *e)
{
	void *fn, *params[] = { &start, &hops, &out };

	if (gp_cuda_kernel(c, gp_cuda_stream_gpu(s), gp_ptx_text, gp_ptx_chase_name, &fn, e))
		return -EIO;
	return gp_cuda_launch(c, s, fn, 1, 1, params, e) ? -EIO : 0;
}
