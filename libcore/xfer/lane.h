/* gpup2p — one copy direction (a lane), shared by xfer.c (one path) and bench_pattern.c (copies running
 * together): queue its copy, write and check its patterns. Internal to libcore. */
#ifndef GPUP2P_XFER_LANE_H
#define GPUP2P_XFER_LANE_H

#include <stdint.h>

#include "gpup2p/xfer.h"

/* src → dst (GPU index; -1 host memory), queued on stream st of GPU q. */
struct gp_xfer_lane {
	int sgpu, dgpu, q;
	void *hsrc, *hdst;              /* host buffers */
	gp_dptr dsrc, ddst;             /* device buffers; pinned host buffers: their device addresses (0 when
	                                   pageable) */
	gp_cuda_stream *st;
	void *ev0, *ev1;                /* the batch's start (a lead lane only: gp_xfer_lanes_batch) and end */
	gp_cuda_stream *wit;            /* ungated, a lane on another GPU than lane 0's: a stream of lane 0's
	                                   GPU that waits for ev1 and records evw, its end on lane 0's clock */
	void *evw;
	int mult;                       /* copies per round (0 counts as 1): the interfering direction of a
	                                   duplex copy runs twice as many, so that it lasts the whole time */
	int noise;                      /* 1: copies only to load the links (duplex): not in *slow */
	int duplex;                     /* 1: SM duplex (gp_sm_copy_duplex): one kernel copies the even
	                                   stripes src -> dst and the odd ones dst -> src; both buffers are
	                                   written with halves of the pattern and both are checked */
};

/* What the lane calls share: the session, the copy size and engine, and stream(io, g): a stream of GPU g
 * for the pattern kernels (NULL after filling io->e). */
struct gp_xfer_io {
	struct gp_cuda *c;
	struct gp_err *e;
	size_t size;
	int sm;
	gp_cuda_stream *(*stream)(struct gp_xfer_io *io, int g);
	uint32_t *flag;                 /* the gate word (mapped pinned), and its device address */
	gp_dptr dflag;
};

/* Queue `reps` copies of the lane, one after the other (kernels when io->sm, else the copy engines;
 * a plain SM copy as one launch for all: gp_sm_copy). 0 or -errno. */
int gp_xfer_lane_copy(struct gp_xfer_io *io, const struct gp_xfer_lane *l, unsigned reps);

/* Write seed's pattern into the lane's source (dst_side 0) or destination (1) and wait: by a kernel
 * (gp_sm_fill) of the GPU that holds it, or of the lane's GPU for pinned host memory; pageable host
 * memory by the CPU. A duplex lane's source side is both buffers, each with seed's pattern in the
 * stripes it gives and another in those it gets (gp_sm_fill_split). 0 or -EIO. */
int gp_xfer_lane_put(struct gp_xfer_io *io, const struct gp_xfer_lane *l, int dst_side, uint64_t seed);

/* Check the lane's destination against seed's pattern, where it is (gp_sm_check, as for put; pageable
 * host memory: the CPU): 1 right, 0 wrong (r's want, got and bad_offset filled), -EIO. A duplex lane's
 * source too, after its destination: wrong there sets r->bad_lane to 1 (the reverse direction). */
int gp_xfer_lane_check(struct gp_xfer_io *io, const struct gp_xfer_lane *l, uint64_t seed, struct gp_xfer_result *r);

/* One timed batch: iters copies on each of the n lanes, queued round robin, held behind the gate
 * (io->flag; gated 0: no gate) until all are queued. Gated, every GPU's clock starts as the gate opens:
 * the first lane queued on a GPU records the start, the GPU's other lanes wait for it (copies that a
 * GPU runs one after another cannot each look as fast as alone), and each lane's end is read on its own
 * GPU, so no signal crosses between GPUs inside the timed window. Ungated, lane 0's start is every
 * lane's and each end is read on lane 0's GPU (directly, or through a witness stream of that GPU that
 * waits for it). ms[i] each lane's time from its start to its end in ms (ms may be NULL), *slow the
 * longest of those times among the lanes that are not noise; *forced |= 1 when the watchdog had to open the gate. 0,
 * or -EIO after every lane drained. */
int gp_xfer_lanes_batch(struct gp_xfer_io *io, struct gp_xfer_lane *l, int n, int iters, int gated, double *ms,
			double *slow, int *forced);

/* Free the events and witness streams gp_xfer_lanes_batch made for the n lanes (not their buffers or
 * streams). */
void gp_xfer_lanes_free(struct gp_cuda *c, struct gp_xfer_lane *l, int n);

#endif
