/* gpup2p — snapshot: writing into the snapshot directory, or its archive (tar.c). Every file, folder
 * and link is made relative to the directory's fd, held open for the whole capture, and each folder
 * is created once: the folders made so far are remembered in a hash set, so that a file costs one
 * openat, one write and one close whatever the depth of its folder. An archive gets each folder's
 * member once the same way, and each link's (the set holds the links too). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot/internal.h"

/* How much of a file is copied at most: sysfs attributes hold a page, /proc/modules and
 * /proc/driver/nvidia/params some KiB. A longer file is an error, never a silent cut. */
#define SNAP_FILE_MAX (16u << 20)

/* A path's hash, 8 bytes at a time (FNV-1a's byte at a time was most of the set's cost): each word
 * mixed in by a multiply, the last one's bits spread over the low ones the table's index takes. */
static uint64_t hash(const char *k)
{
	size_t n = strlen(k);
	uint64_t h = 1469598103934665603ull ^ n, w;

	for (; n >= 8; n -= 8, k += 8) {
		memcpy(&w, k, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, k, n);
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

/* The slot holding path k (hash h), or the empty slot where it belongs: a path is compared only
 * where the hashes agree (comparing each one probed, read from wherever it lay, was most of the
 * set's cost). */
static struct gp_snap_made *slot(const struct gp_snap *s, const char *k, uint64_t h)
{
	size_t i = (size_t)h & (s->made_cap - 1);

	while (s->made[i].off && (s->made[i].hash != h || strcmp(s->names + s->made[i].off, k)))
		i = (i + 1) & (s->made_cap - 1);
	return &s->made[i];
}

/* 1 when path k (hash h) was made. */
static int made(const struct gp_snap *s, const char *k, uint64_t h)
{
	return s->made_cap && slot(s, k, h)->off;
}

/* Remember path k (hash h) as made, once. 0 or -ENOMEM. */
static int remember(struct gp_snap *s, const char *k, uint64_t h)
{
	struct gp_snap_made *sl;
	size_t l = strlen(k) + 1;

	if (2 * (s->made_n + 1) > s->made_cap) { /* at most half full */
		struct gp_snap_made *old = s->made;
		size_t ocap = s->made_cap;

		s->made_cap = ocap ? 2 * ocap : 1024;
		if (!(s->made = calloc(s->made_cap, sizeof(*s->made)))) {
			s->made = old;
			s->made_cap = ocap;
			return -ENOMEM;
		}
		for (size_t i = 0; i < ocap; i++)
			if (old[i].off)
				*slot(s, s->names + old[i].off, old[i].hash) = old[i];
		free(old);
	}
	sl = slot(s, k, h);
	if (sl->off)
		return 0;
	if (s->names_len + l > s->names_cap) { /* offset 0 is no path: the first one at 1 */
		size_t cap = s->names_cap ? 2 * s->names_cap : 1 << 16;
		char *more;

		while (cap < s->names_len + l + 1)
			cap *= 2;
		if (!(more = realloc(s->names, cap)))
			return -ENOMEM;
		s->names = more;
		s->names_cap = cap;
		if (!s->names_len)
			s->names_len = 1;
	}
	memcpy(s->names + s->names_len, k, l);
	*sl = (struct gp_snap_made){ .hash = h, .off = s->names_len };
	s->names_len += l;
	s->made_n++;
	return 0;
}

int gp_snap_out_open(struct gp_snap *s)
{
	s->dfd = open(s->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dfd < 0)
		return gp_err_set(s->e, GP_E_FAIL, errno, "%s: %s", s->dir, strerror(errno));
	return 0;
}

void gp_snap_out_close(struct gp_snap *s)
{
	if (s->dfd >= 0)
		close(s->dfd);
	s->dfd = -1;
	free(s->made);
	free(s->names);
	s->made = NULL;
	s->names = NULL;
	s->made_cap = s->made_n = s->names_len = s->names_cap = 0;
	s->last_len = 0;
}

/* An error on the snapshot's file at live path `live`. */
static int out_err(struct gp_snap *s, const char *live, int err)
{
	if (err == ENOMEM)
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	if (s->tar) /* the archive's write failed (ENOSPC, EFBIG) */
		return gp_err_set(s->e, GP_E_FAIL, err, "cannot write %s (at %s): %s", s->shown, live, strerror(err));
	return gp_err_set(s->e, GP_E_FAIL, err, "%s%s: %s", s->dir, live, strerror(err));
}

/* Make the folder at live path `live` (len bytes of it) and the missing ones above it, each
 * once. 0 or a positive errno. The last file's folder and those above it are made: such a one is
 * neither looked up nor hashed (most folders are made below the one before). */
static int make_dirs(struct gp_snap *s, char *live, size_t len)
{
	char *slash, c = live[len];
	uint64_t h;
	int rc = 0;

	if (len <= 1) /* "/": the snapshot directory */
		return 0;
	if (len <= s->last_len && !memcmp(live, s->last, len) && (len == s->last_len || s->last[len] == '/'))
		return 0;
	live[len] = '\0';
	h = hash(live);
	if (made(s, live, h))
		goto out;
	slash = strrchr(live, '/');
	if ((rc = make_dirs(s, live, (size_t)(slash - live))))
		goto out;
	if (s->tar)
		rc = gp_snap_tar_add(s, live, GP_TAR_DIR, NULL, 0, NULL);
	else if (mkdirat(s->dfd, live + 1, 0755) && errno != EEXIST)
		rc = errno;
	if (!rc)
		rc = -remember(s, live, h);
out:
	live[len] = c;
	return rc;
}

/* Check a live path (absolute, within GP_PATH_MAX) and make the folder that holds it. */
static int parent_of(struct gp_snap *s, const char *live, char *buf)
{
	size_t l = strlen(live);
	int rc;

	if (live[0] != '/' || l >= GP_PATH_MAX - strlen(s->dir))
		return gp_err_set(s->e, GP_E_FAIL, ENAMETOOLONG, "path too long: %s", live);
	memcpy(buf, live, l + 1);
	l = (size_t)(strrchr(buf, '/') - buf);
	if ((rc = make_dirs(s, buf, l)))
		return out_err(s, live, rc);
	if (l < sizeof(s->last)) { /* made, or there: the next file's folder is looked for here first */
		memcpy(s->last, buf, l);
		s->last_len = l;
	}
	return 0;
}

int gp_snap_write_file(struct gp_snap *s, const char *live, const void *data, size_t len)
{
	char buf[GP_PATH_MAX];
	int fd, rc;

	if ((rc = parent_of(s, live, buf)))
		return rc;
	if (s->tar) {
		if ((rc = gp_snap_tar_add(s, live, GP_TAR_FILE, data, len, NULL)))
			return out_err(s, live, rc);
		s->st->files++;
		return 0;
	}
	fd = openat(s->dfd, live + 1, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return out_err(s, live, errno);
	if (len) {
		ssize_t w = write(fd, data, len);

		rc = w < 0 ? errno : w != (ssize_t)len ? EIO : 0; /* a short write sets no errno */
	}
	if (rc) {
		if (fd >= 0)
			close(fd);
		return out_err(s, live, rc);
	}
	close(fd);
	s->st->files++;
	return 0;
}

int gp_snap_make_dir(struct gp_snap *s, const char *live)
{
	char buf[GP_PATH_MAX];
	int rc;

	if ((rc = parent_of(s, live, buf)))
		return rc;
	rc = make_dirs(s, buf, strlen(buf));
	return rc ? out_err(s, live, rc) : 0;
}

int gp_snap_make_link(struct gp_snap *s, const char *from, const char *to)
{
	char buf[GP_PATH_MAX], rel[GP_PATH_MAX];
	const char *f = from, *t = to;
	size_t used = 0;
	int rc;

	/* skip the common directory prefix */
	for (;;) {
		const char *fs = strchr(f + 1, '/'), *ts = strchr(t + 1, '/');

		if (!fs || !ts || fs - f != ts - t || strncmp(f, t, (size_t)(fs - f)) != 0)
			break;
		f = fs;
		t = ts;
	}
	rel[0] = '\0';
	for (const char *p = strchr(f + 1, '/'); p; p = strchr(p + 1, '/')) {
		if (used + 3 >= sizeof(rel))
			return out_err(s, from, ENAMETOOLONG);
		memcpy(rel + used, "../", 4);
		used += 3;
	}
	if (strlen(t + 1) >= sizeof(rel) - used)
		return out_err(s, from, ENAMETOOLONG);
	memcpy(rel + used, t + 1, strlen(t + 1) + 1);
	if ((rc = parent_of(s, from, buf)))
		return rc;
	if (s->tar) { /* made once, as symlinkat's EEXIST keeps the first */
		uint64_t h = hash(from);

		if (made(s, from, h))
			return 0;
		if ((rc = gp_snap_tar_add(s, from, GP_TAR_LINK, NULL, 0, rel)) || (rc = -remember(s, from, h)))
			return out_err(s, from, rc);
		return 0;
	}
	if (symlinkat(rel, s->dfd, from + 1) && errno != EEXIST)
		return out_err(s, from, errno);
	return 0;
}

/* One the commands would find unreadable (absent, no permission, a symlink out of the root, a
 * device or pipe, a sysfs read error) is left out, so that the replay finds it unreadable too. */
static int copy(struct gp_snap *s, int dfd, const char *dir, const char *name, size_t max, int *left_out, int listed)
{
	char live[GP_PATH_MAX], *buf = NULL;
	ssize_t n;
	int rc;

	if (left_out)
		*left_out = 0;
	{ /* dir/name ("/": none), without a printf (one per file) */
		size_t dl = strcmp(dir, "/") ? strlen(dir) : 0, nl = strlen(name);

		if (dl + nl + 2 > sizeof(live))
			return gp_err_set(s->e, GP_E_FAIL, ENAMETOOLONG, "path too long: %s/%s", dir, name);
		memcpy(live, dir, dl);
		live[dl] = '/';
		memcpy(live + dl + 1, name, nl + 1);
	}
	if (!max)
		max = SNAP_FILE_MAX;
	/* a listed file into the snapshot's buffer where it fits whole (all but a few): no allocation;
	 * one that does not (longer, a read error after some bytes, a link) read again as before */
	if (listed && max >= sizeof(s->rbuf)) {
		int whole;

		n = gp_root_read_raw_listed(s->r, dfd, dir, name, s->rbuf, sizeof(s->rbuf), &whole);
		if (n >= 0 && whole)
			return gp_snap_write_file(s, live, s->rbuf, (size_t)n);
		if (n >= 0)
			n = gp_root_read_listed(s->r, dfd, dir, name, &buf, max);
	} else {
		n = listed ? gp_root_read_listed(s->r, dfd, dir, name, &buf, max)
			   : gp_root_read_alloc_in(s->r, dfd, dir, name, &buf, max);
	}
	if (n < 0) {
		switch ((int)-n) {
		case EISDIR:
			return gp_snap_make_dir(s, live);
		case ENOENT: case ENOTDIR: case EACCES: case EPERM: case EIO: case EINVAL: case ENODEV: case ENXIO:
		case EXDEV: case ELOOP: case EAGAIN: case EMEDIUMTYPE:
			if (left_out)
				*left_out = (int)-n;
			return 0;
		case ENOMEM:
			return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
		case EFBIG:
			return gp_err_set(s->e, GP_E_DATA, EFBIG, "%s%s: longer than %zu bytes: not copied (no file "
					  "gpup2p reads is that long)", s->r->dir, live, max);
		default:
			return gp_err_set(s->e, GP_E_DATA, (int)-n, "%s%s: cannot read it: %s", s->r->dir, live,
					  gp_root_strerror((int)-n));
		}
	}
	rc = gp_snap_write_file(s, live, buf, (size_t)n);
	free(buf);
	return rc;
}

int gp_snap_copy_in(struct gp_snap *s, int dfd, const char *dir, const char *name, size_t max, int *left_out)
{
	return copy(s, dfd, dir, name, max, left_out, 0);
}

int gp_snap_copy_listed(struct gp_snap *s, int dfd, const char *dir, const char *name, size_t max, int *left_out)
{
	return copy(s, dfd, dir, name, max, left_out, 1);
}

int gp_snap_copy_file(struct gp_snap *s, const char *live, size_t max, int *left_out)
{
	char dir[GP_PATH_MAX];
	const char *slash = strrchr(live, '/');

	if (!slash || (size_t)(slash - live) >= sizeof(dir))
		return gp_err_set(s->e, GP_E_FAIL, ENAMETOOLONG, "path too long: %s", live);
	memcpy(dir, live, (size_t)(slash - live));
	dir[slash - live] = '\0';
	return gp_snap_copy_in(s, -1, dir[0] ? dir : "/", slash + 1, max, left_out);
}
