/* gpup2p unit tests — the set-ups test_doctor's registry cases run on a fixture before doctor: process
 * limits, the libcuda, NVML and libibverbs test doubles' answers, BAR1 use as live NVML reports it. */
#ifndef GPUP2P_UNIT_DOCTOR_SETUPS_H
#define GPUP2P_UNIT_DOCTOR_SETUPS_H

#include <stdint.h>

#include "doctor_fx.h"

static inline void memlock_64k(struct fx *x, struct gp_doctor_ctx *c)
{
	live(x, c);
	c->proc.memlock = 64 << 10;
}

static inline void shm_64m(struct fx *x, struct gp_doctor_ctx *c)
{
	live(x, c);
	c->proc.shm_size = 64ULL << 20;
}

static inline void cuda_nodev(struct fx *x, struct gp_doctor_ctx *c)
{
	live(x, c);
	cuda_lib(NULL, "0");
}

static inline void cuda_missing(struct fx *x, struct gp_doctor_ctx *c)
{
	live(x, c);
	cuda_lib("/nonexistent/libcuda.so.1", NULL);
}

/* p2p: the doubles of libcuda (the fixture's GPUs, FAKECUDA_NOPEER / _CORRUPT / _PEER_GBPS) and NVML
 * (FAKENVML_P2P: read and write status; FAKENVML_P2P_NVLINK), on a root that pretends to be live. */
static inline void p2p(struct fx *x, struct gp_doctor_ctx *c, const char *nopeer, const char *nvml, const char *nvlink)
{
	live(x, c);
	cuda_lib(NULL, NULL);
	unit_p2p_env(&x->t, nopeer, nvml, nvlink, NULL);
}
static inline void p2p_yes(struct fx *x, struct gp_doctor_ctx *c) { p2p(x, c, NULL, NULL, NULL); }
static inline void p2p_yes_nvl(struct fx *x, struct gp_doctor_ctx *c) { p2p(x, c, NULL, NULL, "0"); }
static inline void p2p_no(struct fx *x, struct gp_doctor_ctx *c) { p2p(x, c, "1", NULL, NULL); }
static inline void p2p_no_pix(struct fx *x, struct gp_doctor_ctx *c) { p2p(x, c, "2:3,3:2", NULL, NULL); }
static inline void p2p_none(struct fx *x, struct gp_doctor_ctx *c) { p2p(x, c, "1", "1", NULL); }
static inline void p2p_nvml_no(struct fx *x, struct gp_doctor_ctx *c) { p2p(x, c, NULL, "1", NULL); }
static inline void active(struct fx *x, struct gp_doctor_ctx *c) { p2p_yes(x, c); c->active = 1; }
static inline void corrupt_peer(struct fx *x, struct gp_doctor_ctx *c) { active(x, c); setenv("FAKECUDA_CORRUPT", "peer", 1); }
static inline void corrupt_h2d(struct fx *x, struct gp_doctor_ctx *c) { active(x, c); setenv("FAKECUDA_CORRUPT", "h2d", 1); }
static inline void slow_peer(struct fx *x, struct gp_doctor_ctx *c) { active(x, c); setenv("FAKECUDA_PEER_GBPS", "0:1=3", 1); }

/* BAR1 use as live NVML reports it (not recorded in fixtures): 1000 MiB BARs, GPU0 901 MiB in use
 * (90.1%: above the 90% line), GPU1 900 MiB (exactly 90%: not above), the others 3 MiB. */
static inline void bar1_set(struct fx *x, struct gp_doctor_ctx *c, int full)
{
	live(x, c);
	for (int i = 0; i < x->f.n; i++) {
		struct gp_gpu_state *s = &x->f.gpus[i].st;

		s->bar1_total = 1000LL << 20;
		s->bar1_used = 3LL << 20;
		if (full && !strcmp(x->f.gpus[i].bdf, "0000:13:00.0"))
			s->bar1_used = 901LL << 20;
		if (full && !strcmp(x->f.gpus[i].bdf, "0000:14:00.0"))
			s->bar1_used = 900LL << 20;
	}
}

static inline void bar1_full(struct fx *x, struct gp_doctor_ctx *c)
{
	bar1_set(x, c, 1);
}

static inline void bar1_ok(struct fx *x, struct gp_doctor_ctx *c)
{
	bar1_set(x, c, 0);
}

/* libibverbs: the test double (tests/fakeverbs; "-old": without ibv_reg_dmabuf_mr) listing these
 * devices (the ones whose provider it found), or a library that is not there (dir NULL). */
static inline void verbs_lib(const char *dir, const char *devices)
{
	static char path[1024];
	const char *fx = getenv("GPUP2P_FIXTURES");

	snprintf(path, sizeof(path), "%s/../tests/%s/libibverbs.so.1", fx ? fx : "build/fixtures", dir ? dir : "nonexistent");
	setenv("GPUP2P_LIBIBVERBS", path, 1);
	setenv("FAKEVERBS_DEVICES", devices, 1);
}

#define ALL_MLX5 "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7"

/* The fixture's sysfs, with libcuda's and libibverbs' test doubles answering (c->probe_libs). */
static inline void verbs_all(struct fx *x, struct gp_doctor_ctx *c)
{
	(void)x;
	c->probe_libs = 1;
	cuda_lib(NULL, NULL);
	unsetenv("FAKECUDA_NODMABUF");
	verbs_lib("fakeverbs", ALL_MLX5);
}

static inline void verbs_no_mlx5_7(struct fx *x, struct gp_doctor_ctx *c)
{
	verbs_all(x, c);
	verbs_lib("fakeverbs", "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6");
}

static inline void verbs_missing(struct fx *x, struct gp_doctor_ctx *c)
{
	verbs_all(x, c);
	verbs_lib(NULL, "");
}

/* dma-buf live: CUDA says DMA_BUF_SUPPORTED = 0, or rdma-core predates ibv_reg_dmabuf_mr. */
static inline void dmabuf_cuda_no(struct fx *x, struct gp_doctor_ctx *c)
{
	verbs_all(x, c);
	setenv("FAKECUDA_NODMABUF", "1", 1);
}

static inline void dmabuf_old_verbs(struct fx *x, struct gp_doctor_ctx *c)
{
	verbs_all(x, c);
	verbs_lib("fakeverbs-old", ALL_MLX5);
}

/* dma-buf live, libcuda not loadable: CUDA's attribute unknown. */
static inline void dmabuf_no_cuda(struct fx *x, struct gp_doctor_ctx *c)
{
	verbs_all(x, c);
	cuda_lib("/nonexistent/libcuda.so.1", NULL);
}

/* rdma.gdr live: CUDA (the double, seeing the fixture's GPUs) says no GPUDirect RDMA, or compute 7.0. */
static inline void gdr_cuda(struct fx *x, struct gp_doctor_ctx *c, const char *nogdr, const char *cc)
{
	verbs_all(x, c);
	unit_p2p_env(&x->t, NULL, NULL, NULL, NULL);
	unit_setenv("FAKECUDA_NOGDR", nogdr);
	unit_setenv("FAKECUDA_CC", cc);
}
static inline void gdr_nogpu(struct fx *x, struct gp_doctor_ctx *c) { gdr_cuda(x, c, "1", NULL); }
static inline void gdr_cc70(struct fx *x, struct gp_doctor_ctx *c) { gdr_cuda(x, c, NULL, "7.0"); }

#endif
