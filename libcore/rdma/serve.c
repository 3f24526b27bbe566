/* gpup2p — one measurement between two hosts: the client drives it (run, then the operations, then
 * done), the server prepares its buffer and receives, answers ping-pongs, and checks what landed in its
 * memory (result). Control messages: struct gp_rdma_ctl on the connection's RC QP. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/clock.h"
#include "gpup2p/bench.h"
#include "rdma/internal.h"

enum { CTL_RUN = 1, CTL_READY = 2, CTL_DONE = 3, CTL_RESULT = 4, CTL_BYE = 5 };

/* Pump ep's CQ until *counter reaches want. */
static int until(struct gp_rdma *s, struct gp_rdma_ep *ep, long *counter, long want, struct gp_err *e)
{
	int rc;

	while (*counter < want)
		if ((rc = gp_rdma_pump(s, ep, e)))
			return rc;
	return 0;
}

static int client_ops(struct gp_rdma *s, struct gp_rdma_result *r, double *v, int n, struct gp_err *e)
{
	struct gp_rdma_ep *ep = &s->ep[0];
	int opc = r->lat && r->op == GP_RDMA_WRITE ? GP_IBV_WR_RDMA_WRITE_WITH_IMM : gp_rdma_opcode(r->op), rc;

	for (int i = 0; i < n; i++) {
		long sends = ep->n_send + 1, recvs = ep->n_recv + 1;
		double t0;

		if (!r->lat) {
			if ((rc = gp_rdma_bw_once(s, ep, NULL, opc, r->bytes, r->iters, &v[i], e)))
				return rc;
			continue;
		}
		if (r->op != GP_RDMA_READ && (rc = gp_rdma_post_recv(s, ep, r->bytes, 0, e)))
			return rc;
		t0 = gp_rdma_now(s);
		if ((rc = gp_rdma_post(s, ep, opc, r->bytes, 0, 0, e)) || (rc = until(s, ep, &ep->n_send, sends, e)))
			return rc;
		if (r->op != GP_RDMA_READ && (rc = until(s, ep, &ep->n_recv, recvs, e)))
			return rc;
		v[i] = (gp_rdma_now(s) - t0) * 1e6 / (r->op == GP_RDMA_READ ? 1 : 2);
	}
	return 0;
}

int gp_rdma_result_check(const struct gp_rdma_ctl *m, const struct gp_rdma_result *r, const char *host,
			 struct gp_err *e)
{
	if (m->verified == 2)
		return gp_err_set(e, GP_E_FAIL, EBADMSG, "%s of %llu bytes to %s: the server found wrong data at byte %llu",
				  gp_rdma_op_name(r->op), (unsigned long long)r->bytes, host ? host : "the server",
				  (unsigned long long)m->size);
	return 0;
}

int gp_rdma_client_run(struct gp_rdma *s, struct gp_rdma_result *r, int no_verify, struct gp_err *e)
{
	struct gp_rdma_ep *ep = &s->ep[0];
	uint64_t seed = gp_rdma_seed(r->bytes, r->op, r->lat);
	struct gp_rdma_ctl m = { .magic = GP_RDMA_MAGIC, .kind = CTL_RUN, .op = (uint32_t)r->op, .lat = (uint32_t)r->lat,
				 .iters = (uint32_t)r->iters, .reps = (uint32_t)r->reps, .no_verify = (uint32_t)no_verify,
				 .size = r->bytes, .seed = seed };
	int n = r->lat ? r->iters * r->reps : r->reps, rc;
	double *v = calloc((size_t)n, sizeof(double));

	if (!v)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	/* this side is the source (write, send) or the destination (read: starts different) */
	if ((rc = gp_rdma_fill(s, ep, r->bytes, r->op == GP_RDMA_READ ? ~seed : seed, e)) ||
	    (rc = gp_rdma_ctl_send(s, &m, e)) || (rc = gp_rdma_ctl_recv(s, CTL_READY, &m, e)) ||
	    (rc = client_ops(s, r, v, n, e)))
		goto out;
	m.kind = CTL_DONE;
	if ((rc = gp_rdma_post_recv(s, ep, 0, 1, e)) || (rc = gp_rdma_ctl_send(s, &m, e)) ||
	    (rc = gp_rdma_ctl_recv(s, CTL_RESULT, &m, e)) || (rc = gp_rdma_post_recv(s, ep, 0, 1, e)))
		goto out;
	if ((rc = gp_rdma_result_check(&m, r, s->o.host, e)))
		goto out;
	if (!no_verify && (r->op == GP_RDMA_READ || r->lat) &&
	    (rc = gp_rdma_check(s, ep, r->bytes, seed, gp_rdma_op_name(r->op), NULL, e)))
		goto out;
	r->verified = !no_verify;
	gp_rdma_rates(s, r, v, n);
out:
	free(v);
	return rc;
}

int gp_rdma_counts_ok(uint32_t op, uint32_t lat, uint32_t iters, uint32_t reps)
{
	if ((op != GP_RDMA_WRITE && op != GP_RDMA_READ && op != GP_RDMA_SEND) || lat > 1)
		return 0;
	if (!iters || !reps || iters > GP_RDMA_MAX_ITERS || reps > GP_RDMA_MAX_REPS)
		return 0;
	return !lat || (uint64_t)iters * reps <= GP_RDMA_MAX_SAMPLES;
}

int gp_rdma_run_check(const struct gp_rdma_ctl *m, uint64_t max_size, struct gp_err *e)
{
	if (!gp_rdma_counts_ok(m->op, m->lat, m->iters, m->reps))
		return gp_err_set(e, GP_E_FAIL, EPROTO, "the client asked for operation %u (latency %u), %u iterations x "
				  "%u repetitions: at most %d x %d; is it gpup2p of another version?", m->op, m->lat,
				  m->iters, m->reps, GP_RDMA_MAX_ITERS, GP_RDMA_MAX_REPS);
	if (!m->size || m->size > max_size)
		return gp_err_set(e, GP_E_FAIL, EPROTO, "the client asked for %llu bytes; this server's buffer has %llu "
				  "(gpup2p bench rdma --server --size or --max)", (unsigned long long)m->size, (unsigned long long)max_size);
	return 0;
}

double gp_rdma_slack(const struct gp_rdma *s, double ops, uint64_t size, int lat)
{
	double gbits = s->info.port_gbits > 0 ? s->info.port_gbits : 2.0;
	double bytes_s = gbits * 1e9 / 8 / GP_RDMA_SLOW_DIV;
	double t = ops * ((double)size / bytes_s + (lat ? 1e-3 : 1e-4));

	/* a client that vanished mid-run leaves this side polling until then: no more than this */
	return t < GP_RDMA_SLACK_MAX ? t : GP_RDMA_SLACK_MAX;
}

/* The server's part of one run. The client's message is checked before anything is used. */
static int serve_one(struct gp_rdma *s, struct gp_rdma_ctl *m, struct gp_err *e)
{
	struct gp_rdma_ep *ep = &s->ep[0];
	long total, base = ep->n_recv, rposted = 0;
	int send_bw = m->op == GP_RDMA_SEND && !m->lat, pong = m->lat && m->op != GP_RDMA_READ, rc;
	int opc = m->op == GP_RDMA_WRITE ? GP_IBV_WR_RDMA_WRITE_WITH_IMM : GP_IBV_WR_SEND;
	int64_t bad;

	if ((rc = gp_rdma_run_check(m, s->o.max_size, e)))
		return rc;
	total = (long)m->iters * m->reps;          /* at most 1e11: no overflow */
	/* RDMA READ and WRITE (but a write ping-pong's) complete nothing here and the client sends nothing
	 * while it times them: its next message comes after all of them, which a slow link may stretch
	 * past --timeout; a send or a ping-pong completes a receive here every message */
	s->slack_s = gp_rdma_slack(s, send_bw || pong ? 2 : (double)total, m->size, (int)m->lat);
	if ((rc = gp_rdma_fill(s, ep, m->size, m->op == GP_RDMA_READ ? m->seed : ~m->seed, e)))
		return rc;
	for (; send_bw && rposted < total && rposted < GP_RDMA_WINDOW; rposted++)
		if ((rc = gp_rdma_post_recv(s, ep, m->size, 0, e)))
			return rc;
	if (pong && (rc = gp_rdma_post_recv(s, ep, m->size, 0, e)))
		return rc;
	if ((!send_bw && !pong) || (send_bw && rposted == total))
		if ((rc = gp_rdma_post_recv(s, ep, 0, 1, e)))
			return rc;
	m->kind = CTL_READY;
	if ((rc = gp_rdma_ctl_send(s, m, e)))
		return rc;
	while (send_bw && ep->n_recv - base < total) {
		long before = ep->n_recv;

		if ((rc = gp_rdma_pump(s, ep, e)))
			return rc;
		for (long k = ep->n_recv - before; k > 0 && rposted < total; k--)
			if ((rc = gp_rdma_post_recv(s, ep, m->size, 0, e)) || (++rposted == total &&
									       (rc = gp_rdma_post_recv(s, ep, 0, 1, e))))
				return rc;
	}
	for (long i = 0; pong && i < total; i++) {
		long sends = ep->n_send + 1;

		if ((rc = until(s, ep, &ep->n_recv, base + i + 1, e)) ||
		    (rc = gp_rdma_post_recv(s, ep, i + 1 < total ? m->size : 0, i + 1 == total, e)) ||
		    (rc = gp_rdma_post(s, ep, opc, m->size, 0, 0, e)) || (rc = until(s, ep, &ep->n_send, sends, e)))
			return rc;
	}
	if ((rc = gp_rdma_ctl_recv(s, CTL_DONE, m, e)))
		return rc;
	m->verified = 0;
	if (!m->no_verify && m->op != GP_RDMA_READ) {
		struct gp_err ce = { 0 };

		bad = -1;
		rc = gp_rdma_check(s, ep, m->size, m->seed, gp_rdma_op_name((int)m->op), &bad, &ce);
		if (rc && rc != -EBADMSG)
			return gp_err_set(e, ce.cls, ce.errnum, "%s", ce.msg);
		m->verified = rc ? 2 : 1;
		if (rc)
			m->size = (uint64_t)bad;
	}
	m->kind = CTL_RESULT;
	if ((rc = gp_rdma_post_recv(s, ep, 0, 1, e)))
		return rc;
	return gp_rdma_ctl_send(s, m, e);
}

int gp_rdma_serve(struct gp_rdma *s, struct gp_err *e)
{
	struct gp_rdma_ctl m;
	int rc;

	if (s->o.role != GP_RDMA_SERVER)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "not a server session");
	for (;;) {
		if ((rc = gp_rdma_ctl_recv(s, 0, &m, e)))
			return rc;
		if (m.kind == CTL_BYE)
			return 0;
		if (m.kind != CTL_RUN)
			return gp_err_set(e, GP_E_FAIL, EPROTO, "the client sent control message %u, expected a run", m.kind);
		rc = serve_one(s, &m, e);
		s->slack_s = 0;                    /* between runs: the client's next message at once */
		if (rc)
			return rc;
	}
}
