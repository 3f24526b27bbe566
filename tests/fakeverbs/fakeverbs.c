/* A test double of libibverbs.so.1 (tests only, never installed): the calls gpup2p makes (libcore/rdma/verbs.c's
 * probe, libcore/rdma/verbs_lib.c's binding), with RC queue pairs that run in this process: a post copies the
 * data at once (memcpy between registered memory, rkeys checked) and queues the completions that
 * ibv_poll_cq, through the context's ops, hands out. Built twice: with ibv_reg_dmabuf_mr (rdma-core 34 and
 * later) and, with -DFAKEVERBS_OLD, without it. Symbol versions as rdma-core's (fakeverbs.map).
 *
 * Controls (environment):
 *   FAKEVERBS_DEVICES=a,b     the devices ibv_get_device_list returns (those whose provider was found)
 *   FAKEVERBS_NOSYS=1         ibv_get_device_list fails with ENOSYS (no uverbs device: ib_uverbs missing)
 *   FAKEVERBS_PORTS=N         ports a device has (default 1; all alike)
 *   FAKEVERBS_PORT_STATE=N    port state (default 4, ACTIVE; 1 DOWN, 2 INIT)
 *   FAKEVERBS_LINK=ib|eth     link layer (default eth: RoCE); FAKEVERBS_LINK_<device>=ib|eth: that device's
 *   FAKEVERBS_SPEED=N, FAKEVERBS_WIDTH=N, FAKEVERBS_MTU=N   active_speed (default 32, EDR), active_width
 *                             (default 2, 4x), active_mtu (default 5, 4096)
 *   FAKEVERBS_GID_TYPES=1,2   the GID table's types, index by index (default "1,2": RoCE v1, then v2)
 *   FAKEVERBS_REG_FAIL=E      ibv_reg_mr fails with errno E (ENOMEM, EFAULT, EINVAL, EOPNOTSUPP)
 *   FAKEVERBS_REG_FAIL_OVER=N ... only for registrations larger than N bytes
 *   FAKEVERBS_DMABUF_FAIL=E   ibv_reg_dmabuf_mr fails with errno E (its fd -1 probe: EBADF regardless)
 *   FAKEVERBS_STALL=N         after N data posts the peer stops answering: no completion ever comes
 *   FAKEVERBS_CORRUPT=1       every copy of more than 64 bytes lands with its byte 0 flipped (data, not
 *                             bench rdma's control messages)
 *   FAKEVERBS_GBPS=R          the wire's data rate in GB/s (default: the port's signalling rate, from
 *                             FAKEVERBS_SPEED and FAKEVERBS_WIDTH, x 0.9 / 8: 11.25 at EDR 4x, 45 at NDR 4x)
 *   FAKEVERBS_LOG=FILE        append one line per registration ("reg_mr LEN DEVICE", "reg_dmabuf_mr LEN DEVICE")
 *
 * Each device has its own address: LID 7 + its place in FAKEVERBS_DEVICES (IB), GIDs ::ffff:0.0.P.(index+1)
 * with P its place (RoCE); moving a QP to RTR checks that the address given is its peer QP's device's. An
 * MR serves only QPs of its own PD (lkey) or, remotely, peers of QPs of its PD (rkey); a QP, its PD and its
 * CQs are of one device. So a loopback across two devices fails here where it would on real ones.
 *
 * Time is the double's own (gpup2p_clock_s, which gpup2p's measurements read), never the CPU's: one wire
 * per process carries every data post in posting order, each taking its bytes at FAKEVERBS_GBPS after
 * the wire is free, plus 1 us before its completion is there; a poll of a CQ with none there yet moves
 * the clock to its first completion's time and takes the ones there by then (never a later one: the
 * wait for it would be skipped). Rates and latencies are thus known in advance, however loaded the
 * machine: a write of 64 KiB at EDR 4x reads 11.25 GB/s less the 1 us of the last completion. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeverbs.h"

struct fmr {
	struct gp_ibv_mr mr;
	uint8_t *base;
	size_t len;
	int live;
};

#define NWC 4096
struct fcq {
	struct gp_ibv_cq cq;
	struct gp_ibv_wc wc[NWC];
	double at[NWC];                /* when each completion is there, on the double's clock */
	unsigned head, tail;
};

#define NRQ 1024
struct fqp {
	struct gp_ibv_qp qp;
	uint32_t dest;
	struct gp_ibv_sge rq[NRQ];
	uint64_t rq_id[NRQ];
	int rq_nsge[NRQ];
	unsigned rhead, rtail;
};

/* one lock over the tables: a server and a client may run in two threads of one process (fakecm.c) */
static pthread_mutex_t big = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

EXPORT void fakeverbs_lock(int on);
void fakeverbs_lock(int on)
{
	if (on)
		pthread_mutex_lock(&big);
	else
		pthread_mutex_unlock(&big);
}

/* return expr evaluated under the lock */
#define LOCKED(type, expr) do { type r_; fakeverbs_lock(1); r_ = (expr); fakeverbs_lock(0); return r_; } while (0)

static struct fmr *mrs[1024];
static struct fqp *qps[256];
static long posts, taken;             /* posts that reached a peer; every post taken */
static double now_s, wire_free_s;     /* the double's clock; when the wire has carried all posted so far */

long env_long(const char *name, long dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtol(s, NULL, 0) : dflt;
}

static int env_errno(const char *name)
{
	static const struct { const char *n; int v; } t[] = { { "ENOMEM", ENOMEM }, { "EFAULT", EFAULT },
		{ "EINVAL", EINVAL }, { "EOPNOTSUPP", EOPNOTSUPP }, { "EPERM", EPERM }, { "EAGAIN", EAGAIN } };
	const char *s = getenv(name);

	for (size_t i = 0; s && i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].n))
			return t[i].v;
	return s && *s ? atoi(s) : 0;
}

static void logline(const char *what, size_t n, const struct gp_ibv_pd *pd)
{
	const char *p = getenv("FAKEVERBS_LOG");
	FILE *f = p ? fopen(p, "a") : NULL;

	if (f) {
		fprintf(f, "%s %zu %s\n", what, n, pd && pd->context ? pd->context->device->name : "?");
		fclose(f);
	}
}

/* lane Gb/s by ibv_port_attr.active_speed code, lanes by active_width code */
static double wire_gbps(void)
{
	static const struct { long code; double v; } speed[] = { { 1, 2.5 }, { 2, 5 }, { 4, 10 }, { 8, 10 }, { 16, 14 },
		{ 32, 25 }, { 64, 50 }, { 128, 100 }, { 256, 200 } }, width[] = { { 1, 1 }, { 2, 4 }, { 4, 8 },
		{ 8, 12 }, { 16, 2 } };
	long sp = env_long("FAKEVERBS_SPEED", 32), wd = env_long("FAKEVERBS_WIDTH", 2);
	const char *g = getenv("FAKEVERBS_GBPS");
	double lane = 25, lanes = 4;

	if (g && *g && strtod(g, NULL) > 0)
		return strtod(g, NULL);
	for (size_t i = 0; i < sizeof(speed) / sizeof(speed[0]); i++)
		if (speed[i].code == sp)
			lane = speed[i].v;
	for (size_t i = 0; i < sizeof(width) / sizeof(width[0]); i++)
		if (width[i].code == wd)
			lanes = width[i].v;
	return lane * lanes * 0.9 / 8;
}

/* the time a post of len bytes completes: after the wire carried it, plus 1 us */
static double wire(uint64_t len)
{
	double start = wire_free_s > now_s ? wire_free_s : now_s;

	wire_free_s = start + (double)len / (wire_gbps() * 1e9);
	return wire_free_s + 1e-6;
}

/* Send-queue posts taken so far, data and control (tests: whether a step posted anything, untimed). */
EXPORT long fakeverbs_posts(void);
long fakeverbs_posts(void)
{
	long n;

	fakeverbs_lock(1);
	n = taken;
	fakeverbs_lock(0);
	return n;
}

/* The double's clock in seconds (gpup2p's measurements read it instead of the monotonic clock). */
EXPORT double gpup2p_clock_s(void);
double gpup2p_clock_s(void)
{
	double t;

	fakeverbs_lock(1);
	t = now_s;
	fakeverbs_lock(0);
	return t;
}

static struct fqp *qp_by_num(uint32_t n)
{
	return n && n <= 256 ? qps[n - 1] : NULL;
}

static void push(struct gp_ibv_cq *cq, uint64_t id, int status, int opcode, uint32_t len, uint32_t qpn, double at)
{
	struct fcq *c = (struct fcq *)cq;
	struct gp_ibv_wc *w = &c->wc[c->tail % NWC];

	c->at[c->tail++ % NWC] = at;
	memset(w, 0, sizeof(*w));
	w->wr_id = id;
	w->status = status;
	w->opcode = opcode;
	w->byte_len = len;
	w->qp_num = qpn;
}

static int fake_poll_cq_(struct gp_ibv_cq *cq, int n, struct gp_ibv_wc *wc)
{
	struct fcq *c = (struct fcq *)cq;
	int k = 0;

	/* the first one, then those there by then: the clock never skips a later one's wait */
	for (; k < n && c->head != c->tail && (!k || c->at[c->head % NWC] <= now_s); c->head++) {
		if (c->at[c->head % NWC] > now_s)
			now_s = c->at[c->head % NWC];
		wc[k++] = c->wc[c->head % NWC];
	}
	return k;
}

/* The registered memory [addr, addr+len) under key (rkey or lkey) of PD pd, or NULL. */
static uint8_t *mem_at(const struct gp_ibv_pd *pd, uint32_t key, uint64_t addr, uint64_t len, int remote)
{
	for (int i = 0; i < 1024; i++) {
		struct fmr *m = mrs[i];

		if (m && m->live && m->mr.pd == pd && (remote ? m->mr.rkey : m->mr.lkey) == key && addr >= (uintptr_t)m->base &&
		    addr + len <= (uintptr_t)m->base + m->len)
			return (uint8_t *)(uintptr_t)addr;
	}
	return NULL;
}

static void copy(uint8_t *dst, const uint8_t *src, size_t n)
{
	memmove(dst, src, n);
	if (n > 64 && getenv("FAKEVERBS_CORRUPT"))
		dst[0] ^= 0xff;
}

static int fake_post_send_(struct gp_ibv_qp *qp, struct gp_ibv_send_wr *wr, struct gp_ibv_send_wr **bad)
{
	struct fqp *me = (struct fqp *)qp;

	for (; wr; wr = wr->next) {
		struct fqp *to = qp_by_num(me->dest);
		uint64_t len = wr->num_sge ? wr->sg_list[0].length : 0;
		uint8_t *local = wr->num_sge ? mem_at(qp->pd, wr->sg_list[0].lkey, wr->sg_list[0].addr, len, 0) : NULL;
		int st = 0, wop = 0;
		double at;

		if (qp->state != GP_IBV_QPS_RTS || (wr->num_sge && !local)) {
			*bad = wr;
			return EINVAL;
		}
		at = wire(len);
		taken++;
		if (!to) {                          /* the peer's QP is gone: retries run out */
			push(qp->send_cq, wr->wr_id, 12, 0, 0, qp->qp_num, at);
			continue;
		}
		if (++posts > env_long("FAKEVERBS_STALL", -1) && env_long("FAKEVERBS_STALL", -1) >= 0)
			continue;                   /* the peer is gone: nothing comes back */
		switch (wr->opcode) {
		case GP_IBV_WR_RDMA_WRITE:
		case GP_IBV_WR_RDMA_WRITE_WITH_IMM: {
			uint8_t *r = mem_at(to->qp.pd, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, len, 1);

			wop = 1;
			if (!r) {
				st = 10;                       /* IBV_WC_REM_ACCESS_ERR */
				break;
			}
			copy(r, local, len);
			if (wr->opcode == GP_IBV_WR_RDMA_WRITE)
				break;
			if (to->rhead == to->rtail) {
				st = 13;                       /* IBV_WC_RNR_RETRY_EXC_ERR */
				break;
			}
			push(to->qp.recv_cq, to->rq_id[to->rhead++ % NRQ], 0, GP_IBV_WC_RECV_RDMA_WITH_IMM, (uint32_t)len,
			     to->qp.qp_num, at);
			break;
		}
		case GP_IBV_WR_RDMA_READ: {
			uint8_t *r = mem_at(to->qp.pd, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, len, 1);

			wop = 2;
			if (!r)
				st = 10;
			else
				copy(local, r, len);
			break;
		}
		case GP_IBV_WR_SEND: {
			unsigned k = to->rhead % NRQ;

			if (to->rhead == to->rtail) {
				st = 13;
				break;
			}
			if (len > (to->rq_nsge[k] ? to->rq[k].length : 0)) {
				st = 9;                        /* IBV_WC_REM_INV_REQ_ERR */
				break;
			}
			if (len)
				copy((uint8_t *)(uintptr_t)to->rq[k].addr, local, len);
			to->rhead++;
			push(to->qp.recv_cq, to->rq_id[k], 0, GP_IBV_WC_RECV, (uint32_t)len, to->qp.qp_num, at);
			break;
		}
		default:
			*bad = wr;
			return EINVAL;
		}
		if ((wr->send_flags & GP_IBV_SEND_SIGNALED) || st)
			push(qp->send_cq, wr->wr_id, st, wop, (uint32_t)len, qp->qp_num, at);
	}
	return 0;
}

static int fake_post_recv_(struct gp_ibv_qp *qp, struct gp_ibv_recv_wr *wr, struct gp_ibv_recv_wr **bad)
{
	struct fqp *me = (struct fqp *)qp;

	for (; wr; wr = wr->next) {
		unsigned k = me->rtail % NRQ;

		if (me->rtail - me->rhead >= NRQ || (wr->num_sge && !mem_at(qp->pd, wr->sg_list[0].lkey, wr->sg_list[0].addr,
									    wr->sg_list[0].length, 0))) {
			*bad = wr;
			return ENOMEM;
		}
		me->rq_nsge[k] = wr->num_sge;
		if (wr->num_sge)
			me->rq[k] = wr->sg_list[0];
		me->rq_id[k] = wr->wr_id;
		me->rtail++;
	}
	return 0;
}

static int fake_poll_cq(struct gp_ibv_cq *cq, int n, struct gp_ibv_wc *wc)
{
	LOCKED(int, fake_poll_cq_(cq, n, wc));
}

static int fake_post_send(struct gp_ibv_qp *qp, struct gp_ibv_send_wr *wr, struct gp_ibv_send_wr **bad)
{
	LOCKED(int, fake_post_send_(qp, wr, bad));
}

static int fake_post_recv(struct gp_ibv_qp *qp, struct gp_ibv_recv_wr *wr, struct gp_ibv_recv_wr **bad)
{
	LOCKED(int, fake_post_recv_(qp, wr, bad));
}

/* a context keeps its own copy of the device: the list may be freed while it is open, as rdma-core allows */
struct fctx {
	struct gp_ibv_context c;
	struct gp_ibv_device d;
};

API(struct gp_ibv_context *, ibv_open_device, (struct gp_ibv_device *d))
{
	struct fctx *f = calloc(1, sizeof(*f));
	struct gp_ibv_context *c;

	if (!f)
		return NULL;
	c = &f->c;
	f->d = *d;
	c->device = &f->d;
	c->ops.poll_cq = fake_poll_cq;
	c->ops.post_send = fake_post_send;
	c->ops.post_recv = fake_post_recv;
	return c;
}

API(int, ibv_close_device, (struct gp_ibv_context *c))
{
	free(c);
	return 0;
}

static struct gp_ibv_mr *new_mr(struct gp_ibv_pd *pd, void *addr, size_t n)
{
	for (int i = 0; i < 1024; i++)
		if (!mrs[i]) {
			struct fmr *m = calloc(1, sizeof(*m));

			if (!m)
				break;
			m->mr.pd = pd;
			m->mr.addr = addr;
			m->mr.length = n;
			m->mr.lkey = 0x100 + (uint32_t)i;
			m->mr.rkey = 0x8000 + (uint32_t)i;
			m->base = addr;
			m->len = n;
			m->live = 1;
			mrs[i] = m;
			return &m->mr;
		}
	errno = ENOMEM;
	return NULL;
}

static struct gp_ibv_mr *ibv_reg_mr_(struct gp_ibv_pd *pd, void *addr, size_t n, int access)
{
	int err = env_errno("FAKEVERBS_REG_FAIL");

	(void)access;
	logline("reg_mr", n, pd);
	if (err && (size_t)env_long("FAKEVERBS_REG_FAIL_OVER", 0) < n) {
		errno = err;
		return NULL;
	}
	return new_mr(pd, addr, n);
}

API(struct gp_ibv_mr *, ibv_reg_mr, (struct gp_ibv_pd *pd, void *addr, size_t n, int access))
{
	LOCKED(struct gp_ibv_mr *, ibv_reg_mr_(pd, addr, n, access));
}

#ifndef FAKEVERBS_OLD
API(struct gp_ibv_mr *, ibv_reg_dmabuf_mr, (struct gp_ibv_pd *pd, uint64_t off, size_t n, uint64_t iova, int fd,
					    int access))
{
	int err = env_errno("FAKEVERBS_DMABUF_FAIL");

	(void)off, (void)access;
	if (fd < 0) {                           /* NCCL's probe: EBADF means supported */
		errno = EBADF;
		return NULL;
	}
	logline("reg_dmabuf_mr", n, pd);
	if (err) {
		errno = err;
		return NULL;
	}
	{
		struct gp_ibv_mr *m;

		fakeverbs_lock(1);
		m = new_mr(pd, (void *)(uintptr_t)iova, n);
		fakeverbs_lock(0);
		return m;
	}
}
#endif

static int ibv_dereg_mr_(struct gp_ibv_mr *mr)
{
	for (int i = 0; i < 1024; i++)
		if (mrs[i] && &mrs[i]->mr == mr) {
			free(mrs[i]);
			mrs[i] = NULL;
			return 0;
		}
	return EINVAL;
}

API(int, ibv_dereg_mr, (struct gp_ibv_mr *mr))
{
	LOCKED(int, ibv_dereg_mr_(mr));
}

API(struct gp_ibv_cq *, ibv_create_cq, (struct gp_ibv_context *c, int cqe, void *ctx, struct gp_ibv_comp_channel *ch,
				       int vec))
{
	struct fcq *q = calloc(1, sizeof(*q));

	(void)ctx, (void)ch, (void)vec;
	if (!q)
		return NULL;
	q->cq.context = c;
	q->cq.cqe = cqe;
	return &q->cq;
}

API(int, ibv_destroy_cq, (struct gp_ibv_cq *cq))
{
	free(cq);
	return 0;
}

static struct gp_ibv_qp *ibv_create_qp_(struct gp_ibv_pd *pd, struct gp_ibv_qp_init_attr *a)
{
	if (pd->context != a->send_cq->context || pd->context != a->recv_cq->context) {
		errno = EINVAL;                     /* a QP, its PD and its CQs: one device */
		return NULL;
	}
	for (int i = 0; i < 256; i++)
		if (!qps[i]) {
			struct fqp *q = calloc(1, sizeof(*q));

			if (!q)
				break;
			q->qp.context = a->send_cq->context;
			q->qp.pd = pd;
			q->qp.send_cq = a->send_cq;
			q->qp.recv_cq = a->recv_cq;
			q->qp.qp_num = (uint32_t)i + 1;
			q->qp.qp_type = a->qp_type;
			qps[i] = q;
			return &q->qp;
		}
	errno = ENOMEM;
	return NULL;
}

API(struct gp_ibv_qp *, ibv_create_qp, (struct gp_ibv_pd *pd, struct gp_ibv_qp_init_attr *a))
{
	LOCKED(struct gp_ibv_qp *, ibv_create_qp_(pd, a));
}

static int ibv_modify_qp_(struct gp_ibv_qp *qp, struct gp_ibv_qp_attr *a, int mask)
{
	struct fqp *q = (struct fqp *)qp;

	if (!(mask & GP_IBV_QP_STATE) || a->qp_state != qp->state + 1)
		return EINVAL;                      /* only RESET -> INIT -> RTR -> RTS, in order */
	if (a->qp_state == GP_IBV_QPS_RTR) {
		const struct gp_ibv_device *to;

		if (!(mask & GP_IBV_QP_DEST_QPN) || !qp_by_num(a->dest_qp_num) || !(mask & GP_IBV_QP_AV))
			return EINVAL;
		to = qp_by_num(a->dest_qp_num)->qp.context->device;
		if (!a->ah_attr.is_global && !a->ah_attr.dlid)
			return EINVAL;              /* RoCE needs a GRH, IB a LID */
		if (a->ah_attr.is_global ? a->ah_attr.grh.dgid.raw[14] != to->place || a->ah_attr.grh.dgid.raw[11] != 0xff :
		    a->ah_attr.dlid != 7 + to->place)
			return EHOSTUNREACH;        /* not the address of the peer QP's device */
		q->dest = a->dest_qp_num;
	}
	qp->state = a->qp_state;
	return 0;
}

API(int, ibv_modify_qp, (struct gp_ibv_qp *qp, struct gp_ibv_qp_attr *a, int mask))
{
	LOCKED(int, ibv_modify_qp_(qp, a, mask));
}

static int ibv_destroy_qp_(struct gp_ibv_qp *qp)
{
	qps[qp->qp_num - 1] = NULL;
	free(qp);
	return 0;
}

API(int, ibv_destroy_qp, (struct gp_ibv_qp *qp))
{
	LOCKED(int, ibv_destroy_qp_(qp));
}

API(const char *, ibv_wc_status_str, (gp_ibv_wc_status st))
{
	switch (st) {
	case 0: return "success";
	case 9: return "remote invalid request error";
	case 10: return "remote access error";
	case 12: return "transport retry counter exceeded";
	case 13: return "RNR retry counter exceeded";
	default: return "unknown";
	}
}
