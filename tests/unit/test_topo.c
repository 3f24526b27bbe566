/* Unit tests: device selection and pair classification on fixture trees. The expected
 * codes are written by hand from each spec's topology and nvidia-smi's legend. */
#include "gpup2p/topo.h"
#include "fx.h"

static int load(struct fx *x, const char *name, const struct gp_topo_match *m, int nm)
{
	return fx_load(x, unit_fixture(name), m, nm, 0);
}

/* Compare the whole matrix with rows of space-separated codes. */
static void check_matrix(const char *name, const char *const *rows, int n)
{
	static struct fx x;
	char code[16], line[512];

	if (load(&x, name, NULL, 0))
		return; /* counted as a failure by fx_load */
	CHECK(x.t.n == n, "%s: %d devices selected (got %d)", name, n, x.t.n);
	for (int i = 0; i < x.t.n && i < n; i++) {
		size_t used = 0;

		line[0] = '\0';
		for (int j = 0; j < x.t.n; j++)
			used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s", j ? " " : "",
						 gp_topo_code_at(&x.t, i, j, code, sizeof(code)));
		CHECK_STR(line, rows[i], "%s: row %s", name, x.t.devs[i].name);
	}
	fx_unload(&x);
}

/* NVLink facts from what NVML reported, without NVML: a direct link counted once for its pair,
 * switch links joining every GPU that has some (the smaller count), an unnamed end taken for a switch. */
static void check_nvml_facts(void)
{
	static struct gp_gpu_nvml raw;
	static struct gp_gpu_facts f;
	struct gp_gpu_nvml_gpu *a = &raw.gpus[0], *b = &raw.gpus[1], *c = &raw.gpus[2];

	memset(&raw, 0, sizeof(raw));
	raw.available = 1;
	raw.n = 3;
	snprintf(raw.driver, sizeof(raw.driver), "580.1");
	snprintf(a->info.bdf, GP_BDF_LEN, "0000:01:00.0");
	snprintf(b->info.bdf, GP_BDF_LEN, "0000:02:00.0");
	snprintf(c->info.bdf, GP_BDF_LEN, "10000:e5:00.0");
	snprintf(a->info.name, sizeof(a->info.name), "GPU A");
	for (int l = 0; l < 8; l++) { /* A and B: 2 links to each other, 6 to switches */
		snprintf(a->links[l].remote, GP_BDF_LEN, "%s", l < 2 ? "0000:02:00.0" : "");
		a->links[l].type = l < 2 ? GP_NVLINK_REMOTE_GPU : GP_NVLINK_REMOTE_SWITCH;
		snprintf(b->links[l].remote, GP_BDF_LEN, "%s", l < 2 ? "0000:01:00.0" : "");
		b->links[l].type = l < 2 ? GP_NVLINK_REMOTE_GPU : GP_NVLINK_REMOTE_SWITCH;
	}
	a->nlinks = b->nlinks = 8;
	for (int l = 0; l < 5; l++) { /* C: 4 links of unknown type to an unnamed end, 1 to a GPU NVML did not list */
		snprintf(c->links[l].remote, GP_BDF_LEN, "%s", l < 4 ? "" : "0000:09:00.0");
		c->links[l].type = l < 4 ? GP_NVLINK_REMOTE_UNKNOWN : GP_NVLINK_REMOTE_GPU;
	}
	c->nlinks = 5;
	gp_gpu_facts_from_nvml(&raw, &f);
	CHECK(f.available && f.n == 3 && !strcmp(f.driver, "580.1") && !strcmp(f.gpus[0].name, "GPU A"), "NVML facts: GPUs");
	CHECK(f.gpus[0].switch_links == 6 && f.gpus[1].switch_links == 6 && f.gpus[2].switch_links == 5,
	      "switch links 6, 6, 5");
	CHECK(gp_gpu_nvlinks(&f, "0000:01:00.0", "0000:02:00.0") == 8, "A-B: 2 direct + 6 through switches = NV8");
	CHECK(gp_gpu_nvlinks(&f, "0000:02:00.0", "10000:e5:00.0") == 5 && gp_gpu_nvlinks(&f, "10000:e5:00.0", "0000:01:00.0") == 5,
	      "B-C and C-A: the smaller switch count, NV5");
	CHECK(f.gpus[0].nvl_peer_down == 0 && f.gpus[1].nvl_peer_down == 0, "both ends of A-B up: no peer down");
	b->links[1].type = GP_NVLINK_REMOTE_SWITCH; /* B's end of its second link to A is not up towards A */
	gp_gpu_facts_from_nvml(&raw, &f);
	CHECK(f.gpus[1].nvl_peer_down == 1 && f.gpus[0].nvl_peer_down == 0, "A has 2 links up to B, B 1 to A: "
	      "one down on B's end (%d, %d)", f.gpus[1].nvl_peer_down, f.gpus[0].nvl_peer_down);
	b->links[1].type = GP_NVLINK_REMOTE_GPU;
	raw.available = 0;
	snprintf(raw.why, sizeof(raw.why), "libnvidia-ml.so.1 not found");
	gp_gpu_facts_from_nvml(&raw, &f);
	CHECK(!f.available && f.n == 0 && !strcmp(f.why, "libnvidia-ml.so.1 not found"), "NVML unavailable: why kept");
}

int main(void)
{
	struct gp_topo_match m;
	static struct fx x;

	CHECK(gp_topo_parse_match("1af4:1110", &m) == 0 && m.vendor == 0x1af4 && m.device == 0x1110, "parse match");
	CHECK(gp_topo_parse_match("15b3:*", &m) == 0 && m.device == GP_TOPO_ANY_DEVICE, "parse match wildcard");
	CHECK(gp_topo_parse_match("zz:1", &m) < 0, "reject bad match");
	CHECK(gp_topo_parse_match("10de:23300", &m) < 0, "reject long device id");
	CHECK(gp_topo_parse_match("10de", &m) < 0, "reject vendor only");

	/* 1. real 2x H200: flat, NVLink from recorded NVML facts (nvidia-smi: NV18) */
	check_matrix("h200x2", (const char *const[]){ "X NV18", "NV18 X" }, 2);

	/* 2. DGX-H100-like: 4 host bridges (2 per socket), one switch each holding 2 GPUs + 2 NICs,
	 *    NVSwitch joins all GPUs (NV18). GPU-NIC on one switch: PIX; other host bridge on the
	 *    same socket: NODE; other socket: SYS. */
	{
		const char *rows[] = {
			"X NV18 NV18 NV18 NV18 NV18 NV18 NV18 PIX PIX NODE NODE SYS SYS SYS SYS",
			"NV18 X NV18 NV18 NV18 NV18 NV18 NV18 PIX PIX NODE NODE SYS SYS SYS SYS",
			"NV18 NV18 X NV18 NV18 NV18 NV18 NV18 NODE NODE PIX PIX SYS SYS SYS SYS",
			"NV18 NV18 NV18 X NV18 NV18 NV18 NV18 NODE NODE PIX PIX SYS SYS SYS SYS",
			"NV18 NV18 NV18 NV18 X NV18 NV18 NV18 SYS SYS SYS SYS PIX PIX NODE NODE",
			"NV18 NV18 NV18 NV18 NV18 X NV18 NV18 SYS SYS SYS SYS PIX PIX NODE NODE",
			"NV18 NV18 NV18 NV18 NV18 NV18 X NV18 SYS SYS SYS SYS NODE NODE PIX PIX",
			"NV18 NV18 NV18 NV18 NV18 NV18 NV18 X SYS SYS SYS SYS NODE NODE PIX PIX",
			"PIX PIX NODE NODE SYS SYS SYS SYS X PIX NODE NODE SYS SYS SYS SYS",
			"PIX PIX NODE NODE SYS SYS SYS SYS PIX X NODE NODE SYS SYS SYS SYS",
			"NODE NODE PIX PIX SYS SYS SYS SYS NODE NODE X PIX SYS SYS SYS SYS",
			"NODE NODE PIX PIX SYS SYS SYS SYS NODE NODE PIX X SYS SYS SYS SYS",
			"SYS SYS SYS SYS PIX PIX NODE NODE SYS SYS SYS SYS X PIX NODE NODE",
			"SYS SYS SYS SYS PIX PIX NODE NODE SYS SYS SYS SYS PIX X NODE NODE",
			"SYS SYS SYS SYS NODE NODE PIX PIX SYS SYS SYS SYS NODE NODE X PIX",
			"SYS SYS SYS SYS NODE NODE PIX PIX SYS SYS SYS SYS NODE NODE PIX X",
		};
		check_matrix("dgx-h100", rows, 16);
	}
	/* 3. seed-like: GPU0 + the NIC's two functions on socket 0 (different root ports: PHB; the two
	 *    functions share one root port: PIX); GPU1 on switch A, GPU2/GPU3 behind switch B below
	 *    switch A (GPU2-GPU3 PIX, GPU1-GPU2/3 PXB); sockets apart: SYS. */
	{
		const char *rows[] = {
			"X SYS SYS SYS PHB PHB", "SYS X PXB PXB SYS SYS", "SYS PXB X PIX SYS SYS",
			"SYS PXB PIX X SYS SYS", "PHB SYS SYS SYS X PIX", "PHB SYS SYS SYS PIX X",
		};
		check_matrix("seed4x2", rows, 6);
	}
	/* 4. EPYC: 6 GPUs, each on its own root port; 4 host bridges on one NUMA node. GPU0/1 share
	 *    host bridge 00 and GPU2/3 share 40 (PHB); everything else crosses host bridges (NODE).
	 *    The HDA audio function of GPU0 is not a GPU. */
	{
		const char *rows[] = {
			"X PHB NODE NODE NODE NODE", "PHB X NODE NODE NODE NODE", "NODE NODE X PHB NODE NODE",
			"NODE NODE PHB X NODE NODE", "NODE NODE NODE NODE X NODE", "NODE NODE NODE NODE NODE X",
		};
		check_matrix("epyc6", rows, 6);
	}
	/* 5. workstation: two GPUs on two downstream ports of one switch: PIX. */
	check_matrix("workstation", (const char *const[]){ "X PIX", "PIX X" }, 2);
	/* 6. non-root view: same tree, no config space beyond 64 bytes, still PIX. */
	check_matrix("nonroot", (const char *const[]){ "X PIX", "PIX X" }, 2);

	/* selection details */
	if (load(&x, "seed4x2", NULL, 0) == 0) {
		CHECK_STR(x.t.devs[4].label, "mlx5_0", "NIC label is the RDMA device");
		CHECK(x.t.ngpu == 4 && x.t.nnic == 2, "seed4x2: 4 GPUs, 2 NICs");
		CHECK(!x.t.nvlink_checked, "seed4x2: no facts, NVLink not checked");
		CHECK(gp_topo_link_at(&x.t, 1, 2).nvlinks == -1, "unchecked NVLink is -1");
		CHECK(gp_topo_on_path(&x.t, gp_pci_index(&x.p, "0000:84:00.0")), "second switch is on a GPU path");
		CHECK(gp_topo_link_degraded(&x.p.devs[gp_pci_index(&x.p, "0000:86:00.0")]), "x8 of x16 is degraded");
		CHECK(!gp_topo_link_degraded(&x.p.devs[gp_pci_index(&x.p, "0000:87:00.0")]), "x16 of x16 is not");
		CHECK(gp_topo_host_bridge_numa(&x.p, "pci0000:80") == 1, "host bridge NUMA");
		fx_unload(&x);
	}
	if (load(&x, "h200x2", NULL, 0) == 0) {
		CHECK(x.t.nvlink_checked, "h200x2: facts recorded");
		CHECK(x.t.nnic == 0, "virtio-net without RDMA is not a NIC");
		CHECK(gp_topo_link_at(&x.t, 0, 1).pcie == GP_TC_PHB, "H200 pair's PCIe class is PHB under NV18");
		fx_unload(&x);
	}
	/* 7. Intel VMD (domain 10000 below the controller 0000:00:0e.0 on host bridge pci0000:00). In
	 *    order: GPU0 0000:01:00.0, GPU1 10000:e5:00.0 (switch in the VMD domain), NIC0 mlx5_0 (same
	 *    switch: PIX), NIC1 mlx5_1 (another VMD root port: the pair parts at the VMD controller,
	 *    whose domain is a host bridge of its own: PHB, not PXB), NIC2 mlx5_2 (socket 1: SYS). */
	{
		const char *rows[] = {
			"X PHB PHB PHB SYS", "PHB X PIX PHB SYS", "PHB PIX X PHB SYS", "PHB PHB PHB X SYS",
			"SYS SYS SYS SYS X",
		};
		check_matrix("vmd", rows, 5);
	}
	/* 8. NICs numbered by RDMA name, numbers as numbers, as nvidia-smi does; mlx5_2 on a root port of
	 *    its own (PHB), the NIC without an RDMA device last. */
	{
		const char *rows[] = {
			"X PHB PIX PIX PIX PIX", "PHB X PHB PHB PHB PHB", "PIX PHB X PIX PIX PIX",
			"PIX PHB PIX X PIX PIX", "PIX PHB PIX PIX X PIX", "PIX PHB PIX PIX PIX X",
		};
		check_matrix("nicorder", rows, 6);
	}
	if (load(&x, "nicorder", NULL, 0) == 0) {
		static const char *const want[][2] = { { "mlx5_2", "0000:05:00.0" }, { "mlx5_3", "0000:04:00.0" },
						       { "mlx5_10", "0000:04:00.1" }, { "mlx5_bond_0", "0000:07:00.0" },
						       { "ens6np0", "0000:06:00.0" } };

		for (int k = 0; k < 5 && x.t.n == 6; k++) {
			CHECK_STR(x.t.devs[1 + k].label, want[k][0], "nicorder: NIC%d's name", k);
			CHECK_STR(x.p.devs[x.t.devs[1 + k].pci].bdf, want[k][1], "nicorder: NIC%d's address", k);
		}
		fx_unload(&x);
	}
	CHECK(gp_topo_name_cmp("mlx5_2", "mlx5_10") < 0 && gp_topo_name_cmp("mlx5_10", "mlx5_9") > 0, "mlx5_2 < mlx5_9 < mlx5_10");
	CHECK(gp_topo_name_cmp("mlx5_33", "mlx5_bond_1") < 0 && gp_topo_name_cmp("mlx5_bond_2", "mlx5_bond_10") < 0,
	      "numbered before bonds, bonds by number");
	CHECK(gp_topo_name_cmp("mlx5_1", "mlx5_1") == 0 && gp_topo_name_cmp("mlx5_1", "mlx5_1a") < 0 &&
	      gp_topo_name_cmp("ibp2s0", "mlx5_0") < 0, "equal, prefix, letters");
	if (load(&x, "vmd", NULL, 0) == 0) {
		const struct gp_topo_dev *td = gp_topo_find(&x.t, gp_pci_index(&x.p, "10000:e1:00.0"));

		CHECK(td && !strcmp(td->name, "NIC1") && !strcmp(td->label, "mlx5_1"), "VMD NIC found by its PCI index");
		CHECK(gp_topo_find(&x.t, gp_pci_index(&x.p, "10000:e2:00.0")) == NULL, "the NVMe drive is neither GPU nor NIC");
		CHECK(gp_topo_on_path(&x.t, gp_pci_index(&x.p, "0000:00:0e.0")), "the VMD controller is on GPU/NIC paths");
		CHECK(!gp_topo_on_path(&x.t, gp_pci_index(&x.p, "10000:e0:03.0")), "the NVMe's root port is not");
		CHECK(gp_topo_link_at(&x.t, 1, 3).pcie == GP_TC_PHB && gp_topo_link_at(&x.t, 3, 1).pcie == GP_TC_PHB,
		      "GPU1-NIC1 parts at the VMD controller: PHB both ways");
		fx_unload(&x);
	}
	m.vendor = 0x144d;
	m.device = 0xa80a;
	if (load(&x, "vmd", &m, 1) == 0) {
		CHECK(x.t.ngpu == 4 && x.t.devs[1].pci == gp_pci_index(&x.p, "c05b:00:00.0") &&
		      x.t.devs[2].pci == gp_pci_index(&x.p, "10000:e2:00.0"),
		      "--match 144d:a80a: NVMe drives as GPU1 (segment c05b) and GPU2 (behind VMD): numeric bus order");
		fx_unload(&x);
	}
	check_nvml_facts();

	/* a listing for people folds a PF's VFs into its row (sriov.spec: NIC0 04:00.0 with 6 VFs, NIC1
	 * 04:00.1 with 2, NIC2 84:00.0 with 3); VFs listed without their PF stay on their own */
	if (load(&x, "sriov", NULL, 0) == 0) {
		int in[32], vfs[32], pos[32], n = 0, nic0 = -1, vf = -1, ok = 1;
		char name[48];

		for (int i = 0; i < 32; i++)
			pos[i] = -1;
		for (int i = 0; i < x.t.n && i < 31; i++)
			in[n++] = i;
		in[n++] = -1; /* an item that is no GPU/NIC */
		for (int i = 0; i < x.t.n; i++) {
			nic0 = !strcmp(x.t.devs[i].name, "NIC0") ? i : nic0;
			vf = x.t.devs[i].pci == gp_pci_index(&x.p, "0000:04:00.3") ? i : vf;
		}
		gp_topo_fold_vfs(&x.t, in, n, vfs, pos);
		for (int i = 0; i < 32; i++)
			ok &= pos[i] == -1;
		CHECK(nic0 >= 0 && vf >= 0 && vfs[nic0] == 6 && vfs[vf] == -1 - nic0 && vfs[n - 1] == 0 && ok,
		      "fold: NIC0 carries its 6 VFs, 04:00.3 points at NIC0's item, pos left all -1");
		CHECK_STR(gp_topo_vfs_name(&x.t, nic0, vfs[nic0], name, sizeof(name)), "NIC0+6VFs", "fold: the row's name");
		CHECK_STR(gp_topo_vfs_name(&x.t, nic0, 1, name, sizeof(name)), "NIC0+1VF", "one VF: singular");
		in[nic0] = -1; /* NIC0 not listed: its VFs stand alone */
		gp_topo_fold_vfs(&x.t, in, n, vfs, pos);
		CHECK(vfs[vf] == 0, "fold: VFs without their PF in the listing are their own rows");
		fx_unload(&x);
	}

	m.vendor = 0x1af4;
	m.device = 0x1042;
	if (load(&x, "h200x2", &m, 1) == 0) {
		CHECK(x.t.ngpu == 4 && x.t.n == 4, "--match 1af4:1042 adds the two virtio disks as GPUs");
		CHECK_STR(x.t.devs[0].name, "GPU0", "numbering in bus order");
		CHECK(x.t.devs[0].pci == gp_pci_index(&x.p, "0000:00:01.0"), "GPU0 is the first matched function");
		fx_unload(&x);
	}
	return unit_done();
}
