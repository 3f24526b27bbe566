/* gpup2p doctor — the kernel log's NVIDIA events: the Xid catalogue (xid_catalog.c), the reader of
 * /dev/kmsg both gpu.xid (gpu_xid.c) and nvlink.sxid (gpu_sxid.c) use, and the SXid line parser.
 * Internal to libcore/doctor/ and its tests. */
#ifndef GPUP2P_DOCTOR_XID_H
#define GPUP2P_DOCTOR_XID_H

#include "check.h"

/* NVIDIA's "Resolution Bucket (Immediate Action)" of an Xid in its catalogue for Ampere and later. */
enum gp_xid_bucket {
	GP_XB_NONE,               /* the catalogue gives none (codes added after the buckets) */
	GP_XB_CONTACT_SUPPORT,    /* most of these are codes the catalogue marks unused on Ampere and later */
	GP_XB_RESTART_APP,        /* the application died; the GPU is fine */
	GP_XB_IGNORE,             /* informational, or corrected by the hardware */
	GP_XB_RESET_GPU,          /* drain, reset the GPU (or reboot) */
	GP_XB_RESTART_BM,         /* power-cycle the machine (the GPU is gone from the bus) */
	GP_XB_RESTART_VM,
	GP_XB_UPDATE_SWFW,
	GP_XB_CHECK_MECHANICALS,
	GP_XB_CHECK_UVM,
	GP_XB_WORKFLOW_XID_45,
	GP_XB_WORKFLOW_XID_48,
	GP_XB_WORKFLOW_NVLINK_ERR,
	GP_XB_WORKFLOW_NVLINK5_ERR,
	GP_XB_XID_154,
	GP_XB_N
};

/* One Xid code: what it is, NVIDIA's immediate action, what it means for P2P and GPUDirect. */
struct gp_xid_entry {
	int code;
	enum gp_xid_bucket bucket;
	enum gp_sev sev;          /* for a machine doing P2P/GPUDirect: error, warning or info */
	const char *name;         /* the driver's mnemonic */
	const char *what;         /* in a few words; NULL: unused on Ampere and later */
	const char *fix;          /* NULL: the bucket's fix */
};

/* The catalogue, ordered by code; n entries. */
extern const struct gp_xid_entry gp_xid_catalog[];
extern const int gp_xid_ncatalog;

/* The entry of code, or NULL when the catalogue does not list it. */
const struct gp_xid_entry *gp_xid_lookup(int code);

/* The bucket's name as NVIDIA spells it ("RESET_GPU"); "-" for GP_XB_NONE. */
const char *gp_xid_bucket_name(enum gp_xid_bucket b);

/* The fix an entry prints: its own, else its bucket's. bdf names the GPU in commands. */
void gp_xid_fix(const struct gp_xid_entry *x, const char *bdf, char *buf, size_t n);

/* Xid 154's new recovery action from its line ("... to 0x2 (Node Reboot Required)"): 0 none, 1 GPU
 * reset, 2 node reboot, 3 drain P2P, 4 drain and reset; -1 when the line does not say. */
int gp_xid154_action(const char *line);

/* An NVSwitch SXid line ("nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 20034, Fatal, Link 24 LTSSM Fault
 * Up"): 1 with the switch's name, its PCI function, the code, the link (-1 not named) and fatal (1
 * "Fatal", 0 "Non-fatal", -1 the line does not say); 0 when the line is no SXid line; -EINVAL when it
 * starts like one but does not parse. */
struct gp_sxid {
	char sw[32];
	char bdf[GP_BDF_LEN];
	int code, link, fatal;
};
int gp_doctor_sxid_parse(const char *line, struct gp_sxid *s);

/* Read the kernel log through the root (ROOT/dev/kmsg: records or dmesg lines), calling line() on each
 * line; *lines and *lost (records overwritten while reading) are counted. 0 or -errno. */
int gp_doctor_kmsg_read(const struct gp_doctor_ctx *c, void (*line)(void *arg, const char *line), void *arg,
			long *lost);

/* nvlink.sxid (doctor/gpu_sxid.c), listed in nvlink.c's table. */
void gp_doctor_check_sxid(struct gp_doctor_ctx *c);

#endif
