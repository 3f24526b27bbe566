/* gpup2p — libibverbs and librdmacm bound at run time (libcore only, not installed): one table of
 * entry points per library, each bound by its symbol version (dlvsym) as rdma-core exports it, plus
 * the data-path calls verbs.h makes inline through the context's ops. */
#ifndef GPUP2P_VERBS_LIB_H
#define GPUP2P_VERBS_LIB_H

#include "gpup2p/err.h"
#include "rdma/verbs_abi.h"

#define GP_IBV_PTR_(name, ver, ret, args) ret(*name) args;
struct gp_ibv_lib {
	void *lib, *cmlib;
	GP_IBV_FUNCS(GP_IBV_PTR_)
	GP_IBV_FUNCS_OPTIONAL(GP_IBV_PTR_)
	GP_RDMACM_FUNCS(GP_IBV_PTR_)
	/* optional, no rdma-core name: a library that keeps its own clock (the test double, tests/fakeverbs)
	 * exports gpup2p_clock_s, seconds on that clock; measurements read it (gp_rdma_now) */
	double (*clock_s)(void);
};

/* Load libibverbs ($GPUP2P_LIBIBVERBS, else libibverbs.so.1) once per process and bind every entry
 * point; with cm, librdmacm too ($GPUP2P_LIBRDMACM, else librdmacm.so.1). Returns the table, or NULL
 * with e set (GP_E_UNAVAIL: the library or an entry point is missing). */
const struct gp_ibv_lib *gp_ibv_load(int cm, struct gp_err *e);

/* verbs.h's inline ibv_post_send: through qp->context->ops. */
static inline int gp_ibv_post_send(struct gp_ibv_qp *qp, struct gp_ibv_send_wr *wr, struct gp_ibv_send_wr **bad)
{
	return qp->context->ops.post_send(qp, wr, bad);
}

/* verbs.h's inline ibv_post_recv. */
static inline int gp_ibv_post_recv(struct gp_ibv_qp *qp, struct gp_ibv_recv_wr *wr, struct gp_ibv_recv_wr **bad)
{
	return qp->context->ops.post_recv(qp, wr, bad);
}

/* verbs.h's inline ibv_poll_cq: completions taken (>= 0) or a negative value on error. */
static inline int gp_ibv_poll_cq(struct gp_ibv_cq *cq, int n, struct gp_ibv_wc *wc)
{
	return cq->context->ops.poll_cq(cq, n, wc);
}

#endif
