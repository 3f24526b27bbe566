/* gpup2p — nvbandwidth-style patterns: several copies running together (one GPU to all, all to one,
 * all to host, host to all), each pair timed and checked, and the aggregate. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/bench_plan.h"
#include "gpup2p/smcopy.h"
#include "xfer/lane.h"

/* One pair: src → dst (-1 host; pinned host buffers, and their device addresses), queued on its own
 * stream of GPU q. */
struct plane {
	struct gp_bench_row *r;
	double *bw, *us;
};

struct prun {
	struct gp_cuda *c;
	struct gp_err *e;
	const struct gp_xfer_spec *s;   /* the aggregate's: size, iters, reps, engine */
	struct gp_xfer_io io;           /* the lanes' calls */
	struct plane *l;
	struct gp_xfer_lane *x;         /* the pairs' lanes, as l, then the duplex copies' (noise) */
	int nl, nx;                     /* pairs measured; lanes in all */
	gp_cuda_stream **util;          /* one per GPU, for the pattern kernels (c->n) */
};

/* The stream of GPU g for the pattern kernels. */
static gp_cuda_stream *util(struct gp_xfer_io *io, int g)
{
	struct prun *P = (struct prun *)((char *)io - offsetof(struct prun, io));

	if (!P->util[g] && gp_cuda_stream_new(P->c, g, &P->util[g], P->e))
		return NULL;
	return P->util[g];
}

/* Buffers and a stream for lane l, its ends and queue set. */
static int lane_bufs(struct prun *P, struct gp_xfer_lane *l)
{
	size_t n = P->s->size;

	if (l->sgpu < 0 ? gp_cuda_host_alloc(P->c, n, &l->hsrc, P->e) || gp_cuda_host_dptr(P->c, l->hsrc, &l->dsrc, P->e) :
			  gp_cuda_alloc(P->c, l->sgpu, n, &l->dsrc, P->e))
		return -EIO;
	if (l->dgpu < 0 ? gp_cuda_host_alloc(P->c, n, &l->hdst, P->e) || gp_cuda_host_dptr(P->c, l->hdst, &l->ddst, P->e) :
			  gp_cuda_alloc(P->c, l->dgpu, n, &l->ddst, P->e))
		return -EIO;
	if (gp_cuda_stream_new(P->c, l->q, &l->st, P->e))
		return -EIO;
	return P->s->sm && gp_sm_prepare(P->c, l->st, P->e) ? -EIO : 0;
}

static int lane_setup(struct prun *P, int i)
{
	struct plane *pl = &P->l[i];
	const struct gp_xfer_spec *s = &pl->r->spec;
	struct gp_xfer_lane *l = &P->x[i];

	l->sgpu = s->kind == GP_XFER_H2D ? -1 : s->gpu;
	l->dgpu = s->kind == GP_XFER_D2H ? -1 : s->kind == GP_XFER_PEER ? s->peer_gpu : s->gpu;
	l->q = s->kind == GP_XFER_PEER && s->read ? s->peer_gpu : s->gpu;   /* read: the destination pulls */
	if (!(pl->bw = calloc((size_t)P->s->reps, sizeof(double))) || !(pl->us = calloc((size_t)P->s->reps, sizeof(double))))
		return gp_err_set(P->e, GP_E_FAIL, ENOMEM, "out of memory");
	if (s->kind == GP_XFER_PEER) {
		int rc = gp_cuda_peer_require(P->c, l->q, l->q == l->sgpu ? l->dgpu : l->sgpu, P->e);

		if (rc)
			return rc;
	}
	return lane_bufs(P, l);
}

/* Duplex (all2host, host2all). SM: pair i's kernel copies both ways between its buffers (lane.h's
 * duplex). CE: the opposite copy of pair i's on its GPU, twice as many copies, its own stream; it loads
 * the link and is not counted. */
static int noise_setup(struct prun *P, int i)
{
	struct gp_xfer_lane *m = &P->x[i], *l;

	if (P->s->sm) {
		m->duplex = 1;
		return 0;
	}
	l = &P->x[P->nx++];
	l->sgpu = m->dgpu;
	l->dgpu = m->sgpu;
	l->q = m->q;
	l->mult = 2;
	l->noise = 1;
	return lane_bufs(P, l);
}

static void teardown(struct prun *P)
{
	if (P->x)
		gp_xfer_lanes_free(P->c, P->x, P->nx);
	for (int i = 0; i < P->nx; i++) {
		struct gp_xfer_lane *l = &P->x[i];

		if (l->st)
			gp_cuda_stream_free(P->c, l->st);
		if (l->sgpu < 0 ? l->hsrc != NULL : l->dsrc != 0)
			l->sgpu < 0 ? gp_cuda_host_free(P->c, l->hsrc) : gp_cuda_free(P->c, l->sgpu, l->dsrc);
		if (l->dgpu < 0 ? l->hdst != NULL : l->ddst != 0)
			l->dgpu < 0 ? gp_cuda_host_free(P->c, l->hdst) : gp_cuda_free(P->c, l->dgpu, l->ddst);
	}
	for (int i = 0; i < P->nl; i++) {
		free(P->l[i].bw);
		free(P->l[i].us);
	}
	for (int g = 0; P->util && g < P->c->n; g++)
		if (P->util[g])
			gp_cuda_stream_free(P->c, P->util[g]);
	free(P->util);
	free(P->l);
	free(P->x);
	if (P->io.flag)
		gp_cuda_host_free(P->c, P->io.flag);
}

/* Warm-up, the patterns, then `reps` timed batches back to back, the destinations checked once after
 * the last (verification never runs between or during the timed batches). */
static int measure(struct prun *P, struct gp_bench_row *agg)
{
	const struct gp_xfer_spec *s = P->s;
	int verify = !s->no_verify, n = s->reps, rc, forced = 0;
	double *ms = calloc((size_t)P->nx, sizeof(double)), *tot = calloc((size_t)n, sizeof(double));
	double *us = calloc((size_t)n, sizeof(double)), slow = 0;
	uint64_t bytes = s->size * (uint64_t)s->iters;
	double scale = P->nl && P->x[0].duplex ? 0.5 : 1;     /* duplex SM: both ways' bytes, per direction */

	if (!ms || !tot || !us) {
		free(ms);
		free(tot);
		free(us);
		return gp_err_set(P->e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	rc = gp_xfer_lanes_batch(&P->io, P->x, P->nx, 1, 1, ms, &slow, &forced);
	for (int i = 0; i < P->nl && !rc && verify; i++)
		rc = gp_xfer_lane_put(&P->io, &P->x[i], 1, P->l[i].r->spec.seed ^ 0x5a5a5a5aULL);
	for (int k = 0; k < n && !rc; k++) {
		int wrong = 0;

		for (int i = 0; i < P->nl && !rc && verify && k == 0; i++)
			rc = gp_xfer_lane_put(&P->io, &P->x[i], 0, P->l[i].r->spec.seed + 2);
		if (rc || (rc = gp_xfer_lanes_batch(&P->io, P->x, P->nx, s->iters, 1, ms, &slow, &forced)))
			break;
		tot[k] = gp_gbps(bytes * (uint64_t)P->nl, slow) * scale;
		us[k] = slow * 1e3 / s->iters;
		for (int i = 0; i < P->nl && !rc; i++) {
			struct gp_xfer_result *r = &P->l[i].r->res;

			P->l[i].bw[k] = gp_gbps(bytes, ms[i]) * scale;
			P->l[i].us[k] = ms[i] * 1e3 / s->iters;
			if (verify && r->verified && k == n - 1) {
				int ok = gp_xfer_lane_check(&P->io, &P->x[i], P->l[i].r->spec.seed + 2, r);

				if (ok < 0)
					rc = ok;
				else if (!ok)
					r->verified = 0, r->bad_copy = k, wrong = 1;
			}
		}
		if (wrong) {
			agg->res.verified = 0;
			n = k + 1;
		}
	}
	for (int i = 0; i < P->nl && !rc; i++) {
		gp_stats_compute(P->l[i].bw, n, &P->l[i].r->res.gbps);
		gp_stats_compute(P->l[i].us, n, &P->l[i].r->res.us);
		P->l[i].r->res.gate_forced = forced;
	}
	if (!rc) {
		gp_stats_compute(tot, n, &agg->res.gbps);
		gp_stats_compute(us, n, &agg->res.us);
		agg->res.gate_forced = forced;
	}
	free(ms);
	free(tot);
	free(us);
	return rc ? -EIO : 0;
}

int gp_bench_pattern_run(struct gp_cuda *c, struct gp_bench_row *rows, int n, struct gp_err *e)
{
	struct prun P = { .c = c, .e = e, .io = { .c = c, .e = e, .stream = util } };
	struct gp_bench_row *agg = n > 0 ? &rows[n - 1] : NULL;
	int rc = 0;

	if (!agg || !agg->aggregate)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "invalid pattern group");
	P.s = &agg->spec;
	P.io.size = agg->spec.size;
	P.io.sm = agg->spec.sm;
	if (agg->skip)
		return 0;
	if (!(P.l = calloc((size_t)n, sizeof(*P.l))) || !(P.x = calloc(2 * (size_t)n, sizeof(*P.x))) ||
	    !(P.util = calloc((size_t)c->n, sizeof(*P.util)))) {
		free(P.l);
		free(P.x);
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++) {
		struct gp_xfer_result *r = &rows[i].res;

		memset(r, 0, sizeof(*r));
		r->host_node = -1;
		r->bad_offset = -1;
		r->verified = agg->spec.no_verify ? -1 : 1;
		r->gated = 1;
		if (i < n - 1 && !rows[i].skip)
			P.l[P.nl++].r = &rows[i];
	}
	if (gp_cuda_host_alloc(c, 64, (void **)&P.io.flag, e) ||
	    gp_cuda_host_dptr(c, P.io.flag, &P.io.dflag, e))
		rc = -EIO;
	P.nx = P.nl;
	for (int i = 0; i < P.nl && !rc; i++)
		rc = lane_setup(&P, i);
	for (int i = 0, m = P.nl; i < m && !rc; i++)
		if (P.l[i].r->spec.bidir && P.l[i].r->spec.kind != GP_XFER_PEER)
			rc = noise_setup(&P, i);
	if (!rc)
		rc = measure(&P, agg);
	teardown(&P);
	for (int i = 0; i < n && !rc; i++)
		rows[i].done = !rows[i].skip;
	return rc;
}
