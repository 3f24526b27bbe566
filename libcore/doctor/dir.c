/* gpup2p doctor — a folder opened and listed once, its files read through it (check.h's
 * gp_doctor_dir): what the checks read of each RDMA port (state, rate, counters) costs one open
 * beneath the root per folder, not one walk from the root per file, and a file the listing does not
 * show is not asked for. Every answer is the one reading the file by its path gives. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* The folder's entries (d->fd open), kept compact (a folder of thousands of device nodes is kept for
 * the run): their names in d->names (sorted), types in d->types, one block. Where they cannot be listed
 * or kept, every name is tried. */
static void list(struct gp_doctor_ctx *c, struct gp_doctor_dir *d)
{
	struct gp_root_ent *ents = NULL;
	int n = gp_root_entries(c->root, d->fd, d->path, &ents);
	size_t all = 0, at;
	char *block;

	d->n = n;
	for (int i = 0; i < n; i++)
		all += strlen(ents[i].name) + 1;
	at = (size_t)(n > 0 ? n : 0) * (sizeof(*d->names) + 1);
	if (n > 0 && !(block = malloc(at + all))) {
		d->n = -ENOMEM;
	} else if (n > 0) {
		d->names = (char **)(void *)block;
		d->types = (unsigned char *)block + (size_t)n * sizeof(*d->names);
		for (int i = 0; i < n; i++) {
			size_t l = strlen(ents[i].name) + 1;

			d->names[i] = memcpy(block + at, ents[i].name, l);
			d->types[i] = ents[i].type;
			at += l;
		}
	}
	free(ents);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int gp_doctor_dir_type(const struct gp_doctor_dir *d, const char *name)
{
	char **hit;

	if (d->n < 0)
		return DT_UNKNOWN;
	hit = d->n ? bsearch(&name, d->names, (size_t)d->n, sizeof(*d->names), cmp_name) : NULL;
	return hit ? d->types[hit - d->names] : -1;
}

void gp_doctor_dir_open(struct gp_doctor_ctx *c, struct gp_doctor_dir *d, const struct gp_doctor_dir *in,
			const char *name)
{
	int len = in ? snprintf(d->path, sizeof(d->path), "%s/%s", in->path, name) :
		snprintf(d->path, sizeof(d->path), "%s", name);

	d->names = NULL;
	d->n = -1;
	if (len < 0 || (size_t)len >= sizeof(d->path))
		d->fd = -ENAMETOOLONG;
	else if (!in || in->fd < 0)
		d->fd = in && gp_doctor_dir_gone(in->fd) ? in->fd : gp_root_open(c->root, d->path, O_RDONLY | O_DIRECTORY);
	else if (gp_doctor_dir_type(in, name) == -1)
		d->fd = -ENOENT; /* its parent's listing has no such entry */
	else
		d->fd = gp_root_open_in(c->root, in->fd, in->path, name, O_RDONLY | O_DIRECTORY);
	if (d->fd >= 0)
		list(c, d);
}

int gp_doctor_dir_gone(int err)
{
	/* the folder is not there, or not a folder: a path through it answers the same */
	return err == -ENOENT || err == -ENOTDIR;
}

/* dir/name into path (the trace names it so); 0, or -ENAMETOOLONG. */
static int file_path(const struct gp_doctor_dir *d, const char *name, char *path, size_t n)
{
	int len = snprintf(path, n, "%s/%s", d->path, name);

	return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

/* How name is read through d: 1 through the folder (*listed: the listing showed it regular), 0 by its
 * path (the folder could not be opened), or the negative errno every read of it answers. */
static int how(const struct gp_doctor_dir *d, const char *name, int *listed)
{
	char path[GP_PATH_MAX];
	int t;

	*listed = 0;
	if (d->fd >= 0) {
		if ((t = gp_doctor_dir_type(d, name)) == -1) {
			if (!file_path(d, name, path, sizeof(path)))
				gp_root_trace(path, ENOENT);
			return -ENOENT;
		}
		*listed = t == DT_REG;
		return 1;
	}
	return gp_doctor_dir_gone(d->fd) ? d->fd : 0;
}

long gp_doctor_dir_text(struct gp_doctor_ctx *c, const struct gp_doctor_dir *d, const char *name, char *buf,
			size_t n)
{
	char path[GP_PATH_MAX];
	int listed, h = how(d, name, &listed);

	if (h > 0)
		return (long)(listed ? gp_root_read_text_listed : gp_root_read_text_in)(c->root, d->fd, d->path, name, buf, n);
	if (h < 0 || (h = file_path(d, name, path, sizeof(path))))
		return h;
	return gp_doctor_read(c, path, buf, n);
}

long gp_doctor_dir_alloc(struct gp_doctor_ctx *c, const struct gp_doctor_dir *d, const char *name, char **buf,
			 size_t max)
{
	char path[GP_PATH_MAX];
	int listed, h = how(d, name, &listed);

	*buf = NULL;
	if (h > 0)
		return (long)(listed ? gp_root_read_listed : gp_root_read_alloc_in)(c->root, d->fd, d->path, name, buf, max);
	if (h < 0 || (h = file_path(d, name, path, sizeof(path))))
		return h;
	return (long)gp_root_read_alloc(c->root, path, buf, max);
}

void gp_doctor_dir_close(struct gp_doctor_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->names);
	d->names = NULL;
	d->fd = -EBADF;
}
