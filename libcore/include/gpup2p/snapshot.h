/* gpup2p — snapshots: the sysfs/proc files gpup2p reads, copied from a root
 * (usually the live system) into a directory laid out as that root, plus the
 * NVML facts in gpup2p/gpu-facts, so that `--root DIR` replays them exactly. */
#ifndef GPUP2P_SNAPSHOT_H
#define GPUP2P_SNAPSHOT_H

#include "gpup2p/err.h"
#include "gpup2p/root.h"

struct gp_snapshot_stats {
	int devices;       /* PCI functions captured */
	int files;         /* regular files written */
	int gpu_facts;     /* 1 when NVML facts were recorded, 0 when "unavailable" was */
};

/* Copy the state under r into dir, which must not exist (it is created). On error the
 * partial directory is removed. */
int gp_snapshot_capture(const struct gp_root *r, const char *dir, struct gp_snapshot_stats *st, struct gp_err *e);

/* Pack dir's parent entry named like dir into a gzip'ed tar archive with tar(1):
 * `tar -C PARENT -czf FILE BASENAME`. A failed tar removes FILE. */
int gp_snapshot_pack(const char *dir, const char *file, struct gp_err *e);

/* Remove a directory tree (what capture made). 0 or negative errno. */
int gp_snapshot_remove_tree(const char *dir);

#endif
