/* gpup2p — one copy direction: its copy, its patterns (see xfer_lane.h). */
#include <errno.h>

#include "gpup2p/smcopy.h"
#include "xfer/lane.h"

int gp_xfer_lane_copy(struct gp_xfer_io *io, const struct gp_xfer_lane *l)
{
	if (io->sm)
		return gp_sm_copy(io->c, l->st, l->ddst, l->dsrc, io->size,
				  l->sgpu < 0 || l->dgpu < 0 ? GP_SM_HOST : l->sgpu == l->dgpu ? GP_SM_LOCAL : GP_SM_PEER,
				  io->e);
	if (l->sgpu < 0)
		return gp_cuda_h2d(io->c, l->st, l->ddst, l->hsrc, io->size, io->e);
	if (l->dgpu < 0)
		return gp_cuda_d2h(io->c, l->st, l->hdst, l->dsrc, io->size, io->e);
	return gp_cuda_d2d(io->c, l->st, l->dgpu, l->ddst, l->sgpu, l->dsrc, io->size, io->e);
}

int gp_xfer_lane_put(struct gp_xfer_io *io, const struct gp_xfer_lane *l, int dst_side, uint64_t seed)
{
	int g = dst_side ? l->dgpu : l->sgpu;
	gp_cuda_stream *st;

	if (g < 0) {
		gp_pattern_fill(dst_side ? l->hdst : l->hsrc, io->size, seed);
		return 0;
	}
	gp_pattern_fill(io->stage, io->size, seed);
	st = io->stream(io, g);
	return !st || gp_cuda_h2d(io->c, st, dst_side ? l->ddst : l->dsrc, io->stage, io->size, io->e) ||
	       gp_cuda_sync(io->c, st, io->e) ? -EIO : 0;
}

int gp_xfer_lane_check(struct gp_xfer_io *io, const struct gp_xfer_lane *l, uint64_t seed, struct gp_xfer_result *r)
{
	const void *buf = l->hdst;
	int64_t bad;

	if (l->dgpu >= 0) {
		gp_cuda_stream *st = io->stream(io, l->dgpu);

		if (!st || gp_cuda_d2h(io->c, st, io->stage, l->ddst, io->size, io->e) || gp_cuda_sync(io->c, st, io->e))
			return -EIO;
		buf = io->stage;
	}
	bad = gp_pattern_check(buf, io->size, seed, &r->want, &r->got);
	if (bad < 0)
		return 1;
	r->bad_offset = bad;
	return 0;
}

int gp_xfer_lanes_batch(struct gp_xfer_io *io, struct gp_xfer_lane *l, int n, int iters, int gated, double *ms,
			double *slow, int *forced)
{
	void *w = NULL;
	int rc = 0;

	__atomic_store_n(io->flag, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < n && !rc; i++)
		rc = (gated && gp_cuda_gate(io->c, l[i].st, io->dflag, io->e)) || gp_cuda_mark(io->c, l[i].st, &l[i].ev0, io->e);
	if (!rc && gated)
		w = gp_xfer_watch_start(io->flag);
	for (int k = 0; k < iters && !rc; k++)         /* round robin: every stream gets work early */
		for (int i = 0; i < n && !rc; i++)
			rc = gp_xfer_lane_copy(io, &l[i]);
	for (int i = 0; i < n && !rc; i++)
		rc = gp_cuda_mark(io->c, l[i].st, &l[i].ev1, io->e);
	/* open the gate even after an error: the queued work must be able to drain */
	__atomic_store_n(io->flag, 1, __ATOMIC_RELEASE);
	*forced |= gp_xfer_watch_stop(w);
	if (rc) {
		for (int i = 0; i < n; i++)
			(void)gp_cuda_sync(io->c, l[i].st, io->e);
		return -EIO;
	}
	*slow = 0;
	for (int i = 0; i < n; i++) {
		float t;

		if (gp_cuda_elapsed(io->c, l[i].ev0, l[i].ev1, &t, io->e))
			return -EIO;
		if (ms)
			ms[i] = t;
		if (t > *slow)
			*slow = t;
	}
	return 0;
}
