/* gpup2p — where the system is read from.
 *
 * Every file gpup2p reads goes through a struct gp_root: the live system ("/")
 * or a directory holding sys/ and proc/ laid out as on a real machine (a
 * fixture tree or an unpacked snapshot). Paths given to these functions are
 * absolute paths of the live system ("/sys/bus/pci/devices"); they are
 * resolved under the root. */
#ifndef GPUP2P_ROOT_H
#define GPUP2P_ROOT_H

#include <stddef.h>
#include <sys/types.h>

#include "gpup2p/err.h"

#define GP_PATH_MAX 4096

struct gp_root {
	char dir[GP_PATH_MAX];  /* "" for the live system, else the root directory without trailing '/' */
	int live;               /* 1 when reading the running system */
};

/* Open a root: dir, else $GPUP2P_ROOT, else the live system. A missing or
 * non-directory root is GP_E_UNAVAIL. "/" counts as live. */
int gp_root_init(struct gp_root *r, const char *dir, struct gp_err *e);

/* Build the host path of `path` under the root into buf. Returns 0 or -ENAMETOOLONG. */
int gp_root_path(const struct gp_root *r, const char *path, char *buf, size_t n);

/* Read a small text file: NUL-terminated, trailing whitespace removed.
 * Returns its length or a negative errno (-ENOENT when missing). */
ssize_t gp_root_read_text(const struct gp_root *r, const char *path, char *buf, size_t n);

/* Read up to n bytes of a binary file from offset 0, stopping at end of file or
 * at the first short read (how a non-root reader sees config space). */
ssize_t gp_root_read_bin(const struct gp_root *r, const char *path, void *buf, size_t n);

/* Like gp_root_read_bin, from byte offset off. */
ssize_t gp_root_read_at(const struct gp_root *r, const char *path, void *buf, size_t n, off_t off);

/* Basename of a symlink's target (e.g. the driver's name for ".../driver"). */
int gp_root_link_name(const struct gp_root *r, const char *path, char *buf, size_t n);

/* Canonical path of `path`, expressed as a live path (starting with '/').
 * A link that leaves the root is -EXDEV. */
int gp_root_realpath(const struct gp_root *r, const char *path, char *buf, size_t n);

/* 1 if the path exists under the root, 0 if not. */
int gp_root_exists(const struct gp_root *r, const char *path);

/* Sorted names in a directory, without "." entries. *names is a NULL-terminated
 * malloc'ed array (free with gp_root_free_list). Missing directory: 0 names. */
int gp_root_list(const struct gp_root *r, const char *path, char ***names);

/* Free a list returned by gp_root_list. */
void gp_root_free_list(char **names);

/* Create a directory and its missing parents (mode 0755), like mkdir -p. 0 or a negative errno. */
int gp_mkdir_p(const char *path);

#endif
