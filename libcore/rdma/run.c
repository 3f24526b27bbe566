/* gpup2p — timing RDMA operations: bandwidth (a window of operations in flight, every repetition
 * timed) and ping-pong latency, then the data checked; loopback drives both QPs from this thread, a
 * client drives its side while the server answers (rdma_cm.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/clock.h"
#include "gpup2p/bench.h"
#include "rdma/internal.h"

/* Copy between ep's GPU buffer and its staging copy. */
static int stage(struct gp_rdma *s, struct gp_rdma_ep *ep, uint64_t n, int to_gpu, struct gp_err *e)
{
	gp_cuda_stream *st;
	int rc;

	if ((rc = gp_cuda_stream_new(s->cuda, ep->gpu, &st, e)))
		return rc;
	rc = to_gpu ? gp_cuda_h2d(s->cuda, st, ep->dptr, ep->host, n, e) : gp_cuda_d2h(s->cuda, st, ep->host, ep->dptr, n, e);
	if (!rc)
		rc = gp_cuda_sync(s->cuda, st, e);
	gp_cuda_stream_free(s->cuda, st);
	return rc;
}

int gp_rdma_fill(struct gp_rdma *s, struct gp_rdma_ep *ep, uint64_t n, uint64_t seed, struct gp_err *e)
{
	gp_pattern_fill(ep->host, n, seed);
	return ep->dptr ? stage(s, ep, n, 1, e) : 0;
}

int gp_rdma_check(struct gp_rdma *s, struct gp_rdma_ep *ep, uint64_t n, uint64_t seed, const char *what,
		  int64_t *at, struct gp_err *e)
{
	uint8_t want, got;
	int64_t bad;
	int rc;

	if (ep->dptr && (rc = stage(s, ep, n, 0, e)))
		return rc;
	bad = gp_pattern_check(ep->host, n, seed, &want, &got);
	if (bad < 0)
		return 0;
	if (at)
		*at = bad;
	return gp_err_set(e, GP_E_FAIL, EBADMSG, "%s of %llu bytes on %s: wrong data at byte %lld (0x%02x, expected "
			  "0x%02x; %s memory)", what, (unsigned long long)n, ep->dev->at->device, (long long)bad, got, want,
			  ep->path);
}

int gp_rdma_post(struct gp_rdma *s, struct gp_rdma_ep *ep, int opcode, uint64_t n, int ctl, uint64_t id,
		 struct gp_err *e)
{
	struct gp_ibv_sge sg = { .addr = ctl ? (uintptr_t)(ep->ctl + GP_RDMA_CTL) : ep->addr, .length = (uint32_t)n,
				 .lkey = ctl ? ep->ctl_mr->lkey : ep->mr->lkey };
	struct gp_ibv_send_wr wr, *bad = NULL;
	int rc;

	(void)s;                              /* the session: the endpoint says which device */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sg;
	wr.num_sge = n ? 1 : 0;
	wr.opcode = opcode;
	wr.send_flags = GP_IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = ep->raddr;
	wr.wr.rdma.rkey = ep->rkey;
	if ((rc = gp_ibv_post_send(ep->qp, &wr, &bad)))
		return gp_err_set(e, GP_E_FAIL, rc > 0 ? rc : EIO, "ibv_post_send on %s: %s", ep->dev->at->device,
				  strerror(rc > 0 ? rc : EIO));
	return 0;
}

int gp_rdma_post_recv(struct gp_rdma *s, struct gp_rdma_ep *ep, uint64_t n, int ctl, struct gp_err *e)
{
	struct gp_ibv_sge sg = { .addr = ctl ? (uintptr_t)ep->ctl : ep->addr, .length = (uint32_t)(ctl ? GP_RDMA_CTL : n),
				 .lkey = ctl ? ep->ctl_mr->lkey : ep->mr->lkey };
	struct gp_ibv_recv_wr wr, *bad = NULL;
	int rc;

	(void)s;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = ctl ? 1 : 0;
	wr.sg_list = &sg;
	wr.num_sge = ctl || n ? 1 : 0;
	if ((rc = gp_ibv_post_recv(ep->qp, &wr, &bad)))
		return gp_err_set(e, GP_E_FAIL, rc > 0 ? rc : EIO, "ibv_post_recv on %s: %s", ep->dev->at->device,
				  strerror(rc > 0 ? rc : EIO));
	return 0;
}

double gp_rdma_now(const struct gp_rdma *s)
{
	return s->L && s->L->clock_s ? s->L->clock_s() : gp_clock_s();
}

int gp_rdma_timeout_s(const struct gp_rdma *s)
{
	return s->o.timeout_s > 0 ? s->o.timeout_s : 10;
}

/* The end of a wait: no completion on ep for limit seconds, the peer presumed gone (no goodbye). */
static int silent(struct gp_rdma *s, struct gp_rdma_ep *ep, double limit, struct gp_err *e)
{
	int timeout = gp_rdma_timeout_s(s);

	s->peer_lost = 1;
	if (limit > timeout + 0.5)
		return gp_err_set(e, GP_E_FAIL, ETIMEDOUT, "no completion on %s for %.0f s (gpup2p bench rdma --timeout "
				  "%d s and %.0f s for the peer's operations at a slow link's rate): the peer stopped "
				  "answering", ep->dev->at->device, limit, timeout, limit - timeout);
	return gp_err_set(e, GP_E_FAIL, ETIMEDOUT, "no completion on %s for %d s: the peer stopped answering "
			  "(gpup2p bench rdma --timeout SEC waits longer)", ep->dev->at->device, timeout);
}

int gp_rdma_wait(struct gp_rdma *s, struct gp_rdma_ep *ep, struct gp_ibv_wc *wc, int max, struct gp_err *e)
{
	double limit = gp_rdma_timeout_s(s) + s->slack_s;
	/* the library's own clock (the test double's) moves as completions are taken, the peer's thread's
	 * too, never while this one spins: a completion that comes later than the limit on it is the
	 * silence that real hardware's monotonic clock would have timed out */
	double t0 = 0, c0 = s->L->clock_s ? s->L->clock_s() : 0;

	for (unsigned spin = 0;; spin++) {
		int n = gp_ibv_poll_cq(ep->cq, max, wc);

		if (n < 0)
			return gp_err_set(e, GP_E_FAIL, EIO, "ibv_poll_cq on %s failed", ep->dev->at->device);
		for (int i = 0; i < n; i++)
			if (wc[i].status != GP_IBV_WC_SUCCESS && (s->peer_lost = 1))
				return gp_err_set(e, GP_E_FAIL, EIO, "a work request on %s port %d completed with \"%s\" "
						  "(status %d, vendor error 0x%x)%s", ep->dev->at->device, ep->dev->at->port,
						  s->L->ibv_wc_status_str((unsigned)wc[i].status), wc[i].status, wc[i].vendor_err,
						  wc[i].status == 12 || wc[i].status == 13 ? ": the peer stopped answering" : "");
		if (n && s->L->clock_s && s->L->clock_s() - c0 > limit)
			return silent(s, ep, limit, e);
		if (n)
			return n;
		if (!(spin & 1023)) {
			double t = gp_clock_s();

			if (!t0)
				t0 = t;
			else if (t - t0 > limit)
				return silent(s, ep, limit, e);
		}
	}
}

/* Bandwidth: iters operations of n bytes from ep a, a window in flight; loopback send has b post the
 * receives. Returns seconds or a negative errno. */
int gp_rdma_bw_once(struct gp_rdma *s, struct gp_rdma_ep *a, struct gp_rdma_ep *b, int opcode, uint64_t n, int iters,
		   double *sec, struct gp_err *e)
{
	int window = opcode == GP_IBV_WR_RDMA_READ ? s->max_rd : GP_RDMA_WINDOW;
	int posted = 0, done = 0, rposted = 0, rdone = 0, rc;
	struct gp_ibv_wc wc[32];
	double t0;

	if (window > GP_RDMA_WINDOW)
		window = GP_RDMA_WINDOW;
	if (b)                              /* receives first: no send finds an empty queue */
		for (; rposted < iters && rposted < GP_RDMA_WINDOW; rposted++)
			if ((rc = gp_rdma_post_recv(s, b, n, 0, e)))
				return rc;
	t0 = gp_rdma_now(s);
	while (done < iters) {
		while (posted < iters && posted - done < window && (!b || posted < rposted))
			if ((rc = gp_rdma_post(s, a, opcode, n, 0, (uint64_t)posted++, e)))
				return rc;
		if ((rc = gp_rdma_wait(s, a, wc, 32, e)) < 0)
			return rc;
		done += rc;
		while (b && rdone < posted) {
			int k = gp_rdma_wait(s, b, wc, 32, e);

			if (k < 0)
				return k;
			rdone += k;
			for (; k > 0 && rposted < iters; k--, rposted++)
				if ((rc = gp_rdma_post_recv(s, b, n, 0, e)))
					return rc;
		}
	}
	*sec = gp_rdma_now(s) - t0;
	return 0;
}

uint64_t gp_rdma_seed(uint64_t bytes, int op, int lat)
{
	return 0x7264 + bytes * 31 + (uint64_t)op * 7 + (uint64_t)lat;
}

int gp_rdma_opcode(int op)
{
	return op == GP_RDMA_WRITE ? GP_IBV_WR_RDMA_WRITE : op == GP_RDMA_READ ? GP_IBV_WR_RDMA_READ : GP_IBV_WR_SEND;
}

/* One ping-pong in loopback: a to b, then b to a (write: with immediate, so that the other side sees a
 * completion; read: one read). Returns microseconds one way in *us. */
static int lat_once(struct gp_rdma *s, int op, uint64_t n, double *us, struct gp_err *e)
{
	struct gp_rdma_ep *a = &s->ep[0], *b = &s->ep[1];
	struct gp_ibv_wc wc[4];
	int opc = op == GP_RDMA_WRITE ? GP_IBV_WR_RDMA_WRITE_WITH_IMM : gp_rdma_opcode(op), rc;
	double t0;

	if (op == GP_RDMA_READ) {
		t0 = gp_rdma_now(s);
		if ((rc = gp_rdma_post(s, a, opc, n, 0, 0, e)) || (rc = gp_rdma_wait(s, a, wc, 1, e)) < 0)
			return rc;
		*us = (gp_rdma_now(s) - t0) * 1e6;
		return 0;
	}
	if ((rc = gp_rdma_post_recv(s, b, n, 0, e)) || (rc = gp_rdma_post_recv(s, a, n, 0, e)))
		return rc;
	t0 = gp_rdma_now(s);
	for (int side = 0; side < 2; side++) {
		struct gp_rdma_ep *from = side ? b : a, *to = side ? a : b;
		int got_send = 0, got_recv = 0;

		if ((rc = gp_rdma_post(s, from, opc, n, 0, 0, e)))
			return rc;
		while (!got_recv) {                 /* the receiver's completion says the data is there */
			if ((rc = gp_rdma_wait(s, to, wc, 4, e)) < 0)
				return rc;
			got_recv += rc;
		}
		while (!got_send) {
			if ((rc = gp_rdma_wait(s, from, wc, 4, e)) < 0)
				return rc;
			got_send += rc;
		}
	}
	*us = (gp_rdma_now(s) - t0) * 1e6 / 2;
	return 0;
}

void gp_rdma_rates(struct gp_rdma *s, struct gp_rdma_result *r, double *v, int n)
{
	double total = 0, best = 0;
	struct gp_stats st;

	if (r->lat) {
		gp_stats_compute(v, n, &st);
		r->us_min = st.min;
		r->us_median = st.median;
		r->us_p99 = st.p99;
		return;
	}
	for (int i = 0; i < n; i++) {
		total += v[i];
		if (v[i] > 0 && (best == 0 || v[i] < best))
			best = v[i];
	}
	r->gbps = gp_gbps(r->bytes * (uint64_t)r->iters * (uint64_t)n, total * 1e3);
	r->gbits_avg = r->gbps * 8;
	r->gbits_peak = gp_gbps(r->bytes * (uint64_t)r->iters, best * 1e3) * 8;
	r->mpps = total > 0 ? (double)r->iters * n / total / 1e6 : 0;
	r->port_fraction = s->info.port_gbits > 0 ? r->gbits_avg / s->info.port_gbits : 0;
}

static int run_loopback(struct gp_rdma *s, struct gp_rdma_result *r, int no_verify, struct gp_err *e)
{
	struct gp_rdma_ep *src = &s->ep[r->op == GP_RDMA_READ], *dst = &s->ep[r->op != GP_RDMA_READ];
	uint64_t seed = gp_rdma_seed(r->bytes, r->op, r->lat);
	int n = r->lat ? r->iters * r->reps : r->reps, rc = 0;
	double *v = calloc((size_t)n, sizeof(double));

	if (!v)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	/* data moves src -> dst (read: QP 0 reads QP 1's buffer); the destination starts different */
	if ((rc = gp_rdma_fill(s, src, r->bytes, seed, e)) || (rc = gp_rdma_fill(s, dst, r->bytes, ~seed, e)))
		goto out;
	for (int i = 0; i < n && !rc; i++)
		rc = r->lat ? lat_once(s, r->op, r->bytes, &v[i], e) :
		     gp_rdma_bw_once(s, &s->ep[0], r->op == GP_RDMA_SEND ? &s->ep[1] : NULL, gp_rdma_opcode(r->op), r->bytes, r->iters,
			     &v[i], e);
	if (rc)
		goto out;
	gp_rdma_rates(s, r, v, n);
	if (!no_verify) {
		/* a write or send ping-pong leaves the data on both sides: check both */
		if (r->lat && r->op != GP_RDMA_READ && (rc = gp_rdma_check(s, src, r->bytes, seed, "ping-pong", NULL, e)))
			goto out;
		if ((rc = gp_rdma_check(s, dst, r->bytes, seed, gp_rdma_op_name(r->op), NULL, e)))
			goto out;
		r->verified = 1;
	}
out:
	free(v);
	return rc;
}

int gp_rdma_run(struct gp_rdma *s, int op, int lat, uint64_t size, int iters, int reps, int no_verify,
		struct gp_rdma_result *r, struct gp_err *e)
{
	int rc;

	memset(r, 0, sizeof(*r));
	r->op = op;
	r->lat = lat;
	r->bytes = size;
	r->iters = iters;
	r->reps = reps;
	if (size > s->o.max_size || !size || size > UINT32_MAX)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "message size %llu outside 1..%llu", (unsigned long long)size,
				  (unsigned long long)s->o.max_size);
	if (s->o.role == GP_RDMA_SERVER)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "a server answers runs (gp_rdma_serve)");
	if (!gp_rdma_counts_ok((uint32_t)op, (uint32_t)lat, (uint32_t)iters, (uint32_t)reps) || iters < 1 || reps < 1)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "%d iterations x %d repetitions: at most %d x %d (latency: %d "
				  "round trips in all)", iters, reps, GP_RDMA_MAX_ITERS, GP_RDMA_MAX_REPS, GP_RDMA_MAX_SAMPLES);
	s->slack_s = gp_rdma_slack(s, 2, size, lat);       /* a message on a slow link, and its answer */
	rc = s->o.role == GP_RDMA_LOOPBACK ? run_loopback(s, r, no_verify, e) : gp_rdma_client_run(s, r, no_verify, e);
	s->slack_s = 0;
	return rc;
}

int gp_rdma_pump(struct gp_rdma *s, struct gp_rdma_ep *ep, struct gp_err *e)
{
	struct gp_ibv_wc wc;
	int rc = gp_rdma_wait(s, ep, &wc, 1, e);

	if (rc < 0)
		return rc;
	if (!(wc.opcode & GP_IBV_WC_RECV))
		ep->n_send++;
	else if (wc.wr_id == 1)
		ep->n_ctl++;
	else
		ep->n_recv++;
	return 0;
}
