/* gpup2p — links read through an open folder, their targets resolved once per place (gpup2p/root.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpup2p/root.h"
#include "internal.h"

/* Remember what `key` resolved to (rc, and target when rc is 0). 0 or -ENOMEM. */
static int keep(struct gp_root_links *c, const char *key, int rc, const char *target)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		char **t = realloc(c->target, cap * sizeof(*t));
		int *v;

		if (!t)
			return -ENOMEM;
		c->target = t;
		if (!(v = realloc(c->rc, cap * sizeof(*v))))
			return -ENOMEM;
		c->rc = v;
		c->cap = cap;
	}
	c->target[c->n] = rc ? NULL : strdup(target);
	c->rc[c->n] = rc;
	if ((!rc && !c->target[c->n]) || gp_strmap_put(&c->map, key, (int)c->n)) {
		free(c->target[c->n]);
		return -ENOMEM;
	}
	c->n++;
	return 0;
}

/* The place a relative link text leads to from the canonical folder dir, as a path whose part
 * before `*rest` is canonical: its leading "../" taken off dir (the parent of a real folder is
 * its parent in the path), the rest kept. 0, or -1 when only a full resolution can tell (an
 * absolute text, "." or ".." further in, a ".." above "/"). */
static int lexical(const char *dir, const char *text, char *out, size_t n, size_t *rest)
{
	size_t l = strlen(dir);
	const char *p = text;

	if (l >= n || text[0] == '/' || !text[0])
		return -1;
	memcpy(out, dir, l + 1);
	while (!strncmp(p, "../", 3) || !strcmp(p, "..")) {
		if (l <= 1)
			return -1;
		while (l > 0 && out[l - 1] != '/')
			l--;
		l = l > 1 ? l - 1 : 1; /* "/a" -> "/" */
		out[l] = '\0';
		p += p[2] ? 3 : 2;
	}
	*rest = l;
	if (!*p)
		return 0;
	for (const char *c = p; *c;) { /* each further part a plain name */
		size_t k = strcspn(c, "/");

		if (!k || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.') || (c[k] == '/' && !c[k + 1]))
			return -1;
		c += k + (c[k] == '/');
	}
	if (l + 1 + strlen(p) >= n)
		return -1;
	snprintf(out + l, n - l, "%s%s", l > 1 ? "/" : "", p);
	return 0;
}

int gp_root_link_in(const struct gp_root *r, int dfd, const char *dir, const char *name, struct gp_root_links *c,
		    char *target, size_t tn)
{
	char path[GP_PATH_MAX], text[GP_PATH_MAX], nm[256];
	ssize_t len;
	int rc, n = snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (dfd < 0 || strchr(name, '/'))
		return gp_root_link_target(r, path, target, tn, nm, sizeof(nm));
	len = readlinkat(dfd, name, text, sizeof(text) - 1);
	rc = len < 0 ? errno : 0;
	gp_root_traced(path, rc);
	if (len < 0)
		return -rc;
	text[len] = '\0';
	return gp_root_link_resolve(r, dir, name, text, c, target, tn);
}

int gp_root_link_resolve(const struct gp_root *r, const char *dir, const char *name, const char *text,
			 struct gp_root_links *c, char *target, size_t tn)
{
	char path[GP_PATH_MAX], place[GP_PATH_MAX], res[GP_PATH_MAX], nm[256];
	const char *base;
	size_t rest;
	int rc, i, n = snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (lexical(dir, text, place, sizeof(place), &rest))
		return gp_root_link_target(r, path, target, tn, nm, sizeof(nm));
	if (!place[rest]) { /* an ancestor of a canonical folder: canonical too, and there */
		snprintf(res, sizeof(res), "%s", place);
	} else if (c && (i = gp_strmap_get(&c->map, place)) >= 0) {
		if ((rc = c->rc[i]))
			return rc;
		snprintf(res, sizeof(res), "%s", c->target[i]);
	} else {
		rc = gp_root_realpath(r, place, res, sizeof(res));
		if (c && keep(c, place, rc, res))
			return -ENOMEM;
		if (rc)
			return rc;
	}
	/* as gp_root_link_target: a target with a last part (of a name's length) */
	base = strrchr(res, '/');
	if (!base || !base[1] || strlen(base + 1) >= sizeof(nm))
		return -EINVAL;
	if (strlen(res) >= tn)
		return -ENAMETOOLONG;
	strcpy(target, res);
	return 0;
}

int gp_root_link_open(const struct gp_root *r, int dfd, const char *dir, const char *name, int flags, char *real,
		      size_t n)
{
	char path[GP_PATH_MAX], text[GP_PATH_MAX], place[GP_PATH_MAX];
	ssize_t len;
	size_t rest;
	int fd, k = snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", name);

	if (r->live || dfd < 0 || strchr(name, '/') || k < 0 || (size_t)k >= sizeof(path))
		return -ENOSYS;
	if ((len = readlinkat(dfd, name, text, sizeof(text) - 1)) <= 0)
		return -ENOSYS;
	text[len] = '\0';
	/* the place the text names, where nothing on the way is a link: there, and canonical */
	if (lexical(dir, text, place, sizeof(place), &rest) || strlen(place) >= n ||
	    (fd = gp_root_open_nolinks(r, place, flags)) < 0)
		return -ENOSYS;
	gp_root_traced(path, 0);
	strcpy(real, place);
	return fd;
}

void gp_root_links_free(struct gp_root_links *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->target[i]);
	free(c->target);
	free(c->rc);
	gp_strmap_free(&c->map);
	memset(c, 0, sizeof(*c));
}
