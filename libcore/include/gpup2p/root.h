/* gpup2p — where the system is read from.
 *
 * Every file gpup2p reads goes through a struct gp_root: the live system ("/")
 * or a directory holding sys/ and proc/ laid out as on a real machine (a
 * fixture tree or an unpacked snapshot). Paths given to these functions are
 * absolute paths of the live system ("/sys/bus/pci/devices"); they are
 * resolved under the root, and never outside it: under a root directory every
 * open is made with openat2(RESOLVE_BENEATH) (a checked realpath on kernels
 * without openat2), so a symlink that leads out of the root reads as -EXDEV. */
#ifndef GPUP2P_ROOT_H
#define GPUP2P_ROOT_H

#include <stddef.h>
#include <sys/types.h>

#include "gpup2p/err.h"
#include "gpup2p/strmap.h"

#define GP_PATH_MAX 4096

struct gp_root {
	char dir[GP_PATH_MAX];  /* "" for the live system, else the root directory without trailing '/' */
	int live;               /* 1 when reading the running system */
	int no_openat2;         /* 1: resolve with the realpath fallback only (tests; GPUP2P_TEST_NO_OPENAT2=1) */
	int dir_fd1;            /* the root directory held open (O_PATH) for openat2, plus one; 0: none (each
	                           resolution opens it: a struct filled by hand). Kept for the process's life */
	int fills_dirs;         /* 1: its file system fills a listing's buffer until the folder's end (ext4, xfs,
	                           btrfs, tmpfs, overlayfs, sysfs, procfs), so that a short one is the end:
	                           gp_root_entries asks no more. On the live system, the folders of /sys */
};

/* Open a root: dir, else $GPUP2P_ROOT, else the live system. A missing or
 * non-directory root is GP_E_UNAVAIL. "/" counts as live. */
int gp_root_init(struct gp_root *r, const char *dir, struct gp_err *e);

/* Build the host path of `path` under the root into buf, unchecked (for messages and for
 * libpci's sysfs.path). Returns 0 or -ENAMETOOLONG. */
int gp_root_path(const struct gp_root *r, const char *path, char *buf, size_t n);

/* Open `path` beneath the root with open(2) flags (O_CREAT not allowed; O_CLOEXEC added).
 * Returns a file descriptor or a negative errno: -EXDEV when a symlink leads outside the root,
 * -EMEDIUMTYPE for a device, pipe or socket under a root directory (opened non-blocking, never read). */
int gp_root_open(const struct gp_root *r, const char *path, int flags);

/* Host path for creating or replacing the file at `path` (a state file): the existing part of
 * its folder is resolved and must lie beneath the root, and the file, if it exists, too.
 * 0, -EXDEV when it leaves the root, or another negative errno. */
int gp_root_host_path(const struct gp_root *r, const char *path, char *buf, size_t n);

/* strerror(), with EXDEV and EMEDIUMTYPE worded as what they mean here (see gp_root_open). */
const char *gp_root_strerror(int err);

/* Read a small text file: NUL-terminated, trailing whitespace removed.
 * Returns its length or a negative errno (-ENOENT when missing, -EFBIG when the whole file does
 * not fit in n - 1 bytes: it is never cut). */
ssize_t gp_root_read_text(const struct gp_root *r, const char *path, char *buf, size_t n);

/* Read up to n bytes of a binary file from offset 0, stopping at end of file or
 * at the first short read (how a non-root reader sees config space). */
ssize_t gp_root_read_bin(const struct gp_root *r, const char *path, void *buf, size_t n);

/* Like gp_root_read_bin, from byte offset off. */
ssize_t gp_root_read_at(const struct gp_root *r, const char *path, void *buf, size_t n, off_t off);

/* Read a whole file of at most max bytes into a malloc'ed buffer (*buf, NUL-terminated; free
 * it). Returns its length or a negative errno: -EFBIG when it is longer than max (never cut). */
ssize_t gp_root_read_alloc(const struct gp_root *r, const char *path, char **buf, size_t max);

/* Open `name`, one entry of the folder `dir` that dfd holds open (opened beneath the root with
 * gp_root_open), as gp_root_open(dir/name) would: one openat that follows no symlink; a symlink
 * there is resolved as gp_root_open resolves it (beneath the root, or -EXDEV). A name further down
 * ("a/b") under a root: one openat2 beneath dfd through no symlink, else as gp_root_open. */
int gp_root_open_in(const struct gp_root *r, int dfd, const char *dir, const char *name, int flags);

/* gp_root_read_text of dir/name through the folder's fd dfd (see gp_root_open_in). */
ssize_t gp_root_read_text_in(const struct gp_root *r, int dfd, const char *dir, const char *name, char *buf,
			     size_t n);

/* gp_root_read_at of dir/name through the folder's fd dfd (see gp_root_open_in). */
ssize_t gp_root_read_at_in(const struct gp_root *r, int dfd, const char *dir, const char *name, void *buf, size_t n,
			   off_t off);

/* gp_root_read_alloc of dir/name through the folder's fd dfd (see gp_root_open_in). */
ssize_t gp_root_read_alloc_in(const struct gp_root *r, int dfd, const char *dir, const char *name, char **buf,
			      size_t max);

/* Basename of a symlink's target as written in the link (the link itself must lie beneath the root). */
int gp_root_link_name(const struct gp_root *r, const char *path, char *buf, size_t n);

/* What a symlink such as a function's "driver" or "iommu_group" names, as libpci's sysfs method
 * reads it: the resolved target (a live path) into target, its last part into name. The path must
 * be a symlink and resolve beneath the root: 0 or a negative errno (-EXDEV when it leaves it). */
int gp_root_link_target(const struct gp_root *r, const char *path, char *target, size_t tn, char *name, size_t nn);

/* Canonical path of `path`, expressed as a live path (starting with '/').
 * A link that leaves the root is -EXDEV. */
int gp_root_realpath(const struct gp_root *r, const char *path, char *buf, size_t n);

/* Where fd lies, fd opened beneath the root at path (following its symlinks): as gp_root_realpath(path)
 * gives it, read back from the open file (/proc/self/fd), else resolved again. 0 or a negative errno. */
int gp_root_fd_realpath(const struct gp_root *r, int fd, const char *path, char *buf, size_t n);

/* 1 if the path exists beneath the root (following symlinks that stay in it), 0 if not. */
int gp_root_exists(const struct gp_root *r, const char *path);

/* Sorted names in a directory, without "." entries. *names is a NULL-terminated
 * malloc'ed array (free with gp_root_free_list). Missing directory or not a directory: 0 names;
 * one leading outside the root: -EXDEV. */
int gp_root_list(const struct gp_root *r, const char *path, char ***names);

/* Free a list returned by gp_root_list. */
void gp_root_free_list(char **names);

/* One entry of a folder as its listing gives it (gp_root_entries). */
struct gp_root_ent {
	char name[256];
	unsigned char type; /* readdir's d_type: DT_REG, DT_DIR, DT_LNK, ...; DT_UNKNOWN where not said */
};

/* The entries of the folder open at dfd (gp_root_open with O_RDONLY | O_DIRECTORY; dir names it,
 * for the trace), without "." entries, sorted by name, into a malloc'ed array *ents (free it):
 * their count, or a negative errno. The fd is read to its end (where the file system fills each
 * read, one that left room for more was the end: see fills_dirs), not closed. */
int gp_root_entries(const struct gp_root *r, int dfd, const char *dir, struct gp_root_ent **ents);

/* The type of `name` in n sorted entries (gp_root_entries), or -1 when it is not there; DT_UNKNOWN
 * when n < 0 (the folder could not be listed: each name must be tried). */
int gp_root_ent_type(const struct gp_root_ent *ents, int n, const char *name);

/* gp_root_read_alloc_in of dir/name, a file the folder's listing showed as regular (DT_REG) or a
 * sysfs attribute: one openat through dfd that follows no symlink (a symlink there now is resolved
 * as gp_root_read_alloc_in resolves it), no fstat (the listing told what it is), reads until one
 * returns less than asked and not whole 4 KiB pages (a sysfs attribute gives itself in one read; not
 * for /proc files, which give whole records), one close. Its length or a negative errno. */
ssize_t gp_root_read_listed(const struct gp_root *r, int dfd, const char *dir, const char *name, char **buf,
			    size_t max);

/* gp_root_read_text_in of a file read as gp_root_read_listed reads it (its listing showed it regular,
 * or a sysfs attribute: one open, read and close). */
ssize_t gp_root_read_text_listed(const struct gp_root *r, int dfd, const char *dir, const char *name, char *buf,
				 size_t n);

/* gp_root_read_text_listed's reading, without its text's checks: the file's bytes into buf (n at most,
 * no NUL added), their count or a negative errno (an error after some bytes ends the file there).
 * *whole: 1 when the file's end was seen before n bytes (a later reading of it would give the same
 * bytes), 0 where not (cut at n, an error, or a symlink read as gp_root_read_text_in reads one). */
ssize_t gp_root_read_raw_listed(const struct gp_root *r, int dfd, const char *dir, const char *name, char *buf,
				size_t n, int *whole);

/* A text file's len bytes read into buf (n bytes asked for; len < 0: the error, passed on) made what
 * gp_root_read_text gives: -EFBIG when they filled buf, -EILSEQ for a NUL in them, else NUL-terminated
 * without trailing whitespace, its length. */
ssize_t gp_root_text_end(char *buf, ssize_t len, size_t n);

/* One read(2) of up to want bytes at buf (EINTR retried): its count, or a negative errno. *end is
 * set when it was the file's end: nothing more, or less than asked and not a whole number of 4 KiB
 * pages (a regular file's end, or a sysfs attribute's: it returns itself in one read; a binary one,
 * such as config, a page at most per read). Not for /proc files, which return whole records. */
ssize_t gp_root_read_once(int fd, char *buf, size_t want, int *end);

/* Where links read through open folders led (gp_root_link_in): one resolution per place. Zeroed:
 * empty; gp_root_links_free empties it. */
struct gp_root_links {
	struct gp_strmap map;  /* the place -> its index below */
	char **target;         /* what it resolved to (NULL where it did not) */
	int *rc;               /* 0, or the negative errno its resolution gave */
	size_t n, cap;
};

/* gp_root_link_target of dir/name, where dfd holds the folder dir open and dir is canonical (as
 * gp_root_realpath gives it): the link read with one readlinkat through dfd; its leading "../"
 * taken off dir (the parent of a real folder is the one in its path), the rest of the place
 * resolved beneath the root as gp_root_realpath does it, once per place when c is given (the
 * "driver" links of a thousand functions: one resolution). An absolute link, or "." or ".."
 * further in, is resolved as gp_root_link_target does. The target into target; 0 or a negative
 * errno as gp_root_link_target. */
int gp_root_link_in(const struct gp_root *r, int dfd, const char *dir, const char *name, struct gp_root_links *c,
		    char *target, size_t tn);
void gp_root_links_free(struct gp_root_links *c);
/* gp_root_link_in of the link dir/name whose text (as readlinkat read it through the folder) is
 * already known: the same resolution, without reading the link again. */
int gp_root_link_resolve(const struct gp_root *r, const char *dir, const char *name, const char *text,
			 struct gp_root_links *c, char *target, size_t tn);

/* Open what the link dir/name leads to (flags as gp_root_open's), where dfd holds the folder dir open
 * and dir is canonical: the link read with one readlinkat through dfd, and where its text is "../"
 * repeated then plain names, the place it names opened in one openat2 that follows no link; nothing
 * on the way being a link, that place is canonical: its live path into real (n bytes). The fd, or
 * -ENOSYS where it cannot tell so (not a link, another text, a link on the way, an error, the live
 * system): resolve it as gp_root_open does. A readlinkat instead of the read-back from /proc/self/fd
 * that gp_root_fd_realpath costs (a path built by the kernel), and an open that follows no link. */
int gp_root_link_open(const struct gp_root *r, int dfd, const char *dir, const char *name, int flags, char *real,
		      size_t n);

/* A folder opened beneath the root and listed once; its files are then read through its fd by name
 * (gp_root_dir_read_text, gp_root_dir_read_alloc: one open of a listed file, none of one not listed), and
 * where it could not be opened or listed, by path: every answer the one reading the file by its path
 * gives. */
struct gp_root_dir {
	char path[GP_PATH_MAX];      /* the folder's live path (as the trace and the findings name it) */
	int fd;                      /* open (O_RDONLY | O_DIRECTORY), or the negative errno its open gave */
	struct gp_root_ent *ents;    /* its entries, sorted (NULL: none, not listed, or compact) */
	int n;                       /* their count; -1: not listed (each name must be tried) */
	char **names;                /* GP_ROOT_DIR_COMPACT: the entries' names, sorted (NULL otherwise) */
	unsigned char *types;        /* GP_ROOT_DIR_COMPACT: their types (names and types: one block) */
};

/* Open the folder pdir/name (name NULL: pdir itself, resolved from the root) and list it: opened as one
 * entry of its parent where pfd holds pdir open (gp_root_open_in), else by path (gp_root_open). One that
 * cannot be opened keeps the errno in fd, one that cannot be listed n = -1. 0, or -ENOMEM (listing) or
 * -ENAMETOOLONG; close it with gp_root_dir_close in any case. */
int gp_root_dir_open(const struct gp_root *r, struct gp_root_dir *d, int pfd, const char *pdir, const char *name);

/* d as gp_root_dir_open makes it of the folder open at fd (held by d from now on; a negative errno: not
 * open), named path: listed once. 0, -ENOMEM or -ENAMETOOLONG (fd closed); close it with
 * gp_root_dir_close in any case. */
int gp_root_dir_list(const struct gp_root *r, struct gp_root_dir *d, int fd, const char *path);

/* gp_root_dir_open_in's options. COMPACT: the listing kept as names and types in one block (about 10
 * bytes and the name per entry, not a struct gp_root_ent's 257), for a folder kept open long (doctor's
 * /dev/infiniband of thousands of nodes); ents is NULL then, names and types hold it. */
#define GP_ROOT_DIR_COMPACT 1u

/* gp_root_dir_open of name, an entry of the folder in (in NULL: name is a path from the root), with
 * flags (GP_ROOT_DIR_*), its parent's listing trusted: an entry in's listing lacks is -ENOENT unopened,
 * and where in is gone (gp_root_dir_gone) so is it, with in's errno; where in could not be opened for
 * another reason, it is opened by path. 0, -ENOMEM (listing) or -ENAMETOOLONG; close it in any case. */
int gp_root_dir_open_in(const struct gp_root *r, struct gp_root_dir *d, const struct gp_root_dir *in, const char *name,
			unsigned flags);

/* 1 when d's folder is not there, or not a folder (fd -ENOENT, -ENOTDIR): any path through it answers so. */
int gp_root_dir_gone(const struct gp_root_dir *d);

/* The type of name in d's listing (DT_REG, DT_DIR, ...; gp_root_ent_type): -1 not there, DT_UNKNOWN
 * where d is not listed. */
int gp_root_dir_type(const struct gp_root_dir *d, const char *name);

/* gp_root_read_text of d's file name (d->path/name), through the folder: a file its listing shows is
 * read with one open (gp_root_read_text_listed where it shows a regular file, else
 * gp_root_read_text_in), one it lacks is -ENOENT unopened (and traced so); where d is gone, its errno;
 * where d could not be opened otherwise, read by path. Its length or a negative errno. */
ssize_t gp_root_dir_read_text(const struct gp_root *r, const struct gp_root_dir *d, const char *name, char *buf,
			      size_t n);

/* gp_root_read_alloc of d's file name (*buf malloc'ed, NULL on error; at most max bytes, else -EFBIG),
 * through the folder as gp_root_dir_read_text reads it (gp_root_read_listed, gp_root_read_alloc_in). */
ssize_t gp_root_dir_read_alloc(const struct gp_root *r, const struct gp_root_dir *d, const char *name, char **buf,
			       size_t max);

/* Close d and free its listing (d may be closed again). */
void gp_root_dir_close(struct gp_root_dir *d);

/* The read trace (libpci's debug hook; gpup2p -vv): fn is called with each path asked of the functions
 * above (opened, listed, read as a link or resolved), as the caller named it (beneath the root, not
 * prefixed), and 0 or the errno it met. One hook per process; NULL stops it. fn may be called from
 * several threads at once (doctor's prefetch). */
typedef void (*gp_root_trace_fn)(const char *path, int err, void *arg);
void gp_root_set_trace(gp_root_trace_fn fn, void *arg);

/* Tell the read trace that path was asked and met err (0 or an errno) where none of the functions
 * above asked it: a file a folder's listing answered for, read by libpci itself. */
void gp_root_trace(const char *path, int err);

/* Create a directory and its missing parents (mode 0755), like mkdir -p. 0 or a negative errno. */
int gp_mkdir_p(const char *path);

#endif
