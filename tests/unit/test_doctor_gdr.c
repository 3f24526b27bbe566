/* Unit tests: the GPUDirect RDMA verdict per GPU-NIC pair (libcore/rdma/gdr.c, NCCL's rules) on fixture
 * topologies, and what doctor's rdma.gdr findings say and carry, beyond the severities
 * tests/unit/test_doctor.c's registry cases check. Expectations worked out from the specs: in the dgx-h100
 * tree GPU0 0000:13:00.0 and GPU1 share a switch with mlx5_0 (15:00.0) and mlx5_1 (16:00.0), mlx5_2/3 are
 * under GPU2/GPU3's switch on the same socket (NODE), mlx5_4..7 on the other socket (SYS), under GPU4/5
 * (93:00.0, 94:00.0) and GPU6/7; every GPU pair is NVLinked (NV18). */
#include <errno.h>

#include "gpup2p/gdr.h"
#include "gpup2p/rdma.h"
#include "doctor_fx.h"

/* Live through the test doubles: libcuda seeing the fixture's GPUs (compute 9.0, GPUDirect RDMA and dma-buf
 * supported) and libibverbs with ibv_reg_dmabuf_mr (tests/fakeverbs). */
static void verbs_all_gdr(struct fx *x, struct gp_doctor_ctx *c)
{
	static char path[1024];
	const char *fx = getenv("GPUP2P_FIXTURES");

	c->probe_libs = 1;
	cuda_lib(NULL, NULL);
	unsetenv("FAKECUDA_NODMABUF");
	unit_p2p_env(&x->t, NULL, NULL, NULL, NULL);
	snprintf(path, sizeof(path), "%s/../tests/fakeverbs/libibverbs.so.1", fx ? fx : "build/fixtures");
	setenv("GPUP2P_LIBIBVERBS", path, 1);
	setenv("FAKEVERBS_DEVICES", "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7", 1);
}

static const struct gp_finding *finding(const struct gp_doctor_ctx *c, const char *subject)
{
	for (int i = 0; i < c->out.n; i++)
		if (!strcmp(c->out.v[i].check->id, "rdma.gdr") && !strcmp(c->out.v[i].subject, subject))
			return &c->out.v[i];
	return NULL;
}

static const char *ev(const struct gp_doctor_ctx *c, const char *subject, const char *key)
{
	const char *v = ev_of(c, "rdma.gdr", subject, key);

	return v ? v : "";
}

static int has(const char *s, const char *part)
{
	return s && strstr(s, part) != NULL;
}

/* The pure verdict on the healthy tree, one fact changed at a time. */
static void verdict_rules(void)
{
	static struct fx x;
	struct gp_gdr_sys s = { .peermem = 1, .dmabuf = 1 };
	struct gp_gdr_verdict v;
	int gdr[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, cc[8] = { 70, 70, 70, 70, 70, 70, 70, 70 };

	if (fx_load(&x, unit_fixture(D("healthy")), NULL, 0, 0))
		return;
	CHECK(gp_gdr_order[0] == GP_GDR_DMABUF && gp_gdr_order[1] == GP_GDR_PEERMEM, "NCCL's order: dma-buf, then peermem");
	CHECK(!strcmp(gp_gdr_path_id(GP_GDR_DMABUF), "dmabuf") && !strcmp(gp_gdr_path_id(GP_GDR_PEERMEM), "peermem") &&
	      !strcmp(gp_gdr_path_name(GP_GDR_PEERMEM), "nvidia-peermem"), "path tokens as bench rdma writes them");
	CHECK(gp_gdr_pair(&x.t, 0, "mlx5_0", &s, &v) == 0 && v.possible == 1 && v.path == GP_GDR_DMABUF && v.both &&
	      v.dist == GP_TC_PIX && !v.why && !v.read_note[0], "GPU0-mlx5_0: PIX, both paths: dma-buf (NCCL's first)");
	s.dmabuf = 0;
	s.dmabuf_why = "proprietary kernel module";
	CHECK(gp_gdr_pair(&x.t, 0, "mlx5_0", &s, &v) == 0 && v.possible == 1 && v.path == GP_GDR_PEERMEM && !v.both,
	      "no dma-buf: nvidia-peermem");
	s.peermem = 0;
	CHECK(gp_gdr_pair(&x.t, 0, "mlx5_0", &s, &v) == 0 && v.possible == 0 && v.why == GP_GDR_NOPATH &&
	      v.path == GP_GDR_NONE && has(v.reason, "proprietary kernel module"), "neither path: says dma-buf's missing part (%s)",
	      v.reason);
	s.dmabuf = -1;
	s.dmabuf_why = "not probed offline";
	CHECK(gp_gdr_pair(&x.t, 0, "mlx5_0", &s, &v) == 0 && v.possible == -1 && v.path == GP_GDR_UNKNOWN &&
	      has(v.reason, "not probed offline"), "no module, dma-buf unknown: unknown (%s)", v.reason);
	s.peermem = 1;
	CHECK(gp_gdr_pair(&x.t, 0, "mlx5_0", &s, &v) == 0 && v.possible == 1 && v.path == GP_GDR_PEERMEM,
	      "module loaded, dma-buf unknown: peermem");
	CHECK(gp_gdr_pair(&x.t, 0, "mlx5_4", &s, &v) == 0 && v.possible == 0 && v.why == GP_GDR_FAR && v.dist == GP_TC_SYS &&
	      v.path == GP_GDR_PEERMEM && has(v.reason, "NCCL_NET_GDR_LEVEL=SYS would force it") && v.pxn == 4,
	      "GPU0-mlx5_4: SYS beyond PXB, the level that forces it, PXN through GPU4 (%s, pxn %d)", v.reason, v.pxn);
	CHECK(gp_gdr_pair(&x.t, 0, "mlx5_2", &s, &v) == 0 && v.why == GP_GDR_FAR && v.dist == GP_TC_NODE &&
	      has(v.reason, "NCCL_NET_GDR_LEVEL=NODE"), "GPU0-mlx5_2: NODE beyond PXB");
	s.gpu_gdr = gdr;
	gdr[1] = 0;
	CHECK(gp_gdr_pair(&x.t, 1, "mlx5_0", &s, &v) == 0 && v.possible == 0 && v.why == GP_GDR_NOGPU &&
	      has(v.reason, "GPU_DIRECT_RDMA_SUPPORTED = 0"), "GPU1 without GPUDirect RDMA (CUDA): not possible");
	CHECK(gp_gdr_pair(&x.t, 0, "mlx5_0", &s, &v) == 0 && v.possible == 1, "GPU0 with it: possible");
	s.gpu_cc = cc;
	CHECK(gp_gdr_pair(&x.t, 0, "mlx5_0", &s, &v) == 0 && v.possible == 1 && !v.read_note[0],
	      "compute 7.0 with NVLink: NCCL's reads stay on");
	CHECK(gp_gdr_pair(&x.t, 0, "mlx5_9", &s, &v) == -ENOENT && gp_gdr_pair(&x.t, 8, "mlx5_0", &s, &v) == -ENOENT &&
	      gp_gdr_pair(&x.t, 0, NULL, &s, &v) == -ENOENT, "unknown device or GPU: -ENOENT");
	fx_unload(&x);
}

/* NCCL_NET_GDR_READ's default: off below compute 8.0 without an NVLink peer (gdr-read: no NVLink),
 * on for a lone GPU (nicorder: one GPU, mlx5_3 on its switch). Software RDMA (gdr-rxe): never. */
static void verdict_read_soft(void)
{
	static struct fx x;
	struct gp_gdr_sys s = { .peermem = 1, .dmabuf = 0, .dmabuf_why = "" };
	struct gp_gdr_verdict v;
	int cc[8] = { 70, 80, 70, 70, 70, 70, 70, 70 };

	s.gpu_cc = cc;
	if (fx_load(&x, unit_fixture(D("gdr-read")), NULL, 0, 0) == 0) {
		CHECK(gp_gdr_pair(&x.t, 0, "mlx5_0", &s, &v) == 0 && v.possible == 1 && has(v.read_note, "(7.0)") &&
		      has(v.read_note, "NCCL_NET_GDR_READ=1"), "7.0 without NVLink: the read note (%s)", v.read_note);
		CHECK(gp_gdr_pair(&x.t, 1, "mlx5_0", &s, &v) == 0 && v.possible == 1 && !v.read_note[0], "8.0: no note");
		CHECK(gp_gdr_pair(&x.t, 0, "mlx5_4", &s, &v) == 0 && v.possible == 0 && v.pxn == -1 && !v.read_note[0],
		      "far, no NVLink: no PXN relay, no note");
		fx_unload(&x);
	}
	if (fx_load(&x, unit_fixture("nicorder"), NULL, 0, 0) == 0) {
		CHECK(gp_gdr_pair(&x.t, 0, "mlx5_3", &s, &v) == 0 && v.possible == 1 && !v.read_note[0],
		      "one GPU at 7.0: NCCL keeps reads on (%s)", v.read_note);
		fx_unload(&x);
	}
	if (fx_load(&x, unit_fixture(D("gdr-rxe")), NULL, 0, 0) == 0) {
		CHECK(gp_gdr_soft(&x.r, "rxe0") && !gp_gdr_soft(&x.r, "mlx5_2"), "rxe0 is software RDMA, mlx5_2 is not");
		CHECK(gp_gdr_pair(&x.t, 0, "rxe0", &s, &v) == 0 && v.possible == 0 && (v.why & GP_GDR_SOFT) &&
		      v.path == GP_GDR_NONE && v.dist == GP_TC_PIX && has(v.reason, "rxe0 is software RDMA"),
		      "GPU0-rxe0: PIX, but software RDMA (%s)", v.reason);
		fx_unload(&x);
	}
}

/* What the findings say: one per GPU and RDMA device, the path, the checks that carry the warning. */
static void findings(void)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	const struct gp_finding *f;
	int n = 0, info = 0;

	if (run_sel(D("healthy"), verbs_all_gdr, "rdma.gdr", NULL, &x, &c) == 0) {
		for (int i = 0; i < c.out.n; i++)
			n += !strcmp(c.out.v[i].check->id, "rdma.gdr");
		CHECK(n == 64, "healthy: 8 GPUs x 8 RDMA devices = 64 findings (%d)", n);
		f = finding(&c, "0000:13:00.0-mlx5_0");
		CHECK(f && f->sev == GP_SEV_OK && has(f->message, "possible via dma-buf (PIX)") &&
		      has(f->message, "nvidia-peermem is loaded too") && f->nbdf == 2 && !strcmp(f->bdf[0], "0000:13:00.0") &&
		      !strcmp(f->bdf[1], "0000:15:00.0"), "GPU0-mlx5_0: via dma-buf, peermem the fallback (%s)",
		      f ? f->message : "none");
		CHECK(!strcmp(ev(&c, "0000:13:00.0-mlx5_0", "path"), "dmabuf") &&
		      !strcmp(ev(&c, "0000:13:00.0-mlx5_0", "distance"), "PIX") &&
		      !strcmp(ev(&c, "0000:13:00.0-mlx5_0", "gpu"), "GPU0 0000:13:00.0") &&
		      !strcmp(ev(&c, "0000:13:00.0-mlx5_0", "nic"), "mlx5_0 0000:15:00.0") &&
		      !strcmp(ev(&c, "0000:13:00.0-mlx5_0", "reason"), "none") &&
		      !strcmp(ev(&c, "0000:13:00.0-mlx5_0", "CUDA GPU_DIRECT_RDMA_SUPPORTED"), "1") &&
		      !strcmp(ev(&c, "0000:13:00.0-mlx5_0", "CUDA compute capability"), "9.0"), "evidence: gpu, nic, distance, "
		      "path, reason, CUDA's answers");
		f = finding(&c, "0000:13:00.0-mlx5_4");
		CHECK(f && f->sev == GP_SEV_OK && has(f->message, "not possible: SYS is beyond") && !f->fix &&
		      !strcmp(ev(&c, "0000:13:00.0-mlx5_4", "path"), "none"), "GPU0-mlx5_4: SYS, ok: GPU0 has its own (%s)",
		      f ? f->message : "none");
		done(&x, &c);
	}
	if (run_sel(D("healthy"), NULL, "rdma.gdr", NULL, &x, &c) == 0) {
		f = finding(&c, "0000:13:00.0-mlx5_0");
		CHECK(f && f->sev == GP_SEV_OK && has(f->message, "via nvidia-peermem (PIX)") &&
		      !strcmp(ev(&c, "0000:13:00.0-mlx5_0", "path"), "peermem"), "offline: peermem (%s)", f ? f->message : "none");
		done(&x, &c);
	}
	if (run_sel(D("pm-missing"), NULL, "rdma.gdr", NULL, &x, &c) == 0) {
		f = finding(&c, "0000:13:00.0-mlx5_0");
		CHECK(f && f->sev == GP_SEV_INFO && has(f->message, "peermem.missing carries the warning") &&
		      has(f->message, "proprietary kernel module") && f->fix, "neither path: names peermem.missing (%s)",
		      f ? f->message : "none");
		f = finding(&c, "0000:13:00.0-mlx5_1");
		CHECK(f && f->sev == GP_SEV_OK, "one alarm per GPU: its first closest NIC only");
		done(&x, &c);
	}
	if (run_sel(D("gdr-far"), NULL, "rdma.gdr", NULL, &x, &c) == 0) {
		for (int i = 0; i < c.out.n; i++)
			info += c.out.v[i].sev == GP_SEV_INFO;
		f = finding(&c, "0000:13:00.0-mlx5_4");
		CHECK(info == 4 && f && has(f->message, "see topo.nic_distance") && has(f->fix, "NCCL_NET_GDR_LEVEL=SYS"),
		      "gdr-far: one info for each of GPU0-GPU3, naming topo.nic_distance (%d)", info);
		done(&x, &c);
	}
	/* the same layout with NVLink: NCCL's PXN sends through GPU4-GPU7 (a NIC on their switch): ok */
	info = 0;
	if (run_sel(D("gdr-sys"), NULL, "rdma.gdr", NULL, &x, &c) == 0) {
		for (int i = 0; i < c.out.n; i++)
			info += c.out.v[i].sev != GP_SEV_OK;
		f = finding(&c, "0000:13:00.0-mlx5_4");
		CHECK(info == 0 && f && f->sev == GP_SEV_OK && has(f->message, "PXN can relay through GPU4"),
		      "gdr-sys: PXN pairs ok, no alarm (%d not ok; %s)", info, f ? f->message : "none");
		done(&x, &c);
	}
}

int main(void)
{
	verdict_rules();
	verdict_read_soft();
	findings();
	return unit_done();
}
