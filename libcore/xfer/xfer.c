/* gpup2p — one measured, verified copy path. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpup2p/clock.h"
#include "gpup2p/numa.h"
#include "gpup2p/chase.h"
#include "gpup2p/smcopy.h"
#include "gpup2p/xfer.h"
#include "xfer/lane.h"

#define GATE_WATCHDOG_MS 5000

struct run {
	struct gp_cuda *c;
	const struct gp_xfer_spec *s;
	struct gp_err *e;
	struct gp_xfer_io io;          /* the lanes' calls */
	struct gp_xfer_lane l[2];      /* one direction of the path each */
	uint64_t seed[2];              /* their patterns' seeds */
	int nl;
	void *hbuf[2];                 /* host buffers (pinned or pageable) */
	int hpinned[2];
	gp_dptr dbuf[4];
	int dgpu[4], ndbuf;
	gp_cuda_stream *st[2];         /* one per GPU involved */
	int stg[2], nst;
};

struct watchdog {
	pthread_t th;
	uint32_t *flag;
	int done, forced, started;
};

static void *watch(void *arg)
{
	struct watchdog *w = arg;

	for (int ms = 0; ms < GATE_WATCHDOG_MS; ms++) {
		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
			return NULL;
		usleep(1000);
	}
	w->forced = 1;
	__atomic_store_n(w->flag, 1, __ATOMIC_RELEASE);
	return NULL;
}

void *gp_xfer_watch_start(uint32_t *flag)
{
	struct watchdog *w = calloc(1, sizeof(*w));

	if (w) {
		w->flag = flag;
		w->started = pthread_create(&w->th, NULL, watch, w) == 0;
	}
	return w;
}

int gp_xfer_watch_stop(void *wd)
{
	struct watchdog *w = wd;
	int forced;

	if (!w)
		return 0;
	if (w->started) {
		__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
		pthread_join(w->th, NULL);
	}
	forced = w->forced;
	free(w);
	return forced;
}

const char *gp_xfer_kind_name(enum gp_xfer_kind k)
{
	switch (k) {
	case GP_XFER_H2D: return "h2d";
	case GP_XFER_D2H: return "d2h";
	case GP_XFER_D2D: return "d2d";
	case GP_XFER_PEER: return "peer";
	}
	return "?";
}

static gp_cuda_stream *stream_for(struct run *R, int g)
{
	for (int i = 0; i < R->nst; i++)
		if (R->stg[i] == g)
			return R->st[i];
	if (R->nst == 2 || gp_cuda_stream_new(R->c, g, &R->st[R->nst], R->e))
		return NULL;
	R->stg[R->nst] = g;
	return R->st[R->nst++];
}

/* The lanes' staging stream of GPU g: the path's stream of that GPU. */
static gp_cuda_stream *io_stream(struct gp_xfer_io *io, int g)
{
	return stream_for((struct run *)((char *)io - offsetof(struct run, io)), g);
}

static int dev_alloc(struct run *R, int g, gp_dptr *p)
{
	if (gp_cuda_alloc(R->c, g, R->s->size, p, R->e))
		return -EIO;
	R->dgpu[R->ndbuf] = g;
	R->dbuf[R->ndbuf++] = *p;
	return 0;
}

static int host_alloc(struct run *R, int pinned, void **p)
{
	int k = R->hbuf[0] ? 1 : 0;

	if (pinned) {
		if (gp_cuda_host_alloc(R->c, R->s->size, p, R->e))
			return -EIO;
	} else {
		size_t n = (R->s->size + 4095) & ~(size_t)4095;

		*p = aligned_alloc(4096, n);
		if (!*p)
			return gp_err_set(R->e, GP_E_FAIL, ENOMEM, "cannot allocate %llu bytes of host memory",
					  (unsigned long long)R->s->size);
		memset(*p, 0, n); /* touch: pages land on the bound node now, not during timing */
	}
	R->hbuf[k] = *p;
	R->hpinned[k] = pinned;
	return 0;
}

/* SM copies: the kernel's GPU addresses of the host buffers, the kernels loaded before any gate. */
static int sm_setup(struct run *R)
{
	const struct gp_xfer_spec *s = R->s;

	if ((s->kind == GP_XFER_H2D || s->kind == GP_XFER_D2H) && !s->pinned)
		return gp_err_set(R->e, GP_E_USAGE, EINVAL, "SM copies need pinned host memory");
	if (s->kind == GP_XFER_PEER && !s->p2p)
		return gp_err_set(R->e, GP_E_USAGE, EINVAL, "SM copies between GPUs need peer access");
	for (int i = 0; i < R->nl; i++)
		if ((R->l[i].hsrc && gp_cuda_host_dptr(R->c, R->l[i].hsrc, &R->l[i].dsrc, R->e)) ||
		    (R->l[i].hdst && gp_cuda_host_dptr(R->c, R->l[i].hdst, &R->l[i].ddst, R->e)) ||
		    gp_sm_prepare(R->c, R->l[i].st, R->e))
			return -EIO;
	return 0;
}

/* Duplex h2d/d2h. SM: lane 0 is one kernel that copies both ways between its two buffers (lane.h's
 * duplex). CE: lane 1 is the opposite copy on the same GPU, on a stream of its own, twice as many
 * copies so that it lasts the whole batch; it loads the link and is not counted. */
static int duplex(struct run *R)
{
	struct gp_xfer_lane *l = &R->l[1];
	void *h;

	if (R->s->sm) {
		R->l[0].duplex = 1;
		return 0;
	}
	R->nl = 2;
	l->sgpu = R->l[0].dgpu;
	l->dgpu = R->l[0].sgpu;
	l->q = R->s->gpu;
	l->mult = 2;
	l->noise = 1;
	if (host_alloc(R, R->s->pinned, &h) || dev_alloc(R, R->s->gpu, l->sgpu < 0 ? &l->ddst : &l->dsrc) ||
	    gp_cuda_stream_new(R->c, R->s->gpu, &R->st[R->nst], R->e))
		return -EIO;
	*(l->sgpu < 0 ? &l->hsrc : &l->hdst) = h;
	R->stg[R->nst] = -1;            /* never the path's stream of a GPU (stream_for) */
	l->st = R->st[R->nst++];
	return 0;
}

static int setup(struct run *R)
{
	const struct gp_xfer_spec *s = R->s;
	struct gp_xfer_lane *l = R->l;
	void *h;

	if (gp_cuda_host_alloc(R->c, 64, (void **)&R->io.flag, R->e) ||
	    gp_cuda_host_dptr(R->c, R->io.flag, &R->io.dflag, R->e))
		return -EIO;
	R->nl = 1;
	l[0].sgpu = l[0].dgpu = l[0].q = s->gpu;
	switch (s->kind) {
	case GP_XFER_H2D:
		l[0].sgpu = -1;
		if (host_alloc(R, s->pinned, &h) || dev_alloc(R, s->gpu, &l[0].ddst))
			return -EIO;
		l[0].hsrc = h;
		break;
	case GP_XFER_D2H:
		l[0].dgpu = -1;
		if (host_alloc(R, s->pinned, &h) || dev_alloc(R, s->gpu, &l[0].dsrc))
			return -EIO;
		l[0].hdst = h;
		break;
	case GP_XFER_D2D:
		if (dev_alloc(R, s->gpu, &l[0].dsrc) || dev_alloc(R, s->gpu, &l[0].ddst))
			return -EIO;
		break;
	case GP_XFER_PEER:
		l[0].dgpu = s->peer_gpu;
		l[0].q = s->read ? s->peer_gpu : s->gpu;
		if (dev_alloc(R, s->gpu, &l[0].dsrc) || dev_alloc(R, s->peer_gpu, &l[0].ddst))
			return -EIO;
		if (s->bidir) {
			R->nl = 2;
			l[1].sgpu = s->peer_gpu;
			l[1].dgpu = s->gpu;
			l[1].q = s->read ? s->gpu : s->peer_gpu;
			if (dev_alloc(R, s->peer_gpu, &l[1].dsrc) || dev_alloc(R, s->gpu, &l[1].ddst))
				return -EIO;
		}
		break;
	}
	/* pinned host buffers: their device addresses, for SM copies and the pattern kernels */
	if ((l[0].hsrc && s->pinned && gp_cuda_host_dptr(R->c, l[0].hsrc, &l[0].dsrc, R->e)) ||
	    (l[0].hdst && s->pinned && gp_cuda_host_dptr(R->c, l[0].hdst, &l[0].ddst, R->e)))
		return -EIO;
	if (s->bidir && s->kind != GP_XFER_PEER && duplex(R))
		return -EIO;
	for (int i = 0; i < R->nl; i++) {
		R->seed[i] = s->seed * 2 + (uint64_t)i;
		if (!l[i].st && !(l[i].st = stream_for(R, l[i].q)))
			return -EIO;
	}
	return s->sm ? sm_setup(R) : 0;
}

/* Peer access as the spec asks, in the directions its lanes need. */
static int peer_setup(struct run *R)
{
	const struct gp_xfer_spec *s = R->s;
	int a = s->gpu, b = s->peer_gpu;

	if (s->kind != GP_XFER_PEER)
		return 0;
	if (s->p2p) {
		for (int i = 0, rc; i < R->nl; i++)
			if ((rc = gp_cuda_peer_require(R->c, R->l[i].q, R->l[i].q == R->l[i].sgpu ? R->l[i].dgpu : R->l[i].sgpu,
							R->e)))
				return rc;
		return 0;
	}
	return gp_cuda_peer(R->c, a, b, 0, R->e) || gp_cuda_peer(R->c, b, a, 0, R->e) ? -EIO : 0;
}

static void teardown(struct run *R)
{
	gp_xfer_lanes_free(R->c, R->l, R->nl);
	for (int i = 0; i < R->nst; i++)
		gp_cuda_stream_free(R->c, R->st[i]);
	for (int i = 0; i < R->ndbuf; i++)
		gp_cuda_free(R->c, R->dgpu[i], R->dbuf[i]);
	for (int i = 0; i < 2; i++) {
		if (R->hbuf[i] && R->hpinned[i])
			gp_cuda_host_free(R->c, R->hbuf[i]);
		else
			free(R->hbuf[i]);
	}
	gp_cuda_host_free(R->c, R->io.flag);
}

/* The pattern the sources hold for timed batch k: `each` (gpup2p copy) a new one for every copy, checked
 * after it; else one for the whole path, checked once after the last batch, so that the timed batches
 * run back to back as with no_verify and no check touches them. */
static uint64_t checked_pattern(const struct gp_xfer_spec *s, int k)
{
	return 2 * (uint64_t)(s->each ? k + 1 : 1);
}

static int put_sources(struct run *R, uint64_t pat)
{
	for (int i = 0; i < R->nl; i++)
		if (gp_xfer_lane_put(&R->io, &R->l[i], 0, R->seed[i] + pat))
			return -EIO;
	return 0;
}

/* Check every lane's destination after batch k: 0 (r->verified 0 with the first wrong lane), or -EIO. */
static int check_lanes(struct run *R, uint64_t pat, int k, struct gp_xfer_result *r)
{
	for (int i = 0; i < R->nl && r->verified; i++) {
		int ok;

		r->bad_lane = i;             /* a duplex lane's check says 1 where its reverse copy went wrong */
		if ((ok = gp_xfer_lane_check(&R->io, &R->l[i], R->seed[i] + pat, r)) < 0)
			return ok;
		if (!ok)
			r->verified = 0, r->bad_copy = k;
	}
	return 0;
}

/* The measurement proper, once everything is allocated. */
static int measure(struct run *R, struct gp_xfer_result *r)
{
	const struct gp_xfer_spec *s = R->s;
	int n = s->each ? s->iters : s->reps, per = s->each ? 1 : s->iters, verify = s->each || !s->no_verify, rc;
	double *bw = calloc((size_t)n, sizeof(double)), *us = calloc((size_t)n, sizeof(double)), ms;
	uint64_t bytes = s->size * (uint64_t)per * (uint64_t)(R->nl - R->l[R->nl - 1].noise);
	double scale = R->l[0].duplex ? 0.5 : 1;     /* duplex SM: both ways' bytes, per direction */

	if (!bw || !us) {
		free(bw);
		free(us);
		return gp_err_set(R->e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	/* No gate where the driver may block the queueing thread until the copy ran: pageable host
	 * memory, and peer copies without peer access (staged through host memory by the driver). On
	 * the H200 machine a gated 64 MiB staged copy held the host until the watchdog opened the gate. */
	r->gated = (s->kind == GP_XFER_PEER && s->p2p) || s->kind == GP_XFER_D2D ||
		   ((s->kind == GP_XFER_H2D || s->kind == GP_XFER_D2H) && s->pinned);
	r->verified = verify ? 1 : -1;
	/* warm up (first-touch of pages, peer mappings), then put the "before" pattern in place */
	rc = gp_xfer_lanes_batch(&R->io, R->l, R->nl, 1, r->gated, NULL, &ms, &r->gate_forced);
	for (int i = 0; i < R->nl && !rc && verify; i++)
		rc = gp_xfer_lane_put(&R->io, &R->l[i], 1, R->seed[i] ^ 0x5a5a5a5aULL);
	for (int k = 0; k < n && !rc; k++) {
		uint64_t pat = checked_pattern(s, k);

		if (verify && (s->each || k == 0))
			rc = put_sources(R, pat);
		if (!rc)
			rc = gp_xfer_lanes_batch(&R->io, R->l, R->nl, per, r->gated, NULL, &ms, &r->gate_forced);
		if (rc)
			break;
		bw[k] = gp_gbps(bytes, ms) * scale;
		us[k] = ms * 1e3 / per;
		if (verify && (s->each || k == n - 1) && (rc = check_lanes(R, pat, k, r)) == 0 && !r->verified)
			n = k + 1;
	}
	if (!rc && s->host_timing) {
		double t0 = (gp_clock_s() * 1e6);

		for (int k = 0; k < s->iters && !rc; k++)
			rc = gp_xfer_lane_copy(&R->io, &R->l[0], 1) || gp_cuda_sync(R->c, R->l[0].st, R->e);
		r->host_us = ((gp_clock_s() * 1e6) - t0) / s->iters;
	}
	if (!rc) {
		gp_stats_compute(bw, n, &r->gbps);
		gp_stats_compute(us, n, &r->us);
	}
	free(bw);
	free(us);
	return rc ? -EIO : 0;
}

int gp_xfer_run(struct gp_cuda *c, const struct gp_xfer_spec *s, struct gp_xfer_result *r, struct gp_err *e)
{
	struct run R = { .c = c, .s = s, .e = e, .io = { .c = c, .e = e, .size = s->size, .sm = s->sm, .stream = io_stream } };
	struct gp_numa_saved sv = { 0 };
	int rc;

	if (s->chase)
		return gp_chase_run(c, s, r, e);
	memset(r, 0, sizeof(*r));
	r->host_node = -1;
	r->bad_offset = -1;
	if (s->size == 0 || s->iters < 1 || s->reps < 1 || s->gpu < 0 || s->gpu >= c->n ||
	    (s->kind == GP_XFER_PEER && (s->peer_gpu < 0 || s->peer_gpu >= c->n || s->peer_gpu == s->gpu)))
		return gp_err_set(e, GP_E_USAGE, EINVAL, "invalid copy: size, counts or GPU numbers out of range");
	if (s->numa >= 0 && gp_numa_bind(s->numa, &sv, e))
		return -EINVAL;
	rc = setup(&R);
	if (!rc)
		rc = peer_setup(&R);
	if (!rc)
		rc = measure(&R, r);
	if (!rc && R.hbuf[0])
		r->host_node = gp_numa_of(R.hbuf[0]);
	teardown(&R);
	gp_numa_unbind(&sv);
	return rc;
}
