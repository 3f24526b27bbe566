/* gpup2p — PCIe Access Control Services: decode the capability and control registers of every
 * ACS-capable bridge and tell which GPU/NIC pairs' peer traffic crosses each one. A bridge with
 * ReqRedir, CmpltRedir or EgressCtrl set sends that traffic up to the root complex. */
#ifndef GPUP2P_ACS_H
#define GPUP2P_ACS_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/topo.h"

#define GP_ACS_SV 0x01   /* SrcValid */
#define GP_ACS_TB 0x02   /* TransBlk */
#define GP_ACS_RR 0x04   /* ReqRedir */
#define GP_ACS_CR 0x08   /* CmpltRedir */
#define GP_ACS_UF 0x10   /* UpstreamFwd */
#define GP_ACS_EC 0x20   /* EgressCtrl */
#define GP_ACS_DT 0x40   /* DirectTrans */
#define GP_ACS_REDIRECT (GP_ACS_RR | GP_ACS_CR | GP_ACS_EC)

struct gp_acs_bridge {
	int pci;                 /* index in gp_pci.devs */
	enum gp_known state;     /* PRESENT: registers read; UNKNOWN: extended space not readable */
	uint16_t cap, ctl;       /* valid when PRESENT */
	int redirects;           /* 1 RR/CR/EC set, 0 not, -1 unknown */
	int npairs;              /* GPU/NIC pairs whose path crosses it */
	int (*pairs)[2];         /* matrix indices (i < j) */
};

struct gp_acs_audit {
	int n;
	struct gp_acs_bridge *b;
	int on_path_redirecting; /* bridges on a GPU/NIC path that redirect */
	int on_path_unknown;     /* bridges on a GPU/NIC path whose ACS state is unknown */
};

/* ACS registers of a function: 1 present (cap/ctl filled), 0 absent, -1 unknown (not readable). */
int gp_acs_read(const struct gp_pci_dev *d, uint16_t *cap, uint16_t *ctl);

/* lspci-style decode: "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-". */
const char *gp_acs_decode(uint16_t v, char *buf, size_t n);

/* 1 when the pair (matrix entries i, j) has PCI function `pci` on its peer-to-peer path. */
int gp_acs_on_pair_path(const struct gp_topo *t, int pci, int i, int j);

/* Audit every bridge with an ACS capability (or whose capability cannot be read). 0 or -ENOMEM. */
int gp_acs_audit(const struct gp_topo *t, struct gp_acs_audit *a);

/* Release what gp_acs_audit allocated. */
void gp_acs_audit_free(struct gp_acs_audit *a);

/* The kernel parameter that clears RR/CR/EC at boot on the redirecting on-path bridges
 * ("pci=disable_acs_redir=0000:00:01.0;0000:02:08.0"), "" when none. Returns buf. */
const char *gp_acs_boot_param(const struct gp_topo *t, const struct gp_acs_audit *a, char *buf, size_t n);

#endif
