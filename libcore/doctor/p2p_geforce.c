/* gpup2p doctor — p2p.geforce: what PCIe P2P between GeForce GPUs needs, condition by condition.
 * NVIDIA's driver turns it off on consumer parts; community builds of the open kernel module (P2P
 * branches of open-gpu-kernel-modules) turn it on through BAR1, which then needs: that module, with
 * the user-space driver (libcuda) of the same version; BAR1 as large as VRAM; no IOMMU translation;
 * and GPUs of one generation. Each unmet condition is a finding of its own. Only moving data (doctor
 * --active, p2p.verify: every pair, both ways) proves P2P works. Listed in p2p.c's table. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/buf.h"
#include "p2p.h"

/* What the machine's GeForce GPUs have, and whether the driver claims P2P between them. */
struct gf {
	int gpu[GP_GPU_MAX];            /* topology GPUs that are GeForce */
	int n;
	int pcie_pairs;                 /* pairs of them without NVLink */
	int claimed;                    /* CUDA allows P2P on such a pair (both ways) 1, refuses all 0, -1 unknown */
	enum gp_sev sev;                /* of an unmet condition: warning when P2P is claimed, else info */
	int unmet;
	char modver[64];                /* the kernel module's version */
	char builder[96];               /* the version line's "(user@host)" */
	int open;                       /* gp_doctor_nv_open */
};

static int is_geforce(const struct gp_doctor_ctx *c, int i)
{
	return gp_doctor_geforce(c, i) || gp_doctor_p2p_consumer(c, i);
}

/* A GPU's generation: NVML's architecture when recorded, else from its marketing name; "" unknown. */
static const char *generation(const struct gp_doctor_ctx *c, int i)
{
	static const char *const arch[] = { [4] = "Pascal", [5] = "Volta", [6] = "Turing", [7] = "Ampere",
					    [8] = "Ada", [9] = "Hopper", [10] = "Blackwell" };
	const struct gp_gpu_info *g = c->facts->available ? gp_gpu_find(c->facts, gp_doctor_dev(c, i)->bdf) : NULL;
	const char *rtx;

	if (g && g->st.arch > 0 && g->st.arch < (int)(sizeof(arch) / sizeof(arch[0])) && arch[g->st.arch])
		return arch[g->st.arch];
	if (!g || !(rtx = strstr(g->name, "RTX ")) || !isdigit((unsigned char)rtx[4]))
		return "";
	switch (rtx[4]) { /* RTX 2080, 3090, 4090, 5090 */
	case '2':
		return "Turing";
	case '3':
		return "Ampere";
	case '4':
		return "Ada";
	case '5':
		return "Blackwell";
	default:
		return "";
	}
}

/* CUDA's answer on the GeForce pairs without NVLink (live, or the tests' double). */
static int claimed(struct gp_doctor_ctx *c, const struct gf *g)
{
	struct gp_doctor_p2p *s;
	int yes = 0, no = 0;

	if (c->no_cuda || (!c->root->live && !c->probe_libs) || !(s = gp_doctor_p2p_session(c)))
		return -1;
	for (int a = 0; a < g->n; a++)
		for (int b = a + 1; b < g->n; b++) {
			int x = g->gpu[a], y = g->gpu[b];

			if (x >= s->n || y >= s->n || gp_topo_link_at(c->topo, x, y).nvlinks > 0)
				continue;
			if (s->can[x][y] == 1 && s->can[y][x] == 1)
				yes++;
			else if (s->can[x][y] == 0 || s->can[y][x] == 0)
				no++;
		}
	return yes ? 1 : no ? 0 : -1;
}

static struct gp_finding *unmet(struct gp_doctor_ctx *c, struct gf *g, enum gp_sev sev, const char *subject,
				const char *msg)
{
	struct gp_finding *f = gp_doctor_add(c, sev, subject, "%s%s", msg, g->claimed == 1 ? " (CUDA reports P2P on "
					     "these GPUs: copies may fail or move wrong data)" : "");

	g->unmet++;
	return f;
}

/* The module: P2P builds exist for the open module only; NVIDIA's own build of it keeps P2P off. */
static void module(struct gp_doctor_ctx *c, struct gf *g)
{
	int err;
	const char *v = gp_doctor_nv_version(c, &err), *b = v ? strstr(v, "Release Build") : NULL, *e;
	struct gp_finding *f = NULL;
	char path[] = "/sys/module/nvidia/version";

	if (gp_doctor_read(c, path, g->modver, sizeof(g->modver)) <= 0)
		snprintf(g->modver, sizeof(g->modver), "%s", v ? gp_doctor_nv_release(c) : "");
	if (b && (b = strchr(b, '(')) && (e = strchr(b, ')')))
		snprintf(g->builder, sizeof(g->builder), "%.*s", (int)(e - b - 1), b + 1);
	g->open = v ? gp_doctor_nv_open(v) : -1;
	if (!v) {
		gp_doctor_missing(c, "nvidia", "/proc/driver/nvidia/version", err);
		return;
	}
	if (g->claimed == 1)
		return; /* whatever the build, the driver allows P2P on GeForce parts */
	if (g->open == 0)
		f = unmet(c, g, GP_SEV_INFO, "nvidia", "the proprietary kernel module is loaded: NVIDIA's driver turns PCIe "
			  "P2P off on GeForce GPUs, and the P2P-enabled builds exist for the open module only");
	else if (g->open == 1 && strstr(g->builder, "dvs-builder"))
		f = unmet(c, g, GP_SEV_INFO, "nvidia", "NVIDIA's own build of the open kernel module is loaded (built by "
			  "dvs-builder): PCIe P2P stays off on GeForce GPUs");
	else if (g->open == 1 && g->claimed == 0)
		f = unmet(c, g, GP_SEV_INFO, "nvidia", "the open kernel module was built from source, but CUDA refuses P2P "
			  "between the GeForce GPUs: the stock source, not a P2P-enabled branch");
	if (!f)
		return;
	gp_finding_fix(f, "build the open module from a P2P-enabled branch of open-gpu-kernel-modules for driver %s "
		       "(the community forks name them %s-p2p), install it in place of this one and the user-space "
		       "driver of the same version (NVIDIA-Linux-x86_64-%s.run --no-kernel-modules), then gpup2p doctor "
		       "--active", g->modver[0] ? g->modver : "VERSION", g->modver[0] ? g->modver : "VERSION",
		       g->modver[0] ? g->modver : "VERSION");
	gp_finding_ev(f, "/proc/driver/nvidia/version", "%s", v);
}

/* "libcuda.so.580.159.04" -> "580.159.04" into buf; "" when the name carries no version. */
static void lib_version(const char *lib, char *buf, size_t n)
{
	const char *base = strrchr(lib, '/'), *v;

	base = base ? base + 1 : lib;
	buf[0] = '\0';
	if (strncmp(base, "libcuda.so.", 11))
		return;
	v = base + 11;
	if (strchr(v, '.') && strspn(v, "0123456789.") == strlen(v))
		snprintf(buf, n, "%s", v);
}

/* The kernel module and libcuda of one version (live: libcuda's own file; else NVML's, the same
 * user-space driver package). */
static void versions(struct gp_doctor_ctx *c, struct gf *g)
{
	const struct gp_cuda_probe *p = (c->root->live || c->probe_libs) && !c->no_cuda ? gp_doctor_cuda(c) : NULL;
	char user[64] = "", what[64] = "libcuda";
	struct gp_finding *f;

	if (p && p->lib[0])
		lib_version(p->lib, user, sizeof(user));
	if (!user[0] && c->facts->available && c->facts->driver[0]) {
		snprintf(user, sizeof(user), "%s", c->facts->driver);
		snprintf(what, sizeof(what), "the user-space driver (NVML)");
	}
	if (!g->modver[0] || !user[0] || !strcmp(g->modver, user))
		return;
	f = gp_doctor_add(c, GP_SEV_ERROR, "nvidia", "the kernel module is %s but %s is %s: CUDA refuses to start "
			  "(\"driver/library version mismatch\"), so no P2P at all", g->modver, what, user);
	g->unmet++;
	gp_finding_fix(f, "install the user-space driver of the module's version (NVIDIA-Linux-x86_64-%s.run "
		       "--no-kernel-modules, as the P2P builds are installed), or rebuild the module for %s; then reboot",
		       g->modver, user);
	gp_finding_ev(f, "kernel module", "%s", g->modver);
	gp_finding_ev(f, strcmp(what, "libcuda") ? "NVML" : "libcuda", "%s%s%s", user, p && p->lib[0] ? " " : "",
		      p && p->lib[0] ? p->lib : "");
}

/* BAR1 P2P maps a peer's whole VRAM through its BAR1. */
static void bars(struct gp_doctor_ctx *c, struct gf *g)
{
	for (int k = 0; k < g->n; k++) {
		int i = g->gpu[k];
		const struct gp_bar_report *b = &c->bar[i];
		const char *bdf = gp_doctor_dev(c, i)->bdf;
		char ap[16], vr[16], mx[16], msg[256];
		struct gp_finding *f;

		if (b->verdict != GP_BAR_SMALL && b->verdict != GP_BAR_NO_APERTURE)
			continue;
		gp_bar_size_str(b->aperture, ap, sizeof(ap));
		gp_bar_size_str(b->vram, vr, sizeof(vr));
		gp_bar_size_str(b->rebar_max, mx, sizeof(mx));
		snprintf(msg, sizeof(msg), "%s: BAR1 %s is smaller than its VRAM (%s): BAR1 P2P maps all of a peer's VRAM "
			 "through BAR1", c->topo->devs[i].name, b->verdict == GP_BAR_NO_APERTURE ? "none" : ap, vr);
		f = unmet(c, g, g->sev, bdf, msg);
		if (b->rebar_max >= b->vram && b->vram)
			gp_finding_fix(f, "enable Above 4G Decoding and Resizable BAR in firmware (this GPU offers up to %s; "
				       "see bar.small)", mx);
		else
			gp_finding_fix(f, "none on this card: its Resizable BAR tops out at %s (or it has none); BAR1 P2P needs "
				       "a GPU whose BAR can cover its VRAM", b->rebar_max ? mx : ap);
		gp_finding_bdf(f, bdf);
		gp_finding_ev(f, "BAR1", "%s", ap);
		gp_finding_ev(f, "VRAM", "%s", vr);
	}
}

static void iommu(struct gp_doctor_ctx *c, struct gf *g)
{
	struct gp_buf list = GP_BUF_INIT;
	struct gp_finding *f;
	char msg[512];

	for (int k = 0; k < g->n; k++)
		if (gp_doctor_translated(c, g->gpu[k]))
			gp_buf_addf(&list, "%s%s", list.len ? " " : "", c->topo->devs[g->gpu[k]].name);
	if (list.len) {
		snprintf(msg, sizeof(msg), "the IOMMU translates the DMA of %s (%s): peer writes to another GPU's BAR1 are "
			 "translated or blocked", gp_buf_str(&list), gp_iommu_mode_name(c->iommu.mode));
		f = unmet(c, g, g->sev, "iommu", msg);
		gp_finding_fix(f, "boot with iommu=pt (or turn the IOMMU off: intel_iommu=off, amd_iommu=off, or VT-d/AMD-Vi "
			       "in firmware); see iommu.mode");
		for (int k = 0; k < g->n; k++)
			if (gp_doctor_translated(c, g->gpu[k]))
				gp_finding_bdf(f, gp_doctor_dev(c, g->gpu[k])->bdf);
		gp_finding_ev(f, "IOMMU", "%s", gp_iommu_mode_name(c->iommu.mode));
	}
	gp_buf_free(&list);
}

/* The P2P builds pair GPUs of one generation: one group per generation, named. */
static void generations(struct gp_doctor_ctx *c, struct gf *g)
{
	const char *seen[GP_GPU_MAX];
	int ns = 0;
	struct gp_buf groups = GP_BUF_INIT;
	struct gp_finding *f;
	char msg[640];

	for (int k = 0; k < g->n; k++) {
		const char *gen = generation(c, g->gpu[k]);
		int dup = !gen[0];

		for (int s = 0; s < ns && !dup; s++)
			dup = !strcmp(seen[s], gen);
		if (!dup)
			seen[ns++] = gen;
	}
	if (ns < 2)
		return;
	for (int s = 0; s < ns; s++) {
		gp_buf_addf(&groups, "%s%s:", s ? "; " : "", seen[s]);
		for (int k = 0; k < g->n; k++)
			if (!strcmp(generation(c, g->gpu[k]), seen[s]))
				gp_buf_addf(&groups, " %s", c->topo->devs[g->gpu[k]].name);
	}
	snprintf(msg, sizeof(msg), "GeForce GPUs of %d generations in one machine (%s): the P2P builds do not pair GPUs of "
		 "different generations", ns, gp_buf_str(&groups));
	f = unmet(c, g, g->sev, "system", msg);
	gp_finding_fix(f, "give each job GPUs of one generation (CUDA_VISIBLE_DEVICES, NCCL_P2P_DISABLE=1 for mixed "
		       "ones), or replace the odd card");
	for (int k = 0; k < g->n; k++)
		gp_finding_bdf(f, gp_doctor_dev(c, g->gpu[k])->bdf);
	gp_finding_ev(f, "generations", "%s", gp_buf_str(&groups));
	gp_buf_free(&groups);
}

void gp_doctor_check_p2p_geforce(struct gp_doctor_ctx *c)
{
	struct gf *g;
	struct gp_finding *f;

	if (gp_doctor_no_gpu(c))
		return;
	if (!(g = calloc(1, sizeof(*g)))) {
		c->out.nomem = 1;
		return;
	}
	for (int i = 0; i < c->topo->ngpu && g->n < GP_GPU_MAX; i++)
		if (is_geforce(c, i))
			g->gpu[g->n++] = i;
	for (int a = 0; a < g->n; a++)
		for (int b = a + 1; b < g->n; b++)
			g->pcie_pairs += gp_topo_link_at(c->topo, g->gpu[a], g->gpu[b]).nvlinks == 0;
	if (g->n < 2 || !g->pcie_pairs) {
		gp_doctor_add(c, g->n < 2 ? GP_SEV_SKIPPED : GP_SEV_OK, "system", "%s", !g->n ? "no GeForce GPU (other "
			      "GPUs do PCIe P2P with NVIDIA's driver)" : g->n == 1 ? "one GeForce GPU: no pair" : "every "
			      "pair of GeForce GPUs is joined by NVLink, over which NVIDIA's driver allows P2P");
		free(g);
		return;
	}
	g->claimed = claimed(c, g);
	g->sev = g->claimed == 1 ? GP_SEV_WARNING : GP_SEV_INFO;
	module(c, g);
	versions(c, g);
	bars(c, g);
	iommu(c, g);
	generations(c, g);
	if (!g->unmet) {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "%d GeForce GPUs: %s; BAR1 covers VRAM, no IOMMU translation, one "
				  "generation, kernel module and user-space driver %s. Only gpup2p doctor --active "
				  "(p2p.verify, every pair both ways) proves P2P works", g->n, g->claimed == 1 ? "CUDA reports "
				  "P2P (a P2P-enabled build)" : "the open module built from source (a P2P-enabled build "
				  "cannot be told from its version string)", g->modver[0] ? g->modver : "of one version");
		for (int k = 0; k < g->n; k++)
			gp_finding_bdf(f, gp_doctor_dev(c, g->gpu[k])->bdf);
		if (g->builder[0])
			gp_finding_ev(f, "module built by", "%s", g->builder);
	}
	free(g);
}
