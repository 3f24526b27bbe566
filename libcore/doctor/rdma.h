/* gpup2p doctor — what the rdma.* checks share: doctor/rdma.c (ports, GIDs, rates, uverbs, the verbs
 * library) and doctor/rdma_counters.c (the ports' error counters and link flaps). Internal to
 * libcore/doctor/ and its tests. */
#ifndef GPUP2P_DOCTOR_RDMA_H
#define GPUP2P_DOCTOR_RDMA_H

#include "check.h"

#define IB_ACTIVE 4     /* ports/N/state "4: ACTIVE" */
#define IB_LINKUP 5     /* ports/N/phys_state "5: LinkUp" */

/* One RDMA device: its name, its topology entry (a NIC) or -1, and whether it is software RDMA (rxe,
 * siw: no device link of its own; its NIC, if any, is the one of the network interface it runs over). */
struct ibdev {
	const char *name;
	int nic;
	int soft;
	char over[32];         /* soft: the interface it runs over (its "parent" file), or "" */
};

/* One port, as the checks see it. */
struct ibport {
	struct ibdev d;
	const char *port;      /* "1" */
	char subject[96];      /* "mlx5_0/1" */
	char base[160];        /* /sys/class/infiniband/DEV/ports/N: what findings name */
	char at[400];          /* the same folder resolved (where its files are read), else base */
	int idx;               /* its place among all the devices' ports, in walk order */
	int dev, k;            /* its device's index (gp_doctor_ib_name), its own among the device's ports */
};

/* The files of a port the checks read (gp_doctor_ib_file): each read once per run. */
enum ib_file { IBF_STATE, IBF_PHYS_STATE, IBF_LINK_LAYER, IBF_RATE, IBF_N };
#define IBF_MAX 128     /* the largest buffer a check reads one into */

/* The RDMA devices and their ports, read once per run (doctor/rdma_facts.c): the first call lists
 * /sys/class/infiniband, resolves each device's folder, tells software RDMA (no device link) and
 * lists its ports; out of memory: none, and c->out.nomem set. */

/* The devices listed (0: none, or the listing's negative errno). */
int gp_doctor_ib_count(struct gp_doctor_ctx *c);

/* Device i's name (sorted order), 0 <= i < gp_doctor_ib_count. */
const char *gp_doctor_ib_name(struct gp_doctor_ctx *c, int i);

/* The index of RDMA device name, or -1. */
int gp_doctor_ib_find(struct gp_doctor_ctx *c, const char *name);

/* The topology NIC of RDMA device name (the first in topology order naming it), or -1. */
int gp_doctor_ib_nic(struct gp_doctor_ctx *c, const char *name);

/* 1 when RDMA device name is software RDMA (no /sys/class/infiniband/DEV/device), else 0. */
int gp_doctor_ib_soft(struct gp_doctor_ctx *c, const char *name);

/* Topology NICs whose RDMA device is not software RDMA; -1 out of memory. */
int gp_doctor_ib_hw_nics(struct gp_doctor_ctx *c);

/* Device i's ports (sorted names, kept by the context) into *ports: their count, 0 none, or the
 * listing's negative errno. */
int gp_doctor_ib_ports(struct gp_doctor_ctx *c, int i, char ***ports);

/* Port k of device i as the checks see it. */
void gp_doctor_ib_port(struct gp_doctor_ctx *c, int i, int k, struct ibport *p);

/* Port p's file f (its folder opened and listed once for all of them, on first use; only the files
 * listed opened) into buf as gp_doctor_read of p->at/FILE answers with a buffer of n <= IBF_MAX bytes:
 * its length, or -errno. */
long gp_doctor_ib_file(struct gp_doctor_ctx *c, const struct ibport *p, enum ib_file f, char *buf, size_t n);

/* File f's name in the port's folder ("state"). */
const char *gp_doctor_ib_file_name(enum ib_file f);

/* The sort order of the names (strcmp), for bsearch. */
int gp_doctor_ib_cmp(const void *a, const void *b);

/* The uverbs device of RDMA device name ("uverbs3", "" none), /sys/class/infiniband_verbs read once for
 * all the devices; NULL when name is not one of them. */
const char *gp_doctor_ib_uverbs(struct gp_doctor_ctx *c, const char *name);

/* Release what gp_doctor_ib_* read; called by gp_doctor_ctx_free (rdma's cleanup). */
void gp_doctor_ib_free(struct gp_doctor_ctx *c);

/* Call one() for every port of every RDMA device; no device, or a snapshot that did not record the
 * ports (an older gpup2p), or a device without ports: the finding that says so. */
void gp_doctor_rdma_each_port(struct gp_doctor_ctx *c, void (*one)(struct gp_doctor_ctx *c, const struct ibport *p));

/* Add the device's PCI function to f; the finding's BDF list names it. */
void gp_doctor_rdma_bdf(const struct gp_doctor_ctx *c, const struct ibport *p, struct gp_finding *f);

/* rdma.errors and rdma.flaps (doctor/rdma_counters.c), listed in rdma.c's table. */
void gp_doctor_check_rdma_errors(struct gp_doctor_ctx *c);
void gp_doctor_check_rdma_flaps(struct gp_doctor_ctx *c);

/* Release the ports' counters read by those checks; called by gp_doctor_ctx_free. */
void gp_doctor_rdma_counters_free(struct gp_doctor_ctx *c);

#endif
