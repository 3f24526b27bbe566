/* gpup2p — helpers shared by the pci module's files (not installed). */
#ifndef GPUP2P_PCI_INTERNAL_H
#define GPUP2P_PCI_INTERNAL_H

#include "gpup2p/pci.h"

/* Record a non-fatal problem in p->warnings. */
void gp_pci_warn(struct gp_pci *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fill what libpci does not read: realpath chain, link, NUMA, CPUs, RDMA/net names. */
int gp_pci_fill_sysfs(struct gp_pci *p, struct gp_err *e);

/* A copy of s held by p until gp_pci_free ("" shared), or NULL when out of memory. */
const char *gp_pci_keep_str(struct gp_pci *p, const char *s);

/* Free the strings gp_pci_keep_str kept. */
void gp_pci_free_strs(struct gp_pci *p);

/* The files libpci's scan reads in the function bdf's folder, checked beneath the root so that an
 * error names the file and says what is wrong: 0, or -EINVAL with e set. */
int gp_pci_precheck(const struct gp_root *r, const char *bdf, struct gp_err *e);

#endif
