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
struct fstream { int dev; double t; long ops; };   /* t: the stream's virtual clock, seconds; ops: work queued */

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

/* Copy n bytes (corrupted as FAKECUDA_CORRUPT says for kind), advancing s's clock at gbps (s NULL: not). */
void copy(void *dst, const void *src, size_t n, const char *kind, struct fstream *s, double gbps);

/* Append a line to FAKECUDA_MARKER's file, when set. */
void marker(const char *what);

/* Count one piece of work (a copy, kernel or memset) queued on s, for FAKECUDA_WINDOWS. */
void work(struct fstream *s);

/* A host copy queued on s at virtual time t0 takes its turn on the shared host link. */
void host_link(struct fstream *s, double t0, size_t n);

#endif
