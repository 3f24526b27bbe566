/* gpup2p doctor — expect.*: this node against the baseline an administrator (or `gpup2p report
 * --baseline`) wrote for it (doctor --expect FILE): GPU and NIC counts, GPU model, NIC port rate,
 * PCIe link generation and width, NVLinks up, NUMA placement. The facts compared are those doctor
 * --json carries ("facts"), gathered here once per run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rdma.h"

/* The NUMA node of topology entry i: its numa_node, or where that is -1 the one node its CPUs cover
 * (nvidia-smi's NUMA Affinity); -1 when that is no single node. */
static int dev_numa(const struct gp_doctor_ctx *c, int i)
{
	char buf[64], *end;
	long v;

	gp_topo_numa_affinity(c->topo, i, buf, sizeof(buf));
	v = strtol(buf, &end, 10);
	return end != buf && !*end && v >= 0 ? (int)v : -1;
}

/* The generation a link runs at: its current speed; for a GPU below what both ends support, what they
 * support (GPUs train down when idle: a static look cannot tell idle from held low). */
static int dev_gen(const struct gp_doctor_ctx *c, int i)
{
	const struct gp_pci_dev *d = gp_doctor_dev(c, i);
	double best;
	int w;

	gp_doctor_link_best(c, c->topo->devs[i].pci, &best, &w);
	if (c->topo->devs[i].kind == GP_TOPO_GPU && best > 0 && d->cur_gts > 0 && d->cur_gts < best)
		return gp_pci_gen(best);
	return d->cur_gts > 0 ? gp_pci_gen(d->cur_gts) : -1;
}

/* A NIC's port rate in Gb/s: the first port of its RDMA device ("400 Gb/sec (4X NDR)"), else its
 * network interface's speed (Mb/s; -1 with the link down); -1 when neither says. */
static double nic_rate(struct gp_doctor_ctx *c, const struct gp_pci_dev *d)
{
	char path[512], buf[128], **ports = NULL;
	double v = -1;
	int i = d->rdma[0] ? gp_doctor_ib_find(c, d->rdma) : -1; /* the devices read once (rdma_facts.c) */

	if (i >= 0 && gp_doctor_ib_ports(c, i, &ports) > 0) {
		struct ibport p;

		gp_doctor_ib_port(c, i, 0, &p);
		if (gp_doctor_ib_file(c, &p, IBF_RATE, buf, sizeof(buf)) > 0 && sscanf(buf, "%lf Gb/sec", &v) != 1)
			v = -1;
		if (v > 0)
			return v;
	}
	if (d->netdev[0]) {
		long mbs;

		snprintf(path, sizeof(path), "/sys/class/net/%s/speed", d->netdev);
		if (gp_doctor_read(c, path, buf, sizeof(buf)) > 0 && sscanf(buf, "%ld", &mbs) == 1 && mbs > 0)
			return mbs / 1000.0;
	}
	return -1;
}

int gp_doctor_node_facts(struct gp_doctor_ctx *c, struct gp_expect *x)
{
	gp_expect_init(x);
	x->count[GP_EXPECT_GPU] = x->count[GP_EXPECT_NIC] = 0;
	for (int i = 0; i < c->topo->n; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);
		int kind = c->topo->devs[i].kind == GP_TOPO_GPU ? GP_EXPECT_GPU : GP_EXPECT_NIC;
		struct gp_expect_dev *v;

		if (d->physfn >= 0) /* a virtual function: its physical function counts */
			continue;
		if (!(v = gp_expect_add(x, kind, d->bdf))) {
			gp_expect_free(x);
			return -ENOMEM;
		}
		x->count[kind]++;
		snprintf(v->name, sizeof(v->name), "%s", c->topo->devs[i].name);
		v->gen = dev_gen(c, i);
		v->width = d->cur_width > 0 ? d->cur_width : -1;
		v->numa = dev_numa(c, i);
		if (kind == GP_EXPECT_NIC) {
			v->rate = nic_rate(c, d);
		} else {
			const struct gp_gpu_info *g = c->facts->available ? gp_gpu_find(c->facts, d->bdf) : NULL;

			if (g) {
				snprintf(v->model, sizeof(v->model), "%s", g->name);
				v->nvlinks = g->st.nvl_active >= 0 ? g->st.nvl_active : -1;
			}
		}
	}
	return 0;
}

/* This node's facts, gathered on first use; NULL (after a finding saying so) when out of memory. */
static const struct gp_expect *have(struct gp_doctor_ctx *c)
{
	if (!c->expect_have) {
		struct gp_expect *x = malloc(sizeof(*x));

		if (!x || gp_doctor_node_facts(c, x)) {
			free(x);
			gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "out of memory gathering this node's facts");
			return NULL;
		}
		c->expect_have = x;
	}
	return c->expect_have;
}

void gp_doctor_expect_free(struct gp_doctor_ctx *c)
{
	if (c->expect_have)
		gp_expect_free(c->expect_have);
	free(c->expect_have);
	c->expect_have = NULL;
}

/* The check cannot judge: no --expect. */
static int no_expect(struct gp_doctor_ctx *c)
{
	if (c->expect)
		return 0;
	gp_doctor_add(c, GP_SEV_SKIPPED, "system", "not requested: gpup2p doctor --expect FILE states what to expect");
	return 1;
}

/* The first line of the file that names device d. */
static int first_line(const struct gp_expect_dev *d)
{
	int l = 0;

	for (int f = 0; f < GP_XF_N; f++)
		if (d->line[f] && (!l || d->line[f] < l))
			l = d->line[f];
	return l;
}

static const char *const kind_word[GP_EXPECT_KINDS] = { "GPU", "NIC" };

static void check_count(struct gp_doctor_ctx *c, int kind)
{
	const struct gp_expect *x = c->expect, *h;
	struct gp_finding *f;
	int want, got, missing = 0;

	if (no_expect(c) || !(h = have(c)))
		return;
	want = x->count[kind];
	got = h->count[kind];
	/* a device the file names by its address that is not here */
	for (int i = 0; i < x->ndev; i++) {
		const struct gp_expect_dev *d = &x->dev[i];

		if (d->kind != kind || gp_expect_find(h, kind, d->bdf))
			continue;
		missing++;
		f = gp_doctor_add(c, GP_SEV_ERROR, d->bdf, "no %s at %s: %s expects one there (line %d)", kind_word[kind],
				  d->bdf, x->file, first_line(d));
		gp_finding_bdf(f, d->bdf);
		gp_finding_fix(f, kind == GP_EXPECT_GPU ? "a GPU fallen off the bus (gpu.xid: Xid 79) or unseated: check "
			       "its power, riser and slot, then reboot; lspci -d 10de: lists what the bus sees"
			       : "check that the NIC is seated and its firmware loaded (lspci -d 15b3:, dmesg | grep mlx5)");
	}
	if (want < 0) {
		if (!missing)
			gp_doctor_add(c, GP_SEV_SKIPPED, "system", "%s does not state %s.count", x->file,
				      gp_expect_kind_name(kind));
		return;
	}
	if (got < want) {
		f = gp_doctor_add(c, GP_SEV_ERROR, "system", "%d %s%s on the PCI bus, %s expects %d (line %d)", got,
				  kind_word[kind], got == 1 ? "" : "s", x->file, want, x->count_line[kind]);
		gp_finding_fix(f, kind == GP_EXPECT_GPU ? "find the missing GPU: gpup2p topo lists those present; one "
			       "fallen off the bus needs its power, riser and slot checked, then a reboot"
			       : "find the missing NIC: gpup2p topo lists those present (lspci -d 15b3:)");
	} else if (got > want) {
		f = gp_doctor_add(c, GP_SEV_WARNING, "system", "%d %ss on the PCI bus, more than the %d %s expects "
				  "(line %d)", got, kind_word[kind], want, x->file, x->count_line[kind]);
		gp_finding_fix(f, "update %s (gpup2p report --baseline derives it from the fleet)", x->file);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "%d %s%s, as %s expects", got, kind_word[kind], got == 1 ? "" : "s",
				  x->file);
	}
	gp_finding_ev(f, "expected", "%d", want);
	gp_finding_ev(f, "found", "%d", got);
}

/* Why field f is not known on this node. */
static const char *unknown_why(const struct gp_doctor_ctx *c, enum gp_expect_field f)
{
	switch (f) {
	case GP_XF_MODEL:
	case GP_XF_NVLINKS:
		return c->facts->available ? "NVML does not report it for this GPU" : "NVML not available";
	case GP_XF_LINK:
		return "the link's speed or width is not in sysfs";
	case GP_XF_NUMA:
		return "numa_node is -1 and its CPUs span several NUMA nodes";
	case GP_XF_RATE:
		return "no RDMA port rate or network interface speed (link down?)";
	default:
		return "not known";
	}
}

static const char *fix_of(int kind, enum gp_expect_field f)
{
	switch (f) {
	case GP_XF_MODEL:
		return "another GPU model than the baseline's is installed: check the node's build sheet";
	case GP_XF_LINK:
		return kind == GP_EXPECT_GPU ? "reseat the GPU, check its riser and slot (lspci -vv: LnkCap, LnkSta); a "
		       "slot wired or set in firmware for fewer lanes or a lower generation needs the firmware setting"
		       : "reseat the NIC, check its slot and riser (lspci -vv: LnkCap, LnkSta) and the slot's "
		       "firmware setting";
	case GP_XF_NVLINKS:
		return "nvidia-smi nvlink -s names the links down: reseat the NVLink bridge, or on NVSwitch systems check "
		       "nvidia-fabricmanager and the baseboard";
	case GP_XF_NUMA:
		return "the device sits in another socket's slot than the baseline expects (or the firmware's "
		       "proximity data changed): check the slot, or the BIOS's NUMA settings (nodes per socket)";
	case GP_XF_RATE:
		return "check the cable, transceiver and switch port (ibstat, ethtool), then the port's configured "
		       "speed on both ends";
	default:
		return NULL;
	}
}

static void field_one(struct gp_doctor_ctx *c, const struct gp_expect_dev *h, const struct gp_expect_dev *w,
		      enum gp_expect_field fld)
{
	const struct gp_expect *x = c->expect;
	char hv[160], wv[160], key[64];
	enum gp_expect_verdict v = gp_expect_judge(h, w, fld);
	const char *what = gp_expect_field_name(fld);
	struct gp_finding *f;

	gp_expect_value(h, fld, hv, sizeof(hv));
	gp_expect_value(w, fld, wv, sizeof(wv));
	snprintf(key, sizeof(key), "%s.%s%s%s%s", gp_expect_kind_name(h->kind), what, w->bdf[0] ? "[" : "", w->bdf,
		 w->bdf[0] ? "]" : "");
	if (v == GP_XV_UNKNOWN) {
		f = gp_doctor_add(c, GP_SEV_SKIPPED, h->bdf, "%s: cannot tell its %s (%s expects %s): %s", h->name, what,
				  x->file, wv, unknown_why(c, fld));
	} else if (v == GP_XV_BELOW) {
		f = gp_doctor_add(c, GP_SEV_ERROR, h->bdf, "%s: %s %s, expected %s (%s line %d)", h->name, what, hv, wv,
				  x->file, w->line[fld]);
		gp_finding_fix(f, "%s", fix_of(h->kind, fld));
	} else if (v == GP_XV_ABOVE) {
		f = gp_doctor_add(c, GP_SEV_WARNING, h->bdf, "%s: %s %s, more than the %s %s expects (line %d)", h->name,
				  what, hv, wv, x->file, w->line[fld]);
		gp_finding_fix(f, "update %s's %s (gpup2p report --baseline derives it from the fleet)", x->file, key);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, h->bdf, "%s: %s %s, as expected", h->name, what, hv);
	}
	gp_finding_bdf(f, h->bdf);
	gp_finding_ev(f, "expected", "%s = %s (%s:%d)", key, wv, x->file, w->line[fld]);
	gp_finding_ev(f, "found", "%s", hv[0] ? hv : "unknown");
}

static void check_field(struct gp_doctor_ctx *c, int kind, enum gp_expect_field fld)
{
	const struct gp_expect *x = c->expect, *h;
	int before = c->out.n;

	if (no_expect(c) || !(h = have(c)))
		return;
	for (int i = 0; i < h->ndev; i++) {
		const struct gp_expect_dev *w;

		if (h->dev[i].kind == kind && (w = gp_expect_want(x, kind, h->dev[i].bdf, fld)))
			field_one(c, &h->dev[i], w, fld);
	}
	if (c->out.n == before)
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "%s states no %s.%s%s", x->file, gp_expect_kind_name(kind),
			      gp_expect_field_name(fld), h->count[kind] ? " for the devices here" : "");
}

static void gpu_count(struct gp_doctor_ctx *c) { check_count(c, GP_EXPECT_GPU); }
static void nic_count(struct gp_doctor_ctx *c) { check_count(c, GP_EXPECT_NIC); }
static void gpu_model(struct gp_doctor_ctx *c) { check_field(c, GP_EXPECT_GPU, GP_XF_MODEL); }
static void gpu_link(struct gp_doctor_ctx *c) { check_field(c, GP_EXPECT_GPU, GP_XF_LINK); }
static void gpu_nvlinks(struct gp_doctor_ctx *c) { check_field(c, GP_EXPECT_GPU, GP_XF_NVLINKS); }
static void gpu_numa(struct gp_doctor_ctx *c) { check_field(c, GP_EXPECT_GPU, GP_XF_NUMA); }
static void nic_rate_check(struct gp_doctor_ctx *c) { check_field(c, GP_EXPECT_NIC, GP_XF_RATE); }
static void nic_link(struct gp_doctor_ctx *c) { check_field(c, GP_EXPECT_NIC, GP_XF_LINK); }
static void nic_numa(struct gp_doctor_ctx *c) { check_field(c, GP_EXPECT_NIC, GP_XF_NUMA); }

#define SEE " Without gpup2p doctor --expect FILE skipped (not requested) (gpup2p-doctor(1) describes the " \
	"format; gpup2p report --baseline writes it)."

static const struct gp_doctor_check checks[] = {
	{ "expect.gpu_count", "fewer GPUs than the baseline expects", GP_SRC_SYSFS, 0, gpu_count,
	  "Counts the NVIDIA GPUs on the PCI bus against gpu.count, and looks for each GPU the file names by its "
	  "address (gpu.KEY[BDF]). Error for a GPU missing (fallen off the bus, unseated, not powered), warning for "
	  "more than expected (the baseline is out of date)." SEE },
	{ "expect.gpu_model", "a GPU of another model than the baseline's", GP_SRC_NVML, 0, gpu_model,
	  "Compares each GPU's NVML name with gpu.model: a different name is an error. Without NVML (or its "
	  "recorded facts) skipped: the name is NVML's." SEE },
	{ "expect.gpu_link", "a GPU's PCIe link narrower or older than the baseline's", GP_SRC_SYSFS, 0, gpu_link,
	  "Compares each GPU's PCIe link with gpu.link (gen5 x16): the width is the current one; the generation the "
	  "current speed, except where a GPU runs below what both ends support, which is taken as idle (GPUs "
	  "train down when idle) and judged by what both ends support: a slot or riser that caps the link shows, "
	  "a link that trains low only under load does not (pcie.link_speed with gpup2p doctor --active). "
	  "Lower is an error, "
	  "higher a warning (the baseline is out of date)." SEE },
	{ "expect.nvlinks", "fewer NVLinks up on a GPU than the baseline's", GP_SRC_NVML, 0, gpu_nvlinks,
	  "Compares each GPU's active NVLinks (NVML) with gpu.nvlinks: fewer is an error (a link down, a bridge "
	  "half seated), more a warning. Without NVML skipped." SEE },
	{ "expect.gpu_numa", "a GPU on another NUMA node than the baseline's", GP_SRC_SYSFS, 0, gpu_numa,
	  "Compares each GPU's NUMA node (numa_node; where that is -1, the node its local CPUs lie on, as "
	  "nvidia-smi's NUMA Affinity) with gpu.numa: another node is an error (the GPU is in another socket's "
	  "slot, or the firmware's NUMA setting changed), and host buffers bound by the baseline's map cross the "
	  "SMP interconnect." SEE },
	{ "expect.nic_count", "fewer NICs than the baseline expects", GP_SRC_SYSFS, 0, nic_count,
	  "Counts the NICs (physical functions: virtual functions are left out) against nic.count, and looks for "
	  "each NIC the file names by its address. Error for one missing, warning for more." SEE },
	{ "expect.nic_rate", "a NIC port slower than the baseline's", GP_SRC_SYSFS, 0, nic_rate_check,
	  "Compares each NIC's port rate (its RDMA device's first port, /sys/class/infiniband/DEV/ports/N/rate; "
	  "without RDMA its interface's speed) with nic.rate: slower is an error (a port at half rate: a cable, "
	  "a transceiver, a switch port negotiated down), faster a warning." SEE },
	{ "expect.nic_link", "a NIC's PCIe link narrower or older than the baseline's", GP_SRC_SYSFS, 0, nic_link,
	  "Compares each NIC's current PCIe link with nic.link: lower is an error, higher a warning." SEE },
	{ "expect.nic_numa", "a NIC on another NUMA node than the baseline's", GP_SRC_SYSFS, 0, nic_numa,
	  "Compares each NIC's NUMA node with nic.numa (as expect.gpu_numa does for GPUs): another node is an "
	  "error; the GPUs that used it as their near NIC now cross sockets." SEE },
};

GP_DOCTOR_FAMILY_CLEANUP(gp_doctor_fam_expect, "expect", "the node against its expected baseline (gpup2p doctor --expect)",
			 checks, gp_doctor_expect_free);
