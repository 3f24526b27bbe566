/* gpup2p — what the snapshot module's files share (not installed): the capture in progress and
 * the helpers that write into the snapshot directory. */
#ifndef GPUP2P_SNAPSHOT_INTERNAL_H
#define GPUP2P_SNAPSHOT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/snapshot.h"

/* A slot of the set of paths made: the path's hash and its offset in gp_snap's names (0: empty). */
struct gp_snap_made {
	uint64_t hash;
	size_t off;
};

struct gp_snap {
	const struct gp_root *r;
	const char *dir;                    /* the snapshot directory being written; archive: its members'
	                                       top folder */
	struct gp_snap_tar *tar;            /* the archive being written (tar.c), NULL: a directory */
	const char *shown;                  /* the archive as its errors name it (where it goes) */
	unsigned flags;                     /* GP_SNAP_* */
	struct gp_snapshot_stats *st;
	struct gp_err *e;
	struct gp_snapshot_info info;       /* the marker written last */
	struct gp_snapshot_info src;        /* the source's own marker, when it is a snapshot */
	int dfd;                            /* the snapshot directory, open while it is written; -1 */
	struct gp_snap_made *made;          /* hash set of the folders and links made (live paths):
	                                       made_cap slots, made_n used (out.c) */
	size_t made_cap, made_n;
	char *names;                        /* their paths, each NUL-ended, at the slots' offsets */
	size_t names_len, names_cap;
	char last[GP_PATH_MAX];             /* the folder a file was last written into (last_len bytes; 0: none) */
	size_t last_len;
	struct gp_root_links links;         /* where the functions' links led (one resolution per place) */
	char rbuf[65536];                   /* a listed file read whole (out.c's copy): no allocation a file */
};

/* Capture r into the directory dir (archive NULL; dir must not exist), or into the gzip'ed tar
 * archive `archive` (created, must not exist; errors name it `shown`) whose members lie under the
 * folder named dir: what gp_snapshot_capture does, for both kinds. On error nothing partial is left. */
int gp_snap_capture(const struct gp_root *r, const char *dir, const char *archive, const char *shown,
		    unsigned flags, struct gp_snapshot_stats *st, struct gp_err *e);

/* Member types of the archive (tar's type flags). */
#define GP_TAR_FILE '0'
#define GP_TAR_LINK '2'
#define GP_TAR_DIR '5'

/* Start the archive `file` (created, must not exist): the tar stream is compressed into it by zlib
 * (gzip's format, level 1) as members are added; the top folder's member is written (tar.c). 0 or
 * an error set. */
int gp_snap_tar_open(struct gp_snap *s, const char *file);

/* Add the member at live path `live` ("/": the top folder): a folder, a file of len bytes of data,
 * or a symlink to `link`. 0 or a positive errno. */
int gp_snap_tar_add(struct gp_snap *s, const char *live, char type, const void *data, size_t len, const char *link);

/* End the archive: when rc is 0 its end blocks, then the compressed stream's end; on any error (rc,
 * or a write's) the file is removed. Returns rc, or the error it set. */
int gp_snap_tar_close(struct gp_snap *s, int rc);

/* Open the snapshot directory s->dir (made by the caller) for writing into it; close it and
 * forget the folders made (snapshot_out.c). */
int gp_snap_out_open(struct gp_snap *s);
void gp_snap_out_close(struct gp_snap *s);

/* Write a file of the snapshot at live path `live` (its folders created). 0 or an error set. */
int gp_snap_write_file(struct gp_snap *s, const char *live, const void *data, size_t len);

/* Create the folder `live` (and its parents) in the snapshot. */
int gp_snap_make_dir(struct gp_snap *s, const char *live);

/* A symlink at live path `from` pointing at live path `to`, written relative as sysfs does. */
int gp_snap_make_link(struct gp_snap *s, const char *from, const char *to);

/* Copy one file as the commands read it, whole; longer than max bytes (0: the default bound,
 * 16 MiB) is an error (GP_E_DATA), never a cut. One they
 * would find unreadable is left out and its errno put in *left_out (NULL allowed; 0 when
 * copied); a folder where a file belongs stays a folder. 0 or an error set. */
int gp_snap_copy_file(struct gp_snap *s, const char *live, size_t max, int *left_out);

/* gp_snap_copy_file of dir/name, name read through dfd, the folder dir opened beneath the root
 * (gp_root_open_in; -1: resolved from the root). */
int gp_snap_copy_in(struct gp_snap *s, int dfd, const char *dir, const char *name, size_t max, int *left_out);

/* gp_snap_copy_in of a file the folder's listing showed as regular: read as gp_root_read_listed
 * reads it (one open, read and close; no fstat). */
int gp_snap_copy_listed(struct gp_snap *s, int dfd, const char *dir, const char *name, size_t max, int *left_out);

/* A file doctor reads that the source could not give (err, positive errno): listed in the marker
 * when the source is live, or when the source snapshot listed it. */
void gp_snap_unread(struct gp_snap *s, const char *path, int err);

/* The /proc and /sys files outside the PCI tree that doctor reads, the device nodes, the
 * nvidia_p2p_* lines of kallsyms (snapshot_sys.c). */
int gp_snap_capture_sys(struct gp_snap *s);

/* RDMA devices: their links, and each port's state, rate, link layer and GID types. */
int gp_snap_capture_rdma(struct gp_snap *s);

#endif
