/* gpup2p doctor — what the p2p.* checks share: doctor/p2p.c (static: CUDA's and NVML's answers
 * against the PCI path) and doctor/p2p_active.c (--active: copies that move and check data). Internal
 * to libcore/doctor/ and its tests. */
#ifndef GPUP2P_DOCTOR_P2P_H
#define GPUP2P_DOCTOR_P2P_H

#include "gpup2p/cuda.h"
#include "check.h"

/* The libcuda session of the p2p checks, made on first use (live only). */
struct gp_doctor_p2p {
	int ok;                        /* libcuda listed the GPUs */
	char why[256];                 /* why not */
	int retained;                  /* contexts retained (the active checks need them) */
	int n;                         /* topology GPUs covered: min(ngpu, GP_GPU_MAX) */
	struct gp_cuda cuda;
	int cu[GP_GPU_MAX];            /* topology GPU i -> index in cuda.gpu; -1 not visible to CUDA */
	signed char can[GP_GPU_MAX][GP_GPU_MAX]; /* cuDeviceCanAccessPeer, topology GPU i to j: 1, 0, -1 unknown */
};

/* The session, or NULL: libcuda unavailable (c->p2p->why says why; NULL c->p2p: out of memory). */
struct gp_doctor_p2p *gp_doctor_p2p_session(struct gp_doctor_ctx *c);

/* The pair checks' common start: no GPU or a single one (skipped), libcuda unavailable (unknown).
 * Returns the session when there are pairs to look at, else NULL with the finding added. */
struct gp_doctor_p2p *gp_doctor_p2p_pairs(struct gp_doctor_ctx *c);

/* More GPUs on the bus than the session holds (GP_GPU_MAX): an "unknown" finding saying which were
 * left out, never a silent cut. Nothing when s is NULL or holds them all. */
void gp_doctor_p2p_cut(struct gp_doctor_ctx *c, const struct gp_doctor_p2p *s);

/* Subject of the pair of topology GPUs a, b: "BDF-BDF". Returns buf. */
const char *gp_doctor_p2p_subject(const struct gp_doctor_ctx *c, int a, int b, char *buf, size_t n);

/* 1 when topology GPU i is a consumer part (a GeForce) by its NVML, pci.ids or CUDA name. */
int gp_doctor_p2p_consumer(const struct gp_doctor_ctx *c, int i);

/* The session with its contexts retained for copies (doctor/p2p_active.c), or NULL: libcuda unavailable
 * (c->p2p->why says why; NULL c->p2p: out of memory). Adds no finding. */
struct gp_doctor_p2p *gp_doctor_p2p_retained(struct gp_doctor_ctx *c);

/* p2p.geforce (doctor/p2p_geforce.c), listed in p2p.c's table. */
void gp_doctor_check_p2p_geforce(struct gp_doctor_ctx *c);

/* The active checks (doctor/p2p_active.c), listed in p2p.c's table. */
void gp_doctor_check_p2p_verify(struct gp_doctor_ctx *c);
void gp_doctor_check_p2p_bandwidth(struct gp_doctor_ctx *c);

#endif
