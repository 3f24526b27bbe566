/* gpup2p — the verification kernels' launches (ptx_verify.c): the pattern written and checked by the
 * GPU that holds the data, outside any timed batch. */
#include <errno.h>
#include <string.h>

#include "gpup2p/bench.h"
#include "gpup2p/smcopy.h"

#define VBLOCK 256      /* threads per block */
#define VGRID 4096      /* blocks at most: grid-stride beyond */

static unsigned vgrid(uint64_t words)
{
	uint64_t g = (words + VBLOCK - 1) / VBLOCK;

	return g < 1 ? 1 : g > VGRID ? VGRID : (unsigned)g;
}

static int vkernel(struct gp_cuda *c, gp_cuda_stream *s, const char *name, gp_dptr buf, void **fn, struct gp_err *e)
{
	if (buf & 7)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "pattern kernels: the buffer must be 8-byte aligned");
	return gp_cuda_kernel(c, gp_cuda_stream_gpu(s), gp_ptx_verify_text, name, fn, e) ? -EIO : 0;
}

int gp_sm_fill(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr buf, size_t n, uint64_t seed, struct gp_err *e)
{
	return gp_sm_fill_split(c, s, buf, n, seed, seed, e);
}

int gp_sm_fill_split(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr buf, size_t n, uint64_t seed_even, uint64_t seed_odd,
		     struct gp_err *e)
{
	uint64_t nw = n / 8, key = gp_pattern_key(seed_even), key2 = gp_pattern_key(seed_odd);
	unsigned tail = (unsigned)(n % 8);
	void *fn, *params[] = { &buf, &nw, &tail, &key, &key2 };

	if (vkernel(c, s, gp_ptx_fill_name, buf, &fn, e))
		return -EIO;
	return gp_cuda_launch(c, s, fn, vgrid(nw), VBLOCK, 0, params, e) ? -EIO : 0;
}

/* The first wrong byte of word w (index wi) against the pattern; -1 when none (cannot happen after a
 * mismatch the kernel counted, unless the memory changed since). */
static int64_t first_byte(uint64_t w, uint64_t key, uint64_t wi, size_t n, uint8_t *want, uint8_t *got)
{
	uint64_t x = gp_pattern_word(key, wi);
	size_t len = n - wi * 8 < 8 ? n - wi * 8 : 8;

	for (size_t k = 0; k < len; k++)
		if (((const uint8_t *)&w)[k] != ((const uint8_t *)&x)[k]) {
			*want = ((const uint8_t *)&x)[k];
			*got = ((const uint8_t *)&w)[k];
			return (int64_t)(wi * 8 + k);
		}
	return -1;
}

int gp_sm_check(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr buf, const void *host, size_t n, uint64_t seed,
		int64_t *bad, uint8_t *want, uint8_t *got, struct gp_err *e)
{
	uint64_t nw = n / 8, key = gp_pattern_key(seed), res[2] = { 0, ~0ULL }, w = 0;
	unsigned tail = (unsigned)(n % 8);
	int g = gp_cuda_stream_gpu(s), rc;
	gp_dptr out;
	void *fn, *params[] = { &buf, &nw, &tail, &key, &out };

	*bad = -1;
	if (vkernel(c, s, gp_ptx_check_name, buf, &fn, e) || gp_cuda_alloc(c, g, sizeof(res), &out, e))
		return -EIO;
	rc = gp_cuda_h2d(c, s, out, res, sizeof(res), e) || gp_cuda_launch(c, s, fn, vgrid(nw), VBLOCK, 0, params, e) ||
	     gp_cuda_d2h(c, s, res, out, sizeof(res), e) || gp_cuda_sync(c, s, e);
	if (!rc && res[0] && res[1] > nw)
		rc = gp_err_set(e, GP_E_FAIL, EIO, "pattern check: the kernel reported word %llu of %llu",
				(unsigned long long)res[1], (unsigned long long)nw);
	if (!rc && res[0]) {
		size_t at = (size_t)res[1] * 8;

		if (host)
			memcpy(&w, (const char *)host + at, n - at < 8 ? n - at : 8);
		else
			rc = gp_cuda_d2h(c, s, &w, buf + at, n - at < 8 ? n - at : 8, e) || gp_cuda_sync(c, s, e);
		if (!rc && (*bad = first_byte(w, key, res[1], n, want, got)) < 0)
			*bad = (int64_t)at, *want = 0, *got = 0;
	}
	gp_cuda_free(c, g, out);
	return rc ? -EIO : 0;
}
