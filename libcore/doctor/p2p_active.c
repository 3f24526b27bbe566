/* gpup2p doctor — the active p2p checks (doctor --active): copies on the copy engines through
 * gp_xfer_run (libcore/xfer/xfer.c, the path `gpup2p copy` and `bench` take), every byte checked
 * (p2p.verify), and timed against the link's rate (p2p.bandwidth). Live only. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gpup2p/clock.h"
#include "gpup2p/xfer.h"
#include "p2p.h"

#define VERIFY_SIZE (8ULL << 20)   /* bytes per checked copy */
#define BW_SIZE (64ULL << 20)      /* bytes per timed copy */
#define BW_ITERS 4                 /* copies per timed batch */
#define BW_REPS 3                  /* timed batches: the median counts */
#define NVLINK_GBPS 20.0           /* per link and direction: NVLink 1 (the slowest; 2-4 carry 25, 5 carries 50) */

static void progress(struct gp_doctor_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(struct gp_doctor_ctx *c, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	if (!c->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->progress(c->progress_arg, buf);
}

struct gp_doctor_p2p *gp_doctor_p2p_retained(struct gp_doctor_ctx *c)
{
	struct gp_doctor_p2p *s;
	struct gp_err e = { 0 };

	if (!(s = gp_doctor_p2p_session(c)))
		return NULL;
	if (!s->retained && gp_cuda_retain(&s->cuda, &e)) {
		s->ok = 0; /* gp_cuda_retain closed the session */
		snprintf(s->why, sizeof(s->why), "%s", e.msg);
		return NULL;
	}
	s->retained = 1;
	return s;
}

/* The session with contexts retained, or NULL after adding the finding that says why. */
static struct gp_doctor_p2p *active_session(struct gp_doctor_ctx *c)
{
	struct gp_doctor_p2p *s;
	struct gp_finding *f;

	if (gp_doctor_no_gpu(c))
		return NULL;
	if ((s = gp_doctor_p2p_retained(c))) {
		gp_doctor_p2p_cut(c, s);
		return s;
	}
	if (!c->p2p)
		return NULL;
	f = gp_doctor_add(c, GP_SEV_UNKNOWN, "libcuda", "no copy possible: %s", c->p2p->why);
	gp_finding_ev(f, "libcuda", "%s", c->p2p->why);
	return NULL;
}

/* One path through gp_xfer_run, host memory on the GPU's NUMA node where that node exists here. */
static int copy(struct gp_doctor_ctx *c, struct gp_xfer_spec *x, int topo_gpu, struct gp_xfer_result *r,
		struct gp_err *e)
{
	x->numa = gp_doctor_dev(c, topo_gpu)->numa_node;
	if (x->numa >= 0 && gp_xfer_run(&c->p2p->cuda, x, r, e) == 0)
		return 0;
	x->numa = -1;
	return gp_xfer_run(&c->p2p->cuda, x, r, e);
}

/* "GPU0->GPU1" (or host) of a path. */
static void path_name(const struct gp_doctor_ctx *c, enum gp_xfer_kind k, int a, int b, char *buf, size_t n)
{
	const char *na = c->topo->devs[a].name;

	if (k == GP_XFER_H2D)
		snprintf(buf, n, "host->%s", na);
	else if (k == GP_XFER_D2H)
		snprintf(buf, n, "%s->host", na);
	else
		snprintf(buf, n, "%s->%s", na, c->topo->devs[b].name);
}

/* Host->GPU and GPU->host of topology GPU i, pinned host memory (seed 0: timed only, not checked);
 * -1 after a "skipped" finding when CUDA does not see the GPU. */
static int host_specs(struct gp_doctor_ctx *c, const struct gp_doctor_p2p *s, int i, struct gp_xfer_spec *x,
		      uint64_t size, int iters, int reps, uint64_t seed)
{
	if (s->cu[i] < 0) {
		gp_doctor_add(c, GP_SEV_SKIPPED, gp_doctor_dev(c, i)->bdf, "%s: not visible to CUDA", c->topo->devs[i].name);
		return -1;
	}
	x[0] = (struct gp_xfer_spec){ .kind = GP_XFER_H2D, .gpu = s->cu[i], .pinned = 1, .size = size, .iters = iters,
				      .reps = reps, .no_verify = !seed, .seed = seed };
	x[1] = x[0];
	x[1].kind = GP_XFER_D2H;
	return 0;
}

/* --- p2p.verify -------------------------------------------------------------------------------- */

/* Copy each path (two: both directions of a pair, or host->GPU and GPU->host) and add one finding. */
static void verify_paths(struct gp_doctor_ctx *c, const char *subj, int a, int b, struct gp_xfer_spec *x, int *step,
			 int steps)
{
	char name[2][48], p2p[64] = "";
	struct gp_xfer_result r[2];
	struct gp_err e = { 0 };
	struct gp_finding *f = NULL;
	double t0 = gp_clock_s();
	int bad = -1;

	for (int k = 0; k < 2 && !f; k++) {
		int from = k ? b : a;

		path_name(c, x[k].kind, from, k ? a : b, name[k], sizeof(name[k]));
		progress(c, "p2p.verify: %s (%d of %d)", name[k], ++*step, steps);
		if (copy(c, &x[k], from, &r[k], &e))
			f = gp_doctor_add(c, GP_SEV_UNKNOWN, subj, "%s: the copy failed: %s", name[k], e.msg);
		else if (r[k].verified == 0 && bad < 0)
			bad = k;
		if (x[k].kind == GP_XFER_PEER)
			snprintf(p2p + strlen(p2p), sizeof(p2p) - strlen(p2p), "%s%s %s", k ? ", " : "", name[k],
				 x[k].p2p ? "peer access on" : "staged by the driver (no peer access)");
	}
	if (!f && bad >= 0) {
		const struct gp_xfer_result *w = &r[bad];

		f = gp_doctor_add(c, GP_SEV_ERROR, subj, "%s: %s, data wrong: byte %lld of copy %d is 0x%02x, sent 0x%02x",
				  name[bad], x[bad].kind != GP_XFER_PEER ? "the copy succeeded"
				  : x[bad].p2p ? "P2P says yes" : "the staged copy succeeded",
				  (long long)w->bad_offset, w->bad_copy + 1, w->got, w->want);
		gp_finding_fix(f, "do not use this path: check bar.*, acs.redirect, iommu.mode and pcie.aer above, "
			       "dmesg for NVRM/Xid lines; reset the GPUs (nvidia-smi -r) and run gpup2p doctor --active again");
	} else if (!f) {
		f = gp_doctor_add(c, GP_SEV_OK, subj, "%s and %s: %d copies of %llu MiB each way, every byte as sent",
				  name[0], name[1], x[0].iters * x[0].reps, (unsigned long long)(x[0].size >> 20));
	}
	gp_finding_bdf(f, gp_doctor_dev(c, a)->bdf);
	if (b != a)
		gp_finding_bdf(f, gp_doctor_dev(c, b)->bdf);
	if (p2p[0])
		gp_finding_ev(f, "paths", "%s", p2p);
	gp_finding_ev(f, "seconds", "%.2f", gp_clock_s() - t0);
}

void gp_doctor_check_p2p_verify(struct gp_doctor_ctx *c)
{
	struct gp_doctor_p2p *s = active_session(c);
	int steps, step = 0;
	char subj[2 * GP_BDF_LEN + 2];

	if (!s)
		return;
	steps = 2 * s->n + s->n * (s->n - 1);
	for (int i = 0; i < s->n; i++) {
		struct gp_xfer_spec x[2];

		if (host_specs(c, s, i, x, VERIFY_SIZE, 2, 2, 0x7066793270ULL + (uint64_t)i))
			continue;
		verify_paths(c, gp_doctor_dev(c, i)->bdf, i, i, x, &step, steps);
	}
	if (s->n < 2)
		return; /* a single GPU: no pair, host<->GPU verified above */
	for (int a = 0; a < s->n; a++)
		for (int b = a + 1; b < s->n; b++) {
			struct gp_xfer_spec x[2] = {
				{ .kind = GP_XFER_PEER, .gpu = s->cu[a], .peer_gpu = s->cu[b], .p2p = s->can[a][b] == 1,
				  .size = VERIFY_SIZE, .iters = 2, .reps = 2, .seed = 0x7066793270ULL + 100 + (uint64_t)(a * 64 + b) },
				{ .kind = GP_XFER_PEER, .gpu = s->cu[b], .peer_gpu = s->cu[a], .p2p = s->can[b][a] == 1,
				  .size = VERIFY_SIZE, .iters = 2, .reps = 2, .seed = 0x7066793270ULL + 100 + (uint64_t)(b * 64 + a) },
			};

			gp_doctor_p2p_subject(c, a, b, subj, sizeof(subj));
			if (s->cu[a] < 0 || s->cu[b] < 0)
				gp_doctor_add(c, GP_SEV_SKIPPED, subj, "%s-%s: not visible to CUDA", c->topo->devs[a].name,
					      c->topo->devs[b].name);
			else
				verify_paths(c, subj, a, b, x, &step, steps);
		}
}

/* --- p2p.bandwidth ----------------------------------------------------------------------------- */

/* GB/s one direction of GPU i's PCIe link carries, and its description. */
static double gpu_link(const struct gp_doctor_ctx *c, int i, char *what, size_t n)
{
	double gts;
	int width;

	gp_doctor_link_best(c, c->topo->devs[i].pci, &gts, &width);
	snprintf(what, n, "PCIe Gen%d x%d", gp_pci_gen(gts), width);
	return gp_doctor_pcie_gbps(gts, width);
}

/* Time two paths; one finding comparing the slower with the expected rate. */
static void bw_paths(struct gp_doctor_ctx *c, const char *subj, int a, int b, struct gp_xfer_spec *x, int nx,
		     double expect, const char *link, int *step, int steps)
{
	char name[2][48], meas[128] = "";
	struct gp_xfer_result r;
	struct gp_err e = { 0 };
	struct gp_finding *f = NULL;
	double worst = -1, t0 = gp_clock_s(), rate[2];
	int wk = 0, got = 0, end[2][2];

	for (int k = 0; k < nx && !f; k++) {
		int from = k ? b : a;

		path_name(c, x[k].kind, from, k ? a : b, name[k], sizeof(name[k]));
		progress(c, "p2p.bandwidth: %s (%d of %d)", name[k], ++*step, steps);
		if (copy(c, &x[k], from, &r, &e)) {
			f = gp_doctor_add(c, GP_SEV_UNKNOWN, subj, "%s: the copy failed: %s", name[k], e.msg);
			break;
		}
		snprintf(meas + strlen(meas), sizeof(meas) - strlen(meas), "%s%s %.2f GB/s", k ? ", " : "", name[k],
			 r.gbps.median);
		rate[k] = r.gbps.median * 1e9;
		got++;
		end[k][0] = x[k].kind == GP_XFER_H2D ? -1 : from;
		end[k][1] = x[k].kind == GP_XFER_D2H ? -1 : x[k].kind == GP_XFER_H2D ? from : (k ? a : b);
		if (worst < 0 || r.gbps.median < worst)
			worst = r.gbps.median, wk = k;
	}
	if (f)
		; /* the copy failed: said above */
	else if (expect <= 0)
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, subj, "%s: the link's rate is unknown (%s): measured %s", name[0], link,
				  meas);
	else if (worst < expect / 2) {
		f = gp_doctor_add(c, GP_SEV_WARNING, subj, "%s: %.2f GB/s, below half of the link's %.2f GB/s (%s)",
				  name[wk], worst, expect, link);
		gp_finding_fix(f, "check pcie.link_width, pcie.link_speed%s and acs.redirect above; an idle-clocked or "
			       "busy GPU reads low too: rerun on idle GPUs (gpup2p bench for the full sweep)",
			       x[0].kind == GP_XFER_PEER ? ", nvlink.*" : ", numa.*");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, subj, "%s: at least %.2f GB/s, %.0f%% of the link's %.2f GB/s (%s)", meas,
				  worst, 100 * worst / expect, expect, link);
	}
	gp_finding_bdf(f, gp_doctor_dev(c, a)->bdf);
	if (b != a)
		gp_finding_bdf(f, gp_doctor_dev(c, b)->bdf);
	gp_finding_ev(f, "measured", "%s", meas);
	for (int k = 0; k < got; k++)
		gp_finding_figure(f, end[k][0], end[k][1], rate[k]);
	if (expect > 0)
		gp_finding_ev(f, "expected", "%.2f GB/s (%s); floor %.2f GB/s", expect, link, expect / 2);
	gp_finding_ev(f, "seconds", "%.2f", gp_clock_s() - t0);
}

void gp_doctor_check_p2p_bandwidth(struct gp_doctor_ctx *c)
{
	struct gp_doctor_p2p *s = active_session(c);
	char subj[2 * GP_BDF_LEN + 2], la[64], lb[64], link[96];
	int steps = 0, step = 0;

	if (!s)
		return;
	for (int a = 0; a < s->n; a++)
		for (int b = 0; b < s->n; b++)
			steps += a == b ? 2 : s->can[a][b] == 1;
	for (int i = 0; i < s->n; i++) {
		struct gp_xfer_spec x[2];
		double expect = gpu_link(c, i, link, sizeof(link));

		if (host_specs(c, s, i, x, BW_SIZE, BW_ITERS, BW_REPS, 0))
			continue;
		bw_paths(c, gp_doctor_dev(c, i)->bdf, i, i, x, 2, expect, link, &step, steps);
	}
	for (int a = 0; a < s->n; a++)
		for (int b = a + 1; b < s->n; b++) {
			const struct gp_topo_link lv = gp_topo_link_at(c->topo, a, b), *l = &lv;
			struct gp_xfer_spec x[2];
			int nx = 0, first = a, second = b;
			double expect;

			gp_doctor_p2p_subject(c, a, b, subj, sizeof(subj));
			if (l->nvlinks > 0) {
				expect = NVLINK_GBPS * l->nvlinks;
				snprintf(link, sizeof(link), "%d NVLinks x %.0f GB/s", l->nvlinks, NVLINK_GBPS);
			} else {
				double ea = gpu_link(c, a, la, sizeof(la)), eb = gpu_link(c, b, lb, sizeof(lb));

				expect = ea < eb ? ea : eb;
				snprintf(link, sizeof(link), "%s", ea < eb ? la : lb);
			}
			for (int k = 0; k < 2; k++) {
				int from = k ? b : a, to = k ? a : b;

				if (s->cu[from] < 0 || s->cu[to] < 0 || s->can[from][to] != 1)
					continue;
				if (!nx)
					first = from, second = to;
				x[nx++] = (struct gp_xfer_spec){ .kind = GP_XFER_PEER, .gpu = s->cu[from], .peer_gpu = s->cu[to],
								 .p2p = 1, .size = BW_SIZE, .iters = BW_ITERS,
								 .reps = BW_REPS, .no_verify = 1 };
			}
			if (nx)
				bw_paths(c, subj, first, second, x, nx, expect, link, &step, steps);
			else
				gp_doctor_add(c, GP_SEV_SKIPPED, subj, "%s-%s: no P2P access (see p2p.access): copies are "
					      "staged through host memory, no link rate to compare with",
					      c->topo->devs[a].name, c->topo->devs[b].name);
		}
}
