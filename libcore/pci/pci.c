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

/* The BARs from "resource", as libpci's sysfs method gives them (rd: gp_pci_precheck's reading). */
static void fill_bars(struct gp_pci_dev *g, const struct gp_pci_read *rd)
{
	for (int i = 0; i < 6; i++) {
		struct gp_bar *b = &g->bars[i];

		b->index = i;
		b->start = rd->start[i] & PCI_ADDR_MEM_MASK;
		b->size = rd->size[i];
		b->flags = rd->nres ? rd->flags[i] : 0;
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
 * f is the function's folder, open and listed (gp_pci_fn_canon tells where it lies), so that the links
 * of many functions to one place are resolved once (links). */
static void link_target(const struct gp_root *r, struct gp_pci_fn *f, const char *link, struct gp_root_links *links,
			char *buf, size_t n)
{
	char path[GP_PATH_MAX], real[GP_PATH_MAX], text[GP_PATH_MAX], *base;
	int t = gp_root_ent_type(f->d.ents, f->d.n, link);

	ssize_t len;

	buf[0] = '\0';
	/* no such link (most functions have no IOMMU group under a root): no resolving at all */
	if (f->d.fd >= 0 && (t == -1 || (t != DT_LNK && t != DT_UNKNOWN)))
		return;
	if (f->d.fd >= 0 && !gp_pci_fn_canon(r, f)) {
		/* read once through the folder (its text kept), resolved from where the folder lies */
		len = readlinkat(f->d.fd, link, text, sizeof(text) - 1);
		snprintf(path, sizeof(path), "%s/%s", f->canon, link);
		gp_root_trace(path, len < 0 ? errno : 0);
		if (len < 0)
			return;
		text[len] = '\0';
		gp_pci_fn_keep(f, link, 1, text, (size_t)len + 1);
		if (gp_root_link_resolve(r, f->canon, link, text, links, real, sizeof(real)) ||
		    !(base = strrchr(real, '/')) || strlen(base + 1) >= n)
			return;
		strcpy(buf, base + 1);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", f->d.path, link);
	if (gp_root_link_target(r, path, real, sizeof(real), buf, n))
		buf[0] = '\0';
}

void gp_pci_free(struct gp_pci *p)
{
	struct pci_dev **lp = p->lpdevs;

	/* before pci_cleanup: freeing one closes the config file libpci may hold open for it */
	for (int i = 0; lp && i < p->n; i++)
		if (lp[i])
			pci_free_dev(lp[i]);
	free(lp);
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

/* The first errors of a scan, reported in the order of the two passes it once made: a precheck's
 * (the first function listed), then libpci's, then the sysfs facts' (the first function by address). */
struct scan_errs {
	int pre_at;                  /* the listing's index of the function whose precheck failed; -1: none */
	int lp, fill;                /* 1: the error below was met */
	struct gp_err pre_e, lp_e, fill_e;
};

/* What libpci's sysfs method would refuse, in its words (its messages are cut to 511 bytes). */
static __attribute__((format(printf, 2, 3))) void lp_refuse(struct scan_errs *x, const char *fmt, ...)
{
	char msg[sizeof(lp_msg)];
	va_list ap;

	if (x->lp)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	x->lp = 1;
	gp_err_set(&x->lp_e, GP_E_DATA, EIO, "libpci: %s", msg);
}

/* libpci builds each file's name in 1024 bytes ("File name too long" past them) */
#define LP_NAME_MAX 1024

/* One function of the listing, in address order. */
struct fn_name {
	struct gp_pci_addr a;
	const char *name;
	int listed;                  /* its index in the listing */
};

static int cmp_fn_name(const void *x, const void *y)
{
	return gp_pci_addr_cmp(&((const struct fn_name *)x)->a, &((const struct fn_name *)y)->a);
}

/* Function i (fn) read from its folder f, opened and listed once here (closed by the caller):
 * precheck's files, config space, the capabilities (libpci's device a's), links and sysfs facts. */
static void scan_fn(struct gp_pci *p, struct pci_access *a, const char *sysfs, const struct fn_name *fn, int i,
		    struct gp_pci_fn *f, char pf[GP_BDF_LEN], struct scan_errs *x)
{
	const struct gp_root *r = p->root;
	struct gp_pci_dev *g = &p->devs[i];
	struct gp_pci_read rd;
	struct gp_err e = { 0 };
	struct pci_dev *d;
	int cfg, rc;
	char group[32], path[GP_PATH_MAX], *whole;
	ssize_t wlen = 0;

	g->domain = fn->a.domain;
	g->bus = fn->a.bus;
	g->dev = fn->a.dev;
	g->func = fn->a.func;
	snprintf(g->bdf, sizeof(g->bdf), "%s", fn->name);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", fn->name);
	/* listed once: its files read by name, the absent ones not asked for; where the link's text
	 * names a place reached through no link, opened there (where it lies is known: no read-back) */
	if (!f->devs_canon[0] ||
	    (f->d.fd = gp_root_link_open(r, f->devs_fd, f->devs_canon, fn->name, O_RDONLY | O_DIRECTORY, f->canon,
					 sizeof(f->canon))) < 0) {
		(void)gp_root_dir_open(r, &f->d, -1, path, NULL);
	} else {
		(void)gp_root_dir_list(r, &f->d, f->d.fd, path);
		f->canon_rc = 0;
	}
	g->aer_listed = 0;
	if (f->d.fd >= 0 && f->d.n >= 0) { /* doctor's pcie.aer asks only for the counters listed */
		static const char *const aer[3] = { "aer_dev_fatal", "aer_dev_nonfatal", "aer_dev_correctable" };

		g->aer_listed = GP_PCI_AER_LISTED;
		for (int k = 0; k < 3; k++)
			g->aer_listed |= gp_root_ent_type(f->d.ents, f->d.n, aer[k]) >= 0 ? GP_PCI_AER_HAS(k) : 0;
	}
	if (gp_pci_precheck(r, f, &rd, &e)) {
		if (x->pre_at < 0 || fn->listed < x->pre_at) {
			x->pre_at = fn->listed;
			x->pre_e = e;
		}
		return;
	}
	if (x->pre_at >= 0)
		return; /* a precheck failed: only the others' prechecks matter now */
	/* the longest name its fill made: subsystem_vendor's */
	if (strlen(sysfs) + strlen("/devices/") + strlen(fn->name) + strlen("/subsystem_vendor") >= LP_NAME_MAX)
		lp_refuse(x, "File name too long");
	else if (rd.res_bad)
		lp_refuse(x, "Syntax error in %s/devices/%s/resource", sysfs, fn->name);
	if (x->lp || x->fill)
		return;
	gp_pci_read_subsys(r, f, &rd);
	/* Kept for the caller (a snapshot copies it whole), a regular file's config space is read whole
	 * once, and what the scan takes of it taken from those bytes */
	whole = NULL;
	cfg = -1;
	if (f->keep && gp_root_ent_type(f->d.ents, f->d.n, "config") == DT_REG && sizeof(f->bytes) - f->used > GP_CFG_MAX) {
		whole = f->bytes + f->used;
		wlen = gp_root_read_raw_listed(r, f->d.fd, f->d.path, "config", whole, GP_CFG_MAX + 1, &rc);
		if (wlen >= 0 && rc)
			gp_pci_fn_keep(f, "config", 0, whole, (size_t)wlen);
		else
			whole = NULL; /* longer than a config space, or an error: read as below */
	}
	if (whole) {
		g->config_len = wlen < 256 ? (int)wlen : 256;
		memcpy(g->config, whole, (size_t)g->config_len);
		if (wlen > 256)
			memcpy(g->config + 256, whole + 256, (size_t)(wlen - 256 < 4 ? wlen - 256 : 4));
		if (wlen >= 260)
			g->config_len = GP_CFG_MAX;
	} else {
		cfg = gp_root_open_in(r, f->d.fd, f->d.path, "config", O_RDONLY);
		/* Only the standard space is read whole: every config read may trap to a hypervisor,
		 * so the extended space is probed, and read where a decoded capability lies. */
		for (g->config_len = 0; cfg >= 0 && g->config_len < 256; g->config_len += rc)
			if ((rc = (int)pread(cfg, g->config + g->config_len, (size_t)(256 - g->config_len),
					     g->config_len)) <= 0)
				break;
		if (g->config_len == 256 && pread(cfg, g->config + 256, 4, 256) == 4)
			g->config_len = GP_CFG_MAX;
	}
	/* libpci walks the capabilities in the bytes just read rather than reading them again; the rest
	 * (identity, class, BARs) it would read from the files precheck read */
	d = ((struct pci_dev **)p->lpdevs)[i] = pci_get_dev(a, g->domain, g->bus, g->dev, g->func);
	pci_setup_cache(d, g->config, g->config_len == GP_CFG_MAX ? 260 : g->config_len);
	pci_fill_info(d, PCI_FILL_CAPS | PCI_FILL_EXT_CAPS);
	g->vendor = rd.vendor;
	g->device = rd.device;
	g->class_code = rd.class_code;
	g->subvendor = rd.subvendor;
	g->subdevice = rd.subdevice;
	if (!rd.subsys)
		gp_pci_subsys_from_config(g, d);
	pci_setup_cache(d, NULL, 0);
	g->is_bridge = g->config_len > 0x0e ? (g->config[0x0e] & 0x7f) == 1 : (g->class_code >> 8) == 0x0604;
	fill_bars(g, &rd);
	gp_pci_fill_caps(g, d, cfg, whole, wlen);
	if (cfg >= 0)
		close(cfg);
	link_target(r, f, "driver", &lp_links, g->driver, sizeof(g->driver));
	link_target(r, f, "iommu_group", &lp_links, group, sizeof(group));
	g->iommu_group = group[0] ? atoi(group) : -1;
	if (gp_pci_fill_fn(p, i, f, pf, &e)) {
		x->fill = 1;
		x->fill_e = e;
	}
}

/* e = from, and its return value. */
static int err_out(struct gp_err *e, const struct gp_err *from)
{
	*e = *from;
	return from->errnum ? -from->errnum : -EIO;
}

static int scan(struct gp_pci *p, const struct gp_root *r, gp_pci_each_fn fn, void *arg, struct gp_err *e)
{
	volatile gp_pci_each_fn each = fn; /* NULL once it says stop */
	struct pci_access *volatile a = NULL;
	char sysfs[GP_PATH_MAX], **names = NULL, (*volatile pf)[GP_BDF_LEN] = NULL;
	struct fn_name *volatile order = NULL;
	struct gp_pci_fn *volatile f = NULL; /* the folder being read (4 KiB: not on the stack) */
	struct scan_errs x = { .pre_at = -1 };
	jmp_buf jb;
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
	}
	/* read in address order, as the functions are kept (p->devs, p->lpdevs) */
	order = calloc((size_t)(n ? n : 1), sizeof(*order));
	pf = calloc((size_t)(n ? n : 1), GP_BDF_LEN);
	p->devs = calloc((size_t)(n ? n : 1), sizeof(*p->devs));
	p->lpdevs = calloc((size_t)(n ? n : 1), sizeof(struct pci_dev *));
	if ((f = malloc(sizeof(*f)))) {
		f->d.fd = -1, f->d.ents = NULL, f->keep = each != NULL;
		f->devs_fd = r->live ? -1 : gp_root_open(r, "/sys/bus/pci/devices", O_PATH | O_DIRECTORY);
		if (f->devs_fd < 0 || gp_root_fd_realpath(r, f->devs_fd, "/sys/bus/pci/devices", f->devs_canon,
							 sizeof(f->devs_canon)))
			f->devs_canon[0] = '\0';
	}
	a = pci_alloc();
	if (!order || !pf || !p->devs || !p->lpdevs || !f || !a) {
		rc = gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
		goto out;
	}
	p->n = n;
	for (i = 0; i < n; i++) {
		gp_pci_addr_parse(names[i], &order[i].a);
		order[i].name = names[i];
		order[i].listed = i;
		p->devs[i].cpulist = ""; /* never NULL, even after an error */
	}
	qsort(order, (size_t)n, sizeof(*order), cmp_fn_name);
	p->pacc = a;
	a->method = PCI_ACCESS_SYS_BUS_PCI;
	a->error = lp_error;
	a->warning = lp_warning;
	a->debug = lp_debug;
	lp_jmp = &jb;
	if (setjmp(jb)) {
		/* gp_pci_free frees the devices made (pci_free_dev) and a (pci_cleanup closes what its
		 * method holds: in libpci 3.x sysfs's fds are -1 until its init, the method set before) */
		rc = gp_err_set(e, GP_E_DATA, EIO, "libpci: %s", lp_msg);
		goto out;
	}
	if (getenv("GPUP2P_PCI_IDS"))
		pci_set_name_list_path(a, getenv("GPUP2P_PCI_IDS"), 0);
	pci_set_param(a, "sysfs.path", sysfs);
	pci_init(a);
	/* libpci's sysfs method no longer lists the folder (its pci_scan_bus): what it refused there */
	if (strlen(sysfs) + strlen("/devices") >= LP_NAME_MAX)
		lp_refuse(&x, "Directory name too long");
	for (i = 0; i < n; i++) {
		f->d.n = -1;
		f->canon_rc = 1;
		f->nkept = 0;
		f->used = 0;
		scan_fn(p, a, sysfs, &order[i], i, f, pf[i], &x);
		/* handed on while its folder is open, until an error (the scan's, or the caller's) */
		if (each && x.pre_at < 0 && !x.lp && !x.fill && each(p, i, f, arg))
			each = NULL;
		gp_root_dir_close(&f->d);
	}
	if (n == 0 && !x.lp) {
		int fd = gp_root_open(r, "/sys/bus/pci/devices", O_RDONLY | O_DIRECTORY);

		if (fd < 0)
			lp_refuse(&x, "Cannot open %s/devices", sysfs);
		else
			close(fd);
	}
	rc = x.pre_at >= 0 ? err_out(e, &x.pre_e) : x.lp ? err_out(e, &x.lp_e) : x.fill ? err_out(e, &x.fill_e)
									      : gp_pci_fill_sysfs(p, pf, fn == NULL, e);
out:
	lp_jmp = NULL;
	gp_root_links_free(&lp_links);
	if (f) {
		free(f->d.ents);
		if (f->d.fd >= 0)
			close(f->d.fd);
		if (f->devs_fd >= 0)
			close(f->devs_fd);
		free(f);
	}
	if (!p->pacc && a)
		pci_cleanup(a);
	free(pf);
	free(order);
	gp_root_free_list(names);
	return rc;
}

int gp_pci_scan(struct gp_pci *p, const struct gp_root *r, struct gp_err *e)
{
	return gp_pci_scan_each(p, r, NULL, NULL, e);
}

int gp_pci_scan_each(struct gp_pci *p, const struct gp_root *r, gp_pci_each_fn fn, void *arg, struct gp_err *e)
{
	int rc = scan(p, r, fn, arg, e);

	if (rc)
		gp_pci_free(p); /* nothing for the caller to free after an error */
	return rc;
}

/* The libpci device of a scanned function: by its place in p->devs (one of them, else its address). */
static struct pci_dev *lp_dev(const struct gp_pci *p, const struct gp_pci_dev *g)
{
	struct pci_dev **lp = p->lpdevs;
	uintptr_t at = (uintptr_t)g, first = (uintptr_t)p->devs;
	int i = at >= first && at < first + (uintptr_t)p->n * sizeof(*g) && (at - first) % sizeof(*g) == 0
			? (int)((at - first) / sizeof(*g)) : gp_pci_index(p, g->bdf);

	return lp && i >= 0 && i < p->n ? lp[i] : NULL;
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
