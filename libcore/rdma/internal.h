/* gpup2p — the RDMA bench engine's shared state (libcore only): rdma.c opens devices, memory and queue
 * pairs, rdma_run.c times the operations, rdma_cm.c connects a client and a server with librdmacm. */
#ifndef GPUP2P_RDMA_INTERNAL_H
#define GPUP2P_RDMA_INTERNAL_H

#include "gpup2p/cuda.h"
#include "gpup2p/rdma.h"
#include "rdma/verbs_lib.h"

#define GP_RDMA_WINDOW 128        /* operations in flight on one QP */
#define GP_RDMA_CTL 64            /* bytes of a control message (client/server) */

/* A device and port the QPs use: one, or two in a loopback across devices (or ports; then the second
 * side shares the first's context and PD). */
struct gp_rdma_dev {
	struct gp_ibv_context *ctx;
	struct gp_ibv_pd *pd;
	struct gp_ibv_port_attr pa;
	union gp_ibv_gid gid;
	struct gp_rdma_nic *at;        /* its facts, in s->info */
	int shared;                    /* ctx and pd belong to dev[0] */
};

/* One side: a QP, its CQ and its buffer (host memory, or GPU memory with a host staging copy). */
struct gp_rdma_ep {
	struct gp_rdma_dev *dev;       /* the device its QP, CQ and MRs are on */
	struct gp_ibv_cq *cq;
	struct gp_ibv_qp *qp;
	struct gp_ibv_mr *mr, *ctl_mr;
	struct gp_rdma_mem mem;
	const char *path;              /* "host", "dmabuf", "peermem" */
	uint64_t addr;                 /* the MR's address: host pointer or device pointer */
	void *host;                    /* host buffer, or staging for GPU memory */
	gp_dptr dptr;                  /* GPU memory, 0 none */
	int gpu, fd;                   /* GPU (-1 host), dma-buf fd (-1 none) */
	uint8_t *ctl;                  /* 2 x GP_RDMA_CTL bytes: [0] received, [1] to send */
	uint64_t raddr;                /* the peer's buffer */
	uint32_t rkey;
	long n_send, n_recv, n_ctl;   /* completions counted by gp_rdma_pump */
};

struct gp_rdma {
	const struct gp_ibv_lib *L;
	struct gp_rdma_opts o;
	struct gp_rdma_info info;
	struct gp_rdma_dev dev[2];
	int ndev;
	int max_rd;                    /* RDMA reads in flight (every device's max_qp_rd_atom, <= 16) */
	int nep;
	struct gp_rdma_ep ep[2];
	struct gp_cuda *cuda;          /* heap, when GPU memory is used */
	struct gp_rdma_event_channel *ch;
	struct gp_rdma_cm_id *listen_id, *id;
	int connected;
	int peer_lost;                 /* a wait failed (error completion, timeout): no goodbye on close */
	double slack_s;                /* what a wait allows beyond --timeout: the peer's share of a run */
};

/* Control messages between client and server (rdma_cm.c, rdma_run.c). */
struct gp_rdma_ctl {
	uint32_t magic, kind;          /* kind: 1 run, 2 ready, 3 done, 4 result, 5 bye */
	uint32_t op, lat, iters, reps, no_verify, verified;
	uint64_t size, seed;
};
#define GP_RDMA_MAGIC 0x67703270u

/* 1 when a run's operation (GP_RDMA_WRITE/READ/SEND), lat (0/1) and counts are within the bounds of
 * rdma.h (GP_RDMA_MAX_*): what a server accepts from a client, and a client asks. */
int gp_rdma_counts_ok(uint32_t op, uint32_t lat, uint32_t iters, uint32_t reps);

/* Private data of the connection: this side's buffer. */
struct gp_rdma_pdata {
	uint64_t addr;
	uint32_t rkey, magic;
	uint64_t len;
};

/* A server's check of a client's run request m (its op, counts and size against the buffer, max_size
 * bytes), before anything of it is used: 0, or -EPROTO saying what is wrong. */
int gp_rdma_run_check(const struct gp_rdma_ctl *m, uint64_t max_size, struct gp_err *e);

/* Decode a control message from the peer's len bytes at buf into m: -EPROTO when it is short, lacks the
 * magic or is not of kind (0: any kind). */
int gp_rdma_ctl_decode(const void *buf, size_t len, uint32_t kind, struct gp_rdma_ctl *m, struct gp_err *e);

/* A client's check of the server's result m for the run r (host names the server): -EBADMSG when the
 * server found wrong data, at the byte m->size. */
int gp_rdma_result_check(const struct gp_rdma_ctl *m, const struct gp_rdma_result *r, const char *host,
			 struct gp_err *e);

/* Decode the peer's private data (len bytes at buf, NULL: none) into pd: -EPROTO when it is missing, short
 * or not gpup2p's; a client (client 1) also refuses a server buffer smaller than its max_size (-EINVAL). */
int gp_rdma_pdata_decode(const void *buf, size_t len, int client, uint64_t max_size, struct gp_rdma_pdata *pd,
			 struct gp_err *e);

/* Port port of d (its ctx open, d->at->device named): query port and GID (gid_index -1: the port's RoCE v2
 * GID on RoCE), fill d->at and lower s->max_rd to the device's; the port checks with their fixes. */
int gp_rdma_port_setup(struct gp_rdma *s, struct gp_rdma_dev *d, int port, int gid_index, struct gp_err *e);

/* The seed of a run's data pattern (client and server, loopback): differs by size, operation and test. */
uint64_t gp_rdma_seed(uint64_t bytes, int op, int lat);

/* Allocate and register endpoint ep's buffer (o.max_size) and control buffer. */
int gp_rdma_ep_mem(struct gp_rdma *s, struct gp_rdma_ep *ep, struct gp_err *e);

/* Create ep's CQ and (without cm) its RC QP. */
int gp_rdma_ep_queues(struct gp_rdma *s, struct gp_rdma_ep *ep, int cm, struct gp_err *e);

/* Release what gp_rdma_ep_mem and gp_rdma_ep_queues made. */
void gp_rdma_ep_free(struct gp_rdma *s, struct gp_rdma_ep *ep);

/* Fill [0, n) of ep's buffer with the pattern of seed (GPU memory: through the staging copy). */
int gp_rdma_fill(struct gp_rdma *s, struct gp_rdma_ep *ep, uint64_t n, uint64_t seed, struct gp_err *e);

/* Check [0, n) of ep's buffer against the pattern of seed: 0, or -EBADMSG naming the first bad byte
 * (its offset in *at when at is not NULL). */
int gp_rdma_check(struct gp_rdma *s, struct gp_rdma_ep *ep, uint64_t n, uint64_t seed, const char *what,
		  int64_t *at, struct gp_err *e);

/* Post one work request on ep's QP: op GP_IBV_WR_*, n bytes from offset 0 of the buffer to the peer's
 * (a send with ctl != 0: the control message). 0 or -errno. */
int gp_rdma_post(struct gp_rdma *s, struct gp_rdma_ep *ep, int opcode, uint64_t n, int ctl, uint64_t id,
		 struct gp_err *e);

/* Post one receive on ep: into the control buffer (ctl), else into the data buffer (n bytes, 0 = none). */
int gp_rdma_post_recv(struct gp_rdma *s, struct gp_rdma_ep *ep, uint64_t n, int ctl, struct gp_err *e);

/* Seconds for a measurement: the verbs library's own clock when it keeps one (the test double: rates
 * that do not follow the CPU), else the monotonic clock. Timeouts use the monotonic clock, and the
 * library's too when it keeps one (gp_rdma_wait). */
double gp_rdma_now(const struct gp_rdma *s);

/* Poll ep's CQ for up to max completions into wc, waiting until at least one arrives or timeout_s and
 * s->slack_s pass (-ETIMEDOUT: "the peer stopped answering"): on the monotonic clock, or on the verbs
 * library's own (the test double's, which the peer's thread moves too) by the time the completion
 * came. A completion in error is -EIO naming its status. Returns the count. */
int gp_rdma_wait(struct gp_rdma *s, struct gp_rdma_ep *ep, struct gp_ibv_wc *wc, int max, struct gp_err *e);

/* Take one completion from ep's CQ (waiting up to the timeout) and count it: a send, a data receive or
 * a control receive (wr_id 1). 0 or -errno. */
int gp_rdma_pump(struct gp_rdma *s, struct gp_rdma_ep *ep, struct gp_err *e);

/* Loopback (rdma_loop.c): open the device(s), both QPs and their memory, and connect them. 0 or -errno. */
int gp_rdma_loop_open(struct gp_rdma *s, struct gp_err *e);

/* Client/server (rdma_cm.c): connect or accept, exchanging buffers in the private data. */
int gp_rdma_cm_open(struct gp_rdma *s, struct gp_err *e);
void gp_rdma_cm_close(struct gp_rdma *s);

/* --timeout's seconds (10 when not given). */
int gp_rdma_timeout_s(const struct gp_rdma *s);

/* Seconds that ops operations of size bytes may take on a slow but healthy link, for a wait beyond
 * --timeout (s->slack_s): at 1/GP_RDMA_SLOW_DIV of the port's rate (unknown: of SDR 1x's 2 Gb/s),
 * plus 0.1 ms an operation (lat: 1 ms a round trip); at most GP_RDMA_SLACK_MAX, as the wait polls a
 * CPU core and a peer that vanished is noticed only at its end. */
double gp_rdma_slack(const struct gp_rdma *s, double ops, uint64_t size, int lat);
#define GP_RDMA_SLOW_DIV 100
#define GP_RDMA_SLACK_MAX 600.0

/* Bandwidth: iters operations (verbs opcode) of n bytes from a, a window in flight; with b (loopback
 * send) b posts the receives. *sec: the time they took. 0 or -errno. */
int gp_rdma_bw_once(struct gp_rdma *s, struct gp_rdma_ep *a, struct gp_rdma_ep *b, int opcode, uint64_t n,
		    int iters, double *sec, struct gp_err *e);

/* The verbs opcode of an enum gp_rdma_op. */
int gp_rdma_opcode(int op);

/* One measurement as the client (the server answers in gp_rdma_serve). */
int gp_rdma_client_run(struct gp_rdma *s, struct gp_rdma_result *r, int no_verify, struct gp_err *e);

/* Times and rates of a result from its repetitions' seconds (bandwidth) or one-way microseconds (lat). */
void gp_rdma_rates(struct gp_rdma *s, struct gp_rdma_result *r, double *v, int n);

/* Send a control message and wait for its completion. */
int gp_rdma_ctl_send(struct gp_rdma *s, const struct gp_rdma_ctl *m, struct gp_err *e);

/* Wait for a control message of kind (a receive posted before). */
int gp_rdma_ctl_recv(struct gp_rdma *s, uint32_t kind, struct gp_rdma_ctl *m, struct gp_err *e);

#endif
