/* gpup2p doctor — bar.*: the VRAM aperture against VRAM, BARs without an address, Resizable BAR
 * left below what the GPU offers, BAR1 nearly used up. The decoding is libcore/bar.c's (gp_bar_report). */
#include <stdio.h>
#include <string.h>

#include "gpup2p/bar.h"
#include "gpup2p/buf.h"
#include "check.h"
#include "p2p.h"

#define LEGACY_BAR (256ULL << 20)
#define BAR1_USED_PCT 90 /* bar.bar1_used: above this share in use, the next pins are likely to fail */

/* NVML's VRAM size is not known for this GPU: unknown live, skipped on a root without the facts. */
static struct gp_finding *vram_unknown(struct gp_doctor_ctx *c, const char *bdf, const char *what)
{
	if (c->facts->available || c->root->live)
		return gp_doctor_add(c, GP_SEV_UNKNOWN, bdf, "%s: VRAM size unknown (%s)", what,
				     c->facts->available ? "GPU not in NVML's list" : c->facts->why);
	return gp_doctor_add(c, GP_SEV_SKIPPED, bdf, "%s: VRAM size unknown: no NVML facts recorded under the root", what);
}

/* Can the aperture of GPU report r grow: 1 its Resizable BAR entry offers a larger size (*max), 0 it
 * offers nothing larger or there is no capability, -1 the capability could not be read. */
static int can_grow(const struct gp_bar_report *r, uint64_t *max)
{
	*max = r->rebar_max;
	if (r->rebar.known == GP_UNKNOWN)
		return -1;
	return r->rebar.known == GP_PRESENT && r->rebar_max > r->aperture;
}

/* What on this machine needs a large BAR on GPU i: 2 a NIC near it (GPUDirect RDMA registrations are
 * BAR1 mappings), 1 a hardware RDMA NIC elsewhere or a GeForce part with another GPU (BAR1 P2P of a
 * patched driver), 0 nothing; why says what. */
static int need_large(struct gp_doctor_ctx *c, int i, char *why, size_t n)
{
	snprintf(why, n, "no RDMA NIC, no GeForce P2P here");
	if (gp_doctor_rdma_hw_nics(c) && gp_doctor_nic_near(c, i)) {
		snprintf(why, n, "a NIC is near: GPUDirect RDMA registrations are limited to it too");
		return 2;
	}
	if (gp_doctor_rdma_hw_nics(c)) {
		snprintf(why, n, "GPUDirect RDMA registrations are limited to it too");
		return 1;
	}
	if (c->topo->ngpu > 1 && gp_doctor_p2p_consumer(c, i)) {
		snprintf(why, n, "P2P between GeForce parts (a patched driver) maps peers through BAR1");
		return 1;
	}
	return 0;
}

/* A window below VRAM (or the legacy 256 MiB one): judged by what the GPU's Resizable BAR offers and
 * what on this machine needs more. */
static struct gp_finding *small_one(struct gp_doctor_ctx *c, int i, const char *what)
{
	const struct gp_pci_dev *d = gp_doctor_dev(c, i);
	const struct gp_bar_report *r = &c->bar[i];
	const char *name = c->topo->devs[i].name;
	char a[32], m[32], why[96];
	uint64_t max;
	int grow = can_grow(r, &max), need = need_large(c, i, why, sizeof(why));
	struct gp_finding *f;

	gp_bar_size_str(r->aperture, a, sizeof(a));
	gp_bar_size_str(max, m, sizeof(m));
	if (!grow) {
		f = gp_doctor_add(c, GP_SEV_INFO, d->bdf, "%s: %s, and its Resizable BAR %s: no larger BAR is possible, "
				  "so BAR1 P2P on GeForce parts and GPUDirect pins beyond %s are ruled out", name, what,
				  r->rebar.known == GP_PRESENT ? "tops out at this size" : "capability is absent", a);
		gp_finding_fix(f, "nothing to enable in firmware: keep pins and GPUDirect RDMA registrations within %s per "
			       "GPU, or use a GPU whose Resizable BAR offers more", a);
		gp_finding_ev(f, "resizable bar", "%s", r->rebar.known == GP_PRESENT ? m : "no capability");
		return f;
	}
	f = gp_doctor_add(c, need == 2 ? GP_SEV_ERROR : need ? GP_SEV_WARNING : GP_SEV_INFO, d->bdf,
			  "%s: %s: P2P over BAR1 and pinning limited to %s; %s", name, what, a,
			  need ? why : "nothing here needs more now (no RDMA NIC, no GeForce P2P)");
	if (grow > 0)
		gp_finding_fix(f, "enable \"Above 4G Decoding\" and \"Resizable BAR\" in firmware, or load nvidia with "
			       "NVreg_EnableResizableBar=1 (the GPU offers up to %s)", m);
	else
		gp_finding_fix(f, "run as root to read what the GPU's Resizable BAR offers; if more: enable \"Above 4G "
			       "Decoding\" and \"Resizable BAR\" in firmware");
	gp_finding_ev(f, "resizable bar", "%s", grow > 0 ? m : "not readable");
	return f;
}

static void check_small(struct gp_doctor_ctx *c)
{
	char a[32], v[32], what[128];

	if (gp_doctor_no_gpu(c))
		return;
	for (int i = 0; i < c->topo->ngpu; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);
		const char *name = c->topo->devs[i].name;
		const struct gp_bar_report *r = &c->bar[i];
		struct gp_finding *f;

		gp_bar_size_str(r->aperture, a, sizeof(a));
		gp_bar_size_str(r->vram, v, sizeof(v));
		switch (r->verdict) {
		case GP_BAR_LARGE:
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s: aperture %s (BAR %d) covers VRAM %s", name, a,
					  r->aperture_bar, v);
			break;
		case GP_BAR_SMALL:
			snprintf(what, sizeof(what), "aperture %s (BAR %d) smaller than VRAM %s", a, r->aperture_bar, v);
			f = small_one(c, i, what);
			break;
		case GP_BAR_UNKNOWN:
			if (r->aperture <= LEGACY_BAR) {
				snprintf(what, sizeof(what), "aperture %s (BAR %d), the legacy 256 MiB window (VRAM unknown; "
					 "every current GPU has more)", a, r->aperture_bar);
				f = small_one(c, i, what);
			} else {
				f = vram_unknown(c, d->bdf, name);
			}
			break;
		default:
			f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s: no 64-bit prefetchable BAR (no VRAM aperture)", name);
			gp_finding_fix(f, "enable \"Above 4G Decoding\" in firmware");
			break;
		}
		gp_finding_bdf(f, d->bdf);
		if (r->aperture_bar >= 0)
			gp_finding_ev(f, "aperture", "BAR %d %s", r->aperture_bar, a);
		if (r->vram)
			gp_finding_ev(f, "vram", "%s", v);
	}
}

static void check_unassigned(struct gp_doctor_ctx *c)
{
	if (gp_doctor_no_device(c))
		return;
	for (int i = 0; i < c->topo->n; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);
		struct gp_buf list = GP_BUF_INIT; /* six BARs of "1023.9P" do not fit 64 bytes */
		char sz[32];
		struct gp_finding *f;

		for (int k = 0; k < 6; k++) {
			const struct gp_bar *b = &d->bars[k];

			if (b->size && !b->is_io && !b->assigned)
				gp_buf_addf(&list, "%s%d (%s)", list.len ? ", " : "", k, gp_bar_size_str(b->size, sz, sizeof(sz)));
		}
		if (list.len) {
			f = gp_doctor_add(c, GP_SEV_ERROR, d->bdf, "%s: BAR %s has no address (firmware ran out of MMIO space)",
					  c->topo->devs[i].name, gp_buf_str(&list));
			gp_finding_fix(f, "enable \"Above 4G Decoding\" (and \"MMIO High\"/\"MMIOH\" size) in firmware, or boot "
				       "with pci=realloc");
			gp_finding_ev(f, "resource", "unassigned BAR %s", gp_buf_str(&list));
		} else {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s: every memory BAR has an address", c->topo->devs[i].name);
		}
		gp_finding_bdf(f, d->bdf);
		gp_buf_free(&list);
	}
}

static void check_rebar(struct gp_doctor_ctx *c)
{
	char cur[32], max[32], v[32];

	if (gp_doctor_no_gpu(c))
		return;
	for (int i = 0; i < c->topo->ngpu; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);
		const char *name = c->topo->devs[i].name;
		const struct gp_rebar_entry *e = NULL;
		const struct gp_bar_report *r = &c->bar[i];
		struct gp_finding *f;
		uint64_t now;

		for (int k = 0; k < r->rebar.n; k++)
			if (r->rebar.e[k].bar == r->aperture_bar)
				e = &r->rebar.e[k];
		if (r->rebar.known == GP_UNKNOWN) {
			f = c->root->live ? gp_doctor_add(c, GP_SEV_UNKNOWN, d->bdf, "%s: extended config space not readable: "
							  "run as root", name)
					  : gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s: extended config space not in "
							  "the root (captured as non-root)", name);
		} else if (r->rebar.known == GP_ABSENT) {
			f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s: no Resizable BAR capability", name);
		} else if (!e) {
			f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s: Resizable BAR does not control the aperture", name);
		} else if (e->cur_log > 43) {
			f = gp_doctor_add(c, GP_SEV_UNKNOWN, d->bdf, "%s: Resizable BAR reports a reserved size encoding (%d)",
					  name, e->cur_log);
		} else {
			now = 1ULL << (20 + e->cur_log);
			gp_bar_size_str(now, cur, sizeof(cur));
			gp_bar_size_str(r->rebar_max, max, sizeof(max));
			gp_bar_size_str(r->vram, v, sizeof(v));
			if (r->verdict == GP_BAR_LARGE || now >= r->rebar_max) {
				f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s: BAR %d at %s%s", name, e->bar, cur,
						  now >= r->rebar_max ? ", its largest size" : ", covering VRAM");
			} else if (r->vram && r->rebar_max >= r->vram) {
				f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s: BAR %d at %s but Resizable BAR offers %s, "
						  "enough for VRAM %s", name, e->bar, cur, max, v);
				gp_finding_fix(f, "enable \"Above 4G Decoding\" and \"Resizable BAR\" in firmware (or "
					       "NVreg_EnableResizableBar=1)");
			} else {
				f = gp_doctor_add(c, GP_SEV_INFO, d->bdf, "%s: BAR %d at %s; Resizable BAR offers up to %s%s", name,
						  e->bar, cur, max, r->vram ? " (still below VRAM)" : "");
			}
			gp_finding_ev(f, "rebar", "BAR %d current %s, largest %s", e->bar, cur, max);
		}
		gp_finding_bdf(f, d->bdf);
	}
}

static void bar1_used_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	const struct gp_gpu_state *s = &g->st;
	const char *name = c->topo->devs[i].name;
	char u[32], t[32];
	struct gp_finding *f;
	double pct;

	if (gp_doctor_state_missing(c, i, s->bar1_total < 0 ? s->bar1_total : s->bar1_used, "BAR1 memory use"))
		return;
	gp_bar_size_str((uint64_t)s->bar1_used, u, sizeof(u));
	gp_bar_size_str((uint64_t)s->bar1_total, t, sizeof(t));
	if (s->bar1_total == 0) {
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, g->bdf, "%s: NVML reports a BAR1 of 0 bytes", name);
	} else if ((pct = 100.0 * (double)s->bar1_used / (double)s->bar1_total) > BAR1_USED_PCT) {
		f = gp_doctor_add(c, GP_SEV_WARNING, g->bdf, "%s: BAR1 %s of %s in use (%.0f%%): new pins, GDRCopy "
				  "mappings and GPUDirect RDMA registrations fail with ENOMEM", name, u, t, pct);
		gp_finding_fix(f, "nvidia-smi -q -d MEMORY -i %s shows BAR1 use: end or restart the processes that keep "
			       "GPU memory pinned (GDRCopy, gpup2p pin, RDMA registrations); a larger BAR (see bar.small) "
			       "leaves more room", g->bdf);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: BAR1 %s of %s in use (%.0f%%)", name, u, t, pct);
	}
	gp_finding_bdf(f, g->bdf);
	gp_finding_ev(f, "bar1", "used %lld of %lld bytes", s->bar1_used, s->bar1_total);
}

static void check_bar1_used(struct gp_doctor_ctx *c)
{
	if (!c->root->live) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "live only: BAR1 use changes with every process, so snapshots "
			      "do not record it (offline: root %s)", c->root->dir);
		return;
	}
	gp_doctor_each_nvml_gpu(c, bar1_used_one);
}

static const struct gp_doctor_check checks[] = {
	{ "bar.small", "VRAM aperture smaller than VRAM", GP_SRC_SYSFS | GP_SRC_CFG | GP_SRC_NVML, 0, check_small,
	  "Compares each GPU's VRAM aperture (largest 64-bit prefetchable BAR, sysfs resource) with its VRAM (NVML, "
	  "or the recorded facts; without VRAM, an aperture of 256 MiB or less), and reads what its Resizable BAR "
	  "capability offers. Nothing larger offered (no capability, or it tops out at the current size): info, "
	  "saying what that rules out (BAR1 P2P on GeForce parts, GPUDirect pins beyond the window). A larger "
	  "size offered: error when a NIC sits near the GPU (GPUDirect RDMA registrations are limited too), "
	  "warning when an RDMA NIC elsewhere or GeForce P2P needs it, info when nothing here does. Fix: Above 4G "
	  "Decoding and Resizable BAR in firmware, or NVreg_EnableResizableBar=1." },
	{ "bar.unassigned", "a GPU or NIC memory BAR with no address", GP_SRC_SYSFS, 0, check_unassigned,
	  "Reads each GPU's and NIC's sysfs resource file. Error when a memory BAR has a size but no address: the "
	  "firmware ran out of MMIO space and the device cannot be used. Fix: Above 4G Decoding / larger MMIO high "
	  "window in firmware, or pci=realloc." },
	{ "bar.rebar", "Resizable BAR offers a larger aperture than the current one", GP_SRC_CFG | GP_SRC_NVML, 0,
	  check_rebar,
	  "Decodes the Resizable BAR capability (extended config space: root only). Warning when the aperture is "
	  "below VRAM and the capability offers a size that covers it; info when it offers more but still not "
	  "enough, or VRAM is unknown." },
	{ "bar.bar1_used", "BAR1 more than 90% in use", GP_SRC_NVML, 0, check_bar1_used,
	  "Reads each GPU's BAR1 size and use (nvmlDeviceGetBAR1MemoryInfo). Warning above 90% in use: pinning "
	  "(gpup2p pin, GDRCopy) and GPUDirect RDMA registrations map GPU memory through BAR1 and fail with ENOMEM "
	  "once it is full. Live only: the use changes with every process, so snapshots do not record it." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_bar, "bar", "BARs and Resizable BAR", checks);
