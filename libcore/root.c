/* gpup2p — file access under a root directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpup2p/root.h"

int gp_root_init(struct gp_root *r, const char *dir, struct gp_err *e)
{
	char real[PATH_MAX];
	struct stat st;

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
	if (stat(real, &st) == 0 && !gp_root_exists(r, "/sys"))
		return gp_err_set(e, GP_E_UNAVAIL, ENOENT, "root %s has no sys/ directory (not a gpup2p root)", real);
	return 0;
}

int gp_root_path(const struct gp_root *r, const char *path, char *buf, size_t n)
{
	int len = snprintf(buf, n, "%s%s", r->dir, path);

	if (len < 0 || (size_t)len >= n)
		return -ENAMETOOLONG;
	return 0;
}

ssize_t gp_root_read_text(const struct gp_root *r, const char *path, char *buf, size_t n)
{
	char full[GP_PATH_MAX];
	ssize_t len;
	int fd;

	if (n == 0)
		return -EINVAL;
	if (gp_root_path(r, path, full, sizeof(full)))
		return -ENAMETOOLONG;
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, n - 1);
	if (len < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	close(fd);
	buf[len] = '\0';
	if (memchr(buf, '\0', (size_t)len))
		return -EILSEQ;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		buf[--len] = '\0';
	return len;
}

ssize_t gp_root_read_at(const struct gp_root *r, const char *path, void *buf, size_t n, off_t off)
{
	char full[GP_PATH_MAX];
	size_t got = 0;
	int fd;

	if (gp_root_path(r, path, full, sizeof(full)))
		return -ENAMETOOLONG;
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < n) {
		ssize_t k = pread(fd, (char *)buf + got, n - got, off + (off_t)got);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (got)
				break;
			k = -errno;
			close(fd);
			return k;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	return (ssize_t)got;
}

ssize_t gp_root_read_bin(const struct gp_root *r, const char *path, void *buf, size_t n)
{
	return gp_root_read_at(r, path, buf, n, 0);
}

int gp_root_link_name(const struct gp_root *r, const char *path, char *buf, size_t n)
{
	char full[GP_PATH_MAX], target[GP_PATH_MAX];
	ssize_t len;
	const char *base;

	if (gp_root_path(r, path, full, sizeof(full)))
		return -ENAMETOOLONG;
	len = readlink(full, target, sizeof(target) - 1);
	if (len < 0)
		return -errno;
	target[len] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= n)
		return -ENAMETOOLONG;
	strcpy(buf, base);
	return 0;
}

int gp_root_realpath(const struct gp_root *r, const char *path, char *buf, size_t n)
{
	char full[GP_PATH_MAX], real[PATH_MAX];
	size_t dl = strlen(r->dir);
	const char *rel;

	if (gp_root_path(r, path, full, sizeof(full)))
		return -ENAMETOOLONG;
	if (!realpath(full, real))
		return -errno;
	if (dl) {
		if (strncmp(real, r->dir, dl) != 0 || (real[dl] != '/' && real[dl] != '\0'))
			return -EXDEV;
		rel = real + dl;
	} else {
		rel = real;
	}
	if (strlen(rel) >= n)
		return -ENAMETOOLONG;
	strcpy(buf, *rel ? rel : "/");
	return 0;
}

int gp_root_exists(const struct gp_root *r, const char *path)
{
	char full[GP_PATH_MAX];

	if (gp_root_path(r, path, full, sizeof(full)))
		return 0;
	return access(full, F_OK) == 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int gp_root_list(const struct gp_root *r, const char *path, char ***names)
{
	char full[GP_PATH_MAX];
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	DIR *d;

	*names = NULL;
	if (gp_root_path(r, path, full, sizeof(full)))
		return -ENAMETOOLONG;
	d = opendir(full);
	if (!d) {
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
	} else {
		while ((de = readdir(d))) {
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
		closedir(d);
		d = NULL;
	}
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
