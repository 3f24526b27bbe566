/* gpup2p doctor — pcie.*: the PCIe links of the GPUs, the NICs and the switches above them (width
 * and speed against both ends' maximum, AER counters) and the family's table; Max Payload Size along
 * a GPU-NIC path, Relaxed Ordering on the NICs and the GPUs' PCIe replay counters are in pcie_cfg.c. Link state and config space come
 * from the PCI model; the aer_dev_* counters, which no module reads, from sysfs through the root. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcie.h"

#define AER_COR_WARN 100          /* correctable errors since boot that make a warning */

/* The functions on the paths of the GPUs and NICs (themselves and every bridge above them), as
 * indexes in c->pci->devs, each once: GPUs and NICs first. bridges: only switch upstream ports
 * (the lower end of the link above a switch); else every bridge. Returns how many (n <= pci->n). */
static int path_devs(const struct gp_doctor_ctx *c, int *out, int upstream_only)
{
	unsigned char *seen = calloc((size_t)c->pci->n + 1, 1); /* one look per function, not a search */
	int n = 0;

	for (int i = 0; i < c->topo->n; i++) {
		out[n++] = c->topo->devs[i].pci;
		if (seen)
			seen[c->topo->devs[i].pci] = 1;
	}
	for (int i = 0; i < c->topo->n; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);

		for (int k = 0; k < d->chain_len; k++) {
			int idx = d->chain_idx[k], dup = 0;

			if (idx < 0 || (upstream_only && c->pci->devs[idx].port_type != GP_PORT_UPSTREAM))
				continue;
			if (seen)
				dup = seen[idx];
			for (int j = 0; !seen && j < n && !dup; j++) /* out of memory: the search */
				dup = out[j] == idx;
			if (!dup)
				out[n++] = idx;
			if (seen)
				seen[idx] = 1;
		}
	}
	free(seen);
	return n;
}

/* A short name for a function (in pcie.h). */
const char *gp_doctor_pcie_role(const struct gp_doctor_ctx *c, int idx)
{
	const struct gp_topo_dev *t = gp_topo_find(c->topo, idx);

	return t ? t->name : gp_pci_port_name(c->pci->devs[idx].port_type);
}

/* The link above function idx (in check.h). */
double gp_doctor_pcie_gbps(double gts, int width)
{
	double lane = gts <= 0 ? 0 : gts <= 5.0 ? gts * 8 / 10 : gts <= 32.0 ? gts * 128 / 130 : gts * 242 / 256;

	return width > 0 ? lane / 8 * width : 0;
}

void gp_doctor_link_best(const struct gp_doctor_ctx *c, int idx, double *gts, int *width)
{
	const struct gp_pci_dev *d = &c->pci->devs[idx];
	const struct gp_pci_dev *up = d->parent >= 0 ? &c->pci->devs[d->parent] : NULL;

	*gts = d->max_gts;
	*width = d->max_width;
	if (up && up->max_gts > 0 && up->max_gts < *gts)
		*gts = up->max_gts;
	if (up && up->max_width > 0 && up->max_width < *width)
		*width = up->max_width;
}

/* The name a finding on function idx gives it: a NIC group's ("NIC0+6VFs") when idx leads one, else role's. */
static const char *who(const struct gp_doctor_ctx *c, int idx, char *buf, size_t n)
{
	const struct gp_topo_dev *t = gp_topo_find(c->topo, idx);

	if (t && c->topo->devs[t->group].members > 1)
		return gp_topo_group_name(c->topo, t->group, buf, n);
	return gp_doctor_pcie_role(c, idx);
}

/* Link state the check needs is not in sysfs: one finding for all such functions. */
static void link_unknown(struct gp_doctor_ctx *c, const char *list, const char *what)
{
	struct gp_finding *f;

	if (!list[0])
		return;
	if (gp_doctor_captured(c, "pci")) /* live, or a snapshot that looked for the files */
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "no %s in sysfs for %s", what, list);
	else
		f = gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no %s under the root for %s", what, list);
	gp_finding_ev(f, "missing", "%s", list);
}

void gp_doctor_pcie_append(char *buf, size_t n, const char *s)
{
	size_t l = strlen(buf);

	if (l < n)
		snprintf(buf + l, n - l, "%s%s", l ? ", " : "", s);
}

/* Call one(c, idx, best speed, best width) for the link above each GPU, NIC and switch upstream port
 * on their paths; those whose link state sysfs lacks (speed or width, as asked) get one finding. A NIC's
 * virtual functions have no link of their own (SR-IOV: they use their physical function's): a group's
 * one finding is its lead's, with every member's BDF. */
static void each_link(struct gp_doctor_ctx *c, int speed,
		      struct gp_finding *(*one)(struct gp_doctor_ctx *c, int idx, double gts, int width))
{
	const struct gp_topo *t = c->topo;
	int *idx, *next, n, best_w;
	double best_s;
	char none[512] = "";

	if (gp_doctor_no_device(c) || !(idx = calloc((size_t)c->pci->n + (size_t)t->n + 2, sizeof(*idx))))
		return;
	next = idx + c->pci->n + 1;
	/* each group's members after its lead, chained: next[lead] -> a member -> ... -> -1 */
	for (int i = 0; i < t->n; i++)
		next[i] = -1;
	for (int i = t->n - 1; i >= 0; i--) {
		int lead = t->devs[t->devs[i].group].lead;

		if (i != lead) {
			next[i] = next[lead];
			next[lead] = i;
		}
	}
	n = path_devs(c, idx, 1); /* the t->n GPUs and NICs first, in t->devs' order */
	for (int k = 0; k < n; k++) {
		const struct gp_pci_dev *d = &c->pci->devs[idx[k]];
		struct gp_finding *f;

		if (k < t->n && t->devs[t->devs[k].group].lead != k)
			continue; /* a virtual function: in its lead's finding */
		gp_doctor_link_best(c, idx[k], &best_s, &best_w);
		if (speed ? d->cur_gts <= 0 || best_s <= 0 : !d->cur_width || !best_w) {
			gp_doctor_pcie_append(none, sizeof(none), d->bdf);
		} else if ((f = one(c, idx[k], best_s, best_w)) && k < t->n && next[k] >= 0) {
			int m = 0;

			for (int j = next[k]; j >= 0; j = next[j], m++)
				gp_finding_bdf(f, c->pci->devs[t->devs[j].pci].bdf);
			gp_finding_ev(f, "virtual functions", "%d, on this link (a VF has no link of its own)", m);
		}
	}
	link_unknown(c, none, speed ? "link speed" : "link width");
	free(idx);
}

static struct gp_finding *width_one(struct gp_doctor_ctx *c, int idx, double best_s, int best_w)
{
	const struct gp_pci_dev *d = &c->pci->devs[idx];
	struct gp_finding *f;
	char nm[48];

	(void)best_s;
	if (d->cur_width < best_w) {
		f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s: link at x%d, both ends support x%d: a lane or the slot "
				  "failed to train", who(c, idx, nm, sizeof(nm)), d->cur_width, best_w);
		gp_finding_fix(f, "reseat the card (and its riser or cable), check the slot's bifurcation setting in "
			       "firmware; if it stays narrow, swap slots to find the faulty part");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s: link at x%d", who(c, idx, nm, sizeof(nm)), d->cur_width);
	}
	gp_finding_bdf(f, d->bdf);
	gp_finding_ev(f, "current_link_width", "%d", d->cur_width);
	gp_finding_ev(f, "max_link_width", "%d (this end), x%d (the most both ends support)", d->max_width, best_w);
	return f;
}

static void check_width(struct gp_doctor_ctx *c)
{
	each_link(c, 0, width_one);
}

#define LNKCTL 0x10          /* Link Control, from the PCI Express capability; bit 5 Retrain Link */
#define LNKCTL2 0x30         /* Link Control 2: bits 3:0 Target Link Speed, bit 5 HW Autonomous Speed Disable */
#define LNKSTA2 0x32         /* Link Status 2 */
#define LNKCTL2_HASD 0x20

/* Link Control 2 (and Link Status 2, -1 unreadable) of d: 0, or -1 when not in the captured config. */
static int lnkctl2(const struct gp_pci_dev *d, int *ctl2, int *sta2)
{
	int64_t v = d->pcie_cap > 0 ? gp_pci_cfg_read(d, d->pcie_cap + LNKCTL2, 2) : -1;
	int64_t s = d->pcie_cap > 0 ? gp_pci_cfg_read(d, d->pcie_cap + LNKSTA2, 2) : -1;

	if (v < 0)
		return -1;
	*ctl2 = (int)v;
	*sta2 = (int)s;
	return 0;
}

/* The link above function idx is below best_s: held there by configuration (a Target Link Speed below
 * the best generation, or HW Autonomous Speed Disable, on it or the port above)? Add the warning that
 * names the register and the setpci fix and return it; NULL when the link is free to train up. */
static struct gp_finding *held_low(struct gp_doctor_ctx *c, int idx, double best_s)
{
	const struct gp_pci_dev *end[2] = { &c->pci->devs[idx], NULL };
	const struct gp_pci_dev *up = NULL;
	struct gp_finding *f;
	char why[192] = "", fix[512] = "", nm[48];
	size_t wl = 0, fl = 0;
	int best = gp_pci_gen(best_s);

	if (c->pci->devs[idx].parent >= 0)
		end[1] = up = &c->pci->devs[c->pci->devs[idx].parent];
	for (int k = 0; k < 2 && end[k]; k++) {
		int ctl2, sta2, target;

		if (lnkctl2(end[k], &ctl2, &sta2))
			continue;
		target = ctl2 & 0xf;
		if (target && target < best) {
			wl += (size_t)snprintf(why + wl, sizeof(why) - wl, "%sTarget Link Speed Gen%d on %s", wl ? ", " : "",
					       target, end[k]->bdf);
			fl += (size_t)snprintf(fix + fl, sizeof(fix) - fl, "%ssetpci -s %s CAP_EXP+30.w=%x:f", fl ? "; " : "",
					       end[k]->bdf, best);
		}
		if (ctl2 & LNKCTL2_HASD) {
			wl += (size_t)snprintf(why + wl, sizeof(why) - wl, "%sHW Autonomous Speed Disable on %s",
					       wl ? ", " : "", end[k]->bdf);
			fl += (size_t)snprintf(fix + fl, sizeof(fix) - fl, "%ssetpci -s %s CAP_EXP+30.w=0:20", fl ? "; " : "",
					       end[k]->bdf);
		}
	}
	if (!wl || wl >= sizeof(why) || fl >= sizeof(fix))
		return NULL;
	f = gp_doctor_add(c, GP_SEV_WARNING, end[0]->bdf, "%s: link at %.1f GT/s (Gen%d), both ends support %.1f GT/s "
			  "(Gen%d), held there by Link Control 2: %s", who(c, idx, nm, sizeof(nm)), end[0]->cur_gts,
			  gp_pci_gen(end[0]->cur_gts), best_s, best, why);
	if (up) /* the port above the link retrains it (Link Control's Retrain Link) */
		gp_finding_fix(f, "%s, then retrain: setpci -s %s CAP_EXP+10.w=20:20 (as root; lost at reboot: set the slot's "
			       "PCIe speed to Auto in firmware)", fix, up->bdf);
	else
		gp_finding_fix(f, "%s (as root; lost at reboot: set the slot's PCIe speed to Auto in firmware)", fix);
	for (int k = 0; k < 2 && end[k]; k++) {
		int ctl2, sta2;

		if (!lnkctl2(end[k], &ctl2, &sta2))
			gp_finding_ev(f, end[k]->bdf, "Link Control 2 0x%04x (Target Link Speed Gen%d, HW Autonomous Speed "
				      "Disable %s), Link Status 2 0x%04x", ctl2, ctl2 & 0xf, ctl2 & LNKCTL2_HASD ? "on" : "off",
				      sta2 & 0xffff);
	}
	return f;
}

static struct gp_finding *speed_one(struct gp_doctor_ctx *c, int idx, double best_s, int best_w)
{
	const struct gp_pci_dev *d = &c->pci->devs[idx];
	const struct gp_topo_dev *t = gp_topo_find(c->topo, idx);
	struct gp_finding *f;
	char nm[48];

	(void)best_w;
	if (d->cur_gts + 0.1 >= best_s) {
		f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s: link at %.1f GT/s (Gen%d)", who(c, idx, nm, sizeof(nm)), d->cur_gts,
				  gp_pci_gen(d->cur_gts));
	} else if ((f = held_low(c, idx, best_s))) {
		/* named the register that holds it: not idle, whatever the device */
	} else if (t && t->kind == GP_TOPO_GPU) {
		/* GPUs lower the link speed when idle and raise it under load: not an alarm on its own, as long
		 * as Link Control 2 leaves the link free to train up */
		f = gp_doctor_add(c, GP_SEV_INFO, d->bdf, "%s: link at %.1f GT/s (Gen%d), both ends support %.1f GT/s "
				  "(Gen%d): normal for an idle GPU (it lowers the speed to save power)", t->name, d->cur_gts,
				  gp_pci_gen(d->cur_gts), best_s, gp_pci_gen(best_s));
		gp_finding_fix(f, "check again under load (nvidia-smi -q -d PCIE while a job runs); if it stays low: "
			       "reseat the GPU, check the riser and the slot's speed setting in firmware");
	} else {
		f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s: link at %.1f GT/s (Gen%d), both ends support %.1f GT/s "
				  "(Gen%d)", who(c, idx, nm, sizeof(nm)), d->cur_gts, gp_pci_gen(d->cur_gts), best_s, gp_pci_gen(best_s));
		gp_finding_fix(f, "check the slot's PCIe speed setting in firmware, reseat the card and its riser or "
			       "cable; a retimer or signal-integrity fault keeps a link at a lower speed");
	}
	gp_finding_bdf(f, d->bdf);
	gp_finding_ev(f, "current_link_speed", "%.1f GT/s", d->cur_gts);
	gp_finding_ev(f, "max_link_speed", "%.1f GT/s (this end), %.1f GT/s (the most both ends support)", d->max_gts,
		      best_s);
	return f;
}

static void check_speed(struct gp_doctor_ctx *c)
{
	each_link(c, 1, speed_one);
}

/* One aer_dev_* file of function d, in its folder dir: the TOTAL_ line's count into *total and the
 * non-zero error names into names. 0, or -errno (-ENOENT: the kernel exposes no counters for this
 * function). */
static int aer_read(struct gp_doctor_ctx *c, const struct gp_root_dir *dir, const struct gp_pci_dev *d, int k,
		    const char *file, long long *total, char *names, size_t n)
{
	char buf[1024];
	long len;

	/* the scan's listing of the folder says whether the file is there: no path walk for an absent one */
	len = d->aer_listed && !(d->aer_listed & GP_PCI_AER_HAS(k))
		? -ENOENT : gp_root_dir_read_text(c->root, dir, file, buf, sizeof(buf));
	*total = -1;
	if (len < 0)
		return (int)len;
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(l, ' ');
		long long v = sp ? strtoll(sp + 1, NULL, 10) : 0;

		if (!sp)
			continue;
		*sp = '\0';
		if (!strncmp(l, "TOTAL_", 6)) {
			*total = v;
		} else if (v > 0) {
			char item[96];

			snprintf(item, sizeof(item), "%s %lld", l, v);
			gp_doctor_pcie_append(names, n, item);
		}
	}
	return *total < 0 ? -ENODATA : 0;
}

static void check_aer(struct gp_doctor_ctx *c)
{
	static const char *const files[3] = { "aer_dev_fatal", "aer_dev_nonfatal", "aer_dev_correctable" };
	int *idx, n;
	char none[512] = "", bad[512] = "";

	if (gp_doctor_no_device(c) || !(idx = calloc((size_t)c->pci->n + 1, sizeof(*idx))))
		return;
	n = path_devs(c, idx, 0);
	for (int k = 0; k < n; k++) {
		const struct gp_pci_dev *d = &c->pci->devs[idx[k]];
		long long cnt[3];
		char names[3][256] = { "", "", "" }, path[128];
		int rc = 0;
		struct gp_finding *f;
		struct gp_root_dir dir;

		dir.fd = -ENOENT; /* not opened: none there */
		dir.ents = NULL;
		dir.names = NULL;
		/* the function's folder (where the scan found it, no link to follow) opened once for its files;
		 * not where the scan's listing showed none of them */
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", d->bdf);
		if (!d->aer_listed || d->aer_listed & GP_PCI_AER_HAS(0))
			gp_root_dir_open(c->root, &dir, -1, d->sysfs_path ? d->sysfs_path : path, NULL);
		for (int i = 0; i < 3 && !rc; i++)
			rc = aer_read(c, &dir, d, i, files[i], &cnt[i], names[i], sizeof(names[i]));
		gp_root_dir_close(&dir);
		if (rc) {
			gp_doctor_pcie_append(rc == -ENOENT ? none : bad, sizeof(none), d->bdf);
			continue;
		}
		if (cnt[0] > 0) {
			f = gp_doctor_add(c, GP_SEV_ERROR, d->bdf, "%s: %lld fatal PCIe error%s since boot (%s)", gp_doctor_pcie_role(c, idx[k]),
					  cnt[0], cnt[0] > 1 ? "s" : "", names[0]);
			gp_finding_fix(f, "the link or device failed: dmesg | grep -i aer names the first error; reseat or "
				       "replace the part, update its firmware; reboot to clear the counters");
		} else if (cnt[1] > 0) {
			f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s: %lld non-fatal (uncorrectable) PCIe error%s since boot "
					  "(%s)", gp_doctor_pcie_role(c, idx[k]), cnt[1], cnt[1] > 1 ? "s" : "", names[1]);
			gp_finding_fix(f, "dmesg | grep -i aer names the requester; completion timeouts and malformed TLPs "
				       "point at the link (reseat, riser, retimer) or at ACS/IOMMU blocking peer traffic");
		} else if (cnt[2] >= AER_COR_WARN) {
			f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s: %lld correctable PCIe errors since boot (%s): a "
					  "marginal link, retried in hardware at a cost in bandwidth", gp_doctor_pcie_role(c, idx[k]), cnt[2],
					  names[2]);
			gp_finding_fix(f, "reseat the card and its riser or cable; if the count keeps rising, lower the slot's "
				       "speed in firmware or replace the riser/retimer");
		} else {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s: no uncorrectable PCIe error, %lld correctable since boot",
					  gp_doctor_pcie_role(c, idx[k]), cnt[2]);
		}
		gp_finding_bdf(f, d->bdf);
		for (int i = 0; i < 3; i++)
			gp_finding_ev(f, files[i], "%lld%s%s%s", cnt[i], names[i][0] ? " (" : "", names[i], names[i][0] ? ")" : "");
	}
	if (none[0]) {
		struct gp_finding *f = c->root->live
			? gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no AER counters for %s (no AER capability, AER "
					"handled by the firmware, or a kernel without CONFIG_PCIEAER)", none)
			: gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no AER counters under the root for %s (none on the "
					"machine, or a snapshot that predates them)", none);
		gp_finding_ev(f, "aer_dev_*", "missing for %s", none);
	}
	if (bad[0])
		gp_finding_ev(gp_doctor_add(c, GP_SEV_UNKNOWN, "aer", "AER counters unreadable or malformed for %s", bad),
			      "aer_dev_*", "%s", bad);
	free(idx);
}

static const struct gp_doctor_check checks[] = {
	{ "pcie.link_width", "a link narrower than both its ends support", GP_SRC_SYSFS, 0, check_width,
	  "Reads current_link_width and max_link_width of each GPU, NIC and switch upstream port on their paths, "
	  "and of the port above it. Warning when the link trained narrower than both ends support (x8 of x16): "
	  "a lane, the slot, the riser or the cable failed. Fix: reseat, check the bifurcation setting. SR-IOV "
	  "virtual functions use their physical function's link: one finding for both." },
	{ "pcie.link_speed", "a link slower than both its ends support", GP_SRC_SYSFS | GP_SRC_CFG, 0, check_speed,
	  "Reads current_link_speed and max_link_speed the same way, and Link Control 2 / Link Status 2 of the "
	  "function and the port above it. Warning for any link below what both ends support that configuration "
	  "holds there (Target Link Speed below the best generation, or HW Autonomous Speed Disable), naming the "
	  "register and the setpci fix; warning for a NIC or a switch link below it. For a GPU free to train up "
	  "only info: GPUs lower the link speed when idle (Gen1 at rest is normal) and raise it under load; check "
	  "again while a job runs." },
	{ "pcie.aer", "AER error counters of the GPUs, NICs and bridges on their paths", GP_SRC_SYSFS, 0, check_aer,
	  "Reads aer_dev_fatal, aer_dev_nonfatal and aer_dev_correctable (counts since boot) of every function on "
	  "the GPUs' and NICs' paths. Error for a fatal error, warning for a non-fatal one or for 100 correctable "
	  "errors or more (a marginal link). Skipped where the kernel exposes no counters (no AER, firmware-first "
	  "error handling, virtual machines)." },
	{ "pcie.mps", "Max Payload Size differs along a GPU-NIC path", GP_SRC_CFG, 0, gp_doctor_pcie_mps,
	  "Decodes Device Control (config space) of each GPU, each NIC on its host bridge and the bridges between. "
	  "Info when the Max Payload Size differs along such a path: the kernel keeps each link consistent, but "
	  "peer traffic is cut to the smallest size. Fix: pci=pcie_bus_perf." },
	{ "pcie.relaxed_ordering", "a NIC with Relaxed Ordering disabled", GP_SRC_CFG, 0, gp_doctor_pcie_ro,
	  "Decodes each NIC's Device Control. Info when Enable Relaxed Ordering is clear (it is set at reset): NIC "
	  "writes into GPU memory stay strictly ordered, which costs GPUDirect RDMA bandwidth on some platforms. "
	  "Skipped below root ports the kernel knows to mishandle it (Xeon E5 v3/v4)." },
	{ "pcie.replay", "a GPU's PCIe replay counter rising", GP_SRC_NVML, 0, gp_doctor_pcie_replay,
	  "Reads each GPU's PCIe replay counter (NVML) twice while gathering the GPU facts (first, and again "
	  "after every GPU's other facts); with gpup2p doctor --active on a live system once more, at least a "
	  "second after the "
	  "first read. Warning when it rose between the reads (the link retransmits now). A steady count is ok: replays happen now and then on "
	  "a sound link. Offline it uses the recorded counter; snapshots without one skip it." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_pcie, "pcie", "PCIe links", checks);
