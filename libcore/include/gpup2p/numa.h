/* gpup2p — placing host memory (and the thread that touches it) on a NUMA node, and finding out
 * where a page ended up. Linux system calls only (set_mempolicy, get_mempolicy, sched_setaffinity):
 * no libnuma needed. */
#ifndef GPUP2P_NUMA_H
#define GPUP2P_NUMA_H

#include <sched.h>

#include "gpup2p/err.h"

struct gp_numa_saved {
	int bound;                 /* 1 while a binding is in force */
	cpu_set_t cpus;            /* the thread's affinity before */
};

/* Prefer node for this thread's new pages and run it on the node's CPUs
 * (/sys/devices/system/node/nodeN/cpulist). 0, or GP_E_USAGE (no such node) / GP_E_FAIL. */
int gp_numa_bind(int node, struct gp_numa_saved *sv, struct gp_err *e);

/* Undo gp_numa_bind (default policy, previous CPUs). */
void gp_numa_unbind(struct gp_numa_saved *sv);

/* NUMA node of the page holding p (touched), -1 when the kernel does not say. */
int gp_numa_of(const void *p);

/* Parse a cpulist ("0-3,8,10-11") into set. 0 or -EINVAL. */
int gp_cpulist_parse(const char *s, cpu_set_t *set);

#endif
