/* Unit tests: the scan reads ids, class, subsystem ids and BARs itself, as libpci 3.9's sysfs method
 * reads them; here libpci's own pass (pci_scan_bus, pci_fill_info) runs on the same trees, real ones
 * and copies of h200x2 with odd files, and the two must agree: the same values, or the same error. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>

#include <pci/pci.h>

#include "gpup2p/pci.h"
#include "unit.h"

static jmp_buf lp_jb;
static char lp_msg[512];

static __attribute__((noreturn)) void lp_error(char *msg, ...)
{
	va_list ap;

	va_start(ap, msg);
	vsnprintf(lp_msg, sizeof(lp_msg), msg, ap);
	va_end(ap);
	longjmp(lp_jb, 1);
}

static void lp_quiet(char *msg, ...)
{
	(void)msg;
}

/* libpci's pass over root compared with gp_pci_scan's: "" when they agree, else what differs. */
static const char *compare(const char *root, char *why, size_t n)
{
	static struct gp_pci p;
	struct pci_access *volatile a = pci_alloc();
	struct gp_root r;
	struct gp_err e = { 0 };
	char sysfs[4096];
	int rc, fields = PCI_FILL_IDENT | PCI_FILL_CLASS | PCI_FILL_BASES | PCI_FILL_SIZES | PCI_FILL_IO_FLAGS |
			 PCI_FILL_CAPS | PCI_FILL_EXT_CAPS | PCI_FILL_SUBSYS;

	why[0] = '\0';
	rc = gp_root_init(&r, root, &e) ? -1 : gp_pci_scan(&p, &r, &e);
	snprintf(sysfs, sizeof(sysfs), "%s/sys/bus/pci", root);
	a->method = PCI_ACCESS_SYS_BUS_PCI;
	a->error = lp_error;
	a->warning = a->debug = lp_quiet;
	if (setjmp(lp_jb)) {
		char want[600];

		snprintf(want, sizeof(want), "libpci: %s", lp_msg);
		if (rc == 0 || strcmp(e.msg, want))
			snprintf(why, n, "libpci: \"%s\"; the scan: %s", want, rc ? e.msg : "no error");
		goto out;
	}
	pci_set_param(a, "sysfs.path", sysfs);
	pci_init(a);
	pci_scan_bus(a);
	for (struct pci_dev *d = a->devices; d; d = d->next)
		pci_fill_info(d, fields);
	if (rc) {
		snprintf(why, n, "the scan failed where libpci did not: %s", e.msg);
		goto out;
	}
	for (struct pci_dev *d = a->devices; d && !why[0]; d = d->next) {
		char bdf[GP_BDF_LEN];
		const struct gp_pci_dev *g;
		int sub = (d->known_fields & PCI_FILL_SUBSYS) != 0, flags = (d->known_fields & PCI_FILL_IO_FLAGS) != 0;

		snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%x", d->domain, d->bus, d->dev, d->func);
		if (!(g = gp_pci_find(&p, bdf))) {
			snprintf(why, n, "%s: not scanned", bdf);
			break;
		}
		if (g->vendor != d->vendor_id || g->device != d->device_id || g->class_code >> 8 != d->device_class ||
		    g->subvendor != (sub ? d->subsys_vendor_id : 0) || g->subdevice != (sub ? d->subsys_id : 0))
			snprintf(why, n, "%s: ids %04x %04x %06x %04x %04x, libpci's %04x %04x %04x %04x %04x", bdf,
				 g->vendor, g->device, g->class_code, g->subvendor, g->subdevice, d->vendor_id,
				 d->device_id, d->device_class, sub ? d->subsys_vendor_id : 0, sub ? d->subsys_id : 0);
		for (int i = 0; i < 6 && !why[0]; i++)
			if (g->bars[i].start != (d->base_addr[i] & PCI_ADDR_MEM_MASK) || g->bars[i].size != d->size[i] ||
			    g->bars[i].flags != (flags ? d->flags[i] : 0))
				snprintf(why, n, "%s: BAR %d differs from libpci's", bdf, i);
	}
out:
	pci_cleanup((struct pci_access *)a);
	gp_pci_free(&p);
	return why;
}

int main(void)
{
	/* on a copy of h200x2: $G is the GPU 0000:00:06.0's folder, $B the bridge 0000:00:01.0's */
	static const struct { const char *what, *cmd; } cases[] = {
		{ "as captured", "true" },
		{ "no subsystem_vendor (ids from config space)", "rm \"$G/subsystem_vendor\"" },
		{ "a bridge without subsystem_vendor", "rm \"$B/subsystem_vendor\"" },
		{ "no subsystem_vendor, 20 bytes of config", "rm \"$G/subsystem_vendor\" && truncate -s 20 \"$G/config\"" },
		{ "no subsystem_vendor, no config", "rm \"$G/subsystem_vendor\" \"$G/config\"" },
		{ "no subsystem_device", "rm \"$G/subsystem_device\"" },
		{ "subsystem_vendor negative", "echo -5 >\"$G/subsystem_vendor\"" },
		{ "subsystem_vendor past an int", "echo 0xffffffff >\"$G/subsystem_vendor\"" },
		{ "subsystem_vendor with a NUL", "printf '0x10de\\0000x1' >\"$G/subsystem_vendor\"" },
		{ "subsystem_vendor of 1100 bytes", "head -c 1100 /dev/zero | tr '\\0' 1 >\"$G/subsystem_vendor\"" },
		{ "subsystem_vendor a folder", "rm \"$G/subsystem_vendor\" && mkdir \"$G/subsystem_vendor\"" },
		{ "vendor past 16 bits", "echo 0x1234567890 >\"$G/vendor\"" },
		{ "class past 24 bits, blanks to 48 bytes", "printf '0x1030200%40s\\n' '' >\"$G/class\"" },
		{ "class of 33 digits", "echo 0x00000000000000000000000001030200 >\"$G/class\"" },
		{ "resource of one line", "echo '0x1000 0x1fff 0x200' >\"$G/resource\"" },
		{ "resource end before start", "echo '0x2000 0x1000 0x40200' >\"$G/resource\"" },
		{ "resource of 20 lines", "for i in $(seq 20); do echo '0x1000 0x1fff 0x40200'; done >\"$G/resource\"" },
		{ "resource's 19th line garbage (libpci reads 18)",
		  "(for i in $(seq 18); do echo '0x1000 0x1fff 0x200'; done; echo junk) >\"$G/resource\"" },
		{ "resource's 18th line garbage", "(for i in $(seq 17); do echo '0x1000 0x1fff 0x200'; done; echo junk) "
						  ">\"$G/resource\"" },
		{ "resource's second line empty", "(head -1 \"$G/resource\"; echo) >\"$G/r\" && mv \"$G/r\" \"$G/resource\"" },
		{ "resource's first line cut by its newline", "printf '0x1\\n0x2 0x3\\n' >\"$G/resource\"" },
		{ "resource with a NUL", "printf '0x1000 0x1fff 0x200\\n0x1\\0000 0x2 0x3\\n' >\"$G/resource\"" },
		{ "resource's first line of 300 bytes (libpci: two pieces)",
		  "(printf '0x1000 0x1fff 0x200%280s\\n' ''; cat \"$G/resource\") >\"$G/r\" && mv \"$G/r\" \"$G/resource\"" },
	};
	/* libpci builds "<root>/sys/bus/pci/devices/0000:00:06.0/subsystem_vendor" in 1024 bytes: the
	 * roots whose names end one byte before and at that limit */
	static const int long_roots[] = { 973, 974, 1003, 1004 };
	char top[] = "/tmp/gpup2p-test-pci-libpci-XXXXXX", cmd[4096], why[1024], root[2048];
	const char *fx[] = { "h200x2", "seed4x2", "vmd", "sriov", "nonroot", "workstation", "dgx-h100" };

	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++)
		CHECK(!compare(unit_fixture(fx[i]), why, sizeof(why))[0], "%s: as libpci reads it (%s)", fx[i], why);
	if (!mkdtemp(top)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return unit_done();
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(root, sizeof(root), "%s/r%zu", top, i);
		snprintf(cmd, sizeof(cmd),
			 "R='%s' && cp -a '%s' \"$R\" && G=$(readlink -f \"$R/sys/bus/pci/devices/0000:00:06.0\") && "
			 "B=$(readlink -f \"$R/sys/bus/pci/devices/0000:00:01.0\") && %s",
			 root, unit_fixture("h200x2"), cases[i].cmd);
		CHECK(system(cmd) == 0 && !compare(root, why, sizeof(why))[0], "%s: as libpci reads it (%s)",
		      cases[i].what, why);
	}
	for (size_t i = 0; i < sizeof(long_roots) / sizeof(long_roots[0]); i++) {
		int len = snprintf(root, sizeof(root), "%s/", top);

		for (; len < long_roots[i]; len++)
			root[len] = len % 200 ? 'x' : '/';
		root[len] = '\0';
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && rmdir '%s' && cp -a '%s' '%s'", root, root,
			 unit_fixture("h200x2"), root);
		CHECK(system(cmd) == 0 && !compare(root, why, sizeof(why))[0], "a root of %d bytes: as libpci (%s)",
		      long_roots[i], why);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", top);
	return unit_done();
}
