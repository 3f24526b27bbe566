/* gpup2p — the folders beneath a root: listing one, making a path of them (gpup2p/root.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpup2p/root.h"

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
