/* gpup2p — what the files of libcore/root/ share (not installed). */
#ifndef GPUP2P_ROOT_INTERNAL_H
#define GPUP2P_ROOT_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

/* Tell the trace hook (gp_root_set_trace), if one is set, that path was asked: err 0 or an errno. */
void gp_root_traced(const char *path, int err);

/* 1 when a trace hook is set (a path need not be built for it otherwise). */
int gp_root_trace_on(void);

/* Read the whole file open at fd (closed here; fd < 0: that errno passed on) into a malloc'ed buffer
 * (*buf, NUL-terminated): its length, or -EFBIG when it holds more than max bytes. listed: reads
 * until gp_root_read_once says it ended (one read for a small file), else until a read returns 0. */
ssize_t gp_root_read_fd_alloc(int fd, char **buf, size_t max, int listed);

/* 1 when listings of the root dir, open at fd, may stop at a read that left room for more: its file
 * system fills each read (fs_fills: ext4, xfs, btrfs, tmpfs, overlayfs, sysfs, procfs) and nothing is
 * mounted beneath it (gp_root_mount_beneath on /proc/self/mountinfo). */
int gp_root_fills_dirs(int fd, const char *dir);

/* 1 when a mount point listed in the mountinfo file (/proc/self/mountinfo's format: the fifth field,
 * octal escapes as the kernel writes them) lies strictly beneath the canonical folder dir, or when the
 * file cannot be read (unknown: as if one did); 0 when none does. */
int gp_root_mount_beneath(const char *mountinfo, const char *dir);

/* Open the live path `path` beneath the root through no symlink at all (one openat2): an fd, -ELOOP
 * where a link lies on the way, another negative errno, or -ENOSYS where it cannot be asked so (the
 * live system, no openat2). Not traced. */
int gp_root_open_nolinks(const struct gp_root *r, const char *path, int flags);

#endif
