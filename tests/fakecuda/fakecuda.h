/* The test double of libcuda (tests/fakecuda): what its files share. fakecuda.c holds the devices,
 * contexts, memory, copies, streams and events and the virtual clock (its head comment tells the
 * controls); kernels.c the PTX modules and the kernels cuLaunchKernel runs here in C. */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stddef.h>

#include "cuda/drv.h"

#define EXPORT __attribute__((visibility("default")))
/* Every entry point with the signature gpup2p calls it with (libcore/cuda/drv.h). */
#define X_DECL(f, sym, args) EXPORT gp_cu_result sym args;
GP_CU_FUNCS(X_DECL)

#define MAXG 256

struct fctx { int dev; };
struct fop;
struct fstream {
	int dev;
	double t;                        /* the stream's virtual clock, seconds, as far as it is played */
	struct fop *head, *tail;         /* queued, not played yet (sched.c) */
	int cebound;                     /* sched.c: copy-engine copies queued */
	long ticket;                     /* sched.c: its place in the queue for its GPU's copy engines */
	long ops;                        /* work queued (FAKECUDA_WINDOWS) */
};
/* an event: the stream's clock; pending: its record is queued, not played; the work queued before it
 * (on its stream: sops; anywhere: ops) */
struct fevent { double t; int recorded, pending, dev; long sops, ops; };  /* dev: of its last record played */

extern struct fctx *current;             /* cuCtxSetCurrent's */
extern int peer_on[MAXG][MAXG];          /* peer access from context a to b's memory */

/* 1 when FAKECUDA_FAIL names the entry point sym. */
int failing(const char *sym);
#define FAILPOINT(sym) do { if (failing(sym)) return GP_CUDA_ERROR_OUT_OF_MEMORY; } while (0)

/* 1 when p lies in a pinned host allocation. */
int is_pinned(const void *p);

/* Where a device pointer's bytes are in this process. */
void *host_of(gp_cu_dptr d);

/* The GPU whose memory d is, -1 host memory. */
int dev_of(gp_cu_dptr d);

/* Copy n bytes now (corrupted as FAKECUDA_CORRUPT says for kind); its time is sched_copy's. */
void copy(void *dst, const void *src, size_t n, const char *kind);

/* Append a line to FAKECUDA_MARKER's file, when set. */
void marker(const char *what);

/* Count one piece of work (a copy, kernel or memset) queued on s, for FAKECUDA_WINDOWS. */
void work(struct fstream *s);

/* The virtual clock (sched.c). Streams are known from creation to destruction (sched_add/remove). */
void sched_add(struct fstream *s);
void sched_remove(struct fstream *s);
/* Queue on s: a copy of its own time dur (seconds), n bytes through the host link (host), out of GPU
 * eg's NVLinks and into in's (-1 none), on the copy engines (ce) or not (a kernel); an event record;
 * a wait for an event's last record. */
void sched_copy(struct fstream *s, double dur, size_t n, int host, int eg, int in, int ce);
void sched_record(struct fstream *s, struct fevent *e);
void sched_wait(struct fstream *s, struct fevent *e);
/* s waits at the gate: the first gate of a batch plays what came before and frees every link; every
 * gated stream starts at virtual time 0. */
void sched_gate(struct fstream *s);
/* Play everything queued (before a time is read). */
void sched_settle(void);

#endif
