/* gpup2p — what libpci's sysfs method would refuse in a function's folder, checked first. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpup2p/pci.h"
#include "pci/internal.h"

/* The files libpci's sysfs method opens by itself for each function, with the fill flags used here,
 * beyond vendor, device, class and resource (precheck reads those beneath the root first).
 * Under a root directory they must resolve beneath it before libpci is let near them: a symlink
 * out of the root is refused, never followed, and so is a device or pipe (libpci's open would block). */
static const char *const lp_files[] = { "irq", "subsystem_vendor", "subsystem_device", "config" };

static int lp_files_beneath(const struct gp_root *r, int dfd, const char *dir, const struct gp_root_ent *ents,
			    int ne, int *irq, struct gp_err *e)
{
	char path[GP_PATH_MAX];
	int fd, t;

	*irq = 0;
	for (size_t i = 0; i < sizeof(lp_files) / sizeof(lp_files[0]) && !r->live; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, lp_files[i]);
		/* listed as a regular file: no symlink, device or pipe there, nothing to open; not there:
		 * nothing for libpci to follow */
		if ((t = gp_root_ent_type(ents, ne, lp_files[i])) == DT_REG || t == -1) {
			*irq |= i == 0 && t == DT_REG;
			gp_root_trace(path, t == DT_REG ? 0 : ENOENT);
			continue;
		}
		fd = gp_root_open_in(r, dfd, dir, lp_files[i], O_RDONLY);
		if (fd >= 0)
			close(fd);
		if (fd >= 0 && i == 0)
			*irq = 1; /* lp_files[0] */
		else if (fd == -EXDEV || fd == -EMEDIUMTYPE || fd == -ELOOP)
			return gp_err_set(e, GP_E_DATA, -fd, "%s%s: %s", r->dir, path, gp_root_strerror(-fd));
	}
	return 0;
}

/* Mandatory files libpci's scan reads: check them first so that the error names the file and says
 * what is wrong. Each is opened in the function's folder (dfd, opened beneath the root; -1: by path),
 * whose listing (ne entries; -1: none) tells the regular files, read with one open, read and close. */
static int precheck_in(const struct gp_root *r, int dfd, const char *dir, const struct gp_root_ent *ents, int ne,
		       struct gp_err *e)
{
	static const char *const hex_files[] = { "vendor", "device", "class" };
	char path[GP_PATH_MAX], buf[256], *end;
	ssize_t len;
	int irq;

	for (size_t i = 0; i < sizeof(hex_files) / sizeof(hex_files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, hex_files[i]);
		len = gp_root_ent_type(ents, ne, hex_files[i]) == DT_REG
			      ? gp_root_read_text_listed(r, dfd, dir, hex_files[i], buf, sizeof(buf))
			      : gp_root_read_text_in(r, dfd, dir, hex_files[i], buf, sizeof(buf));
		if (len < 0)
			return gp_err_set(e, GP_E_DATA, (int)-len, "%s%s: %s", r->dir, path, gp_root_strerror((int)-len));
		errno = 0;
		(void)strtoul(buf, &end, 16);
		if (len == 0 || *end || errno || strncmp(buf, "0x", 2) != 0)
			return gp_err_set(e, GP_E_DATA, EINVAL, "%s%s: malformed value \"%.40s\" (expected 0x-prefixed hex)",
					  r->dir, path, buf);
	}
	snprintf(path, sizeof(path), "%s/resource", dir);
	/* its first line only (the file has one per BAR and window: a KiB) */
	len = gp_root_read_at_in(r, dfd, dir, "resource", buf, sizeof(buf) - 1, 0);
	if (len < 0)
		return gp_err_set(e, GP_E_DATA, (int)-len, "%s%s: %s", r->dir, path, gp_root_strerror((int)-len));
	buf[len] = '\0';
	{
		unsigned long long s0, e0, f0;

		if (sscanf(buf, "%llx %llx %llx", &s0, &e0, &f0) != 3)
			return gp_err_set(e, GP_E_DATA, EINVAL, "%s%s: malformed (expected \"start end flags\" lines)",
					  r->dir, path);
	}
	if (lp_files_beneath(r, dfd, dir, ents, ne, &irq, e))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/irq", dir);
	if (!irq && !gp_root_exists(r, path))
		return gp_err_set(e, GP_E_DATA, ENOENT, "%s%s: missing", r->dir, path);
	return 0;
}

int gp_pci_precheck(const struct gp_root *r, const char *bdf, struct gp_err *e)
{
	char dir[GP_PATH_MAX];
	struct gp_root_ent *ents = NULL;
	int dfd, rc, ne = -1;

	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s", bdf);
	/* listed once: its files read by name, the absent ones not asked for */
	dfd = gp_root_open(r, dir, O_RDONLY | O_DIRECTORY);
	if (dfd >= 0 && (ne = gp_root_entries(r, dfd, dir, &ents)) < 0)
		ents = NULL;
	rc = precheck_in(r, dfd, dir, ents, ne, e);
	free(ents);
	if (dfd >= 0)
		close(dfd);
	return rc;
}
