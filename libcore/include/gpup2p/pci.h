/* gpup2p — the PCI model: every function under a root, read through libpci's
 * sysfs method pointed at ROOT/sys/bus/pci, plus the sysfs facts libpci does not
 * keep (link state, NUMA, CPU list, RDMA/netdev names, the realpath chain). */
#ifndef GPUP2P_PCI_H
#define GPUP2P_PCI_H

#include <stdint.h>

#include "gpup2p/err.h"
#include "gpup2p/root.h"

#define GP_BDF_LEN 17          /* "dddd:bb:dd.f" + NUL, the domain up to 8 digits (Intel VMD: 10000 and up) */
#define GP_CHAIN_MAX 16
#define GP_CFG_MAX 4096
#define GP_CFG_STD 256         /* the standard (conventional) config space, read whole */
#define GP_CFG_WIN 64          /* bytes kept of each decoded extended capability */

/* Tri-state for facts that depend on how much config space was readable. */
enum gp_known { GP_UNKNOWN = -1, GP_ABSENT = 0, GP_PRESENT = 1 };

/* PCIe capability "device/port type" (PCIe base spec), or GP_PORT_NONE. */
enum gp_port_type {
	GP_PORT_UNKNOWN = -2,    /* config space too short to tell */
	GP_PORT_NONE = -1,       /* conventional PCI: no PCIe capability */
	GP_PORT_ENDPOINT = 0,
	GP_PORT_LEGACY_EP = 1,
	GP_PORT_ROOT = 4,
	GP_PORT_UPSTREAM = 5,
	GP_PORT_DOWNSTREAM = 6,
	GP_PORT_PCIE_TO_PCI = 7,
	GP_PORT_PCI_TO_PCIE = 8,
	GP_PORT_RC_IEP = 9,
	GP_PORT_RC_EC = 10,
};

/* sysfs resource flags (include/linux/ioport.h). */
#define GP_RES_IO       0x00000100ULL
#define GP_RES_MEM      0x00000200ULL
#define GP_RES_PREFETCH 0x00002000ULL
#define GP_RES_MEM_64   0x00100000ULL
#define GP_RES_UNSET    0x20000000ULL
#define GP_RES_DISABLED 0x10000000ULL

struct gp_bar {
	int index;
	uint64_t start, size, flags;  /* from libpci (sysfs resource); flags as the kernel reports them */
	int is_io, is_64, prefetch, assigned;
};

/* The registers of one decoded extended capability, as read at scan time. */
struct gp_cfg_win {
	uint16_t off;                /* its offset in config space */
	uint16_t len;                /* bytes read from there (0: none; at most GP_CFG_WIN) */
	uint8_t b[GP_CFG_WIN];
};

/* gp_pci_dev.ext: the windows in the order the scan reads them (a later one answers where two overlap) */
enum { GP_EXT_ACS, GP_EXT_REBAR, GP_EXT_ATS, GP_EXT_N };

struct gp_pci_dev {
	char bdf[GP_BDF_LEN];
	int domain, bus, dev, func;
	uint16_t vendor, device, subvendor, subdevice;
	uint32_t class_code;         /* 24-bit class/subclass/prog-if */
	int is_bridge;               /* header type 1 */

	struct gp_bar bars[6];

	/* Config space as read (gp_pci_cfg_read answers from it; other extended bytes are not read: 0):
	 * the standard 256 bytes and, where the extended space is readable, its first header (256..259),
	 * then the decoded extended capabilities' registers (ACS, ReBAR, ATS: 64 bytes each). */
	uint8_t config[GP_CFG_STD + 4];
	struct gp_cfg_win ext[GP_EXT_N];
	int config_len;              /* bytes readable (4096 root, 64 non-root, 256 conventional) */
	enum gp_port_type port_type;
	int pcie_cap;                /* offset, 0 absent, -1 unknown */
	int ext_known;               /* extended capabilities could be read */
	int acs_cap, rebar_cap, ats_cap; /* offsets; 0 absent, -1 unknown */

	double cur_gts, max_gts;     /* link speed in GT/s, 0 unknown */
	int cur_width, max_width;    /* lanes, 0 unknown */

	int numa_node;               /* -1 unknown */
	const char *cpulist;         /* local_cpulist, "" unknown (never NULL; sysfs writes up to a page:
	                                interleaved CPU numbering gives lists like 0,2,4,...,254 of any length);
	                                held by gp_pci, shared by the functions that have the same list */
	char driver[64];             /* bound driver, "" none */
	int iommu_group;             /* -1 none */
	char rdma[64];               /* RDMA device (/sys/class/infiniband), "" none */
	char netdev[64];             /* first network interface, "" none */

	const char *sysfs_path;      /* realpath, as a live path (held by gp_pci) */
	char host_bridge[32];        /* "pci0000:00" */
	int hb;                      /* the host bridge as a number: functions under one have the same */
	int chain_len;               /* bridges from the root port down, excluding self */
	char chain[GP_CHAIN_MAX][GP_BDF_LEN];
	int chain_idx[GP_CHAIN_MAX]; /* index in gp_pci.devs, -1 when not enumerated */
	unsigned domain_below;       /* bit k: chain[k] is a function that hosts a PCI domain of its own
	                                (a pciDDDD:BB below it in the path: Intel VMD), so paths that part
	                                right below it cross a host bridge */
	int parent;                  /* index of the upstream bridge, -1 on a host bridge */
	int physfn;                  /* a virtual function's physical function (index), else -1 */
	unsigned aer_listed;         /* GP_PCI_AER_LISTED when the scan listed the function's folder, with
	                                GP_PCI_AER_HAS(k) for each aer_dev_* file k it holds (0 fatal,
	                                1 nonfatal, 2 correctable); 0: not listed, each file must be asked */
};

#define GP_PCI_AER_LISTED 1u
#define GP_PCI_AER_HAS(k) (2u << (k))

/* A NUMA node with CPUs (/sys/devices/system/node/nodeN/cpulist). */
struct gp_pci_node {
	int id;
	char cpulist[4096];          /* "" none (a memory-only node) */
};

struct gp_pci {
	const struct gp_root *root;
	struct gp_pci_node *nodes;   /* the NUMA nodes, by id; NULL when sysfs lists none */
	int nnodes;
	struct gp_pci_dev *devs;     /* in address order (domain, bus, device, function as numbers) */
	int n;
	char **warnings;             /* non-fatal problems (malformed optional files), NULL-terminated */
	int nwarn;
	void *pacc;                  /* struct pci_access *, kept for config access */
	void *lpdevs;                /* struct pci_dev *[n]: libpci's device of each function, as devs */
	void *strs;                  /* the strings the functions point at (CPU lists, paths) */
};

/* Enumerate every PCI function under the root. A missing or malformed
 * mandatory file (vendor, device, class, resource) is a GP_E_DATA error naming it. After an error
 * nothing is left to free (gp_pci_free is harmless). */
int gp_pci_scan(struct gp_pci *p, const struct gp_root *r, struct gp_err *e);

/* A function's folder during gp_pci_scan_each, open and listed, and what the scan read whole there. */
struct gp_pci_fn;

/* Called by gp_pci_scan_each for function i (p->devs[i], its bdf and sysfs_path known) while its folder
 * f is open; nonzero stops the calls (the scan goes on: its own error comes first). */
typedef int (*gp_pci_each_fn)(const struct gp_pci *p, int i, const struct gp_pci_fn *f, void *arg);

/* gp_pci_scan, calling fn for each function as soon as it is read, in p->devs's order, until a
 * function's error (the scan's, then reported by it) or fn's nonzero. The functions' RDMA devices
 * (devs[].rdma) are not looked up: its caller (the snapshot) reads /sys/class/infiniband itself, and
 * resolving each device's link twice was 4 system calls a device, 3% of a snapshot's CPU at 4000. */
int gp_pci_scan_each(struct gp_pci *p, const struct gp_root *r, gp_pci_each_fn fn, void *arg, struct gp_err *e);

/* The function's folder (/sys/bus/pci/devices/BDF): its fd and listing, as the scan opened it. */
const struct gp_root_dir *gp_pci_fn_dir(const struct gp_pci_fn *f);

/* The bytes of the file `name` of f as the scan read them, whole, listed as a regular file and read as
 * gp_root_read_listed reads one (*len of them), or NULL where the scan did not read it so. */
const char *gp_pci_fn_file(const struct gp_pci_fn *f, const char *name, size_t *len);

/* The text of f's link `name` as the scan read it through the folder (readlinkat), or NULL. */
const char *gp_pci_fn_link(const struct gp_pci_fn *f, const char *name);

/* Release everything gp_pci_scan allocated. */
void gp_pci_free(struct gp_pci *p);

/* A PCI address as numbers. */
struct gp_pci_addr {
	int domain, bus, dev, func;
};

/* The device with this BDF ("0000:00:06.0", "00:06.0" or "10000:e1:00.0"), or NULL. */
const struct gp_pci_dev *gp_pci_find(const struct gp_pci *p, const char *bdf);

/* Index of the device with this BDF, or -1 (a binary search: p->devs is in address order). */
int gp_pci_index(const struct gp_pci *p, const char *bdf);

/* Normalise "bb:dd.f" / "dddd:bb:dd.f" to "dddd:bb:dd.f": the domain 1 to 8 hex digits (NVML's
 * "%08x"), printed with at least 4 as sysfs and lspci do ("10000:e1:00.0" under Intel VMD). 0 or -EINVAL. */
int gp_pci_parse_bdf(const char *s, char out[GP_BDF_LEN]);

/* Parse a BDF as gp_pci_parse_bdf does, into numbers. 0 or -EINVAL. */
int gp_pci_addr_parse(const char *s, struct gp_pci_addr *a);

/* Format an address as sysfs names it ("%04x:%02x:%02x.%x"). */
void gp_pci_addr_format(const struct gp_pci_addr *a, char out[GP_BDF_LEN]);

/* Order of two addresses: domain, bus, device, function as numbers (<0, 0, >0). */
int gp_pci_addr_cmp(const struct gp_pci_addr *x, const struct gp_pci_addr *y);

/* Little-endian reads from the captured config space (each byte from the last of d->ext's windows
 * that holds it, else from d->config; extended bytes that were not read are 0); -1 if beyond
 * config_len. */
int64_t gp_pci_cfg_read(const struct gp_pci_dev *d, int off, int width);

/* Short role name: "root port", "switch upstream", "switch downstream", "endpoint", ... */
const char *gp_pci_port_name(enum gp_port_type t);

enum gp_pci_name_kind { GP_NAME_VENDOR, GP_NAME_DEVICE, GP_NAME_CLASS };

/* The pci.ids name of a function's vendor, device or class into buf ("" when unknown).
 * Names are looked up on demand: loading pci.ids costs more than the whole scan. */
const char *gp_pci_name(const struct gp_pci *p, const struct gp_pci_dev *d, enum gp_pci_name_kind k,
			char *buf, size_t n);

/* Read 16 bits of a function's config space now, through libpci (not the copy taken at scan time).
 * 0, -EINVAL (unknown function, odd or out-of-range offset) or -EIO (the read failed or was short). */
int gp_pci_live_read16(const struct gp_pci *p, const struct gp_pci_dev *d, int off, uint16_t *v);

/* Write 16 bits of a function's config space through libpci (sysfs pwrite to <dev>/config).
 * 0, -EINVAL or -EIO (could not open the file for writing, or the write failed). */
int gp_pci_live_write16(const struct gp_pci *p, const struct gp_pci_dev *d, int off, uint16_t v);

/* PCIe generation for a speed in GT/s (2.5 → 1 … 64 → 6), 0 if unknown. */
int gp_pci_gen(double gts);

#endif
