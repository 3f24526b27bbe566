/* gpup2p — snapshots: the sysfs/proc files gpup2p reads, copied from a root
 * (usually the live system) into a directory laid out as that root, plus the
 * NVML facts in gpup2p/gpu-facts, so that `--root DIR` replays them exactly.
 * A snapshot either captures what the commands would read, or fails with the
 * error they give on that root; whatever it writes, --root reads back. */
#ifndef GPUP2P_SNAPSHOT_H
#define GPUP2P_SNAPSHOT_H

#include <stddef.h>

#include "gpup2p/err.h"
#include "gpup2p/root.h"

/* The marker capture writes last: a directory holding it is a gpup2p snapshot. Its first line
 * starts with GP_SNAPSHOT_MAGIC. */
#define GP_SNAPSHOT_MARKER "/gpup2p/snapshot-info"
#define GP_SNAPSHOT_MAGIC "gpup2p-snapshot "

struct gp_snapshot_stats {
	int devices;       /* PCI functions captured */
	int files;         /* regular files written */
	int gpu_facts;     /* 1 when NVML facts were recorded, 0 when "unavailable" was */
};

/* Copy the state under r into dir, which must not exist (it is created). The root is first
 * loaded as topo loads it: a root topo refuses is refused with topo's error. Files the commands
 * treat as unreadable are left out. On error the partial directory is removed. */
int gp_snapshot_capture(const struct gp_root *r, const char *dir, struct gp_snapshot_stats *st, struct gp_err *e);

/* Capture r into `path`: a directory (as_dir) or a gzip'ed tar archive. The snapshot is written
 * beside path (a hidden temporary sibling) and renamed into place. An existing path is replaced
 * only with force and only when it is a snapshot of the same kind (a directory holding the
 * marker, or a regular file); ".", "/", $HOME and folders holding them never are: GP_E_USAGE. */
int gp_snapshot_write(const struct gp_root *r, const char *path, int as_dir, int force,
		      struct gp_snapshot_stats *st, struct gp_err *e);

/* The archive's top-level folder for a file name: "dgx.tar.gz" -> "dgx". */
void gp_snapshot_top_name(const char *file, char *buf, size_t n);

/* Pack dir's parent entry named like dir into a gzip'ed tar archive with tar(1):
 * `tar -C PARENT -czf FILE BASENAME`. A failed tar removes FILE. */
int gp_snapshot_pack(const char *dir, const char *file, struct gp_err *e);

/* Remove a directory tree (what capture made), never crossing a symlink or a mount. 0 or -errno. */
int gp_snapshot_remove_tree(const char *dir);

#endif
