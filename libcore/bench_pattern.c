/* gpup2p — nvbandwidth-style patterns: several copies running together (one GPU to all, all to one,
 * all to host, host to all), each pair timed and checked, and the aggregate. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/bench_plan.h"
#include "gpup2p/smcopy.h"

/* One pair: src → dst (-1 host), queued on its own stream of GPU q. */
struct plane {
	struct gp_bench_row *r;
	int sg, dg, q;
	void *hsrc, *hdst;              /* pinned host buffers */
	gp_dptr dsrc, ddst;             /* device buffers, or the host buffers' device addresses */
	gp_cuda_stream *st;
	void *ev0, *ev1;
	double *bw, *us;
};

struct prun {
	struct gp_cuda *c;
	struct gp_err *e;
	const struct gp_xfer_spec *s;   /* the aggregate's: size, iters, reps, engine */
	struct plane *l;
	int nl;
	gp_cuda_stream **util;          /* one per GPU, for patterns in and out (c->n) */
	void *stage;
	uint32_t *flag;
	gp_dptr dflag;
};

static gp_cuda_stream *util(struct prun *P, int g)
{
	if (!P->util[g] && gp_cuda_stream_new(P->c, g, &P->util[g], P->e))
		return NULL;
	return P->util[g];
}

/* Write the pattern of seed to a side of a pair (1 destination). */
static int put(struct prun *P, struct plane *l, int dst, uint64_t seed)
{
	int g = dst ? l->dg : l->sg;
	size_t n = P->s->size;
	gp_cuda_stream *st;

	if (g < 0) {
		gp_pattern_fill(dst ? l->hdst : l->hsrc, n, seed);
		return 0;
	}
	gp_pattern_fill(P->stage, n, seed);
	st = util(P, g);
	return !st || gp_cuda_h2d(P->c, st, dst ? l->ddst : l->dsrc, P->stage, n, P->e) ||
	       gp_cuda_sync(P->c, st, P->e) ? -EIO : 0;
}

/* 1 the destination holds seed's pattern, 0 not (res filled), <0 error. */
static int check(struct prun *P, struct plane *l, uint64_t seed)
{
	const void *buf = l->hdst;
	struct gp_xfer_result *r = &l->r->res;
	int64_t bad;

	if (l->dg >= 0) {
		gp_cuda_stream *st = util(P, l->dg);

		if (!st || gp_cuda_d2h(P->c, st, P->stage, l->ddst, P->s->size, P->e) || gp_cuda_sync(P->c, st, P->e))
			return -EIO;
		buf = P->stage;
	}
	bad = gp_pattern_check(buf, P->s->size, seed, &r->want, &r->got);
	if (bad < 0)
		return 1;
	r->bad_offset = bad;
	return 0;
}

static int copy1(struct prun *P, struct plane *l)
{
	size_t n = P->s->size;

	if (P->s->sm)
		return gp_sm_copy(P->c, l->st, l->ddst, l->dsrc, n, P->e);
	if (l->sg < 0)
		return gp_cuda_h2d(P->c, l->st, l->ddst, l->hsrc, n, P->e);
	if (l->dg < 0)
		return gp_cuda_d2h(P->c, l->st, l->hdst, l->dsrc, n, P->e);
	return gp_cuda_d2d(P->c, l->st, l->dg, l->ddst, l->sg, l->dsrc, n, P->e);
}

/* `iters` copies on every pair behind one gate; ms[i] each pair's time, *slow the slowest. */
static int batch(struct prun *P, int iters, double *ms, double *slow, int *forced)
{
	void *w = NULL;
	int rc = 0;

	__atomic_store_n(P->flag, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < P->nl && !rc; i++)
		rc = gp_cuda_gate(P->c, P->l[i].st, P->dflag, P->e) || gp_cuda_mark(P->c, P->l[i].st, &P->l[i].ev0, P->e);
	if (!rc)
		w = gp_xfer_watch_start(P->flag);
	for (int k = 0; k < iters && !rc; k++)         /* round robin: every stream gets work early */
		for (int i = 0; i < P->nl && !rc; i++)
			rc = copy1(P, &P->l[i]);
	for (int i = 0; i < P->nl && !rc; i++)
		rc = gp_cuda_mark(P->c, P->l[i].st, &P->l[i].ev1, P->e);
	__atomic_store_n(P->flag, 1, __ATOMIC_RELEASE);  /* even after an error: queued work must drain */
	*forced |= gp_xfer_watch_stop(w);
	if (rc) {
		for (int i = 0; i < P->nl; i++)
			(void)gp_cuda_sync(P->c, P->l[i].st, P->e);
		return -EIO;
	}
	*slow = 0;
	for (int i = 0; i < P->nl; i++) {
		float t;

		if (gp_cuda_elapsed(P->c, P->l[i].ev0, P->l[i].ev1, &t, P->e))
			return -EIO;
		ms[i] = t;
		if (t > *slow)
			*slow = t;
	}
	return 0;
}

static int lane_setup(struct prun *P, struct plane *l)
{
	const struct gp_xfer_spec *s = &l->r->spec;
	size_t n = P->s->size;

	l->sg = s->kind == GP_XFER_H2D ? -1 : s->gpu;
	l->dg = s->kind == GP_XFER_D2H ? -1 : s->kind == GP_XFER_PEER ? s->peer_gpu : s->gpu;
	l->q = s->gpu;
	if (!(l->bw = calloc((size_t)P->s->reps, sizeof(double))) || !(l->us = calloc((size_t)P->s->reps, sizeof(double))))
		return gp_err_set(P->e, GP_E_FAIL, ENOMEM, "out of memory");
	if (l->sg < 0 ? gp_cuda_host_alloc(P->c, n, &l->hsrc, P->e) || gp_cuda_host_dptr(P->c, l->hsrc, &l->dsrc, P->e) :
			gp_cuda_alloc(P->c, l->sg, n, &l->dsrc, P->e))
		return -EIO;
	if (l->dg < 0 ? gp_cuda_host_alloc(P->c, n, &l->hdst, P->e) || gp_cuda_host_dptr(P->c, l->hdst, &l->ddst, P->e) :
			gp_cuda_alloc(P->c, l->dg, n, &l->ddst, P->e))
		return -EIO;
	if (gp_cuda_stream_new(P->c, l->q, &l->st, P->e))
		return -EIO;
	if (s->kind == GP_XFER_PEER) {
		int ok = gp_cuda_can_peer(P->c, l->sg, l->dg, P->e);

		if (ok < 0)
			return ok;
		if (!ok)
			return gp_err_set(P->e, GP_E_UNAVAIL, EOPNOTSUPP,
					  "GPU%d cannot access GPU%d's memory directly (cuDeviceCanAccessPeer = 0)", l->sg, l->dg);
		if (gp_cuda_peer(P->c, l->sg, l->dg, 1, P->e))
			return -EIO;
	}
	return P->s->sm && gp_sm_prepare(P->c, l->q, P->e) ? -EIO : 0;
}

static void teardown(struct prun *P)
{
	for (int i = 0; i < P->nl; i++) {
		struct plane *l = &P->l[i];

		gp_cuda_event_free(P->c, l->ev0);
		gp_cuda_event_free(P->c, l->ev1);
		if (l->st)
			gp_cuda_stream_free(P->c, l->st);
		if (l->sg < 0 ? l->hsrc != NULL : l->dsrc != 0)
			l->sg < 0 ? gp_cuda_host_free(P->c, l->hsrc) : gp_cuda_free(P->c, l->sg, l->dsrc);
		if (l->dg < 0 ? l->hdst != NULL : l->ddst != 0)
			l->dg < 0 ? gp_cuda_host_free(P->c, l->hdst) : gp_cuda_free(P->c, l->dg, l->ddst);
		free(l->bw);
		free(l->us);
	}
	for (int g = 0; P->util && g < P->c->n; g++)
		if (P->util[g])
			gp_cuda_stream_free(P->c, P->util[g]);
	free(P->util);
	free(P->l);
	if (P->flag)
		gp_cuda_host_free(P->c, P->flag);
}

/* Warm-up, then `reps` timed batches, each with new source patterns, checked after. */
static int measure(struct prun *P, struct gp_bench_row *agg)
{
	const struct gp_xfer_spec *s = P->s;
	int verify = !s->no_verify, n = s->reps, rc, forced = 0;
	double *ms = calloc((size_t)P->nl, sizeof(double)), *tot = calloc((size_t)n, sizeof(double));
	double *us = calloc((size_t)n, sizeof(double)), slow = 0;
	uint64_t bytes = s->size * (uint64_t)s->iters;

	if (!ms || !tot || !us) {
		free(ms);
		free(tot);
		free(us);
		return gp_err_set(P->e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	rc = batch(P, 1, ms, &slow, &forced);
	for (int i = 0; i < P->nl && !rc && verify; i++)
		rc = put(P, &P->l[i], 1, P->l[i].r->spec.seed ^ 0x5a5a5a5aULL);
	for (int k = 0; k < n && !rc; k++) {
		int wrong = 0;

		for (int i = 0; i < P->nl && !rc && verify; i++)
			rc = put(P, &P->l[i], 0, P->l[i].r->spec.seed + 2 * (uint64_t)(k + 1));
		if (rc || (rc = batch(P, s->iters, ms, &slow, &forced)))
			break;
		tot[k] = gp_gbps(bytes * (uint64_t)P->nl, slow);
		us[k] = slow * 1e3 / s->iters;
		for (int i = 0; i < P->nl && !rc; i++) {
			struct gp_xfer_result *r = &P->l[i].r->res;

			P->l[i].bw[k] = gp_gbps(bytes, ms[i]);
			P->l[i].us[k] = ms[i] * 1e3 / s->iters;
			if (verify && r->verified) {
				int ok = check(P, &P->l[i], P->l[i].r->spec.seed + 2 * (uint64_t)(k + 1));

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
	struct prun P = { .c = c, .e = e };
	struct gp_bench_row *agg = n > 0 ? &rows[n - 1] : NULL;
	int rc = 0;

	if (!agg || !agg->aggregate)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "invalid pattern group");
	P.s = &agg->spec;
	if (agg->skip)
		return 0;
	if (!(P.l = calloc((size_t)n, sizeof(*P.l))) || !(P.util = calloc((size_t)c->n, sizeof(*P.util)))) {
		free(P.l);
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
	if (gp_cuda_scratch(c, agg->spec.size, &P.stage, e) || gp_cuda_host_alloc(c, 64, (void **)&P.flag, e) ||
	    gp_cuda_host_dptr(c, P.flag, &P.dflag, e))
		rc = -EIO;
	for (int i = 0; i < P.nl && !rc; i++)
		rc = lane_setup(&P, &P.l[i]);
	if (!rc)
		rc = measure(&P, agg);
	teardown(&P);
	for (int i = 0; i < n && !rc; i++)
		rows[i].done = !rows[i].skip;
	return rc;
}
