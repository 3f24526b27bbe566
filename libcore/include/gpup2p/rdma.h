/* gpup2p — GPUDirect RDMA bench: RC queue pairs over libibverbs (loaded at run time, libcore/rdma/verbs_lib.h),
 * RDMA write, RDMA read and send/recv, bandwidth and ping-pong latency, host or GPU memory on either side
 * (dma-buf or nvidia-peermem), loopback on one host or client/server through librdmacm. Plus the rate
 * arithmetic (what a port can carry after headers), which is pure and unit-tested. */
#ifndef GPUP2P_RDMA_H
#define GPUP2P_RDMA_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/bench.h"
#include "gpup2p/err.h"
#include "gpup2p/root.h"

struct gp_pci;
struct gp_topo;

enum gp_rdma_op { GP_RDMA_WRITE = 1, GP_RDMA_READ = 2, GP_RDMA_SEND = 4 };
enum gp_rdma_link { GP_RDMA_LINK_IB = 1, GP_RDMA_LINK_ETH = 2 };   /* verbs' link_layer values */
#define GP_RDMA_CM_PORT 18515          /* bench rdma's rdma_cm port by default (perftest's) */
#define GP_RDMA_BIND_DEFAULT "127.0.0.1" /* a server's address when none is given: this host only */
#define GP_RDMA_MAX_ITERS 10000000     /* operations per repetition, at most (a server refuses more) */
#define GP_RDMA_MAX_REPS 10000         /* repetitions, at most */
#define GP_RDMA_MAX_SAMPLES 10000000   /* latency: iters x reps round trips timed one by one, at most */
enum gp_rdma_memkind { GP_RMEM_HOST = 0, GP_RMEM_GPU, GP_RMEM_AUTO };
enum gp_rdma_role { GP_RDMA_LOOPBACK = 0, GP_RDMA_SERVER, GP_RDMA_CLIENT };

/* ---- rate arithmetic (rdma_rate.c) ---- */

/* Data rate of one lane in Gbit/s after line coding, from ibv_port_attr.active_speed (1 SDR 2.0,
 * 2 DDR 4.0, 4 QDR 8.0, 8 FDR10 10.0, 16 FDR 13.64, 32 EDR 25.0, 64 HDR 50.0, 128 NDR 100.0, 256 XDR 200.0);
 * 0 when unknown. */
double gp_rdma_lane_gbits(int active_speed);

/* Lanes from ibv_port_attr.active_width (1 -> 1, 2 -> 4, 4 -> 8, 8 -> 12, 16 -> 2); 0 when unknown. */
int gp_rdma_width_lanes(int active_width);

/* MTU in bytes from enum ibv_mtu (1 -> 256 ... 5 -> 4096); 0 when unknown. */
int gp_rdma_mtu_bytes(int ibv_mtu);

/* Header bytes around each MTU-sized payload packet on the wire: InfiniBand LRH 8 + BTH 12 + ICRC 4 +
 * VCRC 2 = 26; RoCE v2 Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + preamble/SFD 8 +
 * inter-frame gap 12 = 82. 0 for an unknown link layer. */
int gp_rdma_header_bytes(int link_layer);

/* Payload Gbit/s a port carries: lane rate x lanes x mtu / (mtu + headers); 0 when any part is unknown. */
double gp_rdma_port_payload_gbits(int active_speed, int active_width, int ibv_mtu, int link_layer);

/* The Gbit/s of a sysfs rate line ("100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)"), 0 when malformed. */
double gp_rdma_rate_parse(const char *s);

/* ---- the bench engine (rdma.c, rdma_run.c, rdma_cm.c) ---- */

/* This side's or the peer's buffer: host memory, GPU N through dma-buf or nvidia-peermem, or auto
 * (dma-buf, then peermem). gpu -1 with GPU memory: GPU 0. */
struct gp_rdma_mem {
	enum gp_rdma_memkind kind;
	int gpu;
};

/* Parse "host", "gpu", "gpu:N" or "auto". 0 or -EINVAL. */
int gp_rdma_mem_parse(const char *s, struct gp_rdma_mem *m);

struct gp_rdma_opts {
	enum gp_rdma_role role;
	const char *device;            /* NULL: the first device with an ACTIVE port */
	int ib_port;                   /* 0: 1 */
	int gid_index;                 /* -1: RoCE v2 GID of the port (RoCE), none (IB) */
	const char *peer_device;       /* loopback: the other QP's device; NULL: device */
	int peer_ib_port;              /* 0: ib_port */
	int peer_gid_index;            /* another device or port: its GID index; -1: gid_index on IB, the port's RoCE v2 GID on RoCE */
	struct gp_rdma_mem mem, peer_mem;
	const char *host;              /* client: server to connect to */
	const char *listen;            /* server: address to listen on, NULL GP_RDMA_BIND_DEFAULT */
	int cm_port;                   /* rdma_cm port, 0: GP_RDMA_CM_PORT */
	int timeout_s;                 /* no completion or connection event for this long: ETIMEDOUT; 0: 10 */
	uint64_t max_size;             /* the largest message: buffers are this big */
	int iters_max;                 /* the most operations in flight per run (sizes the queues), 0: 128 */
	const struct gp_root *root;    /* where sysfs is read (nvidia_peermem, a port's rate); required */
	const struct gp_pci *pci;      /* the PCI model: the NIC's NUMA node for host memory; NULL: unknown */
};

/* One side's device and port. */
struct gp_rdma_nic {
	char device[64];
	int port;
	int link_layer;                /* GP_RDMA_LINK_IB, GP_RDMA_LINK_ETH, 0 unknown */
	int gid_index;                 /* -1 none */
	int active_mtu;                /* bytes */
	double port_gbits;             /* payload Gbit/s after headers, 0 unknown */
	int numa_node;                 /* of its PCI function, -1 unknown */
};

/* What the session runs on, for the result lines. */
struct gp_rdma_info {
	struct gp_rdma_nic nic;        /* this side (loopback: QP 0) */
	struct gp_rdma_nic peer_nic;   /* loopback: QP 1's, the same as nic on one device and port */
	int two_nics;                  /* loopback across two devices (or ports) */
	double port_gbits;             /* what the path carries: the slower port's Gbit/s, 0 unknown */
	const char *mem_path;          /* this side: "host", "dmabuf", "peermem" */
	const char *peer_mem_path;     /* loopback: the other QP's buffer */
	int gpu, peer_gpu;             /* -1: host memory */
};

struct gp_rdma_result {
	int op;                        /* one enum gp_rdma_op */
	int lat;                       /* 1: latency ping-pong, 0: bandwidth */
	uint64_t bytes;
	int iters, reps;
	double gbps;                   /* GB/s (1e9 bytes/s), average over the repetitions */
	double gbits_avg, gbits_peak;  /* Gbit/s: average, and the fastest repetition */
	double mpps;                   /* million messages per second (average) */
	double port_fraction;          /* gbits_avg / port_gbits, 0 unknown */
	double us_min, us_median, us_p99;  /* latency: one way (write, send: half a round trip; read: a read) */
	int verified;                  /* 1 checked and right, 0 not checked */
};

struct gp_rdma;

/* Open a session: device, port, memory, queue pairs; loopback connects its two QPs (on two devices or ports
 * with peer_device / peer_ib_port: of one link layer, else GP_E_USAGE), a server waits for one client
 * (timeout_s), a client connects. Errors name the cause and the fix: RLIMIT_MEMLOCK,
 * nvidia-peermem / dma-buf, a port not ACTIVE, no RoCE v2 GID. 0 or -errno (e filled). */
int gp_rdma_open(struct gp_rdma **s, const struct gp_rdma_opts *o, struct gp_err *e);

/* The facts of an open session. */
void gp_rdma_get_info(const struct gp_rdma *s, struct gp_rdma_info *i);

/* One measurement (loopback or client): op, lat, size (<= max_size), iters per repetition
 * (<= GP_RDMA_MAX_ITERS), reps (<= GP_RDMA_MAX_REPS; with lat, iters x reps <= GP_RDMA_MAX_SAMPLES); the
 * data is checked after timing unless no_verify. 0 or -errno (EINVAL: out of those bounds; ETIMEDOUT:
 * the peer stopped answering; EBADMSG: wrong data). */
int gp_rdma_run(struct gp_rdma *s, int op, int lat, uint64_t size, int iters, int reps, int no_verify,
		struct gp_rdma_result *r, struct gp_err *e);

/* Server: answer the client's measurements until it disconnects. 0 or -errno. */
int gp_rdma_serve(struct gp_rdma *s, struct gp_err *e);

/* Close the session (client: tells the server it is done). */
void gp_rdma_close(struct gp_rdma *s);

/* The PCIe class ("PIX", "PXB", "PHB", "NODE", "SYS") between GPU gpu (its number: GPUs in PCI bus order)
 * and the NIC of RDMA device dev, from topo's matrix; NULL when either is not in t. */
const char *gp_rdma_distance(const struct gp_topo *t, int gpu, const char *dev);

/* The topology entry (a NIC) of RDMA device dev, or -1 when no NIC in t has it. */
int gp_rdma_nic_index(const struct gp_topo *t, const char *dev);

/* The RDMA device closest to GPU gpu (first in t's NIC order on a tie), NULL when none. */
const char *gp_rdma_closest_nic(const struct gp_topo *t, int gpu);

/* The distance a result line gives for memory on GPU gpu (-1: host memory, "host") used by device dev:
 * gp_rdma_distance's class, or "unknown" (t NULL, or either not in it). */
const char *gp_rdma_mem_distance(const struct gp_topo *t, int gpu, const char *dev);

/* NUMA node of RDMA device dev's PCI function in the PCI model, -1 when unknown (software RDMA, no p). */
int gp_rdma_numa_node(const struct gp_pci *p, const char *dev);

/* ---- what bench rdma runs (rdma_plan.c) ---- */

/* A bench rdma request: the options as given (0 / NULL: not given), then what gp_rdma_plan derives. */
struct gp_rdma_plan {
	struct gp_rdma_opts o;         /* the session; gp_rdma_plan sets role (client with a host), peer_mem
	                                  (as mem unless peer_mem_set) and max_size */
	int ops;                       /* GP_RDMA_* bits; 0: all three */
	int lat, iters, reps, no_verify;   /* iters 0: 1000, reps 0: 5 */
	uint64_t size, min, max;       /* --size, --min/--max sweep; 0 not given */
	double factor;                 /* sweep factor, 0: 2 */
	int peer_mem_set;              /* o.peer_mem was given */
	uint64_t sizes[GP_SWEEP_MAX];  /* out: the message sizes */
	int nsizes;
};

/* A request with nothing given: host memory on both sides, GID indexes -1. */
void gp_rdma_plan_init(struct gp_rdma_plan *p);

/* Check a request and fill in its defaults: every operation, 1000 iterations, 5 repetitions, one message
 * of 64K (--lat: 8) or the sweep, each at most 2G; the buffers as large as the largest message (a server
 * given neither --size nor --max: 64M, what a client may ask). Which options go together is the command
 * line's to check; a sweep whose ends are reversed or too far apart is GP_E_USAGE. 0 or -EINVAL (-E2BIG:
 * a sweep of more than GP_SWEEP_MAX sizes). */
int gp_rdma_plan(struct gp_rdma_plan *p, struct gp_err *e);

/* Loopback with GPU memory (or auto) on QP 0 and no device given: the RDMA device closest to that GPU in t
 * (left unset when t has none). */
void gp_rdma_plan_nic(struct gp_rdma_plan *p, const struct gp_topo *t);

/* "write", "read", "send". */
const char *gp_rdma_op_name(int op);

#endif
