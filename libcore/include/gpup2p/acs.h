/* gpup2p — PCIe Access Control Services: decode the capability and control registers of every
 * ACS-capable bridge (and function of a multi-function GPU/NIC) and tell which GPU/NIC pairs' peer
 * traffic crosses each one. A bridge with ReqRedir, CmpltRedir or EgressCtrl set sends that traffic
 * up to the root complex: that matters most for pairs whose traffic would otherwise stay below the
 * host bridge (PIX/PXB), little for pairs that cross the root complex anyway (PHB/NODE/SYS). */
#ifndef GPUP2P_ACS_H
#define GPUP2P_ACS_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/buf.h"
#include "gpup2p/root.h"
#include "gpup2p/topo.h"

#define GP_ACS_SV 0x01   /* SrcValid */
#define GP_ACS_TB 0x02   /* TransBlk */
#define GP_ACS_RR 0x04   /* ReqRedir */
#define GP_ACS_CR 0x08   /* CmpltRedir */
#define GP_ACS_UF 0x10   /* UpstreamFwd */
#define GP_ACS_EC 0x20   /* EgressCtrl */
#define GP_ACS_DT 0x40   /* DirectTrans */
#define GP_ACS_REDIRECT (GP_ACS_RR | GP_ACS_CR | GP_ACS_EC)

/* What a bridge's redirection costs the GPU/NIC pairs whose path crosses it. */
enum gp_acs_impact {
	GP_ACS_IMPACT_UNKNOWN = -1, /* on a path, ACS not readable */
	GP_ACS_IMPACT_NONE = 0,     /* does not redirect, or on no pair's path */
	GP_ACS_IMPACT_LOW,          /* redirects only pairs that cross the root complex anyway (PHB/NODE/SYS)
	                               or talk over NVLink */
	GP_ACS_IMPACT_HIGH,         /* redirects a pair whose traffic would otherwise stay below the host
	                               bridge (PIX/PXB: switch ports, functions of one device) */
};

/* The pairs crossing a bridge are every entry of one side with every entry of the other: for a bridge
 * the GPUs/NICs below it and all the others, for a function of a multi-function GPU/NIC itself and
 * the other GPU/NIC functions of its device. Kept as two sets, never as a list of pairs (a root port
 * above 500 of 4000 NICs is on 1.75 million pairs); gp_acs_pair_next lists them where printed. */
struct gp_acs_bridge {
	int pci;                 /* index in gp_pci.devs */
	enum gp_known state;     /* PRESENT: registers read; UNKNOWN: extended space not readable */
	uint16_t cap, ctl;       /* valid when PRESENT */
	int ctl_off;             /* config offset of the control register (see gp_acs_ctl_offset) */
	int redirects;           /* 1 RR/CR/EC set, 0 not, -1 unknown */
	int npairs;              /* GPU/NIC pairs whose path crosses it: nside * nother */
	int nside, nother;
	uint64_t *side;          /* bit per matrix entry: the entries below it (a function: itself) */
	uint64_t *other;         /* the other side; NULL: every entry not in side */
	int nlocal;              /* of those, pairs that stay below the host bridge (gp_acs_pair_local) */
	enum gp_acs_impact impact;
};

struct gp_acs_audit {
	int n;
	struct gp_acs_bridge *b;
	int on_path_redirecting; /* bridges on a GPU/NIC path that redirect (impact high or low) */
	int on_path_unknown;     /* bridges on a GPU/NIC path whose ACS state is unknown */
	int redirect_high;       /* redirecting bridges of impact high */
	int redirect_low;        /* redirecting bridges of impact low */
	int nent;                /* matrix entries (the bitmaps' length in bits) */
	uint64_t *firsts;        /* bit per matrix entry: the first entry of its group (gp_topo_dev.group) */
};

/* 1 when the function is an Intel PCH root port whose ACS control register sits at capability + 8
 * (a dword), not + 6 (Sunrise Point, Union Point, 7th/8th gen mobile: the kernel's
 * pci_quirk_intel_spt_pch_acs_match). lspci shows the wrong register for these. */
int gp_acs_intel_pch_quirk(const struct gp_pci_dev *d);

/* Config offset of a function's ACS control register: capability + 6, + 8 where the Intel PCH quirk
 * applies; 0 when the function has no (readable) ACS capability. */
int gp_acs_ctl_offset(const struct gp_pci_dev *d);

/* ACS registers of a function: 1 present (cap/ctl filled), 0 absent, -1 unknown (not readable). */
int gp_acs_read(const struct gp_pci_dev *d, uint16_t *cap, uint16_t *ctl);

/* lspci-style decode: "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-". */
const char *gp_acs_decode(uint16_t v, char *buf, size_t n);

/* 1 when the pair (matrix entries i, j) has PCI function `pci` on its peer-to-peer path: a bridge below
 * the pair's lowest common bridge, or one of the pair when both are functions of one device. */
int gp_acs_on_pair_path(const struct gp_topo *t, int pci, int i, int j);

/* 1 when the pair's peer traffic stays below the host bridge unless redirected: PIX or PXB (not
 * NVLink), or two functions of one device. 0 when it crosses the root complex anyway. */
int gp_acs_pair_local(const struct gp_topo *t, int i, int j);

/* The next pair crossing b after (*i, *j), in order (i < j, by i then j): start from *i = *j = -1.
 * With grouped set and b a bridge, only pairs of groups' first entries (gp_topo_dev.group): one per
 * pair of groups, as text names them (a group's entries all lie on one side). 1 found, 0 no more. */
int gp_acs_pair_next(const struct gp_acs_audit *a, const struct gp_acs_bridge *b, int grouped, int *i, int *j);

/* Name of entry i in a listing of b's pairs into buf: a group's name ("NIC0+126VFs") where the listing
 * is grouped (b a bridge), else the entry's ("NIC8"). Returns buf. */
const char *gp_acs_pair_name(const struct gp_topo *t, const struct gp_acs_bridge *b, int grouped, int i, char *buf,
			     size_t n);

/* Name of an impact: "high", "low", "none", "unknown". */
const char *gp_acs_impact_name(enum gp_acs_impact m);

/* Audit every bridge with an ACS capability (or whose capability cannot be read), and every function
 * of a multi-function GPU/NIC with one. 0 or -ENOMEM. */
int gp_acs_audit(const struct gp_topo *t, struct gp_acs_audit *a);

/* Release what gp_acs_audit allocated. */
void gp_acs_audit_free(struct gp_acs_audit *a);

/* Append the kernel parameter that clears RR/CR/EC at boot on the redirecting on-path bridges
 * ("pci=disable_acs_redir=0000:00:01.0;0000:02:08.0", every one of them), nothing when none.
 * 0 or -ENOMEM. */
int gp_acs_boot_param(const struct gp_topo *t, const struct gp_acs_audit *a, struct gp_buf *b);

/* --- the next boot (acs_boot.c) --------------------------------------------------------------- */

#define GP_ACS_UNIT_DIR "/etc/systemd/system"   /* its X.wants/ folders hold the enabled units */
#define GP_ACS_BOOT_SCRIPT "/etc/rc.local"       /* the boot script README offers instead */

/* The ACS control register a function gets at the next boot, from its value now (what firmware
 * left, unless changed since), the capability, whether an IOMMU is on (the kernel then sets
 * SrcValid, ReqRedir, CmpltRedir, UpstreamFwd) and the kernel command line's pci=disable_acs_redir=
 * and pci=config_acs= (applied after, with or without an IOMMU). *by_param: 1 when one named it. */
uint16_t gp_acs_boot_ctl(const struct gp_pci_dev *d, uint16_t cap, uint16_t ctl, int iommu, const char *cmdline,
			 int *by_param);

/* 1 when a unit file name is gpup2p's ACS unit (gpup2p-acs.service, gpup2p-acs@X.service). */
int gp_acs_boot_unit_name(const char *name);

/* 1 when a boot script line (len bytes, no newline) runs gpup2p acs --disable (not commented out). */
int gp_acs_boot_script_line(const char *line, size_t len);

/* Does something clear ACS redirection at boot: the gpup2p-acs unit enabled (a link in
 * /etc/systemd/system/X.wants), or /etc/rc.local running gpup2p acs --disable? 1 (which names it),
 * 0 nothing, or -errno when the unit folder could not be listed. */
int gp_acs_boot_clearer(const struct gp_root *r, char *which, size_t n);

#endif
