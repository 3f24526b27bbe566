/* gpup2p doctor — rdma.*: the RDMA devices under /sys/class/infiniband, their ports (state, rate,
 * GID types), the uverbs devices user space opens (ib_uverbs, /dev/infiniband/uverbsN), and whether
 * libibverbs finds a provider for each (live only, through dlopen). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/verbs.h"
#include "rdma.h"

/* The RDMA devices (sorted names; free with gp_root_free_list), or 0 after adding "skipped". */
static int ibdevs(struct gp_doctor_ctx *c, char ***names)
{
	int n = gp_root_list(c->root, "/sys/class/infiniband", names);

	if (n > 0)
		return n;
	gp_root_free_list(*names);
	*names = NULL;
	gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no RDMA device (/sys/class/infiniband is empty or absent)");
	return 0;
}

/* Read a port file into buf (trailing newline removed): 0, or -errno after adding the finding. */
static int port_file(struct gp_doctor_ctx *c, const struct ibport *p, enum ib_file file, char *buf, size_t n)
{
	char path[512];
	long r = gp_doctor_ib_file(c, p, file, buf, n);

	if (r >= 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", p->base, gp_doctor_ib_file_name(file)); /* named as the class names it */
	gp_doctor_missing(c, p->subject, path, (int)r);
	return (int)r;
}

void gp_doctor_rdma_each_port(struct gp_doctor_ctx *c, void (*one)(struct gp_doctor_ctx *c, const struct ibport *p))
{
	int n = gp_doctor_ib_count(c);

	if (n <= 0 && !c->out.nomem)
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no RDMA device (/sys/class/infiniband is empty or absent)");
	if (n > 0 && !gp_doctor_captured(c, "rdma-ports")) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "the snapshot does not record RDMA ports (taken by an older "
			      "gpup2p)");
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		char dir[160], **ports;
		int np = gp_doctor_ib_ports(c, i, &ports);

		snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports", gp_doctor_ib_name(c, i));
		if (np <= 0)
			gp_doctor_missing(c, gp_doctor_ib_name(c, i), dir, np < 0 ? np : -ENOENT);
		for (int k = 0; k < np; k++) {
			struct ibport p;

			gp_doctor_ib_port(c, i, k, &p);
			one(c, &p);
		}
	}
}

void gp_doctor_rdma_bdf(const struct gp_doctor_ctx *c, const struct ibport *p, struct gp_finding *f)
{
	if (p->d.nic >= 0)
		gp_finding_bdf(f, gp_doctor_dev(c, p->d.nic)->bdf);
}

/* The GPUs within PXB of NIC j, as "GPU0 GPU1" into buf; their count. */
static int near_gpus(const struct gp_doctor_ctx *c, int j, char *buf, size_t n)
{
	size_t used = 0;
	int k = 0;

	buf[0] = '\0';
	for (int g = 0; j >= 0 && g < c->topo->ngpu; g++) {
		if (gp_topo_link_at(c->topo, g, j).pcie > GP_TC_PXB)
			continue;
		k++;
		if (used < n)
			used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? " " : "", c->topo->devs[g].name);
	}
	return k;
}

static void port_one(struct gp_doctor_ctx *c, const struct ibport *p)
{
	char state[64], phys[64], layer[32] = "", gpus[256];
	const char *sname, *pname;
	int st, ph, near = p->d.soft ? 0 : near_gpus(c, p->d.nic, gpus, sizeof(gpus)), ib;
	struct gp_finding *f;

	if (port_file(c, p, IBF_STATE, state, sizeof(state)) || port_file(c, p, IBF_PHYS_STATE, phys, sizeof(phys)))
		return;
	if (gp_doctor_ib_file(c, p, IBF_LINK_LAYER, layer, sizeof(layer)) < 0) /* only the fix's wording depends on it */
		layer[0] = '\0';
	ib = strcmp(layer, "Ethernet") != 0;
	st = atoi(state);
	ph = atoi(phys);
	sname = strchr(state, ':') ? strchr(state, ':') + 1 + strspn(strchr(state, ':') + 1, " ") : state;
	pname = strchr(phys, ':') ? strchr(phys, ':') + 1 + strspn(strchr(phys, ':') + 1, " ") : phys;
	if (st == IB_ACTIVE && ph == IB_LINKUP) {
		f = gp_doctor_add(c, GP_SEV_OK, p->subject, "%s port %s is ACTIVE, LinkUp", p->d.name, p->port);
	} else if (near) {
		f = gp_doctor_add(c, GP_SEV_ERROR, p->subject, "%s port %s is %s (%s) on a NIC within PXB of %s: GPUDirect "
				  "RDMA from %s has no link there", p->d.name, p->port, sname, pname, gpus,
				  near > 1 ? "those GPUs" : "that GPU");
	} else if (p->d.soft) {
		f = gp_doctor_add(c, GP_SEV_INFO, p->subject, "%s port %s is %s (%s); %s is software RDMA%s%s, so GPUDirect "
				  "RDMA does not depend on it", p->d.name, p->port, sname, pname, p->d.name,
				  p->d.over[0] ? " over " : "", p->d.over);
	} else {
		f = gp_doctor_add(c, GP_SEV_INFO, p->subject, "%s port %s is %s (%s); no GPU is near this %s, so GPUDirect "
				  "RDMA does not depend on it", p->d.name, p->port, sname, pname,
				  p->d.nic >= 0 ? "NIC" : "RDMA device");
	}
	if (f && f->sev != GP_SEV_OK) {
		if (ph == IB_LINKUP && ib)
			gp_finding_fix(f, "the link is up but the port is not ACTIVE: start a subnet manager on the fabric "
				       "(opensm, or the switch's), then check with ibstat %s", p->d.name);
		else if (ib)
			gp_finding_fix(f, "check the cable and the switch port (ibstat %s; Polling: no peer seen); if the "
				       "port is unused on purpose, ignore it with gpup2p doctor --skip "
				       "rdma.port", p->d.name);
		else
			gp_finding_fix(f, "bring the interface up (ip link set %s up; rdma link show %s/%s names it) and "
				       "check the cable and switch port (ethtool)", p->d.over[0] ? p->d.over : "DEV", p->d.name,
				       p->port);
	}
	gp_doctor_rdma_bdf(c, p, f);
	gp_finding_ev(f, "state", "%s", state);
	gp_finding_ev(f, "phys_state", "%s", phys);
	if (layer[0])
		gp_finding_ev(f, "link_layer", "%s", layer);
	if (near)
		gp_finding_ev(f, "GPUs within PXB", "%s", gpus);
}

static void check_port(struct gp_doctor_ctx *c)
{
	gp_doctor_rdma_each_port(c, port_one);
}

static void rate_one(struct gp_doctor_ctx *c, const struct ibport *p)
{
	char state[64], rate[64];
	const struct gp_pci_dev *d;
	struct gp_finding *f;
	double port, link;

	if (p->d.soft || p->d.nic < 0) {
		/* rxe reports its interface's Ethernet speed rounded up to an IB rate (2.5 Gb/s for 1 GbE or an
		 * unknown speed): no port of the NIC's to compare with its PCIe link */
		gp_doctor_add(c, GP_SEV_SKIPPED, p->subject, "%s %s", p->d.name, p->d.soft ? "is software RDMA: its rate "
			      "follows the interface's Ethernet speed, not a NIC port" : "has no PCI function");
		return;
	}
	if (port_file(c, p, IBF_STATE, state, sizeof(state)))
		return;
	if (atoi(state) != IB_ACTIVE) {
		f = gp_doctor_add(c, GP_SEV_SKIPPED, p->subject, "%s port %s is not ACTIVE: no rate to compare (see "
				  "rdma.port)", p->d.name, p->port);
		gp_doctor_rdma_bdf(c, p, f);
		return;
	}
	if (port_file(c, p, IBF_RATE, rate, sizeof(rate)))
		return;
	d = gp_doctor_dev(c, p->d.nic);
	if (sscanf(rate, "%lf Gb/sec", &port) != 1 || port <= 0) {
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, p->subject, "%s port %s: rate \"%s\" not understood", p->d.name, p->port,
				  rate);
		gp_doctor_rdma_bdf(c, p, f);
		return;
	}
	if (d->cur_gts <= 0 || d->cur_width <= 0) {
		f = gp_doctor_missing(c, p->subject, "current_link_speed/current_link_width", -ENOENT);
		gp_doctor_rdma_bdf(c, p, f);
		return;
	}
	link = 8 * gp_doctor_pcie_gbps(d->cur_gts, d->cur_width); /* Gb/s, as the port rate */
	if (port > link) {
		f = gp_doctor_add(c, GP_SEV_WARNING, p->subject, "%s port %s runs at %g Gb/s but its PCIe link (Gen%d, %g GT/s "
				  "x%d) carries at most %.0f Gb/s: the NIC cannot reach its line rate", p->d.name, p->port,
				  port, gp_pci_gen(d->cur_gts), d->cur_gts, d->cur_width, link);
		gp_finding_fix(f, "move the NIC to a slot that gives it a wider or faster link (or see pcie.link_speed and "
			       "pcie.link_width if the link trained below the slot)");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, p->subject, "%s port %s: %g Gb/s fits its PCIe link (%.0f Gb/s)", p->d.name,
				  p->port, port, link);
	}
	gp_doctor_rdma_bdf(c, p, f);
	gp_finding_ev(f, "rate", "%s", rate);
	gp_finding_ev(f, "PCIe link", "%g GT/s x%d = %.0f Gb/s after line coding", d->cur_gts, d->cur_width, link);
}

static void check_rate(struct gp_doctor_ctx *c)
{
	gp_doctor_rdma_each_port(c, rate_one);
}

/* 1 when GID index idx of port p is an IPv6 link-local address (fe80:0000:0000:0000:..., as NCCL tells
 * them apart); 0 otherwise, or when the GID itself was not recorded (a snapshot of an older gpup2p). */
static int link_local(struct gp_doctor_ctx *c, const struct ibport *p, const char *idx)
{
	char path[512], gid[64];

	snprintf(path, sizeof(path), "%s/gids/%s", p->at, idx);
	return gp_doctor_read(c, path, gid, sizeof(gid)) > 0 && !strncmp(gid, "fe80:0000:0000:0000:", 20);
}

static void gid_one(struct gp_doctor_ctx *c, const struct ibport *p)
{
	char layer[32], dir[460], **types = NULL, seen[256] = "";
	struct gp_finding *f;
	int n, v2 = 0, ll = 0;
	size_t used = 0;

	if (port_file(c, p, IBF_LINK_LAYER, layer, sizeof(layer)))
		return;
	if (strcmp(layer, "Ethernet")) {
		f = gp_doctor_add(c, GP_SEV_SKIPPED, p->subject, "%s port %s: link layer %s, not RoCE", p->d.name, p->port,
				  layer);
		gp_doctor_rdma_bdf(c, p, f);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/gid_attrs/types", p->at);
	if (!gp_root_exists(c->root, dir)) {
		snprintf(dir, sizeof(dir), "%s/gid_attrs/types", p->base); /* named as the class names it */
		gp_doctor_missing(c, p->subject, dir, -ENOENT);
		return;
	}
	n = gp_root_list(c->root, dir, &types);
	for (int i = 0; i < n; i++) {
		char path[512], t[64];

		/* unused entries of the table cannot be read (EINVAL): only the GIDs in use answer */
		snprintf(path, sizeof(path), "%s/%s", dir, types[i]);
		if (gp_doctor_read(c, path, t, sizeof(t)) <= 0)
			continue;
		if (!strcmp(t, "RoCE v2")) {
			if (link_local(c, p, types[i]))
				ll++;
			else
				v2++;
		}
		if (!strstr(seen, t) && used < sizeof(seen))
			used += (size_t)snprintf(seen + used, sizeof(seen) - used, "%s%s", used ? ", " : "", t);
	}
	gp_root_free_list(types);
	if (v2) {
		f = gp_doctor_add(c, GP_SEV_OK, p->subject, "%s port %s (RoCE): %d RoCE v2 GID%s", p->d.name, p->port, v2,
				  v2 > 1 ? "s" : "");
	} else if (ll) {
		f = gp_doctor_add(c, GP_SEV_WARNING, p->subject, "%s port %s runs RoCE with RoCE v2 GIDs for IPv6 link-local "
				  "addresses only (fe80::): not routable, and NCCL skips them; the interface has no IP "
				  "address", p->d.name, p->port);
		gp_finding_fix(f, "give the interface an IPv4 or a global IPv6 address (ip addr add ADDR/LEN dev %s): RoCE "
			       "v2 GIDs follow its addresses", p->d.over[0] ? p->d.over : "DEV");
	} else {
		f = gp_doctor_add(c, GP_SEV_WARNING, p->subject, "%s port %s runs RoCE without a RoCE v2 GID (%s): routed "
				  "RoCE, NCCL's default and most fabrics' congestion control need v2", p->d.name, p->port,
				  seen[0] ? seen : "no GID in use");
		gp_finding_fix(f, "give the interface an IP address (RoCE v2 GIDs follow its addresses) and set the "
			       "default RoCE mode to v2: cma_roce_mode -d %s -p %s -m 2", p->d.name, p->port);
	}
	gp_doctor_rdma_bdf(c, p, f);
	gp_finding_ev(f, "gid_attrs/types", "%s", seen[0] ? seen : "none readable");
	if (ll)
		gp_finding_ev(f, "link-local RoCE v2 GIDs", "%d", ll);
}

static void check_gid(struct gp_doctor_ctx *c)
{
	gp_doctor_rdma_each_port(c, gid_one);
}

/* /sys/class/infiniband_verbs: the uverbs device of RDMA device name ("uverbs3" into buf), or "". */
static void uverbs_of(struct gp_doctor_ctx *c, const char *name, char *buf, size_t n)
{
	const char *known = gp_doctor_ib_uverbs(c, name); /* the class read once for every device */
	char **uv = NULL;
	int k;

	if (known) {
		snprintf(buf, n, "%s", known);
		return;
	}
	k = gp_root_list(c->root, "/sys/class/infiniband_verbs", &uv);
	buf[0] = '\0';
	for (int i = 0; i < k && !buf[0]; i++) {
		char path[160], dev[64];

		snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/ibdev", uv[i]);
		if (!strncmp(uv[i], "uverbs", 6) && gp_doctor_read(c, path, dev, sizeof(dev)) > 0 && !strcmp(dev, name))
			snprintf(buf, n, "%s", uv[i]);
	}
	gp_root_free_list(uv);
}

static void check_uverbs(struct gp_doctor_ctx *c)
{
	char **names = NULL;
	int n = ibdevs(c, &names), mod;

	if (n && !gp_doctor_captured(c, "rdma-uverbs")) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "the snapshot does not record the uverbs devices (taken by an "
			      "older gpup2p)");
		n = 0;
	}
	if (n && (mod = gp_doctor_module(c, "ib_uverbs")) < 0) {
		gp_doctor_missing(c, "ib_uverbs", "/proc/modules", mod);
		n = 0;
	}
	if (n && !mod && !gp_root_exists(c->root, "/sys/class/infiniband_verbs")) {
		/* not loaded (nor built in: then the class would exist): one finding for every device */
		struct gp_finding *f = gp_doctor_add(c, GP_SEV_ERROR, "ib_uverbs", "ib_uverbs is not loaded: none of the %d "
						     "RDMA device%s has a uverbs device, so no RDMA application (NCCL, "
						     "MPI, libibverbs) can open %s", n, n > 1 ? "s" : "", n > 1 ? "them" : "it");

		gp_finding_fix(f, "modprobe ib_uverbs, and load it at boot (rdma-core's rdma-load-modules@ units or "
			       "modules-load.d)");
		for (int i = 0; i < n; i++)
			if (gp_doctor_ib_nic(c, names[i]) >= 0)
				gp_finding_bdf(f, gp_doctor_dev(c, gp_doctor_ib_nic(c, names[i]))->bdf);
		gp_finding_ev(f, "/proc/modules", "no ib_uverbs");
		gp_finding_ev(f, "/sys/class/infiniband_verbs", "absent");
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		char uv[64], node[96];
		int nic = gp_doctor_ib_nic(c, names[i]), usable, rc;
		struct gp_finding *f;

		uverbs_of(c, names[i], uv, sizeof(uv));
		snprintf(node, sizeof(node), "/dev/infiniband/%s", uv);
		if (!uv[0]) {
			f = gp_doctor_add(c, GP_SEV_ERROR, names[i], "%s has no uverbs device%s: user space cannot open it",
					  names[i], mod ? " although ib_uverbs is loaded" : "");
			gp_finding_fix(f, "reload the device's RDMA driver (e.g. modprobe -r mlx5_ib && modprobe mlx5_ib) and "
				       "look for errors in dmesg");
		} else if ((rc = gp_doctor_devnode(c, node, &usable)) < 0) {
			gp_doctor_missing(c, names[i], "/dev", rc);
			continue;
		} else if (!rc) {
			f = gp_doctor_add(c, GP_SEV_ERROR, names[i], "%s is %s in sysfs but %s is missing: user space cannot "
					  "open it", names[i], uv, node);
			gp_finding_fix(f, "let udev create it (udevadm trigger --subsystem-match=infiniband_verbs); in a "
				       "container, pass /dev/infiniband through (--device=/dev/infiniband)");
		} else if (!usable) {
			f = gp_doctor_add(c, GP_SEV_WARNING, names[i], "%s exists but this user cannot open it", node);
			gp_finding_fix(f, "check its mode (rdma-core's udev rule makes uverbs devices 0666) or run as a user "
				       "allowed to use RDMA");
		} else {
			f = gp_doctor_add(c, GP_SEV_OK, names[i], "%s: %s", names[i], node);
		}
		if (nic >= 0)
			gp_finding_bdf(f, gp_doctor_dev(c, nic)->bdf);
		gp_finding_ev(f, "ib_uverbs", "%s", mod ? "loaded" : "not in /proc/modules");
		gp_finding_ev(f, "uverbs device", "%s", uv[0] ? uv : "none");
	}
	gp_root_free_list(names);
}

const struct gp_verbs_probe *gp_doctor_verbs(struct gp_doctor_ctx *c)
{
	if (!c->verbs_probe && (c->verbs_probe = calloc(1, sizeof(*c->verbs_probe))))
		gp_verbs_probe(c->verbs_probe);
	return c->verbs_probe;
}

static void check_verbs_lib(struct gp_doctor_ctx *c)
{
	char **names = NULL;
	int n = ibdevs(c, &names);
	const struct gp_verbs_probe *v = n ? gp_doctor_verbs(c) : NULL;
	struct gp_finding *f;

	if (n && !v) {
		gp_doctor_add(c, GP_SEV_UNKNOWN, "libibverbs", "out of memory");
		n = 0;
	} else if (n && !v->loaded) {
		f = gp_doctor_add(c, GP_SEV_WARNING, "libibverbs", "%s: no RDMA application (NCCL's IB transport, MPI, "
				  "perftest) can use the %d RDMA device%s", v->why, n, n > 1 ? "s" : "");
		gp_finding_fix(f, "install rdma-core's libraries: apt install libibverbs1 ibverbs-providers (dnf install "
			       "libibverbs)");
		n = 0;
	} else if (n && v->list_err) {
		f = gp_doctor_add(c, v->list_err == ENOSYS ? GP_SEV_SKIPPED : GP_SEV_UNKNOWN, "libibverbs",
				  "ibv_get_device_list failed: %s%s", strerror(v->list_err),
				  v->list_err == ENOSYS ? " (no uverbs device: see rdma.uverbs)" : "");
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		char uv[64];
		int nic = gp_doctor_ib_nic(c, names[i]);
		const char *drv = nic >= 0 ? gp_doctor_dev(c, nic)->driver : "";

		uverbs_of(c, names[i], uv, sizeof(uv));
		if (!uv[0])
			f = gp_doctor_add(c, GP_SEV_SKIPPED, names[i], "%s has no uverbs device (see rdma.uverbs)", names[i]);
		else if (gp_verbs_has(v, names[i]))
			f = gp_doctor_add(c, GP_SEV_OK, names[i], "libibverbs lists %s", names[i]);
		else {
			f = gp_doctor_add(c, GP_SEV_WARNING, names[i], "libibverbs does not list %s: no provider library for "
					  "it%s%s%s (applications do not see the device)", names[i], drv[0] ? " (driver " : "",
					  drv, drv[0] ? ")" : "");
			gp_finding_fix(f, "install the providers: apt install ibverbs-providers (dnf install libibverbs); with "
				       "MLNX_OFED/DOCA, its own libibverbs and providers must match");
		}
		if (nic >= 0)
			gp_finding_bdf(f, gp_doctor_dev(c, nic)->bdf);
		gp_finding_ev(f, "ibv_get_device_list", "%d device%s", v->ndev, v->ndev == 1 ? "" : "s");
	}
	gp_root_free_list(names);
}

static const struct gp_doctor_check checks[] = {
	{ "rdma.port", "an RDMA port near a GPU not ACTIVE/LinkUp", GP_SRC_SYSFS, 0, check_port,
	  "Reads /sys/class/infiniband/DEV/ports/N/{state,phys_state,link_layer}. Error when a port is not ACTIVE "
	  "with LinkUp on a NIC within PXB of a GPU (that GPU's GPUDirect RDMA NIC); info when no GPU is near it "
	  "(a front-end or storage NIC) or the device is software RDMA (rxe, siw: no device link). Fix: cable and switch port; INIT with LinkUp means no subnet manager." },
	{ "rdma.errors", "RDMA port error counters rising or high", GP_SRC_SYSFS, 0, gp_doctor_check_rdma_errors,
	  "Reads each port's counters/ (symbol_error, port_rcv_errors, port_rcv_remote_physical_errors, "
	  "local_link_integrity_errors, excessive_buffer_overrun_errors) and hw_counters/ (out_of_sequence, "
	  "packet_seq_err, local_ack_timeout_err, rx_icrc_encapsulated: RoCE's transport) twice, as pcie.replay: "
	  "back to back, with gpup2p doctor --active one second apart. Warning when one rises between the "
	  "reads (naming the port "
	  "and the counters), or when the link errors reach 10 since the counters were cleared; info below that, and "
	  "for transport errors that do not rise (busy fabrics accumulate them). Offline there is one read: lifetime "
	  "values only. Fix: cable and transceiver (ibstat, perfquery -x; reseat, replace), or PFC/ECN for RoCE." },
	{ "rdma.flaps", "an RDMA link that goes down or retrains", GP_SRC_SYSFS, 0, gp_doctor_check_rdma_flaps,
	  "Reads each port's link_downed and link_error_recovery counters twice (as rdma.errors) and its state and "
	  "phys_state. Warning when either rises between the reads (the link flaps now), when the port is ACTIVE but "
	  "its physical link is not LinkUp (retraining now), or when they reach 5 since the counters were cleared; "
	  "info below that (a switch reboot or a cable change counts too). Offline: one read, lifetime values only. "
	  "Fix: cable, transceiver, the switch port's log; reseat, replace." },
	{ "rdma.gid", "a RoCE port without a RoCE v2 GID", GP_SRC_SYSFS, 0, check_gid,
	  "Reads ports/N/link_layer, gid_attrs/types/* and gids/*. Warning when an Ethernet (RoCE) port has no GID "
	  "of type \"RoCE v2\" but for IPv6 link-local addresses (fe80::, which NCCL skips): routed RoCE, NCCL and "
	  "most fabrics' congestion control use v2. Fix: an IP address on the "
	  "interface, cma_roce_mode -m 2. InfiniBand ports: skipped." },
	{ "rdma.rate", "an RDMA port faster than its NIC's PCIe link", GP_SRC_SYSFS, 0, check_rate,
	  "Compares each active port's rate (ports/N/rate, \"400 Gb/sec (4X NDR)\") with its NIC's current PCIe "
	  "link: GT/s x lanes less the line code (8b/10b to Gen2, 128b/130b Gen3-5). Warning when the port can carry "
	  "more than the link (a 400G NIC in a Gen4 x16 slot: 252 Gb/s). Software RDMA (rxe): skipped, its rate is "
	  "the interface's Ethernet speed rounded to an IB rate." },
	{ "rdma.uverbs", "ib_uverbs or /dev/infiniband/uverbsN missing", GP_SRC_PROC | GP_SRC_SYSFS | GP_SRC_DEV, 0,
	  check_uverbs,
	  "Reads /proc/modules (ib_uverbs), /sys/class/infiniband_verbs/uverbsN/ibdev and /dev/infiniband. Error when "
	  "an RDMA device has no uverbs device (ib_uverbs not loaded) or its /dev/infiniband/uverbsN node is missing: "
	  "user space (libibverbs, NCCL, MPI) cannot open the device. Warning when this user cannot open the node." },
	{ "rdma.verbs_lib", "libibverbs or a device's provider library not loadable", GP_SRC_VERBS, 0, check_verbs_lib,
	  "Loads libibverbs.so.1 with dlopen (never linked) and calls ibv_get_device_list: a device is listed only "
	  "when its provider library (libmlx5, libbnxt_re, ...) was found. Warning when the library is missing or "
	  "does not list a device. Live only." },
	{ "rdma.gdr", "whether GPUDirect RDMA is possible for each GPU-NIC pair", GP_SRC_PROC | GP_SRC_SYSFS |
	  GP_SRC_OPT(GP_SRC_CUDA | GP_SRC_VERBS), 0,
	  gp_doctor_check_gdr,
	  "NCCL's rules (ncclTopoCheckGdr) per GPU and RDMA device: the NIC reaches GPU memory through dma-buf "
	  "(preferred by NCCL) or nvidia-peermem (the parts peermem.missing and peermem.dmabuf read), the GPU "
	  "supports it (live: CUDA's GPU_DIRECT_RDMA_SUPPORTED; offline: no GeForce by NVML's recorded name), the "
	  "pair is within NCCL_NET_GDR_LEVEL's default PXB, or NCCL's PXN can send through an NVLinked GPU "
	  "within PXB; software RDMA (rxe, siw) never is. "
	  "dma-buf counts as usable when the module, kernel, CUDA and libibverbs parts are there: whether the "
	  "NIC's driver takes a dma-buf registration shows in `bench rdma --mem gpu`. Ok for a possible pair, and "
	  "for the other pairs of a GPU that has one. Info for a GPU's closest NIC when the GPU has none (naming "
	  "peermem.missing or topo.nic_distance, which carry the warning), and when NCCL's reads default off "
	  "(compute capability below 8.0 without NVLink). Warning, on its closest NIC, when CUDA says a GPU near "
	  "its NIC has no GPUDirect RDMA; unknown, likewise once per GPU." },
};

/* what gp_doctor_verbs probed (for this family and peermem) and the ports' counters (rdma.errors,
 * rdma.flaps) */
static void rdma_cleanup(struct gp_doctor_ctx *c)
{
	free(c->verbs_probe);
	c->verbs_probe = NULL;
	gp_doctor_rdma_counters_free(c);
	gp_doctor_ib_free(c);
}

GP_DOCTOR_FAMILY_CLEANUP(gp_doctor_fam_rdma, "rdma", "RDMA devices and ports", checks, rdma_cleanup);
