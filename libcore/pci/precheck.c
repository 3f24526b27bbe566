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

/* libpci's reading of a sysfs number: strtol(text, NULL, 0), an int. */
static int lp_value(const char *buf)
{
	return (int)strtol(buf, NULL, 0);
}

/* "resource" as libpci 3.9's sysfs method reads it: up to 18 lines by fgets into 256 bytes (a longer
 * line is cut into pieces of 255), each "start end flags" in hex, the first 6 the BARs (start, size
 * end - start + 1 where end > start, else 0, flags). buf: the file's first len bytes. */
#define RES_LINES 18
#define RES_PIECE 255

static void parse_resource(const char *buf, size_t len, struct gp_pci_read *rd)
{
	char line[RES_PIECE + 1];
	size_t pos = 0;

	for (rd->nres = 0; rd->nres < RES_LINES && pos < len; rd->nres++) {
		unsigned long long start, end, flags;
		size_t k = len - pos > RES_PIECE ? RES_PIECE : len - pos;
		const char *nl = memchr(buf + pos, '\n', k);
		int i = rd->nres;

		if (nl)
			k = (size_t)(nl - (buf + pos)) + 1;
		memcpy(line, buf + pos, k);
		line[k] = '\0';
		pos += k;
		if (sscanf(line, "%llx %llx %llx", &start, &end, &flags) != 3) {
			rd->res_bad = 1;
			return;
		}
		if (i < 6) {
			rd->start[i] = start;
			rd->size[i] = end > start ? end - start + 1 : 0;
			rd->flags[i] = flags;
		}
	}
}

/* Mandatory files libpci's scan reads: check them first so that the error names the file and says
 * what is wrong. Each is opened in the function's folder (f->d.fd, opened beneath the root; -1: by
 * path), whose listing tells the regular files, read with one open, read and close. */
int gp_pci_precheck(const struct gp_root *r, struct gp_pci_fn *f, struct gp_pci_read *rd, struct gp_err *e)
{
	static const char *const hex_files[] = { "vendor", "device", "class" };
	char path[GP_PATH_MAX], buf[256], *end, res[RES_LINES * RES_PIECE + 1];
	const char *dir = f->d.path;
	ssize_t len, k = 0;
	size_t got = 0;
	int irq, fd, eof = 0;

	memset(rd, 0, sizeof(*rd));
	for (size_t i = 0; i < sizeof(hex_files) / sizeof(hex_files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, hex_files[i]);
		memset(buf, 1, sizeof(buf)); /* no NUL: where the text ended before its blanks were cut */
		len = gp_root_ent_type(f->d.ents, f->d.n, hex_files[i]) == DT_REG
			      ? gp_pci_fn_text_listed(r, f, hex_files[i], buf, sizeof(buf))
			      : gp_root_read_text_in(r, f->d.fd, dir, hex_files[i], buf, sizeof(buf));
		if (len < 0)
			return gp_err_set(e, GP_E_DATA, (int)-len, "%s%s: %s", r->dir, path, gp_root_strerror((int)-len));
		errno = 0;
		(void)strtoul(buf, &end, 16);
		if (len == 0 || *end || errno || strncmp(buf, "0x", 2) != 0)
			return gp_err_set(e, GP_E_DATA, EINVAL, "%s%s: malformed value \"%.40s\" (expected 0x-prefixed hex)",
					  r->dir, path, buf);
		if (i == 0)
			rd->vendor = (uint16_t)lp_value(buf);
		else if (i == 1)
			rd->device = (uint16_t)lp_value(buf);
		else {
			ssize_t raw = len; /* the file's length, its trailing blanks NULs now */

			while (raw + 1 < (ssize_t)sizeof(buf) && buf[raw + 1] == '\0')
				raw++;
			/* the scan read it into 32 bytes; where it did not fit, libpci's class took its place */
			rd->class_code = raw < 31 ? (uint32_t)strtoul(buf, NULL, 16)
						  : (uint32_t)(uint16_t)(lp_value(buf) >> 8) << 8;
		}
	}
	snprintf(path, sizeof(path), "%s/resource", dir);
	/* as much as libpci's reader takes (a sysfs attribute gives itself in one read); listed as a
	 * regular file: one open, read and close */
	if (gp_root_ent_type(f->d.ents, f->d.n, "resource") == DT_REG) {
		if ((len = gp_root_read_raw_listed(r, f->d.fd, dir, "resource", res, sizeof(res) - 1, &eof)) >= 0 && eof)
			gp_pci_fn_keep(f, "resource", 0, res, (size_t)len);
		got = len < 0 ? 0 : (size_t)len;
	} else {
		fd = gp_root_open_in(r, f->d.fd, dir, "resource", O_RDONLY);
		while (fd >= 0 && got < sizeof(res) - 1 && !eof) {
			if ((k = gp_root_read_once(fd, res + got, sizeof(res) - 1 - got, &eof)) < 0)
				break;
			got += (size_t)k;
		}
		if (fd >= 0)
			close(fd);
		len = fd < 0 ? fd : k < 0 && !got ? k : (ssize_t)got;
	}
	if (len < 0)
		return gp_err_set(e, GP_E_DATA, (int)-len, "%s%s: %s", r->dir, path, gp_root_strerror((int)-len));
	/* its first 255 bytes must hold a line */
	memcpy(buf, res, got < sizeof(buf) - 1 ? got : sizeof(buf) - 1);
	buf[got < sizeof(buf) - 1 ? got : sizeof(buf) - 1] = '\0';
	{
		unsigned long long s0, e0, f0;

		if (sscanf(buf, "%llx %llx %llx", &s0, &e0, &f0) != 3)
			return gp_err_set(e, GP_E_DATA, EINVAL, "%s%s: malformed (expected \"start end flags\" lines)",
					  r->dir, path);
	}
	parse_resource(res, got, rd);
	if (lp_files_beneath(r, f->d.fd, dir, f->d.ents, f->d.n, &irq, e))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/irq", dir);
	if (!irq && !gp_root_exists(r, path))
		return gp_err_set(e, GP_E_DATA, ENOENT, "%s%s: missing", r->dir, path);
	return 0;
}

/* One of the subsystem files as libpci reads it (a single read of up to 1023 bytes, strtol): 0 and
 * *v, or -1 where libpci finds no value (a negative one included). */
static int subsys_value(const struct gp_root *r, struct gp_pci_fn *f, const char *name, int *v)
{
	char buf[1024];
	int t = gp_root_ent_type(f->d.ents, f->d.n, name);
	ssize_t len;

	if (t == -1) {
		char path[GP_PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", f->d.path, name);
		gp_root_trace(path, ENOENT);
		return -1;
	}
	len = t == DT_REG ? gp_pci_fn_text_listed(r, f, name, buf, sizeof(buf))
			  : gp_root_read_text_in(r, f->d.fd, f->d.path, name, buf, sizeof(buf));
	/* a NUL inside: libpci's strtol stops there */
	if (len < 0 && len != -EILSEQ)
		return -1;
	*v = lp_value(buf);
	return *v >= 0 ? 0 : -1;
}

void gp_pci_read_subsys(const struct gp_root *r, struct gp_pci_fn *f, struct gp_pci_read *rd)
{
	int v;

	rd->subsys = 0;
	if (subsys_value(r, f, "subsystem_vendor", &v))
		return;
	rd->subsys = 1;
	rd->subvendor = (uint16_t)v;
	rd->subdevice = subsys_value(r, f, "subsystem_device", &v) ? 0 : (uint16_t)v;
}
