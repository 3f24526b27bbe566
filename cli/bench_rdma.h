/* gpup2p bench rdma — what the option parser (cmd_bench_rdma.c) and the printer (bench_rdma_out.c) share. */
#ifndef GPUP2P_CLI_BENCH_RDMA_H
#define GPUP2P_CLI_BENCH_RDMA_H

#include "cli.h"
#include "gpup2p/rdma.h"

struct rdma_row {
	struct gp_rdma_result r;
	double floor;                  /* --min-bw, -1 none */
};

struct rdma_report {
	struct gp_rdma_info info;
	const char *distance;          /* "host", "PIX" ... "SYS", "unknown" */
	const char *peer_distance;     /* loopback: the other QP's memory to its NIC */
	const char *mem, *peer_mem;    /* "host", "gpu" */
	int loopback;
	struct rdma_row *rows;
	int n;
};

/* Print the rows in the chosen format (JSON with the envelope and exit_status). */
void rdma_print(const struct cli *c, const struct rdma_report *rp, int argc, char **argv, int exit_status);

/* 1 when a bandwidth row fell below its floor. */
int rdma_below(const struct rdma_row *w);

#endif
