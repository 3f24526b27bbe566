/* gpup2p — work counters: how many pairs, path steps and files a command touched. They count work, not
 * time, so a test can tell linear from quadratic growth on a loaded machine (tests/cli/test_scale.sh).
 * With GPUP2P_STATS set in the environment the command prints them on stderr when it ends. */
#ifndef GPUP2P_STATS_H
#define GPUP2P_STATS_H

#include <stdio.h>

struct gp_work {
	unsigned long pair_visits;   /* GPU/NIC pairs classified or listed one by one */
	unsigned long path_steps;    /* bridges stepped over along a function's chain of upstream bridges */
	unsigned long files_opened;  /* files and folders opened or resolved beneath the root */
	unsigned long compares;      /* doctor's text report: steps spent finding a finding's check, heading
	                                and fold (each finding against others) */
};

/* The process's counters. */
extern struct gp_work gp_work;

/* Count v more: a relaxed load and store, no locked instruction (the topo matrix counts 16 million
 * cells); two threads counting at once may lose a count, never corrupt one. */
#define GP_STAT_ADD(field, v) \
	__atomic_store_n(&gp_work.field, __atomic_load_n(&gp_work.field, __ATOMIC_RELAXED) + (unsigned long)(v), \
			 __ATOMIC_RELAXED)

/* Print the counters as one line: "stats: pair_visits N path_steps N files_opened N compares N". */
void gp_work_print(FILE *f);

#endif
