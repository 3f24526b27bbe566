/* gpup2p — helpers shared by the pci module's files (not installed). */
#ifndef GPUP2P_PCI_INTERNAL_H
#define GPUP2P_PCI_INTERNAL_H

#include <stdint.h>

#include "gpup2p/pci.h"
#include "gpup2p/root.h"

/* A function's folder, opened and listed once for the whole scan: precheck, the scan, the sysfs
 * facts read from it. */
struct gp_pci_fn {
	int fd;                      /* the folder (O_RDONLY | O_DIRECTORY) beneath the root; -1: read by path */
	char dir[64];                /* "/sys/bus/pci/devices/BDF" */
	struct gp_root_ent *ents;    /* its listing, sorted (NULL: not listed) */
	int n;                       /* its entries; -1: not listed (each name is tried) */
	char canon[GP_PATH_MAX];     /* where it lies, as gp_root_realpath gives it, once canon_rc is 0 */
	int canon_rc;                /* 1: not resolved yet; else 0 or the negative errno resolving gave */
};

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
 * functions' names): host bridges, the chains' and physical functions' indexes, RDMA/net names, NUMA
 * nodes. */
int gp_pci_fill_sysfs(struct gp_pci *p, char (*pf)[GP_BDF_LEN], struct gp_err *e);

/* A copy of s held by p until gp_pci_free ("" shared), or NULL when out of memory. */
const char *gp_pci_keep_str(struct gp_pci *p, const char *s);

/* Free the strings gp_pci_keep_str kept. */
void gp_pci_free_strs(struct gp_pci *p);

/* The files libpci's sysfs method reads in the function's folder f, checked beneath the root so that
 * an error names the file and says what is wrong: 0, or -EINVAL with e set. What they hold into rd
 * (all but the subsystem ids: gp_pci_read_subsys). */
int gp_pci_precheck(const struct gp_root *r, const struct gp_pci_fn *f, struct gp_pci_read *rd, struct gp_err *e);

/* The subsystem ids in f's subsystem_vendor and subsystem_device, as libpci's sysfs method reads
 * them (rd->subsys 0 where it would fall back on config space). */
void gp_pci_read_subsys(const struct gp_root *r, const struct gp_pci_fn *f, struct gp_pci_read *rd);

/* What gp_pci_fill_sysfs reads in function i's folder f: the realpath chain, link, NUMA node, CPUs,
 * and the name of its physical function into pf ("" when none). 0 or a GP_E_* error in e. */
int gp_pci_fill_fn(struct gp_pci *p, int i, struct gp_pci_fn *f, char pf[GP_BDF_LEN], struct gp_err *e);

#endif
