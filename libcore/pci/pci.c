/* gpup2p — PCI enumeration through libpci's sysfs method. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pci/pci.h>

#include "gpup2p/pci.h"
#include "pci/internal.h"

/* libpci's error callback may not return: it jumps back into gp_pci_scan. */
static __thread jmp_buf *lp_jmp;
static __thread char lp_msg[512];

static __attribute__((noreturn)) void lp_error(char *msg, ...)
{
	va_list ap;

	va_start(ap, msg);
	vsnprintf(lp_msg, sizeof(lp_msg), msg, ap);
	va_end(ap);
	if (lp_jmp)
		longjmp(*lp_jmp, 1);
	abort(); /* unreachable: every libpci call is made under a jump buffer */
}

static void lp_warning(char *msg, ...)
{
	(void)msg;
}

static void lp_debug(char *msg, ...)
{
	(void)msg;
}

int64_t gp_pci_cfg_read(const struct gp_pci_dev *d, int off, int width)
{
	uint64_t v = 0;

	if (off < 0 || width < 1 || width > 4 || off + width > d->config_len)
		return -1;
	for (int i = width - 1; i >= 0; i--)
		v = (v << 8) | d->config[off + i];
	return (int64_t)v;
}

const char *gp_pci_port_name(enum gp_port_type t)
{
	switch (t) {
	case GP_PORT_UNKNOWN: return "unknown";
	case GP_PORT_NONE: return "PCI";
	case GP_PORT_ENDPOINT: return "endpoint";
	case GP_PORT_LEGACY_EP: return "legacy endpoint";
	case GP_PORT_ROOT: return "root port";
	case GP_PORT_UPSTREAM: return "switch upstream";
	case GP_PORT_DOWNSTREAM: return "switch downstream";
	case GP_PORT_PCIE_TO_PCI: return "PCIe-to-PCI bridge";
	case GP_PORT_PCI_TO_PCIE: return "PCI-to-PCIe bridge";
	case GP_PORT_RC_IEP: return "integrated endpoint";
	case GP_PORT_RC_EC: return "event collector";
	}
	return "other";
}

int gp_pci_gen(double gts)
{
	static const double speeds[] = { 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 };

	for (int i = 0; i < 6; i++)
		if (gts > speeds[i] - 0.25 && gts < speeds[i] + 0.25)
			return i + 1;
	return 0;
}

/* Address order, as numbers: domain 10000 (Intel VMD) after ffff, not between 0000 and 2000. */
static int cmp_dev(const void *a, const void *b)
{
	const struct gp_pci_dev *x = a, *y = b;
	struct gp_pci_addr ax = { x->domain, x->bus, x->dev, x->func }, ay = { y->domain, y->bus, y->dev, y->func };

	return gp_pci_addr_cmp(&ax, &ay);
}

/* Read an extended capability's registers into the config image (64 bytes at most); cfg: the config
 * file, open. */
static void read_ext_cap(int cfg, struct gp_pci_dev *g, int off)
{
	int n = off + 64 <= GP_CFG_MAX ? 64 : GP_CFG_MAX - off;

	for (int got = 0, k; cfg >= 0 && got < n; got += k)
		if ((k = (int)pread(cfg, g->config + off + got, (size_t)(n - got), off + got)) <= 0)
			break;
}

/* Capabilities from libpci's list, trusted only where the config space was readable. */
static void fill_caps(struct gp_pci_dev *g, struct pci_dev *d, int cfg)
{
	struct pci_cap *c;
	int conventional_ok = g->config_len >= 256;

	g->pcie_cap = conventional_ok ? 0 : -1;
	g->port_type = conventional_ok ? GP_PORT_NONE : GP_PORT_UNKNOWN;
	for (c = d->first_cap; c; c = c->next) {
		if (c->type == PCI_CAP_NORMAL && c->id == PCI_CAP_ID_EXP && (int)c->addr + 4 <= g->config_len) {
			int64_t flags = gp_pci_cfg_read(g, (int)c->addr + 2, 2);

			g->pcie_cap = (int)c->addr;
			g->port_type = flags < 0 ? GP_PORT_UNKNOWN : (enum gp_port_type)((flags >> 4) & 0xf);
		}
	}
	/* A PCIe function's extended space needs the full 4096 bytes; a conventional
	 * function (256 bytes, no PCIe capability) has none at all. */
	g->ext_known = g->config_len >= GP_CFG_MAX || (conventional_ok && g->pcie_cap == 0);
	g->acs_cap = g->rebar_cap = g->ats_cap = g->ext_known ? 0 : -1;
	if (g->config_len < GP_CFG_MAX)
		return;
	for (c = d->first_cap; c; c = c->next) {
		if (c->type != PCI_CAP_EXTENDED || (int)c->addr + 8 > g->config_len)
			continue;
		if (c->id == PCI_EXT_CAP_ID_ACS && !g->acs_cap)
			g->acs_cap = (int)c->addr;
		else if (c->id == PCI_EXT_CAP_ID_REBAR && !g->rebar_cap)
			g->rebar_cap = (int)c->addr;
		else if (c->id == PCI_EXT_CAP_ID_ATS && !g->ats_cap)
			g->ats_cap = (int)c->addr;
	}
	if (g->acs_cap > 0)
		read_ext_cap(cfg, g, g->acs_cap);
	if (g->rebar_cap > 0)
		read_ext_cap(cfg, g, g->rebar_cap);
	if (g->ats_cap > 0)
		read_ext_cap(cfg, g, g->ats_cap);
}

static void fill_bars(struct gp_pci_dev *g, struct pci_dev *d, int have_flags)
{
	for (int i = 0; i < 6; i++) {
		struct gp_bar *b = &g->bars[i];

		b->index = i;
		b->start = d->base_addr[i] & PCI_ADDR_MEM_MASK;
		b->size = d->size[i];
		b->flags = have_flags ? d->flags[i] : 0;
		b->is_io = (b->flags & GP_RES_IO) != 0;
		b->is_64 = (b->flags & GP_RES_MEM_64) != 0;
		b->prefetch = (b->flags & GP_RES_PREFETCH) != 0;
		b->assigned = b->size && b->start && !(b->flags & (GP_RES_UNSET | GP_RES_DISABLED));
	}
}

const char *gp_pci_name(const struct gp_pci *p, const struct gp_pci_dev *d, enum gp_pci_name_kind k,
			char *buf, size_t n)
{
	struct pci_access *a = p->pacc;
	int fl = PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB;
	char tmp[256];
	char *volatile s = NULL;
	jmp_buf jb;

	buf[0] = '\0';
	if (!a)
		return buf;
	lp_jmp = &jb;
	if (setjmp(jb) == 0) {
		if (k == GP_NAME_VENDOR)
			s = pci_lookup_name(a, tmp, sizeof(tmp), PCI_LOOKUP_VENDOR | fl, d->vendor);
		else if (k == GP_NAME_DEVICE)
			s = pci_lookup_name(a, tmp, sizeof(tmp), PCI_LOOKUP_DEVICE | fl, d->vendor, d->device);
		else
			s = pci_lookup_name(a, tmp, sizeof(tmp), PCI_LOOKUP_CLASS | fl, d->class_code >> 8);
	}
	lp_jmp = NULL;
	snprintf(buf, n, "%s", s ? s : "");
	return buf;
}

/* A function's "driver" or "iommu_group" link, resolved beneath the root: "" when absent or leaving it.
 * dfd holds the function's folder dir open (-1: not open); canon is where it lies ("" until asked),
 * so that the links of many functions to one place are resolved once (links). */
static void link_target(const struct gp_root *r, int dfd, const char *dir, char canon[GP_PATH_MAX], const char *link,
			struct gp_root_links *links, char *buf, size_t n)
{
	char path[GP_PATH_MAX], real[GP_PATH_MAX], *base;

	buf[0] = '\0';
	/* no such link (most functions have no IOMMU group under a root): no resolving at all */
	if (dfd >= 0 && readlinkat(dfd, link, real, sizeof(real)) < 0)
		return;
	if (dfd >= 0 && !canon[0] && gp_root_fd_realpath(r, dfd, dir, canon, GP_PATH_MAX))
		canon[0] = '\0';
	if (dfd >= 0 && canon[0]) {
		if (gp_root_link_in(r, dfd, canon, link, links, real, sizeof(real)) ||
		    !(base = strrchr(real, '/')) || strlen(base + 1) >= n)
			return;
		strcpy(buf, base + 1);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, link);
	if (gp_root_link_target(r, path, real, sizeof(real), buf, n))
		buf[0] = '\0';
}

void gp_pci_free(struct gp_pci *p)
{
	if (p->pacc)
		pci_cleanup(p->pacc);
	free(p->devs);
	free(p->nodes);
	for (int i = 0; i < p->nwarn; i++)
		free(p->warnings[i]);
	free(p->warnings);
	gp_pci_free_strs(p);
	memset(p, 0, sizeof(*p));
}

/* Where the functions' driver and IOMMU group links led during a scan of this thread (one resolution
 * per place). */
static __thread struct gp_root_links lp_links;

static int scan(struct gp_pci *p, const struct gp_root *r, struct gp_err *e)
{
	struct pci_access *volatile a = NULL;
	char sysfs[GP_PATH_MAX], **names = NULL;
	jmp_buf jb;
	struct pci_dev *d;
	int n, i, rc;

	memset(p, 0, sizeof(*p));
	p->root = r;
	if (gp_root_path(r, "/sys/bus/pci", sysfs, sizeof(sysfs)))
		return gp_err_set(e, GP_E_USAGE, ENAMETOOLONG, "root path too long");
	n = gp_root_list(r, "/sys/bus/pci/devices", &names);
	if (n < 0)
		return gp_err_set(e, GP_E_DATA, -n, "%s/devices: %s", sysfs, gp_root_strerror(-n));
	if (n == 0 && !gp_root_exists(r, "/sys/bus/pci/devices")) {
		gp_root_free_list(names);
		return gp_err_set(e, GP_E_UNAVAIL, ENOENT, "%s/devices: no such directory (no PCI bus visible)", sysfs);
	}
	for (i = 0; i < n; i++) {
		char bdf[GP_BDF_LEN];

		if (gp_pci_parse_bdf(names[i], bdf) || strcmp(bdf, names[i]) != 0) {
			rc = gp_err_set(e, GP_E_DATA, EINVAL, "%s/devices/%s: not a PCI address", sysfs, names[i]);
			gp_root_free_list(names);
			return rc;
		}
		rc = gp_pci_precheck(r, names[i], e);
		if (rc) {
			gp_root_free_list(names);
			return rc;
		}
	}
	gp_root_free_list(names);

	a = pci_alloc();
	if (!a)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "libpci: out of memory");
	a->method = PCI_ACCESS_SYS_BUS_PCI;
	a->error = lp_error;
	a->warning = lp_warning;
	a->debug = lp_debug;
	lp_jmp = &jb;
	if (setjmp(jb)) {
		lp_jmp = NULL;
		gp_root_links_free(&lp_links);
		/* gp_pci_scan frees it: pci_cleanup frees the devices on libpci's list and closes what its
		 * method holds (in libpci 3.x sysfs's fds are -1 until its init and the method is set
		 * before; a device being read when the error came is on the list or not, never half). */
		p->pacc = a;
		return gp_err_set(e, GP_E_DATA, EIO, "libpci: %s", lp_msg);
	}
	if (getenv("GPUP2P_PCI_IDS"))
		pci_set_name_list_path(a, getenv("GPUP2P_PCI_IDS"), 0);
	pci_set_param(a, "sysfs.path", sysfs);
	pci_init(a);
	pci_scan_bus(a);
	p->pacc = a;

	for (d = a->devices, n = 0; d; d = d->next)
		n++;
	p->devs = calloc((size_t)(n ? n : 1), sizeof(*p->devs));
	if (!p->devs) {
		lp_jmp = NULL;
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	for (d = a->devices, i = 0; d; d = d->next, i++) {
		struct gp_pci_dev *g = &p->devs[i];
		char dir[GP_PATH_MAX];
		int dfd, cfg, known;
		/* d->domain, not d->domain_16: the latter is 0xffff for every domain above it */
		struct gp_pci_addr ad = { d->domain, d->bus, d->dev, d->func };
		char group[32], canon[GP_PATH_MAX];

		g->domain = d->domain;
		g->bus = d->bus;
		g->dev = d->dev;
		g->func = d->func;
		gp_pci_addr_format(&ad, g->bdf);
		snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s", g->bdf);
		dfd = gp_root_open(r, dir, O_PATH | O_DIRECTORY);
		cfg = gp_root_open_in(r, dfd, dir, "config", O_RDONLY);
		/* Only the standard space is read whole: every config read may trap to a hypervisor,
		 * so the extended space is probed, and read where a decoded capability lies. */
		for (g->config_len = 0; cfg >= 0 && g->config_len < 256; g->config_len += rc)
			if ((rc = (int)pread(cfg, g->config + g->config_len, (size_t)(256 - g->config_len),
					     g->config_len)) <= 0)
				break;
		if (g->config_len == 256 && pread(cfg, g->config + 256, 4, 256) == 4)
			g->config_len = GP_CFG_MAX;
		/* libpci walks the capabilities in the bytes just read rather than reading them again (the
		 * cache is dropped before the devices move: qsort below) */
		pci_setup_cache(d, g->config, g->config_len == GP_CFG_MAX ? 260 : g->config_len);
		known = pci_fill_info(d, PCI_FILL_IDENT | PCI_FILL_CLASS | PCI_FILL_BASES | PCI_FILL_SIZES |
				      PCI_FILL_IO_FLAGS | PCI_FILL_CAPS | PCI_FILL_EXT_CAPS | PCI_FILL_SUBSYS);
		pci_setup_cache(d, NULL, 0);
		g->vendor = d->vendor_id;
		g->device = d->device_id;
		g->subvendor = (known & PCI_FILL_SUBSYS) ? d->subsys_vendor_id : 0;
		g->subdevice = (known & PCI_FILL_SUBSYS) ? d->subsys_id : 0;
		{
			char cls[32];

			g->class_code = gp_root_read_text_in(r, dfd, dir, "class", cls, sizeof(cls)) > 0
					? (uint32_t)strtoul(cls, NULL, 16) : (uint32_t)d->device_class << 8;
		}
		g->is_bridge = g->config_len > 0x0e ? (g->config[0x0e] & 0x7f) == 1 : (g->class_code >> 8) == 0x0604;
		fill_bars(g, d, (known & PCI_FILL_IO_FLAGS) != 0);
		fill_caps(g, d, cfg);
		if (cfg >= 0)
			close(cfg);
		canon[0] = '\0';
		link_target(r, dfd, dir, canon, "driver", &lp_links, g->driver, sizeof(g->driver));
		link_target(r, dfd, dir, canon, "iommu_group", &lp_links, group, sizeof(group));
		g->iommu_group = group[0] ? atoi(group) : -1;
		if (dfd >= 0)
			close(dfd);
	}
	lp_jmp = NULL;
	gp_root_links_free(&lp_links);
	p->n = n;
	qsort(p->devs, (size_t)n, sizeof(*p->devs), cmp_dev);
	return gp_pci_fill_sysfs(p, e);
}

int gp_pci_scan(struct gp_pci *p, const struct gp_root *r, struct gp_err *e)
{
	int rc = scan(p, r, e);

	if (rc)
		gp_pci_free(p); /* nothing for the caller to free after an error */
	return rc;
}

/* The libpci device of a scanned function (libpci keeps its own list). */
static struct pci_dev *lp_dev(const struct gp_pci *p, const struct gp_pci_dev *g)
{
	struct pci_access *a = p->pacc;

	for (struct pci_dev *d = a ? a->devices : NULL; d; d = d->next)
		if (d->domain == g->domain && d->bus == g->bus && d->dev == g->dev && d->func == g->func)
			return d;
	return NULL;
}

/* Under a root directory, the config file libpci is about to open must lie beneath it. 0 or -errno. */
static int config_beneath(const struct gp_pci *p, const struct gp_pci_dev *g, int write)
{
	char path[GP_PATH_MAX];
	int fd;

	if (!p->root || p->root->live)
		return 0;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", g->bdf);
	fd = gp_root_open(p->root, path, write ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* One 16-bit config access under libpci's error jump. */
static int live_io16(const struct gp_pci *p, const struct gp_pci_dev *g, int off, uint16_t *v, int write)
{
	struct pci_dev *volatile d = lp_dev(p, g);
	jmp_buf jb;
	volatile int ok = 0;
	int rc;

	if (!d || off < 0 || off > GP_CFG_MAX - 2 || (off & 1))
		return -EINVAL;
	if ((rc = config_beneath(p, g, write)))
		return rc;
	lp_jmp = &jb;
	if (setjmp(jb) == 0) {
		u8 b[2];

		if (write) {
			ok = pci_write_word(d, off, *v);
		} else {
			/* pci_read_block reports a short read; pci_read_word would turn it into 0xffff */
			ok = pci_read_block(d, off, b, 2);
			*v = (uint16_t)(b[0] | b[1] << 8);
		}
	}
	lp_jmp = NULL;
	return ok ? 0 : -EIO;
}

int gp_pci_live_read16(const struct gp_pci *p, const struct gp_pci_dev *g, int off, uint16_t *v)
{
	return live_io16(p, g, off, v, 0);
}

int gp_pci_live_write16(const struct gp_pci *p, const struct gp_pci_dev *g, int off, uint16_t v)
{
	return live_io16(p, g, off, &v, 1);
}
