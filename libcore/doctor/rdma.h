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
	char base[160];        /* /sys/class/infiniband/DEV/ports/N */
};

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
