/* Unit tests: the PCI model on fixture trees (real capture, synthetic, non-root, broken). */
#include <errno.h>

#include "gpup2p/pci.h"
#include "unit.h"

static int scan(const char *name, struct gp_root *r, struct gp_pci *p, struct gp_err *e)
{
	memset(e, 0, sizeof(*e));
	if (gp_root_init(r, unit_fixture(name), e))
		return -1;
	return gp_pci_scan(p, r, e);
}

int main(void)
{
	static struct gp_pci p;
	struct gp_root r;
	struct gp_err e;
	char bdf[GP_BDF_LEN];
	const struct gp_pci_dev *d;

	CHECK(gp_pci_parse_bdf("00:06.0", bdf) == 0 && !strcmp(bdf, "0000:00:06.0"), "short BDF");
	CHECK(gp_pci_parse_bdf("00000000:00:07.0", bdf) == 0 && !strcmp(bdf, "0000:00:07.0"), "NVML 8-digit domain");
	CHECK(gp_pci_parse_bdf("0000:00:20.0", bdf) < 0, "device 0x20 rejected");
	CHECK(gp_pci_parse_bdf("0000:00:01.8", bdf) < 0, "function 8 rejected");
	CHECK(gp_pci_parse_bdf("banana", bdf) < 0, "garbage rejected");
	CHECK(gp_pci_parse_bdf("0000:00:01.0x", bdf) < 0, "trailing junk rejected");
	CHECK(gp_pci_gen(32.0) == 5 && gp_pci_gen(2.5) == 1 && gp_pci_gen(0) == 0, "gen from GT/s");

	/* the real H200 capture */
	CHECK(scan("h200x2", &r, &p, &e) == 0, "h200x2 scans (%s)", e.msg);
	CHECK(p.n == 8, "8 functions");
	d = gp_pci_find(&p, "0000:00:06.0");
	CHECK(d && d->vendor == 0x10de && d->device == 0x2335 && d->class_code == 0x030200, "GPU ids and class");
	CHECK(d && d->bars[2].size == 256ULL << 30 && d->bars[2].is_64 && d->bars[2].prefetch, "BAR2: 256G 64-bit pf");
	CHECK(d && d->bars[0].size == 16 << 20 && d->bars[4].size == 32 << 20, "BAR0 16M, BAR4 32M");
	CHECK(d && d->numa_node == -1 && !strcmp(d->cpulist, "0-31"), "numa -1, cpus 0-31");
	CHECK(d && d->cur_gts == 32.0 && d->cur_width == 16 && d->max_width == 16, "Gen5 x16");
	CHECK(d && !strcmp(d->driver, "nvidia") && !strcmp(d->host_bridge, "pci0000:00") && d->chain_len == 0,
	      "driver, host bridge, flat");
	CHECK(d && d->config_len == 4096 && d->ext_known && d->port_type == GP_PORT_ENDPOINT, "full config, endpoint");
	d = gp_pci_find(&p, "0000:00:03.0");
	CHECK(d && d->config_len == 256 && d->pcie_cap == 0 && d->ext_known && d->acs_cap == 0,
	      "virtio (conventional PCI, 256 bytes): no extended space, ACS absent not unknown");
	gp_pci_free(&p);

	/* synthetic: capabilities, chain */
	CHECK(scan("seed4x2", &r, &p, &e) == 0, "seed4x2 scans (%s)", e.msg);
	d = gp_pci_find(&p, "0000:86:00.0");
	CHECK(d && d->chain_len == 5 && !strcmp(d->chain[4], "0000:85:04.0"), "chain of 5 bridges");
	CHECK(d && d->parent == gp_pci_index(&p, "0000:85:04.0"), "parent index");
	d = gp_pci_find(&p, "0000:82:08.0");
	CHECK(d && d->is_bridge && d->port_type == GP_PORT_DOWNSTREAM && d->acs_cap > 0, "downstream port with ACS");
	CHECK(d && gp_pci_cfg_read(d, d->acs_cap + 6, 2) == 0x1d, "ACS control read back 0x001d");
	d = gp_pci_find(&p, "0000:02:00.1");
	CHECK(d && !strcmp(d->rdma, "mlx5_1") && !strcmp(d->netdev, "ib1"), "RDMA and net names");
	gp_pci_free(&p);

	/* non-root: 64-byte config spaces make extended capabilities unknown */
	CHECK(scan("nonroot", &r, &p, &e) == 0, "nonroot scans (%s)", e.msg);
	d = gp_pci_find(&p, "0000:02:08.0");
	CHECK(d && d->config_len == 64 && d->acs_cap == -1 && d->rebar_cap == -1 && !d->ext_known,
	      "64-byte config: ACS/ReBAR unknown, never absent");
	CHECK(d && d->port_type == GP_PORT_UNKNOWN, "port type unknown");
	CHECK(d && d->iommu_group == 2, "iommu group from the link");
	gp_pci_free(&p);

	/* broken files */
	CHECK(scan("broken-vendor", &r, &p, &e) < 0 && e.cls == GP_E_DATA && strstr(e.msg, "0000:01:00.0/vendor"),
	      "missing vendor: data error naming the file");
	CHECK(scan("broken-resource", &r, &p, &e) < 0 && e.cls == GP_E_DATA && strstr(e.msg, "resource: malformed"),
	      "malformed resource: data error naming the file");
	CHECK(scan("broken-optional", &r, &p, &e) == 0, "broken optional files still scan");
	CHECK(p.nwarn == 2, "two warnings (numa_node, link speed), got %d", p.nwarn);
	CHECK(p.nwarn >= 1 && strstr(p.warnings[0], "numa_node"), "warning names numa_node");
	d = gp_pci_find(&p, "0000:01:00.0");
	CHECK(d && d->numa_node == -1, "malformed numa_node is unknown");
	d = gp_pci_find(&p, "0000:02:00.0");
	CHECK(d && d->cpulist[0] == '\0' && d->cur_gts == 0, "missing cpulist, bad speed: unknown");
	gp_pci_free(&p);

	memset(&e, 0, sizeof(e));
	CHECK(gp_root_init(&r, "/nonexistent-gpup2p-root", &e) < 0 && e.cls == GP_E_UNAVAIL, "nonexistent root: unavailable");
	CHECK(gp_root_init(&r, "/proc/self/status", &e) < 0 && e.cls == GP_E_UNAVAIL, "root that is a file: unavailable");
	return unit_done();
}
