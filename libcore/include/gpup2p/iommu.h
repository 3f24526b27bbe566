/* gpup2p — IOMMU mode of the system and of each device, from
 * /sys/class/iommu, /sys/kernel/iommu_groups/N/type and /proc/cmdline.
 * Never from dmesg: a VM with no IOMMU logs "Default domain type: Translated". */
#ifndef GPUP2P_IOMMU_H
#define GPUP2P_IOMMU_H

#include "gpup2p/root.h"

enum gp_iommu_mode {
	GP_IOMMU_UNKNOWN = 0,
	GP_IOMMU_OFF,        /* no IOMMU unit registered */
	GP_IOMMU_IDENTITY,   /* passthrough: devices see physical addresses */
	GP_IOMMU_DMA,        /* translated, strict invalidation */
	GP_IOMMU_DMA_FQ,     /* translated, lazy (flush queue) invalidation */
	GP_IOMMU_BLOCKED,    /* group type "blocked" */
	GP_IOMMU_UNMANAGED,  /* owned by VFIO or another user */
	GP_IOMMU_MIXED,      /* groups of different types */
};

struct gp_iommu {
	enum gp_iommu_mode mode;
	int units;             /* entries in /sys/class/iommu */
	int groups;            /* entries in /sys/kernel/iommu_groups */
	char unit_names[256];  /* "dmar0,dmar1"; when they do not fit, the last entry is "+N more" */
	char cmdline[4096];    /* IOMMU- and ACS-related /proc/cmdline tokens (iommu=, intel_iommu=, pci= with
	                          disable_acs_redir= or config_acs=), space separated (as long as the
	                          kernel's command line can be: COMMAND_LINE_SIZE is 4096 at most) */
	char note[256];        /* a disagreement worth telling (cmdline asks for on, none registered) */
};

/* Read the system IOMMU state. Never fails: what cannot be read stays unknown. */
void gp_iommu_read(const struct gp_root *r, struct gp_iommu *io);

/* Mode of one IOMMU group (its "type" file), GP_IOMMU_UNKNOWN if unreadable. */
enum gp_iommu_mode gp_iommu_group_mode(const struct gp_root *r, int group);

/* Parse a group type string ("DMA-FQ", "identity", ...). */
enum gp_iommu_mode gp_iommu_parse_type(const char *s);

/* Name of a mode as printed: "off", "identity", "DMA", "DMA-FQ", ... */
const char *gp_iommu_mode_name(enum gp_iommu_mode m);

#endif
