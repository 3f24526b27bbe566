/* gpup2p — where a snapshot goes: what may be replaced, a temporary sibling renamed into place,
 * the archive (written by tar.c). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot/internal.h"

void gp_snapshot_top_name(const char *file, char *buf, size_t n)
{
	char tmp[GP_PATH_MAX];
	size_t l;

	snprintf(tmp, sizeof(tmp), "%s", file);
	snprintf(buf, n, "%s", basename(tmp));
	l = strlen(buf);
	if (l > 7 && !strcmp(buf + l - 7, ".tar.gz"))
		buf[l - 7] = '\0';
	else if (l > 4 && !strcmp(buf + l - 4, ".tgz"))
		buf[l - 4] = '\0';
	if (!buf[0] || !strcmp(buf, ".") || !strcmp(buf, ".."))
		snprintf(buf, n, "gpup2p-snapshot");
}

/* 1 when the canonical path `inner` is `outer` or lies beneath it. */
static int holds(const char *outer, const char *inner)
{
	size_t l = strlen(outer);

	if (!strcmp(outer, "/"))
		return 1;
	return !strncmp(outer, inner, l) && (inner[l] == '/' || inner[l] == '\0');
}

/* Folders never replaced, whatever they hold: "/", the current directory, $HOME, and folders
 * holding either of the last two. 0 or GP_E_USAGE. */
static int refuse_special(const char *path, struct gp_err *e)
{
	char real[PATH_MAX], cwd[PATH_MAX], home[PATH_MAX];
	const char *h = getenv("HOME");

	if (!realpath(path, real))
		return gp_err_set(e, GP_E_FAIL, errno, "%s: %s", path, strerror(errno));
	if (!strcmp(real, "/"))
		return gp_err_set(e, GP_E_USAGE, EPERM, "refusing to replace %s: it is the root directory", path);
	if (getcwd(cwd, sizeof(cwd)) && holds(real, cwd))
		return gp_err_set(e, GP_E_USAGE, EPERM, "refusing to replace %s: it %s the current directory", path,
				  strcmp(real, cwd) ? "holds" : "is");
	if (h && *h && realpath(h, home) && holds(real, home))
		return gp_err_set(e, GP_E_USAGE, EPERM, "refusing to replace %s: it %s your home directory", path,
				  strcmp(real, home) ? "holds" : "is");
	return 0;
}

/* 1 when dir is a snapshot directory: itself no symlink, holding GP_SNAPSHOT_MARKER
 * (gpup2p/snapshot-info, reached through no symlink: a regular file starting with the magic). */
static int is_snapshot_dir(const char *dir)
{
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), g = -1, f = -1, ok = 0;
	char buf[64];
	struct stat st;
	ssize_t n;

	if (d >= 0)
		g = openat(d, "gpup2p", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (g >= 0)
		f = openat(g, "snapshot-info", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (f >= 0 && !fstat(f, &st) && S_ISREG(st.st_mode) && (n = read(f, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		ok = !strncmp(buf, GP_SNAPSHOT_MAGIC, strlen(GP_SNAPSHOT_MAGIC));
	}
	if (f >= 0)
		close(f);
	if (g >= 0)
		close(g);
	if (d >= 0)
		close(d);
	return ok;
}

/* 1 when file is a gzip stream (what an archive snapshot is). */
static int is_archive(const char *file)
{
	unsigned char m[2];
	int fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, m, 2);

	if (fd >= 0)
		close(fd);
	return n == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

/* What already stands at path. 0 to go on (*exists says whether something is replaced), or an
 * error: GP_E_USAGE for what may not be replaced. */
static int check_dest(const char *path, int as_dir, int force, int *exists, struct gp_err *e)
{
	struct stat st;
	int rc;

	*exists = 0;
	if (lstat(path, &st))
		return errno == ENOENT ? 0 : gp_err_set(e, errno == EACCES ? GP_E_PERM : GP_E_FAIL, errno, "%s: %s", path,
							strerror(errno));
	*exists = 1;
	if (!force)
		return gp_err_set(e, GP_E_USAGE, EEXIST, "%s exists", path);
	if (S_ISLNK(st.st_mode))
		return gp_err_set(e, GP_E_USAGE, ELOOP, "refusing to replace %s: it is a symbolic link (give the path "
				  "it points to)", path);
	if (S_ISDIR(st.st_mode)) {
		if ((rc = refuse_special(path, e)))
			return rc;
		if (!as_dir)
			return gp_err_set(e, GP_E_USAGE, EISDIR, "refusing to replace %s: it is a directory", path);
		if (!is_snapshot_dir(path))
			return gp_err_set(e, GP_E_USAGE, ENOTEMPTY, "refusing to replace %s: not a gpup2p snapshot (it has no "
					  "gpup2p/snapshot-info): remove it yourself or choose another name", path);
		return 0;
	}
	if (as_dir)
		return gp_err_set(e, GP_E_USAGE, ENOTDIR, "refusing to replace %s with a directory: it is not one",
				  path);
	if (!S_ISREG(st.st_mode) || !is_archive(path))
		return gp_err_set(e, GP_E_USAGE, EINVAL, "refusing to replace %s: not a gzip'ed snapshot archive: "
				  "remove it yourself or choose another name", path);
	return 0;
}

/* What stood at path was swapped out and is no snapshot: `left` says where it stays when it could not
 * be put back (NULL when it was). */
static int changed(const char *path, const char *left, int *keep, struct gp_err *e)
{
	*keep = left != NULL;
	return gp_err_set(e, GP_E_USAGE, EEXIST, "refusing to replace %s: it changed into something that is not a "
			  "gpup2p snapshot%s%s", path, left ? "; it is now at " : "", left ? left : "");
}

/* Move the finished snapshot directory `fresh` to path. An existing path (checked to be a snapshot)
 * is swapped out into `aside` and checked again there: what was swapped in meanwhile is put back,
 * or, when that fails, kept (*keep = 1: the temporary folder must not be removed). */
static int dir_into_place(const char *fresh, const char *path, int exists, const char *aside, int *keep,
			  struct gp_err *e)
{
	int rc;

	if (!exists) {
		rc = renameat2(AT_FDCWD, fresh, AT_FDCWD, path, RENAME_NOREPLACE);
	} else {
		rc = renameat2(AT_FDCWD, fresh, AT_FDCWD, path, RENAME_EXCHANGE);
		if (rc == 0 && !is_snapshot_dir(fresh)) /* fresh now names what stood at path */
			return changed(path, renameat2(AT_FDCWD, fresh, AT_FDCWD, path, RENAME_EXCHANGE) ? fresh : NULL,
				       keep, e);
	}
	if (rc == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return gp_err_set(e, errno == EACCES ? GP_E_PERM : GP_E_FAIL, errno, "cannot move the snapshot to %s: %s",
				  path, strerror(errno));
	/* a file system without renameat2's flags: two renames */
	if (exists && rename(path, aside))
		return gp_err_set(e, GP_E_FAIL, errno, "cannot move %s aside: %s", path, strerror(errno));
	if (exists && !is_snapshot_dir(aside))
		return changed(path, rename(aside, path) ? aside : NULL, keep, e);
	if (rename(fresh, path)) {
		rc = errno;
		if (exists)
			(void)rename(aside, path);
		return gp_err_set(e, GP_E_FAIL, rc, "cannot move the snapshot to %s: %s", path, strerror(rc));
	}
	return 0;
}

/* parent folder and last part of path, trailing slashes ignored: "a/b/" -> "a", "b". */
static int split_path(const char *path, char *parent, char *base, size_t n)
{
	char tmp[GP_PATH_MAX], tmp2[GP_PATH_MAX];
	size_t l = strlen(path);

	while (l > 1 && path[l - 1] == '/')
		l--;
	if (!l || l >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, path, l);
	tmp[l] = '\0';
	memcpy(tmp2, tmp, l + 1);
	if ((size_t)snprintf(parent, n, "%s", dirname(tmp)) >= n || (size_t)snprintf(base, n, "%s", basename(tmp2)) >= n)
		return -ENAMETOOLONG;
	return 0;
}

int gp_snapshot_write(const struct gp_root *r, const char *path, unsigned flags, struct gp_snapshot_stats *st,
		      struct gp_err *e)
{
	int as_dir = !!(flags & GP_SNAP_DIR), force = !!(flags & GP_SNAP_FORCE);
	char parent[GP_PATH_MAX], base[GP_PATH_MAX], tmp[GP_PATH_MAX], inner[GP_PATH_MAX], other[GP_PATH_MAX];
	char name[256];
	int exists, rc, keep = 0;

	memset(st, 0, sizeof(*st));
	if ((rc = check_dest(path, as_dir, force, &exists, e)))
		return rc;
	if (split_path(path, parent, base, sizeof(parent)) || !strcmp(base, "/") || !strcmp(base, ".") || !strcmp(base, "..") ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.gpup2p-XXXXXX", parent, base) >= (int)sizeof(tmp) - 32)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "cannot write a snapshot to '%s': name the file or folder "
				  "itself (not /, . or ..)", path);
	/* beside the destination: same file system, so the rename is atomic */
	if (!mkdtemp(tmp))
		return gp_err_set(e, errno == EACCES ? GP_E_PERM : GP_E_FAIL, errno, "cannot write %s (a folder beside it "
				  "in %s): %s", path, parent, strerror(errno));
	if (as_dir) {
		snprintf(inner, sizeof(inner), "%s/new", tmp);
		snprintf(other, sizeof(other), "%s/old", tmp);
		rc = gp_snapshot_capture(r, inner, flags, st, e);
		if (!rc)
			rc = dir_into_place(inner, path, exists, other, &keep, e);
	} else {
		gp_snapshot_top_name(path, name, sizeof(name));
		snprintf(other, sizeof(other), "%s/%s.tar.gz.part", tmp, name);
		/* the archive is written as it is captured: nothing staged in files */
		rc = gp_snap_capture(r, name, other, path, flags, st, e);
		if (!rc && rename(other, path))
			rc = gp_err_set(e, errno == EACCES ? GP_E_PERM : GP_E_FAIL, errno, "cannot move the archive to %s: %s",
					path, strerror(errno));
	}
	if (!keep)
		gp_snapshot_remove_tree(tmp);
	return rc;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) ? -1 : 0;
}

int gp_snapshot_remove_tree(const char *dir)
{
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) ? -errno : 0;
}
