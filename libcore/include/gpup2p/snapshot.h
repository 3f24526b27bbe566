/* gpup2p — snapshots: the sysfs/proc files gpup2p reads (topo, bar, acs and
 * doctor), copied from a root (usually the live system) into a directory laid
 * out as that root, plus the NVML facts in gpup2p/gpu-facts, so that
 * `--root DIR` replays them exactly. A snapshot either captures what the
 * commands would read, or fails with the error they give on that root;
 * whatever it writes, --root reads back. gpup2p/snapshot-info says which
 * version wrote it, what it captured, and which files the live system could
 * not give. */
#ifndef GPUP2P_SNAPSHOT_H
#define GPUP2P_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/err.h"
#include "gpup2p/root.h"

/* The marker capture writes last: a directory holding it is a gpup2p snapshot. Its first line
 * starts with GP_SNAPSHOT_MAGIC. */
#define GP_SNAPSHOT_MARKER "/gpup2p/snapshot-info"
#define GP_SNAPSHOT_MAGIC "gpup2p-snapshot "
/* The format this version writes: 1 = PCI, IOMMU, NUMA, net/RDMA links, cmdline, modules, NVIDIA
 * version, NVML facts (gpup2p 0.1.0); 2 adds what doctor reads and the "captured" and
 * "unreadable" lines. */
#define GP_SNAPSHOT_FORMAT 2

/* gp_snapshot_write flags */
#define GP_SNAP_DIR     0x1u   /* write a directory, not a gzip'ed tar archive */
#define GP_SNAP_FORCE   0x2u   /* replace an existing snapshot of the same kind */
#define GP_SNAP_NO_HOST 0x4u   /* leave the host name and boot id (/proc/sys/kernel/hostname, random/boot_id) out */

#define GP_SNAPSHOT_UNREAD_MAX 32

/* What gpup2p/snapshot-info says. */
struct gp_snapshot_info {
	int format;              /* 1, 2, ...; 0 when unknown */
	char writer[64];         /* "gpup2p 0.1.0" */
	char created[32];        /* "2026-11-23T10:00:00Z" */
	char source[16];         /* "live" or "root" */
	char kernel[128];        /* uname -r of a live source, "unknown" */
	char captured[512];      /* the groups looked for, space-separated (format 1: the fixed set it had) */
	int nunread;
	struct {                 /* files the source could not give (live: as the commands saw them) */
		int err;         /* positive errno */
		char path[112];
	} unread[GP_SNAPSHOT_UNREAD_MAX];
	/* the capturing process's environment (its "memlock", "shm", "container" lines; a marker
	 * without them, from an older writer or a root source that lacked them: unknown) */
	int memlock_known;       /* 1 when memlock was recorded */
	uint64_t memlock;        /* RLIMIT_MEMLOCK soft limit, UINT64_MAX unlimited */
	int shm_known;           /* 1 when shm_size was recorded */
	uint64_t shm_size;       /* bytes of /dev/shm (statvfs) */
	int container;           /* 1 captured inside a container, 0 not, -1 unknown */
	char container_why[64];  /* what said so ("/.dockerenv", "cgroup kubepods"), "" none */
};

struct gp_snapshot_stats {
	int devices;       /* PCI functions captured */
	int files;         /* regular files written */
	int gpu_facts;     /* 1 when NVML facts were recorded, 0 when "unavailable" was */
};

/* Told while a snapshot is captured: `done` of `total` PCI functions captured, every 256 and at the
 * last. A process-wide hook, set before gp_snapshot_capture or gp_snapshot_write (the command line
 * shows progress on a terminal with it); NULL: none. */
typedef void (*gp_snapshot_progress_fn)(int done, int total);
void gp_snapshot_set_progress(gp_snapshot_progress_fn fn);

/* Copy the state under r into dir, which must not exist (it is created). The root is first
 * loaded as topo loads it: a root topo refuses is refused with topo's error. Files the commands
 * treat as unreadable are left out (from a live source, the marker lists doctor's). flags:
 * GP_SNAP_NO_HOST. On error the partial directory is removed. */
int gp_snapshot_capture(const struct gp_root *r, const char *dir, unsigned flags, struct gp_snapshot_stats *st,
			struct gp_err *e);

/* Capture r into `path`: a directory (GP_SNAP_DIR) or a gzip'ed tar archive (compressed by zlib as
 * it is captured, no file staged). The snapshot is
 * written beside path (a hidden temporary sibling) and renamed into place. An existing path is
 * replaced only with GP_SNAP_FORCE and only when it is a snapshot of the same kind (a directory
 * holding the marker, or a regular file); ".", "/", $HOME and folders holding them never are:
 * GP_E_USAGE. Its errnum says which, for the caller's advice: EEXIST path exists (no GP_SNAP_FORCE),
 * EISDIR a directory where an archive goes, ENOTDIR no directory where one goes (GP_SNAP_DIR). */
int gp_snapshot_write(const struct gp_root *r, const char *path, unsigned flags, struct gp_snapshot_stats *st,
		      struct gp_err *e);

/* Read the marker of the snapshot at root r: 0, -ENOENT when r is live or holds no marker (a
 * fixture tree), -EINVAL when the marker is not one, or another -errno. */
int gp_snapshot_info_read(const struct gp_root *r, struct gp_snapshot_info *inf);

/* The marker's text for inf (malloc'ed into *buf, its length returned), or -ENOMEM. */
long gp_snapshot_info_format(const struct gp_snapshot_info *inf, char **buf);

/* Add a captured group name, or a file the source could not give (err: positive errno). */
void gp_snapshot_info_captured(struct gp_snapshot_info *inf, const char *group);
void gp_snapshot_info_unread(struct gp_snapshot_info *inf, const char *path, int err);

/* 1 when the marker's captured line names group ("kallsyms", "boot-acs"), 0 when not. */
int gp_snapshot_info_has(const struct gp_snapshot_info *inf, const char *group);

/* Record the live process's environment into inf: RLIMIT_MEMLOCK, the size of /dev/shm, and
 * whether r (live) looks like a container (/.dockerenv, /run/.containerenv, /run/systemd/container,
 * container names in /proc/1/cgroup). */
void gp_snapshot_env_live(const struct gp_root *r, struct gp_snapshot_info *inf);

/* The errno with which the snapshot's source could not give path, 0 when it is not listed. */
int gp_snapshot_unreadable(const struct gp_snapshot_info *inf, const char *path);

/* The archive's top-level folder for a file name: "dgx.tar.gz" -> "dgx". */
void gp_snapshot_top_name(const char *file, char *buf, size_t n);

/* Remove a directory tree (what capture made), never crossing a symlink or a mount. 0 or -errno. */
int gp_snapshot_remove_tree(const char *dir);

/* Whether r (live) is a container: a file the engines leave (/.dockerenv, /run/.containerenv),
 * /run/systemd/container, or an engine's name in PID 1's cgroup; what said so into why. 1 yes, 0 no,
 * -1 unknown (PID 1's cgroup unreadable). */
int gp_snapshot_container(const struct gp_root *r, char *why, size_t n);

#endif
