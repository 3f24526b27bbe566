/* gpup2p — the folders beneath a root: listing one (by name, or its open fd with each entry's type),
 * reading a file its listing showed, making a path of folders (gpup2p/root.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "gpup2p/root.h"
#include "gpup2p/stats.h"
#include "internal.h"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int gp_root_list(const struct gp_root *r, const char *path, char ***names)
{
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	DIR *d = NULL;
	int fd;

	*names = NULL;
	fd = gp_root_open(r, path, O_RDONLY | O_DIRECTORY);
	if (fd < 0 && fd != -ENOENT && fd != -ENOTDIR)
		return fd;
	if (fd >= 0 && !(d = fdopendir(fd))) {
		close(fd);
		return -ENOMEM;
	}
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (cnt + 2 > cap) {
			char **nv;

			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto oom;
			v = nv;
		}
		v[cnt] = strdup(de->d_name);
		if (!v[cnt])
			goto oom;
		cnt++;
	}
	if (d)
		closedir(d);
	d = NULL;
	if (!v) {
		v = calloc(1, sizeof(*v));
		if (!v)
			return -ENOMEM;
	}
	v[cnt] = NULL;
	qsort(v, cnt, sizeof(*v), cmp_names);
	*names = v;
	return (int)cnt;
oom:
	if (d)
		closedir(d);
	if (v) {
		v[cnt] = NULL;
		gp_root_free_list(v);
	}
	return -ENOMEM;
}

void gp_root_free_list(char **names)
{
	if (!names)
		return;
	for (char **p = names; *p; p++)
		free(*p);
	free(names);
}

int gp_mkdir_p(const char *path)
{
	char buf[GP_PATH_MAX];
	size_t l = strlen(path);

	if (l >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, l + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* The longest entry getdents64 gives: its header and a name of 255 bytes and its NUL, 8-aligned. */
#define DIRENT_MAX ((offsetof(struct dirent64, d_name) + 256 + 7) & ~(size_t)7)

/* 1 when the file system of the folder open at fd is one whose listing fills the caller's buffer
 * until the folder's end (the kernel's dcache, ext4's and xfs's readdir: each read stops only when the
 * next entry does not fit). FUSE, NFS and others may return less: they are read until a read gives 0. */
static int fs_fills(int fd)
{
	static const unsigned long magic[] = { 0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x794c7630, 0x62656572,
					       0x9fa0 };
	struct statfs sf;

	if (fstatfs(fd, &sf))
		return 0;
	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if ((unsigned long)sf.f_type == magic[i])
			return 1;
	return 0;
}

/* The mount point of one mountinfo line, its octal escapes (\040 and the like) undone, into out. */
static void mount_point(const char *line, char *out, size_t n)
{
	const char *p = line;
	size_t k = 0;

	for (int f = 0; f < 4 && p; f++)
		if ((p = strchr(p, ' ')))
			p++;
	for (; p && *p && *p != ' ' && *p != '\n' && k + 1 < n; p++)
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
			out[k++] = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			out[k++] = *p;
		}
	out[k] = '\0';
}

int gp_root_mount_beneath(const char *mountinfo, const char *dir)
{
	FILE *f = fopen(mountinfo, "re");
	size_t l = strlen(dir), cap = 0;
	char *line = NULL, mp[PATH_MAX];
	int found = 0;

	if (!f)
		return 1;
	while (!found && getline(&line, &cap, f) > 0) {
		mount_point(line, mp, sizeof(mp));
		found = !strncmp(mp, dir, l) && mp[l] == '/' && mp[l + 1];
	}
	free(line);
	fclose(f);
	return found;
}

int gp_root_fills_dirs(int fd, const char *dir)
{
	return fs_fills(fd) && !gp_root_mount_beneath("/proc/self/mountinfo", dir);
}

static int cmp_ents(const void *a, const void *b)
{
	return strcmp(((const struct gp_root_ent *)a)->name, ((const struct gp_root_ent *)b)->name);
}

int gp_root_entries(const struct gp_root *r, int dfd, const char *dir, struct gp_root_ent **ents)
{
	char buf[16384];
	struct gp_root_ent *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	ssize_t k;

	/* a read that left room for the longest entry ended the folder, where the file system fills
	 * each read (the kernel's sysfs always does) */
	int fills = r->live ? !strncmp(dir, "/sys/", 5) : r->fills_dirs;

	*ents = NULL;
	/* getdents64 straight on the folder's fd: no DIR stream (its dup, fcntl and close) */
	while ((k = getdents64(dfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < k;) {
			struct dirent64 *de = (struct dirent64 *)(void *)(buf + off);

			off += de->d_reclen;
			if (de->d_name[0] == '.')
				continue;
			if (cnt == cap) {
				cap = cap ? 2 * cap : 64;
				if (!(nv = realloc(v, cap * sizeof(*v)))) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			{ /* a name is at most 255 bytes (NAME_MAX): no printf each (0.4% of a snapshot's CPU) */
				size_t l = strnlen(de->d_name, sizeof(v[cnt].name) - 1);

				memcpy(v[cnt].name, de->d_name, l);
				v[cnt].name[l] = '\0';
			}
			v[cnt++].type = de->d_type;
		}
		if (fills && (size_t)k + 2 * DIRENT_MAX <= sizeof(buf))
			break;
	}
	if (k < 0) {
		k = -errno;
		free(v);
		gp_root_traced(dir, (int)-k);
		return (int)k;
	}
	gp_root_traced(dir, 0);
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_ents);
	*ents = v;
	return (int)cnt;
}

int gp_root_ent_type(const struct gp_root_ent *ents, int n, const char *name)
{
	size_t lo = 0, hi;

	if (n < 0)
		return DT_UNKNOWN;
	/* by name, as cmp_ents sorted them (no copy of the name into a key: 25 look-ups a function) */
	for (hi = (size_t)n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, ents[mid].name);

		if (!c)
			return ents[mid].type;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* open(2) of a listed entry through dfd, no symlink followed: the fd, -ELOOP for a symlink (the
 * caller resolves it the slow way), or another negative errno. */
static int open_listed(const struct gp_root *r, int dfd, const char *dir, const char *name)
{
	char path[GP_PATH_MAX];
	int fd, len, err;

	if (dfd < 0 || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -ELOOP;
	GP_STAT_ADD(files_opened, 1);
	/* O_NONBLOCK: a pipe swapped in does not block the open */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (r->live ? 0 : O_NONBLOCK));
	err = fd < 0 ? errno : 0;
	if (err == ELOOP)
		return -ELOOP;
	if (gp_root_trace_on()) {
		len = snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", name);
		gp_root_traced(len >= 0 && (size_t)len < sizeof(path) ? path : name, err);
	}
	return fd < 0 ? -err : fd;
}

ssize_t gp_root_read_raw_listed(const struct gp_root *r, int dfd, const char *dir, const char *name, char *buf,
				size_t n, int *whole)
{
	size_t len = 0;
	ssize_t k = 0;
	int fd, end = 0;

	*whole = 0;
	if ((fd = open_listed(r, dfd, dir, name)) == -ELOOP) /* read as gp_root_read_text_in reads it */
		return gp_root_read_at_in(r, dfd, dir, name, buf, n, 0);
	if (fd < 0)
		return fd;
	while (len < n && !end) {
		if ((k = gp_root_read_once(fd, buf + len, n - len, &end)) < 0)
			break;
		len += (size_t)k;
	}
	close(fd);
	*whole = k >= 0 && end && len < n;
	return k < 0 && !len ? k : (ssize_t)len;
}

ssize_t gp_root_read_text_listed(const struct gp_root *r, int dfd, const char *dir, const char *name, char *buf,
				 size_t n)
{
	int whole;

	if (n == 0)
		return -EINVAL;
	return gp_root_text_end(buf, gp_root_read_raw_listed(r, dfd, dir, name, buf, n, &whole), n);
}

ssize_t gp_root_read_listed(const struct gp_root *r, int dfd, const char *dir, const char *name, char **buf,
			    size_t max)
{
	int fd;

	*buf = NULL;
	if ((fd = open_listed(r, dfd, dir, name)) == -ELOOP)
		return gp_root_read_alloc_in(r, dfd, dir, name, buf, max);
	return fd < 0 ? fd : gp_root_read_fd_alloc(fd, buf, max, 1);
}

/* Keep d's listing compact (a folder kept for a run, of thousands of device nodes): its names, sorted, in
 * d->names, their types in d->types, one block in place of d->ents. -ENOMEM: not listed (n = -1). */
static int compact(struct gp_root_dir *d)
{
	size_t all = 0, at = (size_t)d->n * (sizeof(*d->names) + 1);
	char *block;

	for (int i = 0; i < d->n; i++)
		all += strlen(d->ents[i].name) + 1;
	if (!(block = malloc(at + all))) {
		free(d->ents);
		d->ents = NULL;
		d->n = -1;
		return -ENOMEM;
	}
	d->names = (char **)(void *)block;
	d->types = (unsigned char *)block + (size_t)d->n * sizeof(*d->names);
	for (int i = 0; i < d->n; i++) {
		size_t l = strlen(d->ents[i].name) + 1;

		d->names[i] = memcpy(block + at, d->ents[i].name, l);
		d->types[i] = d->ents[i].type;
		at += l;
	}
	free(d->ents);
	d->ents = NULL;
	return 0;
}

/* d->path made pdir/name (name NULL: pdir): 0, or -ENAMETOOLONG (into d->fd too). */
static int dir_path(struct gp_root_dir *d, const char *pdir, const char *name)
{
	int len;

	d->fd = -ENOENT;
	d->ents = NULL;
	d->names = NULL;
	d->types = NULL;
	d->n = -1;
	len = name ? snprintf(d->path, sizeof(d->path), "%s/%s", strcmp(pdir, "/") ? pdir : "", name)
		   : snprintf(d->path, sizeof(d->path), "%s", pdir);
	return len < 0 || (size_t)len >= sizeof(d->path) ? (d->fd = -ENAMETOOLONG) : 0;
}

/* d's folder, open at d->fd (or its negative errno), listed (compact: GP_ROOT_DIR_COMPACT). */
static int dir_entries(const struct gp_root *r, struct gp_root_dir *d, unsigned flags)
{
	int rc;

	if (d->fd >= 0 && (d->n = gp_root_entries(r, d->fd, d->path, &d->ents)) < 0) {
		rc = d->n;
		d->ents = NULL;
		d->n = -1;
		return rc == -ENOMEM ? -ENOMEM : 0;
	}
	return d->fd >= 0 && d->n > 0 && (flags & GP_ROOT_DIR_COMPACT) ? compact(d) : 0;
}

/* gp_root_dir_open, d->path already made: opened through pfd where name is one of its entries, else by
 * path, and listed (compact: GP_ROOT_DIR_COMPACT). */
static int dir_list(const struct gp_root *r, struct gp_root_dir *d, int pfd, const char *pdir, const char *name,
		    unsigned flags)
{
	d->fd = name && pfd >= 0 ? gp_root_open_in(r, pfd, pdir, name, O_RDONLY | O_DIRECTORY)
				 : gp_root_open(r, d->path, O_RDONLY | O_DIRECTORY);
	return dir_entries(r, d, flags);
}

int gp_root_dir_list(const struct gp_root *r, struct gp_root_dir *d, int fd, const char *path)
{
	d->fd = fd;
	d->ents = NULL;
	d->names = NULL;
	d->types = NULL;
	d->n = -1;
	if (path != d->path) {
		if (strlen(path) >= sizeof(d->path)) {
			if (fd >= 0)
				close(fd);
			return d->fd = -ENAMETOOLONG;
		}
		strcpy(d->path, path);
	}
	return dir_entries(r, d, 0);
}

int gp_root_dir_open(const struct gp_root *r, struct gp_root_dir *d, int pfd, const char *pdir, const char *name)
{
	return dir_path(d, pdir, name) ? d->fd : dir_list(r, d, pfd, pdir, name, 0);
}

int gp_root_dir_open_in(const struct gp_root *r, struct gp_root_dir *d, const struct gp_root_dir *in, const char *name,
			unsigned flags)
{
	if (dir_path(d, in ? in->path : name, in ? name : NULL))
		return d->fd;
	if (in && gp_root_dir_gone(in))
		d->fd = in->fd; /* every path through it answers the same */
	else if (in && in->fd >= 0 && gp_root_dir_type(in, name) == -1)
		d->fd = -ENOENT; /* its parent's listing has no such entry */
	else
		return dir_list(r, d, in ? in->fd : -1, in ? in->path : NULL, in ? name : NULL, flags);
	return 0;
}

int gp_root_dir_gone(const struct gp_root_dir *d)
{
	return d->fd == -ENOENT || d->fd == -ENOTDIR;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int gp_root_dir_type(const struct gp_root_dir *d, const char *name)
{
	char **hit;

	if (!d->names)
		return gp_root_ent_type(d->ents, d->fd >= 0 ? d->n : -1, name);
	hit = bsearch(&name, d->names, (size_t)d->n, sizeof(*d->names), cmp_name);
	return hit ? d->types[hit - d->names] : -1;
}

/* How name is read through d: 1 through the folder (*listed: its listing showed it regular), 0 by its
 * path (into path: the folder could not be opened), or the negative errno every read of it answers. */
static int dir_how(const struct gp_root_dir *d, const char *name, int *listed, char *path, size_t n)
{
	int len, t;

	*listed = 0;
	if (d->fd >= 0 && (t = gp_root_dir_type(d, name)) != -1) {
		*listed = t == DT_REG;
		return 1;
	}
	if (d->fd < 0 && gp_root_dir_gone(d))
		return d->fd;
	if ((len = snprintf(path, n, "%s/%s", d->path, name)) < 0 || (size_t)len >= n)
		return d->fd >= 0 ? -ENOENT : -ENAMETOOLONG;
	if (d->fd < 0)
		return 0;
	gp_root_traced(path, ENOENT); /* not in its listing: asked, not opened */
	return -ENOENT;
}

ssize_t gp_root_dir_read_text(const struct gp_root *r, const struct gp_root_dir *d, const char *name, char *buf,
			      size_t n)
{
	char path[GP_PATH_MAX];
	int listed, h = dir_how(d, name, &listed, path, sizeof(path));

	if (h > 0)
		return (listed ? gp_root_read_text_listed : gp_root_read_text_in)(r, d->fd, d->path, name, buf, n);
	return h < 0 ? h : gp_root_read_text(r, path, buf, n);
}

ssize_t gp_root_dir_read_alloc(const struct gp_root *r, const struct gp_root_dir *d, const char *name, char **buf,
			       size_t max)
{
	char path[GP_PATH_MAX];
	int listed, h = dir_how(d, name, &listed, path, sizeof(path));

	*buf = NULL;
	if (h > 0)
		return (listed ? gp_root_read_listed : gp_root_read_alloc_in)(r, d->fd, d->path, name, buf, max);
	return h < 0 ? h : gp_root_read_alloc(r, path, buf, max);
}

void gp_root_dir_close(struct gp_root_dir *d)
{
	free(d->ents);
	free(d->names);
	d->ents = NULL;
	d->names = NULL;
	d->types = NULL;
	d->n = -1;
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -ENOENT;
}
