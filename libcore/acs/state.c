/* gpup2p — the ACS state file: parse, merge, atomic write, lock. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acs/state.h"
#include "gpup2p/out.h"

#define STATE_MAGIC "gpup2p-acs-state 1"

/* Parse state text into entries (*out malloc'ed). Returns the count, or -1 with the 1-based line
 * number of the first bad line in *badline. */
static int parse(const char *text, struct gp_acs_state_entry **out, int *badline)
{
	struct gp_acs_state_entry *v = NULL;
	int n = 0, cap = 0, line = 0;
	const char *s = text;

	*out = NULL;
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t l = nl ? (size_t)(nl - s) : strlen(s);
		char buf[256], bdf[32], tail;
		unsigned vendor, device, off, before, after;
		struct gp_acs_state_entry en;

		line++;
		if (l >= sizeof(buf))
			goto bad;
		memcpy(buf, s, l);
		buf[l] = '\0';
		s = nl ? nl + 1 : NULL;
		if (line == 1) {
			if (strcmp(buf, STATE_MAGIC))
				goto bad;
			continue;
		}
		if (!buf[0] || buf[0] == '#')
			continue;
		if (sscanf(buf, "%31s %x:%x 0x%x 0x%x 0x%x %c", bdf, &vendor, &device, &off, &before, &after,
			   &tail) != 6 || gp_pci_parse_bdf(bdf, en.bdf) || vendor > 0xffff || device > 0xffff ||
		    off < 0x100 || off > GP_CFG_MAX - 2 || (off & 1) || before > 0xffff || after > 0xffff)
			goto bad;
		en.vendor = (uint16_t)vendor;
		en.device = (uint16_t)device;
		en.off = (int)off;
		en.before = (uint16_t)before;
		en.after = (uint16_t)after;
		if (n == cap) {
			struct gp_acs_state_entry *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 8) * sizeof(*v));

			if (!nv)
				goto bad;
			v = nv;
		}
		v[n++] = en;
	}
	if (line == 0)
		goto bad;
	*out = v;
	return n;
bad:
	free(v);
	*badline = line ? line : 1;
	return -1;
}

static char *slurp(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;

	while (buf && (r = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap) {
			char *nb = realloc(buf, (cap *= 2) + 1);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
	}
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

/* Open the state file for reading: a regular file only (a pipe or device there would block or never end).
 * The fd, or -1 with errno set (EINVAL: not a regular file). */
static int open_state(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* strerror, with EINVAL from open_state worded. */
static const char *state_strerror(int err)
{
	return err == EINVAL ? "not a regular file" : strerror(err);
}

int gp_acs_state_lock(const char *path, struct gp_acs_state_file *old, struct gp_err *e)
{
	char dir[GP_PATH_MAX], lock[GP_PATH_MAX + 8];
	int fd, rc;

	memset(old, 0, sizeof(*old));
	old->lockfd = -1;
	snprintf(dir, sizeof(dir), "%s", path);
	if ((rc = gp_mkdir_p(dirname(dir))))
		return gp_err_set(e, GP_E_FAIL, -rc, "cannot create the folder of the state file %s: %s", path,
				  strerror(-rc));
	snprintf(lock, sizeof(lock), "%s.lock", path);
	old->lockfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (old->lockfd < 0)
		return gp_err_set(e, GP_E_FAIL, errno, "cannot create the lock file %s: %s (nothing was changed)", lock,
				  strerror(errno));
	if (flock(old->lockfd, LOCK_EX | LOCK_NB)) {
		rc = errno;
		gp_acs_state_unlock(old);
		return gp_err_set(e, GP_E_FAIL, rc, "another gpup2p acs run holds %s: try again when it is done", lock);
	}
	fd = open_state(path);
	if (fd < 0 && errno != ENOENT) {
		rc = errno;
		gp_acs_state_unlock(old);
		return gp_err_set(e, GP_E_FAIL, rc, "%s: %s", path, state_strerror(rc));
	}
	if (fd >= 0) {
		old->content = slurp(fd, &old->len);
		close(fd);
		if (!old->content) {
			gp_acs_state_unlock(old);
			return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
		}
	}
	return 0;
}

void gp_acs_state_unlock(struct gp_acs_state_file *old)
{
	if (old->lockfd >= 0)
		close(old->lockfd);
	free(old->content);
	memset(old, 0, sizeof(*old));
	old->lockfd = -1;
}

static void put_line(FILE *f, const struct gp_acs_state_entry *x, uint16_t after)
{
	fprintf(f, "%s %04x:%04x 0x%03x 0x%04x 0x%04x\n", x->bdf, x->vendor, x->device, (unsigned)x->off, x->before,
		after);
}

int gp_acs_state_save(const char *path, const struct gp_acs_state_file *old, const struct gp_acs_state_entry *w,
		      int nw, struct gp_err *e)
{
	struct gp_acs_state_entry *v = NULL;
	int n = 0, bad = 0, rc;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (old->content && (n = parse(old->content, &v, &bad)) < 0)
		return gp_err_set(e, GP_E_DATA, EINVAL,
				  "%s:%d: not a gpup2p ACS state file: move it away (gpup2p acs --restore cannot use it)",
				  path, bad);
	f = open_memstream(&text, &len);
	if (!f) {
		free(v);
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	fprintf(f, "%s\n# bdf vendor:device ctl-offset before after\n", STATE_MAGIC);
	for (int k = 0; k < n; k++) {
		uint16_t after = v[k].after;

		for (int i = 0; i < nw; i++)
			if (!strcmp(w[i].bdf, v[k].bdf))
				after = w[i].after;
		put_line(f, &v[k], after);
	}
	for (int i = 0; i < nw; i++) {
		int known = 0;

		for (int k = 0; k < n; k++)
			known |= !strcmp(v[k].bdf, w[i].bdf);
		if (!known)
			put_line(f, &w[i], w[i].after);
	}
	free(v);
	if (fclose(f) || !text) {
		free(text);
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	rc = gp_out_write_atomic(path, text, len, NULL);
	free(text);
	if (rc)
		return gp_err_set(e, GP_E_FAIL, -rc, "cannot write the state file %s: %s (nothing was changed)", path,
				  strerror(-rc));
	return 0;
}

void gp_acs_state_put_back(const char *path, const struct gp_acs_state_file *old)
{
	if (old->content)
		(void)gp_out_write_atomic(path, old->content, old->len, NULL);
	else
		(void)unlink(path);
}

int gp_acs_state_load(const char *path, struct gp_acs_state_entry **v, int *n, struct gp_err *e)
{
	size_t len;
	char *text;
	int fd, bad = 0;

	*v = NULL;
	*n = 0;
	fd = open_state(path);
	if (fd < 0)
		return gp_err_set(e, errno == ENOENT ? GP_E_UNAVAIL : GP_E_FAIL, errno, "%s: %s", path,
				  state_strerror(errno));
	text = slurp(fd, &len);
	close(fd);
	if (!text)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	*n = parse(text, v, &bad);
	free(text);
	if (*n < 0) {
		*n = 0;
		return gp_err_set(e, GP_E_DATA, EINVAL, "%s:%d: not a gpup2p ACS state file", path, bad);
	}
	return 0;
}

int gp_acs_state_remove(const char *path, struct gp_err *e)
{
	if (unlink(path) && errno != ENOENT)
		return gp_err_set(e, GP_E_FAIL, errno, "cannot remove the state file %s: %s", path, strerror(errno));
	return 0;
}
