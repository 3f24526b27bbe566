/* gpup2p — SM copies and pointer chases: launch geometry and the launches. */
#include <errno.h>

#include "gpup2p/smcopy.h"
#include "cuda/drv.h"

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

void gp_sm_duplex_geometry(uint64_t size, struct gp_sm_geom *g)
{
	uint64_t words = size / 16, tail = size % 16, want = words > tail ? words : tail, grid;

	if (want < 64)
		want = 64;
	g->block = want < GP_SM_DUPLEX_BLOCK ? (unsigned)((want + 63) / 64 * 64) : GP_SM_DUPLEX_BLOCK;
	grid = (want + g->block - 1) / g->block;
	g->grid = grid < GP_SM_GRID_MAX ? (unsigned)grid : GP_SM_GRID_MAX;
}

int gp_sm_use_bulk(int cc_major, int sms, uint64_t l2, uint64_t n, enum gp_sm_where where)
{
	return cc_major >= 9 && sms > 0 && where == GP_SM_LOCAL && n > l2 / 2 && n / GP_SM_BULK_CHUNK >= (uint64_t)sms;
}

/* The bulk copy kernel of GPU g (compute capability cc_major), ready to launch (its shared memory
 * allowed), or NULL: a GPU before Hopper, or a driver that cannot JIT its PTX (that failure is
 * remembered by gp_cuda_kernel). */
static void *bulk_kernel(struct gp_cuda *c, int g, int cc_major)
{
	struct gp_err quiet;
	void *fn;

	gp_err_clear(&quiet);
	if (cc_major < 9 || gp_cuda_kernel(c, g, gp_ptx_bulk_text, gp_ptx_bulk_name, &fn, &quiet) ||
	    gp_cuda_kernel_smem(c, g, fn, GP_SM_BULK_SMEM, &quiet))
		return NULL;
	return fn;
}

int gp_sm_prepare(struct gp_cuda *c, gp_cuda_stream *s, struct gp_err *e)
{
	int g = gp_cuda_stream_gpu(s), cc;
	gp_dptr word;
	void *fn;

	if (gp_cuda_kernel(c, g, gp_ptx_text, gp_ptx_copy_name, &fn, e) ||
	    gp_cuda_kernel(c, g, gp_ptx_text, gp_ptx_duplex_name, &fn, e) ||
	    gp_cuda_kernel(c, g, gp_ptx_text, gp_ptx_chase_name, &fn, e) ||
	    gp_cuda_attr(c, g, GP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &cc, e))
		return -EIO;
	return bulk_kernel(c, g, cc) && gp_cuda_stream_word(c, s, &word, e) ? -EIO : 0;
}

int gp_sm_copy(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr dst, gp_dptr src, size_t n, enum gp_sm_where where,
	       unsigned reps, struct gp_err *e)
{
	int g = gp_cuda_stream_gpu(s), sms, cc, l2;
	struct gp_sm_geom geo;
	uint64_t words = n / 16, nch = n / GP_SM_BULK_CHUNK, rem = n % GP_SM_BULK_CHUNK;
	unsigned tail = (unsigned)(n % 16);
	gp_dptr word;
	void *fn, *params[] = { &dst, &src, &words, &tail, &reps }, *bulk_params[] = { &dst, &src, &nch, &rem, &word };

	if ((dst | src) & 15)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "SM copy: buffers must be 16-byte aligned");
	if (gp_cuda_attr(c, g, GP_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms, e) ||
	    gp_cuda_attr(c, g, GP_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &cc, e) ||
	    gp_cuda_attr(c, g, GP_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2, e))
		return -EIO;
	if (gp_sm_use_bulk(cc, sms, (uint64_t)(l2 > 0 ? l2 : 0), n, where) && (fn = bulk_kernel(c, g, cc))) {
		if (gp_cuda_stream_word(c, s, &word, e))
			return -EIO;
		for (unsigned k = 0; k < (reps ? reps : 1); k++)
			if (gp_cuda_launch(c, s, fn, (unsigned)sms, GP_SM_BULK_BLOCK, GP_SM_BULK_SMEM, bulk_params, e))
				return -EIO;
		return 0;
	}
	if (gp_cuda_kernel(c, g, gp_ptx_text, gp_ptx_copy_name, &fn, e))
		return -EIO;
	gp_sm_geometry(sms, n, &geo);
	return gp_cuda_launch(c, s, fn, geo.grid, geo.block, 0, params, e) ? -EIO : 0;
}

int gp_sm_copy_duplex(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr a, gp_dptr b, size_t n, struct gp_err *e)
{
	int g = gp_cuda_stream_gpu(s);
	struct gp_sm_geom geo;
	uint64_t words = n / 16;
	unsigned tail = (unsigned)(n % 16);
	void *fn, *params[] = { &a, &b, &words, &tail };

	if ((a | b) & 15)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "SM copy: buffers must be 16-byte aligned");
	if (gp_cuda_kernel(c, g, gp_ptx_text, gp_ptx_duplex_name, &fn, e))
		return -EIO;
	gp_sm_duplex_geometry(n, &geo);
	return gp_cuda_launch(c, s, fn, geo.grid, geo.block, 0, params, e) ? -EIO : 0;
}

int gp_sm_count(struct gp_cuda *c, int g, unsigned *n, struct gp_err *e)
{
	int sms = 0;

	if (gp_cuda_attr(c, g, GP_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms, e))
		return -EIO;
	*n = sms > 0 ? (unsigned)sms : 1;
	return 0;
}

int gp_sm_chase(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr start, uint64_t hops, gp_dptr out, unsigned block,
		unsigned grid, struct gp_err *e)
{
	void *fn, *params[] = { &start, &hops, &out, &block };

	if (!grid || block >= grid)
		return gp_err_set(e, GP_E_FAIL, EINVAL, "SM chase: block %u of a grid of %u", block, grid);
	if (gp_cuda_kernel(c, gp_cuda_stream_gpu(s), gp_ptx_text, gp_ptx_chase_name, &fn, e))
		return -EIO;
	return gp_cuda_launch(c, s, fn, grid, 1, 0, params, e) ? -EIO : 0;
}

int gp_sm_chain_default(struct gp_cuda *c, uint64_t *size, struct gp_err *e)
{
	uint64_t best = 0;

	for (int g = 0; g < c->n; g++) {
		int l2 = 0;

		if (gp_cuda_attr(c, g, GP_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2, e))
			return -EIO;
		if (l2 > 0 && (uint64_t)l2 > best)
			best = (uint64_t)l2;
	}
	best = (2 * best + (1 << 20) - 1) & ~(uint64_t)((1 << 20) - 1);
	*size = best < (64ULL << 20) ? 64ULL << 20 : best;
	return 0;
}
