/* Unit tests: the PCI model on fixture trees (real capture, synthetic, non-root, broken). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "gpup2p/pci.h"
#include "unit.h"

static int scan(const char *name, struct gp_root *r, struct gp_pci *p, struct gp_err *e)
{
	memset(e, 0, sizeof(*e));
	if (gp_root_init(r, unit_fixture(name), e))
		return -1;
	return gp_pci_scan(p, r, e);
}

/* What libpci itself refuses, on copies of h200x2: its error jumps back into gp_pci_scan, which must
 * free what libpci had built (run under LeakSanitizer by make check-asan). */
static void libpci_errors(void)
{
	static const struct { const char *what, *cmd, *msg; } cases[] = {
		{ "sys/bus/pci/devices a file", "rm -r \"$R/sys/bus/pci/devices\" && touch \"$R/sys/bus/pci/devices\"",
		  "libpci: Cannot open" },
		{ "a resource file's second line malformed",
		  "sed -i '2s/.*/garbage/' \"$(readlink -f \"$R/sys/bus/pci/devices/0000:00:06.0\")/resource\"",
		  "resource" },
	};
	char top[] = "/tmp/gpup2p-test-pci-XXXXXX", cmd[2048];

	if (!mkdtemp(top)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct gp_pci p;
		struct gp_root r;
		struct gp_err e = { 0 };
		char root[600];
		int rc = -1;

		snprintf(root, sizeof(root), "%s/r%zu", top, i);
		snprintf(cmd, sizeof(cmd), "R='%s' && cp -a '%s' \"$R\" && %s", root, unit_fixture("h200x2"), cases[i].cmd);
		if (system(cmd) == 0 && gp_root_init(&r, root, &e) == 0)
			rc = gp_pci_scan(&p, &r, &e);
		CHECK(rc < 0 && e.cls == GP_E_DATA && strstr(e.msg, cases[i].msg) && !p.pacc && !p.devs && !p.n,
		      "%s: data error (%s), nothing left to free", cases[i].what, e.msg);
		gp_pci_free(&p);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", top);
}

/* gp_pci_scan_each: each function handed on once, in order, with its folder open and listed and the
 * files the scan read whole as they are on disk; a nonzero answer stops the calls, not the scan. */
struct each {
	int calls, stop_at, order, same, kept, links;
};

static int each_fn(const struct gp_pci *p, int i, const struct gp_pci_fn *f, void *arg)
{
	static const char *const files[] = { "vendor", "device", "class", "resource", "config", "numa_node",
					     "local_cpulist", "subsystem_vendor" };
	struct each *x = arg;
	const struct gp_root_dir *d = gp_pci_fn_dir(f);
	const char *data, *text;
	char *want = NULL, link[GP_PATH_MAX];
	ssize_t n;
	size_t len;

	x->order &= i == x->calls && d->fd >= 0 && d->n > 0;
	x->calls++;
	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		if (!(data = gp_pci_fn_file(f, files[k], &len)))
			continue;
		x->kept++;
		n = gp_root_read_listed(p->root, d->fd, d->path, files[k], &want, 1 << 20);
		x->same &= n == (ssize_t)len && !memcmp(want, data, len);
		free(want);
		want = NULL;
	}
	x->same &= gp_pci_fn_file(f, "vendor", NULL) && gp_pci_fn_file(f, "config", NULL) &&
		   !gp_pci_fn_file(f, "revision", NULL);
	if ((text = gp_pci_fn_link(f, "driver"))) {
		n = readlinkat(d->fd, "driver", link, sizeof(link) - 1);
		x->same &= n > 0 && (size_t)n == strlen(text) && !strncmp(link, text, (size_t)n);
		x->links++;
	}
	return x->calls == x->stop_at;
}

static void scan_each(void)
{
	static struct gp_pci p;
	struct each x = { .order = 1, .same = 1 }, y = { .order = 1, .same = 1, .stop_at = 3 };
	struct gp_root r;
	struct gp_err e = { 0 };

	CHECK(gp_root_init(&r, unit_fixture("h200x2"), &e) == 0 && gp_pci_scan_each(&p, &r, each_fn, &x, &e) == 0,
	      "scan_each: h200x2 scanned (%s)", e.msg);
	CHECK(x.calls == p.n && p.n > 0 && x.order, "scan_each: each of the %d functions once, in order, open and "
	      "listed (%d calls)", p.n, x.calls);
	CHECK(x.same && x.kept >= 5 * p.n && x.links > 0, "scan_each: the files and links kept are as on disk (%d "
	      "files, %d links)", x.kept, x.links);
	gp_pci_free(&p);
	CHECK(gp_pci_scan_each(&p, &r, each_fn, &y, &e) == 0 && y.calls == 3 && p.n > 3,
	      "scan_each: a nonzero answer stops the calls, the scan goes on (%d calls, %d functions)", y.calls, p.n);
	gp_pci_free(&p);
	memset(&y, 0, sizeof(y));
	CHECK(gp_root_init(&r, unit_fixture("broken-vendor"), &e) == 0 &&
	      gp_pci_scan_each(&p, &r, each_fn, &y, &e) < 0 && e.cls == GP_E_DATA,
	      "scan_each: the scan's error is its answer (%d calls before it)", y.calls);
	gp_pci_free(&p);
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
	/* domains above 0xffff (Intel VMD), as sysfs and lspci print them: at least 4 digits */
	CHECK(gp_pci_parse_bdf("10000:e1:00.0", bdf) == 0 && !strcmp(bdf, "10000:e1:00.0"), "VMD domain 10000");
	CHECK(gp_pci_parse_bdf("00010000:E1:00.0", bdf) == 0 && !strcmp(bdf, "10000:e1:00.0"), "NVML's 8 digits of 10000");
	CHECK(gp_pci_parse_bdf("7fffffff:ff:1f.7", bdf) == 0 && !strcmp(bdf, "7fffffff:ff:1f.7"), "largest domain libpci takes");
	CHECK(gp_pci_parse_bdf("80000000:00:00.0", bdf) < 0, "domain beyond libpci's int rejected");
	CHECK(gp_pci_parse_bdf("100000000:00:00.0", bdf) < 0, "9-digit domain rejected");
	CHECK(gp_pci_parse_bdf("0000:100:00.0", bdf) < 0 && gp_pci_parse_bdf("0000:00:000.0", bdf) < 0 &&
	      gp_pci_parse_bdf("0000:00:00.00", bdf) < 0, "3-digit bus, device, 2-digit function rejected");
	CHECK(gp_pci_parse_bdf(":00:00.0", bdf) < 0 && gp_pci_parse_bdf("0000:00:00.", bdf) < 0 &&
	      gp_pci_parse_bdf("0:0:0:0.0", bdf) < 0 && gp_pci_parse_bdf("", bdf) < 0, "empty fields rejected");
	{
		struct gp_pci_addr x = { 0xffff, 0xff, 0x1f, 7 }, y = { 0x10000, 0, 0, 0 };

		CHECK(gp_pci_addr_cmp(&x, &y) < 0 && gp_pci_addr_cmp(&y, &x) > 0 && gp_pci_addr_cmp(&x, &x) == 0,
		      "domain ffff before 10000 (numbers, not strings)");
	}
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

	/* Intel VMD: domain 10000 below the VMD controller 0000:00:0e.0 */
	CHECK(scan("vmd", &r, &p, &e) == 0, "vmd scans (%s)", e.msg);
	CHECK(p.n == 16, "16 functions, got %d", p.n);
	CHECK(p.n == 16 && !strcmp(p.devs[4].bdf, "0000:81:00.0") && !strcmp(p.devs[5].bdf, "c05b:00:00.0") &&
	      !strcmp(p.devs[6].bdf, "10000:e0:02.0") && !strcmp(p.devs[15].bdf, "10000:e6:00.0"),
	      "address order as numbers: 0000, c05b, then 10000");
	CHECK(gp_pci_index(&p, "c05b:00:00.0") == 5 && gp_pci_index(&p, "10000:e6:00.0") == 15, "found by address");
	d = gp_pci_find(&p, "10000:e1:00.0");
	CHECK(d && d->domain == 0x10000 && d->bus == 0xe1 && d->vendor == 0x15b3 && !strcmp(d->rdma, "mlx5_1") &&
	      !strcmp(d->netdev, "ens1np0"), "VMD NIC: address, ids, RDMA and net names");
	CHECK(d && !strcmp(d->host_bridge, "pci0000:00") && d->chain_len == 2 && !strcmp(d->chain[0], "0000:00:0e.0") &&
	      !strcmp(d->chain[1], "10000:e0:02.0"), "path through the VMD controller to host bridge pci0000:00");
	CHECK(d && d->domain_below == 1u, "the VMD controller (chain[0]) hosts a domain");
	CHECK(d && d->parent == gp_pci_index(&p, "10000:e0:02.0") && d->chain_idx[0] == gp_pci_index(&p, "0000:00:0e.0"),
	      "parent and chain indices");
	d = gp_pci_find(&p, "10000:e0:02.0");
	CHECK(d && d->parent == gp_pci_index(&p, "0000:00:0e.0") && d->port_type == GP_PORT_ROOT && d->acs_cap > 0,
	      "VMD root port: parent is the controller, ACS readable");
	d = gp_pci_find(&p, "10000:e6:00.0");
	CHECK(d && d->chain_len == 4 && d->domain_below == 1u && !strcmp(d->chain[3], "10000:e4:01.0"),
	      "behind a switch in the VMD domain");
	d = gp_pci_find(&p, "0000:01:00.0");
	CHECK(d && d->domain_below == 0 && d->chain_len == 1, "outside VMD: no domain below");
	CHECK(gp_pci_find(&p, "00010000:e5:00.0") == &p.devs[gp_pci_index(&p, "10000:e5:00.0")], "found by NVML's form");
	CHECK(gp_pci_index(&p, "0000:e5:00.0") < 0 && gp_pci_index(&p, "e5:00.0") < 0, "not found in domain 0000");
	gp_pci_free(&p);

	memset(&e, 0, sizeof(e));
	CHECK(gp_root_init(&r, "/nonexistent-gpup2p-root", &e) < 0 && e.cls == GP_E_UNAVAIL, "nonexistent root: unavailable");
	CHECK(gp_root_init(&r, "/proc/self/status", &e) < 0 && e.cls == GP_E_UNAVAIL, "root that is a file: unavailable");
	libpci_errors();
	scan_each();
	return unit_done();
}
