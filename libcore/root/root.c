/* gpup2p — file access under a root directory, never outside it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif
#endif

#include "gpup2p/root.h"
#include "gpup2p/stats.h"
#include "internal.h"

#ifndef RESOLVE_BENEATH /* kernel headers older than 5.6; the ABI is fixed */
struct open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

int gp_root_init(struct gp_root *r, const char *dir, struct gp_err *e)
{
	char real[PATH_MAX];
	const char *fb;
	struct stat st;
	int fd;

	memset(r, 0, sizeof(*r));
	if (!dir || !*dir)
		dir = getenv("GPUP2P_ROOT");
	if (!dir || !*dir) {
		r->live = 1;
		return 0;
	}
	if (stat(dir, &st) != 0)
		return gp_err_set(e, GP_E_UNAVAIL, errno, "root %s: %s (give a directory holding sys/ and proc/)",
				  dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return gp_err_set(e, GP_E_UNAVAIL, ENOTDIR, "root %s is not a directory (unpack a snapshot first)", dir);
	if (!realpath(dir, real))
		return gp_err_set(e, GP_E_UNAVAIL, errno, "root %s: %s", dir, strerror(errno));
	if (strcmp(real, "/") == 0) {
		r->live = 1;
		return 0;
	}
	if (strlen(real) >= sizeof(r->dir))
		return gp_err_set(e, GP_E_USAGE, ENAMETOOLONG, "root path too long: %s", dir);
	strcpy(r->dir, real);
	fb = getenv("GPUP2P_TEST_NO_OPENAT2");
	r->no_openat2 = fb && !strcmp(fb, "1");
	fd = gp_root_open(r, "/sys", O_PATH | O_DIRECTORY);
	if (fd < 0)
		return gp_err_set(e, GP_E_UNAVAIL, -fd, "root %s has no sys/ directory (%s; not a gpup2p root)", real,
				  gp_root_strerror(-fd));
	close(fd);
	/* held for every resolution beneath it: an open and a close fewer each (a root without it
	 * opens it each time) */
	fd = open(r->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	r->dir_fd1 = fd >= 0 ? fd + 1 : 0;
	/* a file system mounted beneath the root (FUSE, NFS) may list less per read: then every listing
	 * is read until a read gives 0 */
	r->fills_dirs = fd >= 0 && gp_root_fills_dirs(fd, r->dir);
	return 0;
}

const char *gp_root_strerror(int err)
{
	if (err == EXDEV)
		return "a symlink leads outside the root (not followed)";
	if (err == EMEDIUMTYPE)
		return "not a regular file (a device, pipe or socket under a root is not opened)";
	return strerror(err);
}

int gp_root_path(const struct gp_root *r, const char *path, char *buf, size_t n)
{
	int len = snprintf(buf, n, "%s%s", r->dir, path);

	if (len < 0 || (size_t)len >= n)
		return -ENAMETOOLONG;
	return 0;
}

/* 1 when the canonical host path `real` is the root directory or lies beneath it. */
static int beneath(const struct gp_root *r, const char *real)
{
	size_t dl = strlen(r->dir);

	return strncmp(real, r->dir, dl) == 0 && (real[dl] == '/' || real[dl] == '\0');
}

/* Without openat2 (kernels before 5.6, or a seccomp filter refusing it): resolve the whole path,
 * check that the result lies beneath the root, open that symlink-free path. A symlink swapped in
 * after the check is still refused at the last component (O_NOFOLLOW). */
static int open_checked(const struct gp_root *r, const char *path, int flags)
{
	char full[GP_PATH_MAX], real[PATH_MAX];
	int fd;

	if (gp_root_path(r, path, full, sizeof(full)))
		return -ENAMETOOLONG;
	if (!realpath(full, real))
		return -errno;
	if (!beneath(r, real))
		return -EXDEV;
	fd = open(real, flags | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

/* Open a live path beneath a root directory: openat2 resolving as `resolve` says, or (checked: 1) the
 * checked realpath where openat2 is missing (else -ENOSYS). */
static int open_resolved(const struct gp_root *r, const char *path, int flags, uint64_t resolve, int checked)
{
	struct open_how how;
	const char *rel = path;
	int dfd, fd, err;

	if (r->no_openat2)
		return checked ? open_checked(r, path, flags) : -ENOSYS;
	while (*rel == '/')
		rel++;
	dfd = r->dir_fd1 > 0 ? r->dir_fd1 - 1 : open(r->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)flags;
	how.resolve = resolve;
	/* EAGAIN: a rename somewhere raced a ".." in a link; the kernel asks for a retry */
	for (int tries = 0; tries < 64; tries++) {
		fd = (int)syscall(SYS_openat2, dfd, *rel ? rel : ".", &how, sizeof(how));
		err = errno;
		if (fd >= 0 || err != EAGAIN)
			break;
	}
	if (r->dir_fd1 <= 0)
		close(dfd);
	if (fd >= 0)
		return fd;
	/* no openat2 here (EPERM: how seccomp filters refuse it), or renames keep racing */
	if (err == ENOSYS || err == EPERM || err == EAGAIN)
		return checked ? open_checked(r, path, flags) : -ENOSYS;
	return -err;
}

static int open_beneath(const struct gp_root *r, const char *path, int flags)
{
	return open_resolved(r, path, flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, 1);
}

/* fd (or a negative errno) kept when it is a regular file or a folder; else closed: -EMEDIUMTYPE. An
 * open with O_DIRECTORY (flags) succeeds on a folder only: nothing to ask. */
static int file_or_folder(int fd, int flags)
{
	struct stat st;
	int rc;

	if (fd >= 0 && !(flags & O_DIRECTORY) &&
	    ((rc = fstat(fd, &st)) || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))) {
		close(fd);
		return rc ? -EIO : -EMEDIUMTYPE;
	}
	return fd;
}

static int open_untraced(const struct gp_root *r, const char *path, int flags)
{
	int fd;

	GP_STAT_ADD(files_opened, 1);
	if (flags & O_CREAT)
		return -EINVAL;
	flags |= O_CLOEXEC;
	if (r->live) {
		fd = open(path, flags);
		return fd < 0 ? -errno : fd;
	}
	if (path[0] != '/')
		return -EINVAL;
	if (flags & O_PATH)
		return open_beneath(r, path, flags);
	/* A root holds files and folders only: a device, pipe or socket there (an archive unpacked as
	 * root can hold one) is never read; O_NONBLOCK keeps a pipe's open from blocking. */
	return file_or_folder(open_beneath(r, path, flags | O_NONBLOCK), flags);
}

int gp_root_open_nolinks(const struct gp_root *r, const char *path, int flags)
{
	if (r->live || path[0] != '/' || (flags & (O_CREAT | O_PATH)))
		return -ENOSYS;
	GP_STAT_ADD(files_opened, 1);
	flags |= O_CLOEXEC | O_NONBLOCK;
	return file_or_folder(open_resolved(r, path, flags, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, 0), flags);
}

int gp_root_open(const struct gp_root *r, const char *path, int flags)
{
	int fd = open_untraced(r, path, flags);

	gp_root_traced(path, fd < 0 ? -fd : 0);
	return fd;
}

int gp_root_open_in(const struct gp_root *r, int dfd, const char *dir, const char *name, int flags)
{
	char path[GP_PATH_MAX];
	int fd, len;

	if (flags & O_CREAT)
		return -EINVAL;
	/* one entry of the folder, opened without following a symlink at all: it cannot leave the
	 * folder, which lies beneath the root */
	if (dfd >= 0 && !(flags & O_PATH) && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..")) {
		GP_STAT_ADD(files_opened, 1);
		fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC | (r->live ? 0 : O_NONBLOCK));
		if (fd >= 0 || (errno != ELOOP && errno != ENOTDIR)) {
			fd = fd < 0 ? -errno : r->live ? fd : file_or_folder(fd, flags);
			if (gp_root_trace_on()) {
				len = snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", name);
				gp_root_traced(len >= 0 && (size_t)len < sizeof(path) ? path : name, fd < 0 ? -fd : 0);
			}
			return fd;
		}
		/* a symlink (O_DIRECTORY meets one as ENOTDIR): resolved as gp_root_open resolves it */
	}
	/* entries further down (a/b): one openat2 beneath the folder that follows no symlink at all; what
	 * it cannot open but a missing entry is resolved from the root, as gp_root_open resolves it */
	if (dfd >= 0 && !(flags & O_PATH) && !r->live && !r->no_openat2 && strchr(name, '/')) {
		struct open_how how = { .flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK),
					.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };

		GP_STAT_ADD(files_opened, 1);
		fd = (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
		if (fd >= 0 || errno == ENOENT) {
			fd = fd < 0 ? -errno : file_or_folder(fd, flags);
			if (gp_root_trace_on()) {
				len = snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", name);
				gp_root_traced(len >= 0 && (size_t)len < sizeof(path) ? path : name, fd < 0 ? -fd : 0);
			}
			return fd;
		}
	}
	len = snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", name);
	if (len < 0 || (size_t)len >= sizeof(path))
		return -ENAMETOOLONG;
	return gp_root_open(r, path, flags);
}

int gp_root_host_path(const struct gp_root *r, const char *path, char *buf, size_t n)
{
	char full[GP_PATH_MAX], real[PATH_MAX];
	size_t dl = strlen(r->dir), cut;
	int len;

	if (gp_root_path(r, path, full, sizeof(full)) || (len = snprintf(buf, n, "%s", full)) < 0 || (size_t)len >= n)
		return -ENAMETOOLONG;
	if (r->live)
		return 0;
	/* The longest existing prefix of the folder, resolved (the root itself always exists); the
	 * caller creates the folders missing after it as plain folders. */
	for (cut = strlen(full);;) {
		while (cut > dl + 1 && full[cut - 1] != '/')
			cut--;
		if (cut < dl + 1 || full[cut - 1] != '/')
			return -EINVAL;
		full[cut - 1] = '\0';
		if (realpath(full, real))
			break;
		if (errno != ENOENT)
			return -errno;
		full[--cut] = '/';
	}
	if (!beneath(r, real))
		return -EXDEV;
	len = snprintf(buf, n, "%s/%s", real, full + cut);
	if (len < 0 || (size_t)len >= n)
		return -ENAMETOOLONG;
	/* the file itself, when it exists: open() would follow a symlink out of the root */
	if (realpath(buf, real)) {
		if (!beneath(r, real))
			return -EXDEV;
	} else if (errno != ENOENT) {
		return -errno;
	}
	return 0;
}

/* Read from fd at off until n bytes, end of file or the first error after some data. */
static ssize_t pread_full(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(fd, (char *)buf + got, n - got, off + (off_t)got);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (got)
				break;
			return -errno;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* gp_root_read_text's reading of the file open at fd (closed here, or a negative errno passed on). */
static ssize_t read_text_fd(int fd, char *buf, size_t n)
{
	ssize_t len;

	if (fd < 0)
		return fd;
	len = pread_full(fd, buf, n, 0);
	close(fd);
	return gp_root_text_end(buf, len, n);
}

ssize_t gp_root_text_end(char *buf, ssize_t len, size_t n)
{
	/* n bytes asked for: a file that fills them does not fit with its NUL, and is not cut */
	if (len == (ssize_t)n)
		len = -EFBIG;
	if (len < 0)
		return len;
	buf[len] = '\0';
	if (memchr(buf, '\0', (size_t)len))
		return -EILSEQ;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		buf[--len] = '\0';
	return len;
}

ssize_t gp_root_read_text(const struct gp_root *r, const char *path, char *buf, size_t n)
{
	if (n == 0)
		return -EINVAL;
	return read_text_fd(gp_root_open(r, path, O_RDONLY), buf, n);
}

ssize_t gp_root_read_text_in(const struct gp_root *r, int dfd, const char *dir, const char *name, char *buf,
			     size_t n)
{
	if (n == 0)
		return -EINVAL;
	return read_text_fd(gp_root_open_in(r, dfd, dir, name, O_RDONLY), buf, n);
}

/* pread_full on fd (or its negative errno), then close it. */
static ssize_t pread_fd(int fd, void *buf, size_t n, off_t off)
{
	ssize_t got;

	if (fd < 0)
		return fd;
	got = pread_full(fd, buf, n, off);
	close(fd);
	return got;
}

ssize_t gp_root_read_at(const struct gp_root *r, const char *path, void *buf, size_t n, off_t off)
{
	return pread_fd(gp_root_open(r, path, O_RDONLY), buf, n, off);
}

ssize_t gp_root_read_at_in(const struct gp_root *r, int dfd, const char *dir, const char *name, void *buf, size_t n,
			   off_t off)
{
	return pread_fd(gp_root_open_in(r, dfd, dir, name, O_RDONLY), buf, n, off);
}

ssize_t gp_root_read_bin(const struct gp_root *r, const char *path, void *buf, size_t n)
{
	return gp_root_read_at(r, path, buf, n, 0);
}

ssize_t gp_root_read_once(int fd, char *buf, size_t want, int *end)
{
	ssize_t k;

	do
		k = read(fd, buf, want);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -errno;
	*end = k == 0 || ((size_t)k < want && k % 4096);
	return k;
}

ssize_t gp_root_read_fd_alloc(int fd, char **buf, size_t max, int listed)
{
	size_t len = 0, cap = 4096, want;
	char *b = NULL, *nb;
	ssize_t k = 0;
	int end = 0;

	*buf = NULL;
	if (fd < 0)
		return fd;
	for (;;) {
		if (cap > max)
			cap = max;
		/* one byte past max tells a file of max bytes from a longer one */
		if (!(nb = realloc(b, cap + 2))) {
			k = -ENOMEM;
			break;
		}
		b = nb;
		want = cap + (cap == max) - len;
		k = listed ? gp_root_read_once(fd, b + len, want, &end) : pread_full(fd, b + len, want, (off_t)len);
		if (k < 0) {
			if (len) /* an error after some data ends the file, as for gp_root_read_bin */
				k = 0;
			break;
		}
		len += (size_t)k;
		if (len > max) {
			k = -EFBIG;
			break;
		}
		if (listed ? end : len < cap || cap == max)
			break;
		if (len >= cap) /* full: grow (else a sysfs page was read: read on into the rest) */
			cap *= 2;
	}
	close(fd);
	if (k < 0) {
		free(b);
		return k;
	}
	b[len] = '\0';
	*buf = b;
	return (ssize_t)len;
}

ssize_t gp_root_read_alloc(const struct gp_root *r, const char *path, char **buf, size_t max)
{
	*buf = NULL;
	return gp_root_read_fd_alloc(gp_root_open(r, path, O_RDONLY), buf, max, 0);
}

ssize_t gp_root_read_alloc_in(const struct gp_root *r, int dfd, const char *dir, const char *name, char **buf,
			      size_t max)
{
	*buf = NULL;
	return gp_root_read_fd_alloc(gp_root_open_in(r, dfd, dir, name, O_RDONLY), buf, max, 0);
}

int gp_root_link_name(const struct gp_root *r, const char *path, char *buf, size_t n)
{
	char dir[GP_PATH_MAX], target[GP_PATH_MAX];
	const char *base, *slash = strrchr(path, '/');
	ssize_t len;
	int fd, err;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return -EINVAL;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	fd = open_untraced(r, dir[0] ? dir : "/", O_PATH | O_DIRECTORY);
	if (fd < 0) {
		gp_root_traced(path, -fd);
		return fd;
	}
	len = readlinkat(fd, slash + 1, target, sizeof(target) - 1);
	err = len < 0 ? errno : 0;
	gp_root_traced(path, err);
	if (len < 0) {
		close(fd);
		return -err;
	}
	close(fd);
	target[len] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= n)
		return -ENAMETOOLONG;
	strcpy(buf, base);
	return 0;
}

int gp_root_link_target(const struct gp_root *r, const char *path, char *target, size_t tn, char *name, size_t nn)
{
	char link[256];
	const char *base;
	int rc;

	if ((rc = gp_root_link_name(r, path, link, sizeof(link))) || (rc = gp_root_realpath(r, path, target, tn)))
		return rc;
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!*base || strlen(base) >= nn)
		return -EINVAL;
	strcpy(name, base);
	return 0;
}

/* The canonical host path of what fd is open at (/proc/self/fd), or a negative errno. */
static int fd_path(int fd, char *real, size_t n)
{
	char link[64];
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, real, n - 1);
	if (len < 0)
		return -errno;
	if ((size_t)len >= n - 1)
		return -ENAMETOOLONG;
	real[len] = '\0';
	return real[0] == '/' ? 0 : -EINVAL; /* "anon_inode:...": not a path */
}

static int realpath_untraced(const struct gp_root *r, const char *path, char *buf, size_t n);

int gp_root_realpath(const struct gp_root *r, const char *path, char *buf, size_t n)
{
	int rc = realpath_untraced(r, path, buf, n);

	gp_root_traced(path, rc < 0 ? -rc : 0);
	return rc;
}

static int realpath_untraced(const struct gp_root *r, const char *path, char *buf, size_t n)
{
	char full[GP_PATH_MAX], real[PATH_MAX];
	const char *rel;
	int fd;

	GP_STAT_ADD(files_opened, 1);
	/* beneath a root: resolved by openat2 in one call, its result read back from /proc (realpath(3)
	 * reads every component's link, twenty calls for a sysfs device); realpath where that fails */
	fd = r->live || r->no_openat2 || path[0] != '/' ? -1 : open_beneath(r, path, O_PATH);
	if (fd == -ENOENT)
		return fd; /* (-EXDEV: realpath tells what lies outside, or that nothing does) */
	if (fd >= 0) {
		int rc = fd_path(fd, real, sizeof(real));

		close(fd);
		if (rc == 0 && beneath(r, real))
			goto found;
	}
	if (gp_root_path(r, path, full, sizeof(full)))
		return -ENAMETOOLONG;
	if (!realpath(full, real))
		return -errno;
	if (r->dir[0] && !beneath(r, real))
		return -EXDEV;
found:
	rel = real + strlen(r->dir);
	if (strlen(rel) >= n)
		return -ENAMETOOLONG;
	strcpy(buf, *rel ? rel : "/");
	return 0;
}

int gp_root_fd_realpath(const struct gp_root *r, int fd, const char *path, char *buf, size_t n)
{
	char real[PATH_MAX];
	const char *rel;

	if (fd < 0 || fd_path(fd, real, sizeof(real)) || (r->dir[0] && !beneath(r, real)))
		return gp_root_realpath(r, path, buf, n);
	rel = real + strlen(r->dir);
	if (strlen(rel) >= n)
		return -ENAMETOOLONG;
	strcpy(buf, *rel ? rel : "/");
	return 0;
}

int gp_root_exists(const struct gp_root *r, const char *path)
{
	int fd = gp_root_open(r, path, O_PATH);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}
