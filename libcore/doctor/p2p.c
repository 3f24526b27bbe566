/* gpup2p doctor — p2p.*: CUDA's view of peer access against the PCI path (p2p.access), NVML's own P2P
 * status against CUDA's (p2p.nvml_status), and, with --active, copies that check every byte and the
 * bandwidth against the link (doctor/p2p_active.c). libcuda and NVML are asked live only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/buf.h"
#include "gpup2p/gpu_p2p.h"
#include "p2p.h"

struct gp_doctor_p2p *gp_doctor_p2p_session(struct gp_doctor_ctx *c)
{
	struct gp_doctor_p2p *s = c->p2p;
	struct gp_err e = { 0 };

	if (s)
		return s->ok ? s : NULL;
	if (!(s = c->p2p = calloc(1, sizeof(*s)))) {
		c->out.nomem = 1;
		return NULL;
	}
	s->n = c->topo->ngpu < GP_GPU_MAX ? c->topo->ngpu : GP_GPU_MAX;
	(void)gp_doctor_cuda(c); /* a prefetch thread may be loading libcuda: wait for it first */
	if (gp_cuda_list(&s->cuda, &e)) {
		snprintf(s->why, sizeof(s->why), "%s", e.msg);
		return NULL;
	}
	s->ok = 1;
	for (int i = 0; i < s->n; i++) {
		s->cu[i] = -1;
		for (int k = 0; k < s->cuda.n; k++)
			if (!strcmp(s->cuda.gpu[k].bdf, gp_doctor_dev(c, i)->bdf))
				s->cu[i] = k;
	}
	for (int i = 0; i < s->n; i++)
		for (int j = 0; j < s->n; j++) {
			int r = i == j || s->cu[i] < 0 || s->cu[j] < 0 ? -1 : gp_cuda_can_peer(&s->cuda, s->cu[i], s->cu[j], &e);

			s->can[i][j] = (signed char)(r < 0 ? -1 : r);
		}
	return s;
}

void gp_doctor_p2p_free(struct gp_doctor_ctx *c)
{
	if (!c->p2p)
		return;
	if (c->p2p->ok)
		gp_cuda_close(&c->p2p->cuda);
	free(c->p2p);
	c->p2p = NULL;
}

void gp_doctor_p2p_cut(struct gp_doctor_ctx *c, const struct gp_doctor_p2p *s)
{
	struct gp_finding *f;

	if (!s || c->topo->ngpu <= s->n)
		return;
	f = gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "%d GPUs: only the first %d (PCI order) are checked",
			  c->topo->ngpu, s->n);
	gp_finding_ev(f, "gpus", "%d on the PCI bus, at most %d handled", c->topo->ngpu, GP_GPU_MAX);
}

struct gp_doctor_p2p *gp_doctor_p2p_pairs(struct gp_doctor_ctx *c)
{
	struct gp_doctor_p2p *s;
	struct gp_finding *f;

	if (gp_doctor_no_gpu(c))
		return NULL;
	if (c->topo->ngpu < 2) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "one GPU: no pair");
		return NULL;
	}
	if ((s = gp_doctor_p2p_session(c)) || !c->p2p) {
		gp_doctor_p2p_cut(c, s);
		return s;
	}
	f = gp_doctor_add(c, GP_SEV_UNKNOWN, "libcuda", "libcuda could not list the GPUs: %s", c->p2p->why);
	gp_finding_ev(f, "libcuda", "%s", c->p2p->why);
	return NULL;
}

const char *gp_doctor_p2p_subject(const struct gp_doctor_ctx *c, int a, int b, char *buf, size_t n)
{
	snprintf(buf, n, "%s-%s", gp_doctor_dev(c, a)->bdf, gp_doctor_dev(c, b)->bdf);
	return buf;
}

int gp_doctor_p2p_consumer(const struct gp_doctor_ctx *c, int i)
{
	char name[256];
	const struct gp_doctor_p2p *s = c->p2p;

	if (strcasestr(gp_topo_display_name(c->topo, c->topo->devs[i].pci, name, sizeof(name)), "geforce"))
		return 1;
	return s && s->ok && i < s->n && s->cu[i] >= 0 && strcasestr(s->cuda.gpu[s->cu[i]].name, "geforce");
}

/* --- p2p.access -------------------------------------------------------------------------------- */

/* What elsewhere could make CUDA refuse a pair: ACS redirection on its path, IOMMU translation, registry
 * keys forcing a P2P mode. */
struct refusal {
	struct gp_buf acs;             /* redirecting bridges on the path, space separated */
	int iommu;                     /* the IOMMU translates either GPU's DMA */
	char dw[8192], dwd[8192];      /* RegistryDwords, RegistryDwordsPerDevice ("" none) */
	int regkey;                    /* one of them names a P2P key */
};

static void refusal_find(struct gp_doctor_ctx *c, int a, int b, struct refusal *r)
{
	int missing;

	for (int k = 0; c->acs_ok && k < c->acs.n; k++)
		if (c->acs.b[k].redirects == 1 && gp_acs_on_pair_path(c->topo, c->acs.b[k].pci, a, b))
			gp_buf_addf(&r->acs, "%s%s", r->acs.len ? " " : "", c->pci->devs[c->acs.b[k].pci].bdf);
	r->iommu = gp_doctor_translated(c, a) || gp_doctor_translated(c, b);
	if (gp_doctor_nv_param(c, "RegistryDwords", r->dw, sizeof(r->dw), &missing))
		r->dw[0] = '\0';
	if (gp_doctor_nv_param(c, "RegistryDwordsPerDevice", r->dwd, sizeof(r->dwd), &missing))
		r->dwd[0] = '\0';
	r->regkey = strcasestr(r->dw, "p2p") || strcasestr(r->dwd, "p2p");
}

/* The reasons, appended to a message; the fixes, to a fix line. */
static void refusal_say(struct gp_doctor_ctx *c, const struct refusal *r, struct gp_buf *msg, struct gp_buf *fix)
{
	if (r->acs.len) {
		gp_buf_addf(msg, "; ACS redirects peer requests on %s up to the root complex", gp_buf_str(&r->acs));
		gp_buf_addf(fix, "gpup2p acs --disable (then see acs.boot)");
	}
	if (r->iommu) {
		gp_buf_addf(msg, "; the IOMMU translates the GPUs' DMA (%s)", gp_iommu_mode_name(c->iommu.mode));
		gp_buf_addf(fix, "%sboot with iommu=pt (see iommu.mode)", fix->len ? "; " : "");
	}
	if (r->regkey) {
		gp_buf_addf(msg, "; driver registry keys force a P2P mode (RegistryDwords \"%s%s%s\")", r->dw,
			    r->dwd[0] ? "\", per device \"" : "", r->dwd);
		gp_buf_addf(fix, "%sremove the P2P keys from NVreg_RegistryDwords (see driver.params)", fix->len ? "; " : "");
	}
	if (!r->acs.len && !r->iommu && !r->regkey) {
		gp_buf_addf(msg, "; no ACS redirection on its path, no IOMMU translation, no P2P registry key found");
		gp_buf_addf(fix, "nvidia-smi topo -p2p rw shows the driver's view; dmesg | grep NVRM may say why; update "
			    "the driver and VBIOS");
	}
}

/* GeForce parts: NVIDIA's driver turns PCIe P2P off on them; a driver patched to allow it needs a large
 * BAR and no IOMMU translation, and what it reports must be checked by moving data. */
static struct gp_finding *consumer_pair(struct gp_doctor_ctx *c, int a, int b, int yes, const char *subj,
					const char *path)
{
	int small = c->bar[a].verdict != GP_BAR_LARGE || c->bar[b].verdict != GP_BAR_LARGE;
	int iommu = gp_doctor_translated(c, a) || gp_doctor_translated(c, b);
	const char *na = c->topo->devs[a].name, *nb = c->topo->devs[b].name;
	struct gp_finding *f;

	if (!yes)
		f = gp_doctor_add(c, GP_SEV_INFO, subj, "%s-%s (%s): no P2P access, as expected on GeForce parts: NVIDIA's "
				  "driver disables PCIe P2P on consumer GPUs; a driver patched to allow it (such as "
				  "tinygrad's open-module build) also needs a large BAR and no IOMMU translation (here: %s "
				  "BAR, IOMMU %s). Not a fault; gpup2p doctor --active verifies P2P by moving data", na, nb,
				  path, small ? "small" : "large", iommu ? "translating" : "not translating");
	else if (small || iommu)
		f = gp_doctor_add(c, GP_SEV_WARNING, subj, "%s-%s (%s): CUDA reports P2P on GeForce parts (a patched "
				  "driver), which needs a large BAR and no IOMMU translation, but here%s%s: peer copies may "
				  "fail or move wrong data", na, nb, path, small ? " a BAR is smaller than VRAM" : "",
				  iommu ? " the IOMMU translates" : "");
	else
		f = gp_doctor_add(c, GP_SEV_INFO, subj, "%s-%s (%s): CUDA reports P2P on GeForce parts, whose stock "
				  "driver disables it: a patched driver; large BAR and no IOMMU translation as it needs. "
				  "gpup2p doctor --active verifies it by moving data", na, nb, path);
	if (f && f->sev == GP_SEV_WARNING)
		gp_finding_fix(f, "%s%s%s; then gpup2p doctor --active", small ? "enable Above 4G Decoding and Resizable "
			       "BAR in firmware (bar.small)" : "", small && iommu ? "; " : "",
			       iommu ? "boot with iommu=pt (iommu.mode)" : "");
	else if (f)
		gp_finding_fix(f, "gpup2p doctor --active");
	gp_finding_ev(f, "BAR", "%s, %s", gp_bar_verdict_name(c->bar[a].verdict), gp_bar_verdict_name(c->bar[b].verdict));
	gp_finding_ev(f, "IOMMU", "%s", gp_iommu_mode_name(c->iommu.mode));
	return f;
}

static void access_pair(struct gp_doctor_ctx *c, const struct gp_doctor_p2p *s, int a, int b)
{
	const struct gp_topo_link lv = gp_topo_link_at(c->topo, a, b), *l = &lv;
	const char *na = c->topo->devs[a].name, *nb = c->topo->devs[b].name;
	int ab = s->can[a][b], ba = s->can[b][a], nv = l->nvlinks > 0;
	int local = nv || l->pcie == GP_TC_PIX || l->pcie == GP_TC_PXB;
	char subj[2 * GP_BDF_LEN + 2], path[16];
	struct gp_finding *f;

	gp_doctor_p2p_subject(c, a, b, subj, sizeof(subj));
	gp_topo_code(l, path, sizeof(path));
	if (s->cu[a] < 0 || s->cu[b] < 0) {
		f = gp_doctor_add(c, GP_SEV_SKIPPED, subj, "%s-%s: %s not visible to CUDA (CUDA_VISIBLE_DEVICES, or bound "
				  "to another driver)", na, nb, s->cu[a] < 0 ? na : nb);
	} else if (ab < 0 || ba < 0) {
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, subj, "%s-%s: cuDeviceCanAccessPeer failed", na, nb);
	} else if (!nv && (gp_doctor_p2p_consumer(c, a) || gp_doctor_p2p_consumer(c, b))) {
		f = consumer_pair(c, a, b, ab && ba, subj, path);
	} else if (ab && ba) {
		f = gp_doctor_add(c, GP_SEV_OK, subj, "%s-%s (%s): P2P access both ways", na, nb, path);
	} else if (local) {
		struct gp_buf msg = GP_BUF_INIT, fix = GP_BUF_INIT;
		struct refusal *r = calloc(1, sizeof(*r));

		if (!r) {
			c->out.nomem = 1;
			return;
		}
		refusal_find(c, a, b, r);
		gp_buf_addf(&msg, "%s-%s (%s): CUDA refuses P2P%s%s%s%s on a path that should carry it (%s): copies "
			    "are staged through host memory", na, nb, path, ab != ba ? " from " : "", ab != ba ? (ab ? nb : na) : "",
			    ab != ba ? " to " : "", ab != ba ? (ab ? na : nb) : "", nv ? "NVLink" : "below the host bridge");
		refusal_say(c, r, &msg, &fix);
		f = gp_doctor_add(c, GP_SEV_WARNING, subj, "%s", gp_buf_str(&msg));
		gp_finding_fix(f, "%s", gp_buf_str(&fix));
		if (r->acs.len)
			gp_finding_ev(f, "ACS redirect on the path", "%s", gp_buf_str(&r->acs));
		if (r->iommu)
			gp_finding_ev(f, "IOMMU", "%s", gp_iommu_mode_name(c->iommu.mode));
		if (r->regkey)
			gp_finding_ev(f, "RegistryDwords", "%s%s%s", r->dw, r->dwd[0] ? " / " : "", r->dwd);
		gp_buf_free(&r->acs);
		free(r);
		gp_buf_free(&msg);
		gp_buf_free(&fix);
	} else {
		f = gp_doctor_add(c, GP_SEV_INFO, subj, "%s-%s (%s): no P2P access across the root complex: CUDA often "
				  "refuses P2P there by design (not a fault); copies are staged through host memory", na,
				  nb, path);
		gp_finding_fix(f, "place GPUs that exchange data under one PCIe switch or join them by NVLink");
	}
	gp_finding_bdf(f, gp_doctor_dev(c, a)->bdf);
	gp_finding_bdf(f, gp_doctor_dev(c, b)->bdf);
	gp_finding_ev(f, "path", "%s", path);
	if (ab >= 0 && ba >= 0)
		gp_finding_ev(f, "cuDeviceCanAccessPeer", "%s->%s %s, %s->%s %s", na, nb, ab ? "yes" : "no", nb, na,
			      ba ? "yes" : "no");
}

static void check_access(struct gp_doctor_ctx *c)
{
	struct gp_doctor_p2p *s = gp_doctor_p2p_pairs(c);

	for (int a = 0; s && a < s->n; a++)
		for (int b = a + 1; b < s->n; b++)
			access_pair(c, s, a, b);
}

/* --- p2p.nvml_status --------------------------------------------------------------------------- */

/* "read OK, write OK, nvlink not supported, atomics OK" into buf. */
static const char *caps_str(const signed char *st, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int k = 0; k < GP_P2P_NCAPS && used < n; k++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s %s", k ? ", " : "", gp_gpu_p2p_cap_name(k),
					 gp_gpu_p2p_status_name(st[k]));
	return buf;
}

/* One direction x -> y: 1 CUDA allows and NVML refuses read or write, 2 CUDA refuses and NVML allows
 * both, 3 NVML refuses NVLink P2P on an NVLink pair, 0 they agree, -1 an answer is missing. */
static int disagree(const struct gp_doctor_p2p *s, const signed char *st, int x, int y, int nv)
{
	int r = st[GP_P2P_READ], w = st[GP_P2P_WRITE];

	if (r == GP_P2P_FAILED || w == GP_P2P_FAILED || s->can[x][y] < 0)
		return -1;
	if (s->can[x][y] && (r != GP_P2P_OK || w != GP_P2P_OK))
		return 1;
	if (!s->can[x][y] && r == GP_P2P_OK && w == GP_P2P_OK)
		return 2;
	return nv && st[GP_P2P_NVLINK] != GP_P2P_OK ? 3 : 0;
}

static void status_pair(struct gp_doctor_ctx *c, const struct gp_doctor_p2p *s, const struct gp_gpu_p2p *p, int a,
			int b)
{
	const struct gp_topo_link lv = gp_topo_link_at(c->topo, a, b), *l = &lv;
	const char *na = c->topo->devs[a].name, *nb = c->topo->devs[b].name;
	char subj[2 * GP_BDF_LEN + 2], path[16], v1[160];
	int d1 = disagree(s, p->st[a][b], a, b, l->nvlinks > 0), d2 = disagree(s, p->st[b][a], b, a, l->nvlinks > 0);
	int d = d1 > 0 ? d1 : d2, from = d1 > 0 ? a : b, to = d1 > 0 ? b : a;
	const signed char *st = p->st[from][to];
	struct gp_finding *f;

	gp_doctor_p2p_subject(c, a, b, subj, sizeof(subj));
	gp_topo_code(l, path, sizeof(path));
	if (s->cu[a] < 0 || s->cu[b] < 0)
		f = gp_doctor_add(c, GP_SEV_SKIPPED, subj, "%s-%s: %s not visible to CUDA", na, nb, s->cu[a] < 0 ? na : nb);
	else if (d1 < 0 || d2 < 0)
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, subj, "%s-%s: NVML or CUDA gave no P2P answer for the pair", na, nb);
	else if (d == 1)
		f = gp_doctor_add(c, GP_SEV_WARNING, subj, "%s-%s (%s): NVML refuses: CUDA allows P2P from %s to %s but "
				  "NVML reports read %s, write %s", na, nb, path, c->topo->devs[from].name,
				  c->topo->devs[to].name, gp_gpu_p2p_status_name(st[GP_P2P_READ]),
				  gp_gpu_p2p_status_name(st[GP_P2P_WRITE]));
	else if (d == 2)
		f = gp_doctor_add(c, GP_SEV_WARNING, subj, "%s-%s (%s): CUDA refuses: NVML reports P2P read and write OK "
				  "from %s to %s but cuDeviceCanAccessPeer says no", na, nb, path, c->topo->devs[from].name,
				  c->topo->devs[to].name);
	else if (d == 3)
		f = gp_doctor_add(c, GP_SEV_WARNING, subj, "%s-%s (%s): NVML refuses P2P over NVLink (%s) on a pair the "
				  "NVLink facts join", na, nb, path, gp_gpu_p2p_status_name(st[GP_P2P_NVLINK]));
	else
		f = gp_doctor_add(c, GP_SEV_OK, subj, "%s-%s (%s): CUDA and NVML agree: P2P %s", na, nb, path,
				  s->can[a][b] && s->can[b][a] ? "allowed" : "refused (p2p.access judges whether that is a fault)");
	if (f && f->sev == GP_SEV_WARNING)
		gp_finding_fix(f, "%s", d == 2 ? "nvidia-smi topo -p2p rw shows NVML's view; check what p2p.access names "
			       "(ACS, IOMMU, registry keys); gpup2p doctor --active moves data to settle it"
			       : "nvidia-smi topo -p2p rw shows NVML's view; check driver.params for registry keys, then "
				 "update the driver and VBIOS; gpup2p doctor --active moves data to settle it");
	gp_finding_bdf(f, gp_doctor_dev(c, a)->bdf);
	gp_finding_bdf(f, gp_doctor_dev(c, b)->bdf);
	gp_finding_ev(f, "path", "%s", path);
	gp_finding_ev(f, "cuDeviceCanAccessPeer", "%s->%s %d, %s->%s %d", na, nb, s->can[a][b], nb, na, s->can[b][a]);
	gp_finding_ev(f, "NVML", "%s-%s: %s", na, nb, caps_str(p->st[a][b], v1, sizeof(v1)));
}

static void check_nvml_status(struct gp_doctor_ctx *c)
{
	struct gp_doctor_p2p *s = gp_doctor_p2p_pairs(c);
	char (*bdf)[GP_BDF_LEN];
	struct gp_gpu_p2p *p;
	struct gp_finding *f;

	if (!s)
		return;
	bdf = calloc((size_t)s->n, sizeof(*bdf));
	p = calloc(1, sizeof(*p));
	if (!bdf || !p) {
		c->out.nomem = 1;
	} else {
		for (int i = 0; i < s->n; i++)
			snprintf(bdf[i], sizeof(bdf[i]), "%s", gp_doctor_dev(c, i)->bdf);
		gp_gpu_p2p_query((const char (*)[GP_BDF_LEN])bdf, s->n, p);
		if (!p->available) {
			f = gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "NVML's P2P status not available: %s", p->why);
			gp_finding_ev(f, "nvml", "%s", p->why);
		}
		for (int a = 0; p->available && a < s->n; a++)
			for (int b = a + 1; b < s->n; b++)
				status_pair(c, s, p, a, b);
	}
	free(bdf);
	free(p);
}

static const struct gp_doctor_check checks[] = {
	{ "p2p.access", "CUDA refuses P2P on a pair whose path should carry it", GP_SRC_CUDA, 0, check_access,
	  "Asks libcuda (cuDeviceCanAccessPeer, both ways) for every GPU pair and compares with the path. Warning "
	  "when CUDA refuses a pair joined by NVLink or below the host bridge (PIX, PXB), naming what is found "
	  "elsewhere: ACS redirection on a bridge of the path (fix: gpup2p acs --disable), IOMMU translation (iommu=pt), "
	  "registry keys such as RMForceP2PType (driver.params). Info when it refuses a pair across the root complex "
	  "(PHB, NODE, SYS): CUDA often does so by design. GeForce parts: NVIDIA's driver disables PCIe P2P on "
	  "them; a patched driver needs a large BAR and no IOMMU translation: info, or a warning when CUDA says yes "
	  "without them; gpup2p doctor --active verifies by moving data. Live only." },
	{ "p2p.nvml_status", "NVML's P2P status disagrees with CUDA's", GP_SRC_NVML | GP_SRC_CUDA, 0, check_nvml_status,
	  "Asks NVML (nvmlDeviceGetP2PStatus: read, write, NVLink, atomics; once per pair, as the driver answers "
	  "for the pair, not a direction) and libcuda (both ways) for every GPU pair. "
	  "Warning naming the side that refuses when they disagree: CUDA allows and NVML reports read or write "
	  "not OK, NVML reports both OK and CUDA refuses, or NVML refuses NVLink P2P on a pair NVLink joins. "
	  "Live only (neither answer is recorded in snapshots)." },
	{ "p2p.geforce", "what PCIe P2P between GeForce GPUs needs and lacks here", GP_SRC_PROC | GP_SRC_SYSFS |
	  GP_SRC_NVML | GP_SRC_OPT(GP_SRC_CUDA), 0, gp_doctor_check_p2p_geforce,
	  "Only with two GeForce GPUs (NVML's recorded names, pci.ids, CUDA) not all joined by NVLink. NVIDIA's driver "
	  "turns PCIe P2P off on them; a P2P-enabled build of the open module (a community branch of "
	  "open-gpu-kernel-modules; it keeps NVIDIA's version string) turns on BAR1 P2P, which needs: that module, "
	  "not the proprietary one nor NVIDIA's own build (\"dvs-builder\" in /proc/driver/nvidia/version); the "
	  "kernel module (/sys/module/nvidia/version) and libcuda (its file name live, else NVML's version) of one "
	  "version; BAR1 >= VRAM; IOMMU off or pass-through; GPUs of one generation (NVML's architecture, else the "
	  "name). One finding per unmet condition, naming it and the fix: a version mismatch is an error; the others "
	  "are warnings when CUDA reports P2P on the GeForce pairs (it is on and may fail), else info. Ok when all "
	  "that can be read is met. Only gpup2p doctor --active proves P2P works: p2p.verify copies every pair "
	  "both ways." },
	{ "p2p.verify", "a copy between GPUs, or with the host, delivers wrong data", GP_SRC_CUDA, 1,
	  gp_doctor_check_p2p_verify,
	  "With gpup2p doctor --active: copies a pattern over every ordered GPU pair (the copy engines, peer "
	  "access on where CUDA "
	  "allows it, else staged by the driver) and between host memory and each GPU, and checks every byte. "
	  "Error on a mismatch: P2P says yes, data wrong (a BAR, ACS, IOMMU or driver fault; never use the path). "
	  "A single GPU: only host<->GPU." },
	{ "p2p.bandwidth", "peer or host copies below half the link's rate", GP_SRC_CUDA | GP_SRC_SYSFS, 1,
	  gp_doctor_check_p2p_bandwidth,
	  "With gpup2p doctor --active: times 64 MiB copies (a few repetitions, the median) over each GPU pair "
	  "with P2P access "
	  "and between pinned host memory and each GPU. Warning below half of the link's rate: PCIe generation "
	  "x width from sysfs (the lesser of both ends' maximum), or NVLinks x 20 GB/s (the slowest generation's "
	  "per-link rate). Pairs without P2P access are skipped (staged through host memory)." },
};

GP_DOCTOR_FAMILY_CLEANUP(gp_doctor_fam_p2p, "p2p", "peer-to-peer access (CUDA, NVML) and copies", checks,
			 gp_doctor_p2p_free);
