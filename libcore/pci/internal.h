/* gpup2p — helpers shared by the pci module's files (not installed). */
#ifndef GPUP2P_PCI_INTERNAL_H
#define GPUP2P_PCI_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "gpup2p/pci.h"
#include "gpup2p/root.h"

/* What a scan read whole in a function's folder, kept for gp_pci_scan_each's caller: up to
 * GP_PCI_KEPT_MAX files or links, GP_PCI_KEPT_BYTES bytes (config space and two pages of text). */
#define GP_PCI_KEPT_MAX 24
#define GP_PCI_KEPT_BYTES (4 * 4096 + 4096)

/* A function's folder, opened and listed once for the whole scan: precheck, the scan, the sysfs
 * facts read from it. */
struct gp_pci_fn {
	struct gp_root_dir d;        /* "/sys/bus/pci/devices/BDF", open beneath the root (fd -1: read by path) */
	char canon[GP_PATH_MAX];     /* where it lies, as gp_root_realpath gives it, once canon_rc is 0 */
	int canon_rc;                /* 1: not resolved yet; else 0 or the negative errno resolving gave */
	int devs_fd;                 /* /sys/bus/pci/devices, open (O_PATH) under a root to read the links; -1 */
	char devs_canon[GP_PATH_MAX]; /* where it lies ("": unknown) */
	int keep;                    /* 1: keep what is read whole (gp_pci_fn_keep) */
	int nkept;
	struct {
		const char *name;    /* a static name */
		int link;            /* 1: a link's text */
		size_t off, len;     /* in kept[] */
	} kept[GP_PCI_KEPT_MAX];
	size_t used;
	char bytes[GP_PCI_KEPT_BYTES];
};

/* Keep len bytes of data as what f's file (link: link) `name` holds whole, where f keeps them and
 * there is room (name must outlive the scan of f: a literal). */
void gp_pci_fn_keep(struct gp_pci_fn *f, const char *name, int link, const void *data, size_t len);

/* gp_root_read_text_listed of f's file `name`, its bytes kept (gp_pci_fn_keep) where read whole. */
ssize_t gp_pci_fn_text_listed(const struct gp_root *r, struct gp_pci_fn *f, const char *name, char *buf, size_t n);

/* Where the folder f lies (f->canon), resolved once: 0 or a negative errno. */
int gp_pci_fn_canon(const struct gp_root *r, struct gp_pci_fn *f);

/* What precheck read in a function's folder, parsed as libpci 3.9's sysfs method parses it. */
struct gp_pci_read {
	uint16_t vendor, device;     /* libpci's strtol(text, NULL, 0), an int cut to 16 bits */
	uint32_t class_code;         /* the class as hex, or libpci's (class >> 8) << 8 where the 31-byte
	                                read the scan always made of it would not fit */
	int subsys;                  /* 1: subsystem_vendor read (subvendor, subdevice as libpci reads them);
	                                0: libpci takes them from config space */
	uint16_t subvendor, subdevice;
	int nres;                    /* lines of "resource" libpci's reader takes (up to 18, 6 BARs) */
	int res_bad;                 /* one of them it refuses (its "Syntax error") */
	uint64_t start[6], size[6], flags[6];
};

/* Record a non-fatal problem in p->warnings. */
void gp_pci_warn(struct gp_pci *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fill what depends on all the functions (each read with gp_pci_fill_fn; pf: their physical
 * functions' names): host bridges, the chains' and physical functions' indexes, RDMA (unless rdma
 * is 0) and net names, NUMA nodes. */
int gp_pci_fill_sysfs(struct gp_pci *p, char (*pf)[GP_BDF_LEN], int rdma, struct gp_err *e);

/* A copy of s held by p until gp_pci_free ("" shared), or NULL when out of memory. */
const char *gp_pci_keep_str(struct gp_pci *p, const char *s);

/* Free the strings gp_pci_keep_str kept. */
void gp_pci_free_strs(struct gp_pci *p);

/* The files libpci's sysfs method reads in the function's folder f, checked beneath the root so that
 * an error names the file and says what is wrong: 0, or -EINVAL with e set. What they hold into rd
 * (all but the subsystem ids: gp_pci_read_subsys). */
int gp_pci_precheck(const struct gp_root *r, struct gp_pci_fn *f, struct gp_pci_read *rd, struct gp_err *e);

/* The subsystem ids in f's subsystem_vendor and subsystem_device, as libpci's sysfs method reads
 * them (rd->subsys 0 where it would fall back on config space). */
void gp_pci_read_subsys(const struct gp_root *r, struct gp_pci_fn *f, struct gp_pci_read *rd);

/* What gp_pci_fill_sysfs reads in function i's folder f: the realpath chain, link, NUMA node, CPUs,
 * and the name of its physical function into pf ("" when none). 0 or a GP_E_* error in e. */
int gp_pci_fill_fn(struct gp_pci *p, int i, struct gp_pci_fn *f, char pf[GP_BDF_LEN], struct gp_err *e);

struct pci_dev; /* libpci's */

/* Find the PCIe, ACS, ReBAR and ATS capabilities in libpci's list d, trusted only where g's config
 * space was readable, and read the extended ones' registers into g's windows: from whole (wlen bytes,
 * the config file read whole) where given, else with pread on cfg (an open fd, or -1). */
void gp_pci_fill_caps(struct gp_pci_dev *g, struct pci_dev *d, int cfg, const char *whole, ssize_t wlen);

/* The subsystem ids where sysfs gives none, as libpci's generic fill takes them from config space by
 * header type (a bridge's from its SSVID capability); 0 where it finds none. */
void gp_pci_subsys_from_config(struct gp_pci_dev *g, struct pci_dev *d);

#endif
