/* gpup2p — one copy direction: its copy, its patterns (see xfer_lane.h). */
#include <errno.h>

#include "gpup2p/smcopy.h"
#include "xfer/lane.h"

/* One copy of the lane by the copy engines, or a duplex SM copy. */
static int copy_one(struct gp_xfer_io *io, const struct gp_xfer_lane *l)
{
	if (io->sm)
		return gp_sm_copy_duplex(io->c, l->st, l->dsrc, l->ddst, io->size, io->e);
	if (l->sgpu < 0)
		return gp_cuda_h2d(io->c, l->st, l->ddst, l->hsrc, io->size, io->e);
	if (l->dgpu < 0)
		return gp_cuda_d2h(io->c, l->st, l->hdst, l->dsrc, io->size, io->e);
	return gp_cuda_d2d(io->c, l->st, l->dgpu, l->ddst, l->sgpu, l->dsrc, io->size, io->e);
}

/* Whether the lane's copies go as one launch (a plain SM copy). */
static int one_launch(const struct gp_xfer_io *io, const struct gp_xfer_lane *l)
{
	return io->sm && !l->duplex;
}

int gp_xfer_lane_copy(struct gp_xfer_io *io, const struct gp_xfer_lane *l, unsigned reps)
{
	int rc = 0;

	if (one_launch(io, l))
		return gp_sm_copy(io->c, l->st, l->ddst, l->dsrc, io->size,
				  l->sgpu < 0 || l->dgpu < 0 ? GP_SM_HOST : l->sgpu == l->dgpu ? GP_SM_LOCAL : GP_SM_PEER,
				  reps, io->e);
	for (unsigned k = 0; k < (reps ? reps : 1) && !rc; k++)
		rc = copy_one(io, l);
	return rc;
}

/* Where the kernels reach one side of the lane (dst_side 0 its source, 1 its destination): *d its device
 * address, and a stream of the GPU that holds it (host memory: of the GPU at the lane's other end).
 * NULL with *d = 0: pageable host memory, which the CPU writes and checks. */
static gp_cuda_stream *side(struct gp_xfer_io *io, const struct gp_xfer_lane *l, int dst_side, gp_dptr *d)
{
	int g = dst_side ? l->dgpu : l->sgpu;

	*d = dst_side ? l->ddst : l->dsrc;
	if (g < 0)
		g = dst_side ? l->sgpu : l->dgpu;
	return *d ? io->stream(io, g) : NULL;
}

/* A duplex lane's two buffers: seed's pattern in the stripes each gives (src the even, dst the odd),
 * another in the stripes each gets, so that only both directions' copies make both whole. */
static int put_duplex(struct gp_xfer_io *io, const struct gp_xfer_lane *l, uint64_t seed)
{
	uint64_t other = seed ^ 0xa5a5a5a5ULL;
	gp_dptr s, d;
	gp_cuda_stream *ss = side(io, l, 0, &s), *sd = side(io, l, 1, &d);

	return !ss || !sd || gp_sm_fill_split(io->c, ss, s, io->size, seed, other, io->e) ||
	       gp_sm_fill_split(io->c, sd, d, io->size, other, seed, io->e) || gp_cuda_sync(io->c, ss, io->e) ||
	       gp_cuda_sync(io->c, sd, io->e) ? -EIO : 0;
}

int gp_xfer_lane_put(struct gp_xfer_io *io, const struct gp_xfer_lane *l, int dst_side, uint64_t seed)
{
	gp_dptr d;
	gp_cuda_stream *st = side(io, l, dst_side, &d);

	if (l->duplex && !dst_side)
		return put_duplex(io, l, seed);
	if (!d) {
		gp_pattern_fill(dst_side ? l->hdst : l->hsrc, io->size, seed);
		return 0;
	}
	return !st || gp_sm_fill(io->c, st, d, io->size, seed, io->e) || gp_cuda_sync(io->c, st, io->e) ? -EIO : 0;
}

/* Check one side of the lane (dst_side as for side()): 1 right, 0 wrong, -EIO. */
static int check_side(struct gp_xfer_io *io, const struct gp_xfer_lane *l, int dst_side, uint64_t seed,
		      struct gp_xfer_result *r)
{
	gp_dptr d;
	gp_cuda_stream *st = side(io, l, dst_side, &d);
	const void *h = dst_side ? l->hdst : l->hsrc;
	const void *host = (dst_side ? l->dgpu : l->sgpu) < 0 ? h : NULL;     /* the wrong word is read there */
	int64_t bad;

	if (!d)
		bad = gp_pattern_check(h, io->size, seed, &r->want, &r->got);
	else if (!st || gp_sm_check(io->c, st, d, host, io->size, seed, &bad, &r->want, &r->got, io->e))
		return -EIO;
	if (bad < 0)
		return 1;
	r->bad_offset = bad;
	return 0;
}

int gp_xfer_lane_check(struct gp_xfer_io *io, const struct gp_xfer_lane *l, uint64_t seed, struct gp_xfer_result *r)
{
	int ok = check_side(io, l, 1, seed, r);

	if (ok != 1 || !l->duplex)
		return ok;
	if ((ok = check_side(io, l, 0, seed, r)) == 0)
		r->bad_lane = 1;
	return ok;
}

/* The lane whose start event lane i is timed from. Gated: the first lane on i's GPU, as the gate opens
 * every GPU's streams at once (each sees the host's write to the gate word) and a GPU's clock needs
 * no signal from another GPU, whose crossing would count in the time (bidir measured 0.999 of
 * nvbandwidth that way). Lanes of one GPU keep one start: its copy engines may serve them one after
 * another, and each from its own start would look as fast as alone. Without a gate: lane 0, one clock
 * for all, other GPUs' starts and ends crossing to it. */
static int lead_of(const struct gp_xfer_lane *l, int i, int gated)
{
	for (int j = 0; j < i && gated; j++)
		if (l[j].q == l[i].q)
			return j;
	return gated ? i : 0;
}

/* Queue the batch's copies and its events; the gate is still shut. */
static int queue_batch(struct gp_xfer_io *io, struct gp_xfer_lane *l, int n, int iters, int gated)
{
	int rc = 0;

	for (int i = 0; i < n && !rc; i++) {  /* every lane starts with its lead: see lead_of */
		int j = lead_of(l, i, gated);

		rc = j == i ? gp_cuda_mark(io->c, l[i].st, &l[i].ev0, io->e) : gp_cuda_wait(io->c, l[i].st, l[j].ev0, io->e);
	}
	for (int k = 0; k < iters && !rc; k++)  /* round robin: every stream gets work early */
		for (int i = 0; i < n && !rc; i++) {
			unsigned mult = l[i].mult > 1 ? (unsigned)l[i].mult : 1;

			if (!one_launch(io, &l[i]))
				rc = gp_xfer_lane_copy(io, &l[i], mult);
			else if (!k) /* the batch's copies as one kernel: no launch gaps in the timed window */
				rc = gp_xfer_lane_copy(io, &l[i], mult * (unsigned)iters);
		}
	for (int i = 0; i < n && !rc; i++)
		rc = gp_cuda_mark(io->c, l[i].st, &l[i].ev1, io->e);
	for (int i = 1; i < n && !rc && !gated; i++)    /* an end on another GPU, seen from lane 0's */
		if (l[i].q != l[0].q)
			rc = (!l[i].wit && gp_cuda_stream_new(io->c, l[0].q, &l[i].wit, io->e)) ||
			     gp_cuda_wait(io->c, l[i].wit, l[i].ev1, io->e) || gp_cuda_mark(io->c, l[i].wit, &l[i].evw, io->e);
	return rc ? -EIO : 0;
}

int gp_xfer_lanes_batch(struct gp_xfer_io *io, struct gp_xfer_lane *l, int n, int iters, int gated, double *ms,
			double *slow, int *forced)
{
	void *w = NULL;
	int rc = 0;

	__atomic_store_n(io->flag, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < n && !rc; i++)
		rc = gated && gp_cuda_gate(io->c, l[i].st, io->dflag, io->e);
	if (!rc && gated)
		w = gp_xfer_watch_start(io->flag);
	if (!rc)
		rc = queue_batch(io, l, n, iters, gated);
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
		int j = lead_of(l, i, gated);
		float t;

		if (gp_cuda_elapsed(io->c, l[j].ev0, !gated && l[i].q != l[0].q ? l[i].evw : l[i].ev1, &t, io->e))
			return -EIO;
		if (ms)
			ms[i] = t;
		if (t > *slow && !l[i].noise)
			*slow = t;
	}
	return 0;
}

void gp_xfer_lanes_free(struct gp_cuda *c, struct gp_xfer_lane *l, int n)
{
	for (int i = 0; i < n; i++) {
		gp_cuda_event_free(c, l[i].ev0);
		gp_cuda_event_free(c, l[i].ev1);
		gp_cuda_event_free(c, l[i].evw);
		gp_cuda_stream_free(c, l[i].wit);
		l[i].ev0 = l[i].ev1 = l[i].evw = NULL;
		l[i].wit = NULL;
	}
}
