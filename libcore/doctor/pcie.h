/* gpup2p doctor — the pcie.* checks that live outside doctor/pcie.c (doctor/pcie_cfg.c), for its
 * table. Internal to libcore/doctor/. */
#ifndef GPUP2P_DOCTOR_PCIE_H
#define GPUP2P_DOCTOR_PCIE_H

#include "check.h"

/* A short name for PCI function idx: the topology name of a GPU or NIC, else its port's role. */
const char *gp_doctor_pcie_role(const struct gp_doctor_ctx *c, int idx);

/* Append ", s" to the list in buf (n bytes; "s" when empty), cut at the buffer's end. */
void gp_doctor_pcie_append(char *buf, size_t n, const char *s);

/* pcie.mps: Max Payload Size along each GPU's paths to the NICs on its host bridge; info where it
 * differs. */
void gp_doctor_pcie_mps(struct gp_doctor_ctx *c);

/* pcie.relaxed_ordering: each NIC's Device Control; info where Enable Relaxed Ordering is clear. */
void gp_doctor_pcie_ro(struct gp_doctor_ctx *c);

/* pcie.replay: each GPU's PCIe replay counter (NVML); warning where it rose between two reads. */
void gp_doctor_pcie_replay(struct gp_doctor_ctx *c);

#endif
