/* Unit tests: nothing is read or written through a symlink that leaves --root, with openat2 and
 * with the realpath fallback; a folder listed through its fd, its files read with one open
 * (gp_root_read_listed), its links resolved once per place (gp_root_link_in): the same answers as
 * the path-by-path functions. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/check.h"
#include "gpup2p/iommu.h"
#include "gpup2p/pci.h"
#include "gpup2p/root.h"
#include "root/internal.h"
#include "unit.h"

static char top[256], rootdir[300];

static void put_n(const char *rel, const char *text, size_t n)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	f = fopen(p, "w");
	if (f) {
		fwrite(text, 1, n, f);
		fclose(f);
	}
}

static void put(const char *rel, const char *text)
{
	put_n(rel, text, strlen(text));
}

static void link_to(const char *target, const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (symlink(target, p))
		printf("# symlink %s: %s\n", p, strerror(errno));
}

static void mk(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	mkdir(p, 0755);
}

/* TOP/outside (a secret), TOP/outdir/, TOP/root/sys/{in, ok->in, abs->TOP/outside, rel->../../outside,
 * d->TOP/outdir, lnk->TOP/outdir (a "driver" link out), run->TOP/outdir} */
static void build_tree(void)
{
	char abs[512];

	snprintf(top, sizeof(top), "%s/gpup2p-root-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(top))
		return;
	snprintf(rootdir, sizeof(rootdir), "%s/root", top);
	mk("root");
	mk("root/sys");
	mk("outdir");
	put("outside", "secret\n");
	put("outdir/file", "secret too\n");
	put("root/sys/in", "inside\n");
	link_to("in", "root/sys/ok");
	snprintf(abs, sizeof(abs), "%s/outside", top);
	link_to(abs, "root/sys/abs");
	link_to("../../outside", "root/sys/rel");
	snprintf(abs, sizeof(abs), "%s/outdir", top);
	link_to(abs, "root/sys/d");
	link_to("../../outdir", "root/sys/lnk");
	link_to("../outdir", "root/run");
	/* a class folder's links (/sys/class/C/NAME): to a real folder by "../" and plain names, through
	 * a link on the way, out of the root, absolute */
	mk("root/sys/devices");
	mk("root/sys/devices/dev0");
	put("root/sys/devices/dev0/attr", "a\n");
	link_to("devices", "root/sys/devlink");
	mk("root/sys/class");
	link_to("../devices/dev0", "root/sys/class/dev0");
	link_to("../devlink/dev0", "root/sys/class/via");
	link_to("../../../outdir", "root/sys/class/out");
	snprintf(abs, sizeof(abs), "%s/root/sys/devices/dev0", top);
	link_to(abs, "root/sys/class/abs");
}

/* gp_root_link_open: a class entry's folder opened at the place its link names, where nothing on the
 * way is a link, that place told; anything else left to gp_root_open (-ENOSYS) */
static void link_opens(struct gp_root *r, const char *mode)
{
	int cfd = gp_root_open(r, "/sys/class", O_PATH | O_DIRECTORY), fd;
	int on = !r->no_openat2;
	char real[512];

	CHECK(cfd >= 0, "%s: /sys/class opened", mode);
	fd = gp_root_link_open(r, cfd, "/sys/class", "dev0", O_RDONLY | O_DIRECTORY, real, sizeof(real));
	CHECK(on ? fd >= 0 && !strcmp(real, "/sys/devices/dev0") : fd == -ENOSYS,
	      "%s: link_open: a \"../\" link to a real folder: %s", mode, on ? "opened, where it lies told" : "-ENOSYS");
	if (fd >= 0) {
		char *b = NULL;

		CHECK(gp_root_read_alloc_in(r, fd, real, "attr", &b, 64) == 2, "%s: link_open: the folder the link leads to",
		      mode);
		free(b);
		close(fd);
	}
	CHECK(gp_root_link_open(r, cfd, "/sys/class", "via", O_RDONLY | O_DIRECTORY, real, sizeof(real)) == -ENOSYS,
	      "%s: link_open: a link on the way (its place not canonical): -ENOSYS", mode);
	CHECK(gp_root_link_open(r, cfd, "/sys/class", "out", O_RDONLY | O_DIRECTORY, real, sizeof(real)) == -ENOSYS,
	      "%s: link_open: a link above the root: -ENOSYS", mode);
	CHECK(gp_root_link_open(r, cfd, "/sys/class", "abs", O_RDONLY | O_DIRECTORY, real, sizeof(real)) == -ENOSYS,
	      "%s: link_open: an absolute link: -ENOSYS", mode);
	CHECK(gp_root_link_open(r, cfd, "/sys/class", "none", O_RDONLY | O_DIRECTORY, real, sizeof(real)) == -ENOSYS,
	      "%s: link_open: no such link: -ENOSYS", mode);
	if (cfd >= 0)
		close(cfd);
}

static void checks(struct gp_root *r, const char *mode)
{
	char buf[256], target[256], name[64], **names = NULL;
	int n;

	CHECK(gp_root_read_text(r, "/sys/in", buf, sizeof(buf)) == 6 && !strcmp(buf, "inside"), "%s: a file inside", mode);
	CHECK(gp_root_read_text(r, "/sys/ok", buf, sizeof(buf)) == 6, "%s: a symlink staying inside is followed", mode);
	CHECK(gp_root_read_text(r, "/sys/abs", buf, sizeof(buf)) == -EXDEV, "%s: absolute symlink out: -EXDEV", mode);
	CHECK(gp_root_read_text(r, "/sys/rel", buf, sizeof(buf)) == -EXDEV, "%s: ../ symlink out: -EXDEV", mode);
	CHECK(gp_root_read_bin(r, "/sys/rel", buf, sizeof(buf)) == -EXDEV, "%s: binary read out: -EXDEV", mode);
	CHECK(gp_root_read_text(r, "/sys/d/file", buf, sizeof(buf)) == -EXDEV, "%s: a folder symlinked out: -EXDEV", mode);
	CHECK(gp_root_read_text(r, "/sys/missing", buf, sizeof(buf)) == -ENOENT, "%s: missing: -ENOENT", mode);
	CHECK(!gp_root_exists(r, "/sys/abs") && !gp_root_exists(r, "/sys/d/file") && gp_root_exists(r, "/sys/ok"),
	      "%s: exists() sees nothing outside", mode);
	n = gp_root_list(r, "/sys/d", &names);
	CHECK(n == -EXDEV && !names, "%s: listing a folder symlinked out: -EXDEV", mode);
	gp_root_free_list(names);
	CHECK(gp_root_link_target(r, "/sys/lnk", target, sizeof(target), name, sizeof(name)) == -EXDEV,
	      "%s: a driver-like link out is not named", mode);
	CHECK(gp_root_link_target(r, "/sys/ok", target, sizeof(target), name, sizeof(name)) == 0 &&
	      !strcmp(target, "/sys/in") && !strcmp(name, "in"), "%s: a link inside is named", mode);
	CHECK(gp_root_link_target(r, "/sys/in", target, sizeof(target), name, sizeof(name)) == -EINVAL,
	      "%s: a plain file is no link", mode);
	/* through a folder's fd (what snapshot reads a function's files with): the same answers */
	{
		int dfd = gp_root_open(r, "/sys", O_PATH | O_DIRECTORY), fd;
		char fifo[600];

		snprintf(fifo, sizeof(fifo), "%s/sys/fifo", rootdir);
		if (mkfifo(fifo, 0644) && errno != EEXIST)
			printf("# mkfifo %s: %s\n", fifo, strerror(errno));
		char *b = NULL;

		CHECK(dfd >= 0, "%s: /sys opened as a folder", mode);
		CHECK(gp_root_read_alloc_in(r, dfd, "/sys", "in", &b, 64) == 7 && b && !strcmp(b, "inside\n"),
		      "%s: open_in: a file inside", mode);
		free(b);
		CHECK(gp_root_read_alloc_in(r, dfd, "/sys", "ok", &b, 64) == 7, "%s: open_in: a symlink staying inside is followed",
		      mode);
		free(b);
		CHECK(gp_root_read_alloc_in(r, dfd, "/sys", "abs", &b, 64) == -EXDEV && !b, "%s: open_in: absolute symlink out: -EXDEV",
		      mode);
		CHECK(gp_root_read_alloc_in(r, dfd, "/sys", "rel", &b, 64) == -EXDEV, "%s: open_in: ../ symlink out: -EXDEV", mode);
		CHECK(gp_root_open_in(r, dfd, "/sys", "d", O_RDONLY | O_DIRECTORY) == -EXDEV,
		      "%s: open_in: a folder symlinked out: -EXDEV", mode);
		CHECK((fd = gp_root_open_in(r, dfd, "/sys", "fifo", O_RDONLY)) == -EMEDIUMTYPE,
		      "%s: open_in: a pipe is not opened for reading: -EMEDIUMTYPE", mode);
		if (fd >= 0)
			close(fd);
		CHECK(gp_root_open_in(r, dfd, "/sys", "missing", O_RDONLY) == -ENOENT, "%s: open_in: missing: -ENOENT", mode);
		CHECK(gp_root_read_alloc_in(r, -1, "/sys", "rel", &b, 64) == -EXDEV, "%s: open_in without a folder fd: -EXDEV", mode);
		/* a name further down: through a real folder opened, through a folder symlinked out refused */
		CHECK(gp_root_read_alloc_in(r, dfd, "/sys", "devices/dev0/attr", &b, 64) == 2 && b && !strcmp(b, "a\n"),
		      "%s: open_in: a name further down, through real folders", mode);
		free(b);
		CHECK(gp_root_read_alloc_in(r, dfd, "/sys", "devlink/dev0/attr", &b, 64) == 2,
		      "%s: open_in: a name further down through a link inside: followed", mode);
		free(b);
		CHECK(gp_root_read_alloc_in(r, dfd, "/sys", "d/file", &b, 64) == -EXDEV && !b,
		      "%s: open_in: a name further down through a folder symlinked out: -EXDEV", mode);
		CHECK(gp_root_open_in(r, dfd, "/sys", "devices/none", O_RDONLY) == -ENOENT,
		      "%s: open_in: a missing name further down: -ENOENT", mode);
		if (dfd >= 0)
			close(dfd);
	}
	link_opens(r, mode);
}

static void host_paths(struct gp_root *r)
{
	char p[512], want[512];

	CHECK(gp_root_host_path(r, "/run/gpup2p/acs.state", p, sizeof(p)) == -EXDEV,
	      "state file under a folder symlinked out of the root: -EXDEV");
	snprintf(want, sizeof(want), "%s/var/lib/x.state", rootdir);
	CHECK(gp_root_host_path(r, "/var/lib/x.state", p, sizeof(p)) == 0 && !strcmp(p, want),
	      "state file in folders still to be made: under the root");
	CHECK(gp_root_host_path(r, "/sys/abs", p, sizeof(p)) == -EXDEV, "the state file itself a symlink out: -EXDEV");
	snprintf(want, sizeof(want), "%s/sys/in", rootdir);
	CHECK(gp_root_host_path(r, "/sys/in", p, sizeof(p)) == 0 && !strcmp(p, want), "an existing file inside");
}

/* A copy of the workstation fixture: links that leave the root name no driver and no IOMMU group;
 * a config file swapped for a symlink out after the scan is not written through by libpci. */
static void scanned_copy(void)
{
	char cmd[1024], dir[600], dev[700], lk[800], out[600], before[4096], after[4096];
	struct gp_err e = { 0 };
	struct gp_root r;
	struct gp_pci p;
	const struct gp_pci_dev *d;
	FILE *f;
	size_t nb = 0, na = 0;

	snprintf(dir, sizeof(dir), "%s/ws", top);
	snprintf(dev, sizeof(dev), "%s/sys/bus/pci/devices/0000:03:00.0", dir);
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s' && mkdir -p '%s/drivers/vfio-pci' '%s/groups/9'",
		 unit_fixture("workstation"), dir, top, top);
	if (system(cmd) != 0 || gp_root_init(&r, dir, &e) || gp_pci_scan(&p, &r, &e) ||
	    !(d = gp_pci_find(&p, "0000:03:00.0"))) {
		CHECK(0, "workstation copy scanned: %s", e.msg);
		return;
	}
	CHECK(!strcmp(d->driver, "nvidia") && d->iommu_group == 4, "driver and IOMMU group links inside: named");
	gp_pci_free(&p);
	snprintf(lk, sizeof(lk), "%s/driver", dev);
	snprintf(out, sizeof(out), "%s/drivers/vfio-pci", top);
	CHECK(unlink(lk) == 0 && symlink(out, lk) == 0, "driver link replaced by one out of the root");
	snprintf(lk, sizeof(lk), "%s/iommu_group", dev);
	snprintf(out, sizeof(out), "%s/groups/9", top);
	CHECK(unlink(lk) == 0 && symlink(out, lk) == 0, "IOMMU group link replaced by one out of the root");
	if (gp_pci_scan(&p, &r, &e) || !(d = gp_pci_find(&p, "0000:03:00.0"))) {
		CHECK(0, "rescan: %s", e.msg);
		return;
	}
	CHECK_STR(d->driver, "", "a driver link out of the root names no driver");
	CHECK(d->iommu_group == -1, "an IOMMU group link out of the root names no group");

	d = gp_pci_find(&p, "0000:02:08.0");
	snprintf(out, sizeof(out), "%s/cfg-out", top);
	snprintf(lk, sizeof(lk), "%s/sys/bus/pci/devices/0000:02:08.0/config", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", lk, out);
	if (system(cmd) == 0 && (f = fopen(out, "rb"))) {
		nb = fread(before, 1, sizeof(before), f);
		fclose(f);
	}
	CHECK(d && unlink(lk) == 0 && symlink(out, lk) == 0, "config replaced by a symlink out of the root after the scan");
	CHECK(d && gp_pci_live_write16(&p, d, 0x4, 0) == -EXDEV, "libpci config write through it refused: -EXDEV");
	if ((f = fopen(out, "rb"))) {
		na = fread(after, 1, sizeof(after), f);
		fclose(f);
	}
	CHECK(nb == 4096 && na == nb && !memcmp(before, after, nb), "the outside file keeps its bytes");
	gp_pci_free(&p);
}

/* Write `fill` repeated (whole) while fewer than len bytes, then tail (NULL: none), at rel under TOP. */
static void put_long(const char *rel, size_t len, const char *fill, const char *tail)
{
	char p[512];
	size_t fl = strlen(fill), tl = tail ? strlen(tail) : 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (!(f = fopen(p, "w")))
		return;
	for (size_t i = 0; i + tl < len; i += fl)
		fputs(fill, f);
	if (tail)
		fputs(tail, f);
	fclose(f);
}

/* Files are read whole or refused as too long, never cut at a buffer's size. */
static void whole_files(struct gp_root *r)
{
	char buf[16], val[64], *all = NULL;
	struct gp_doctor_ctx c;
	struct gp_iommu io;
	int missing;

	put("root/sys/fits", "0123456789abcd\n");   /* 15 bytes: fits 16 with its NUL */
	put("root/sys/long", "0123456789abcdef\n"); /* 17 */
	put("root/sys/full", "0123456789abcdef");    /* 16: no room for the NUL */
	CHECK(gp_root_read_text(r, "/sys/fits", buf, sizeof(buf)) == 14 && !strcmp(buf, "0123456789abcd"),
	      "read_text: a file of n - 1 bytes is read");
	CHECK(gp_root_read_text(r, "/sys/long", buf, sizeof(buf)) == -EFBIG, "read_text: a longer file is -EFBIG, not cut");
	CHECK(gp_root_read_text(r, "/sys/full", buf, sizeof(buf)) == -EFBIG, "read_text: a file of n bytes is -EFBIG");
	CHECK(gp_root_read_alloc(r, "/sys/full", &all, 16) == 16 && all && !strcmp(all, "0123456789abcdef"),
	      "read_alloc: a file of max bytes is read whole");
	free(all);
	CHECK(gp_root_read_alloc(r, "/sys/long", &all, 16) == -EFBIG && !all, "read_alloc: one byte more is -EFBIG");
	put_long("root/sys/big", 100000, "x", NULL);
	CHECK(gp_root_read_alloc(r, "/sys/big", &all, 1 << 20) == 100000 && all && strlen(all) == 100000,
	      "read_alloc: 100000 bytes read whole (past the first buffer)");
	free(all);

	/* the kernel command line: an IOMMU token after 4 KiB of others is seen */
	mk("root/proc");
	mk("root/proc/driver");
	mk("root/proc/driver/nvidia");
	put_long("root/proc/cmdline", 5000, "quiet ", " intel_iommu=on\n");
	gp_iommu_read(r, &io);
	CHECK(strstr(io.cmdline, "intel_iommu=on") != NULL, "cmdline: a token after 4 KiB is read (got \"%.40s\")",
	      io.cmdline);
	/* doctor reads the NVIDIA driver's params whole: a key after 8 KiB is found */
	put_long("root/proc/driver/nvidia/params", 12000, "Filler: 0\n", "RegistryDwords: \"RMForceP2PType=1\"\n");
	memset(&c, 0, sizeof(c));
	c.root = r;
	CHECK(gp_doctor_nv_param(&c, "RegistryDwords", val, sizeof(val), &missing) == 0 && !missing &&
	      !strcmp(val, "RMForceP2PType=1"), "doctor: a params key after 8 KiB is found");
	gp_doctor_sys_free(&c);
}

/* TOP/outdir/x; TOP/lroot/sys/devices/{pci0/{f0,f1}, real/drv/x}; /sys/bus -> devices/real (the driver
 * links' place goes through a symlink: only a resolution names it); /sys/bus2 -> TOP/outdir (out). */
static void build_list_tree(void)
{
	static char big[10000], page[4096];
	char abs[512];

	mk("outdir/x");
	mk("lroot");
	mk("lroot/sys");
	mk("lroot/sys/devices");
	mk("lroot/sys/devices/real");
	mk("lroot/sys/devices/real/drv");
	mk("lroot/sys/devices/real/drv/x");
	mk("lroot/sys/devices/pci0");
	mk("lroot/sys/devices/pci0/f0");
	mk("lroot/sys/devices/pci0/f1");
	mk("lroot/sys/devices/pci0/f0/sub");
	link_to("devices/real", "lroot/sys/bus");
	snprintf(abs, sizeof(abs), "%s/outdir", top);
	link_to(abs, "lroot/sys/bus2");
	put("lroot/sys/devices/pci0/f0/vendor", "0x10de\n");
	put("lroot/sys/devices/pci0/f0/sixteen", "0123456789abcdef");
	memset(page, 7, sizeof(page));
	put_n("lroot/sys/devices/pci0/f0/config", page, sizeof(page)); /* a page: a second read tells its end */
	memset(big, 'x', sizeof(big));
	put_n("lroot/sys/devices/pci0/f0/big", big, sizeof(big));
	link_to("vendor", "lroot/sys/devices/pci0/f0/in");
	link_to("../../../../../outdir/x", "lroot/sys/devices/pci0/f0/esc");
	link_to("../../../bus/drv/x", "lroot/sys/devices/pci0/f0/driver");
	link_to("../../../bus/drv/x", "lroot/sys/devices/pci0/f1/driver");
	link_to("../f1", "lroot/sys/devices/pci0/f0/physfn");
	link_to("../..", "lroot/sys/devices/pci0/f0/up");
	link_to("../../../../../outdir/x", "lroot/sys/devices/pci0/f0/above");
	link_to("../../../bus2/x", "lroot/sys/devices/pci0/f0/viaout");
	link_to("/sys/devices/pci0/f1", "lroot/sys/devices/pci0/f0/absolute");
	link_to("../nothing", "lroot/sys/devices/pci0/f0/dangling");
	link_to("./../f1", "lroot/sys/devices/pci0/f0/dotted");
}

static void listing(struct gp_root *r, const char *mode)
{
	const char *dir = "/sys/devices/pci0/f0";
	struct gp_root_ent *ents = NULL;
	char *b = NULL, text[32];
	int fd = gp_root_open(r, dir, O_RDONLY | O_DIRECTORY), n, sorted = 1;

	CHECK(fd >= 0, "%s: the folder opened for listing", mode);
	n = gp_root_entries(r, fd, dir, &ents);
	for (int i = 1; i < n; i++)
		sorted &= strcmp(ents[i - 1].name, ents[i].name) < 0;
	CHECK(n == 15 && sorted, "%s: 15 entries, sorted, no \".\" (got %d)", mode, n);
	CHECK(gp_root_ent_type(ents, n, "vendor") == DT_REG && gp_root_ent_type(ents, n, "sub") == DT_DIR &&
	      gp_root_ent_type(ents, n, "in") == DT_LNK, "%s: each entry's type as readdir gives it", mode);
	CHECK(gp_root_ent_type(ents, n, "irq") == -1 && gp_root_ent_type(ents, n, ".") == -1,
	      "%s: a name not there: -1", mode);
	CHECK(gp_root_ent_type(NULL, -1, "vendor") == DT_UNKNOWN, "%s: not listed: DT_UNKNOWN (try it)", mode);
	free(ents);

	CHECK(gp_root_read_listed(r, fd, dir, "vendor", &b, 64) == 7 && b && !strcmp(b, "0x10de\n"),
	      "%s: read_listed: a small file", mode);
	free(b);
	CHECK(gp_root_read_listed(r, fd, dir, "config", &b, 1 << 20) == 4096 && b && b[4095] == 7,
	      "%s: read_listed: a whole page, not taken for a short read", mode);
	free(b);
	CHECK(gp_root_read_listed(r, fd, dir, "big", &b, 1 << 20) == 10000 && b && strlen(b) == 10000,
	      "%s: read_listed: 10000 bytes, past the first buffer", mode);
	free(b);
	CHECK(gp_root_read_listed(r, fd, dir, "big", &b, 9999) == -EFBIG && !b, "%s: read_listed: longer than max: -EFBIG",
	      mode);
	CHECK(gp_root_read_listed(r, fd, dir, "big", &b, 10000) == 10000, "%s: read_listed: max bytes exactly", mode);
	free(b);
	CHECK(gp_root_read_listed(r, fd, dir, "in", &b, 64) == 7, "%s: read_listed: a symlink inside is followed", mode);
	free(b);
	CHECK(gp_root_read_listed(r, fd, dir, "esc", &b, 64) == -EXDEV && !b,
	      "%s: read_listed: a symlink out of the root: -EXDEV", mode);
	CHECK(gp_root_read_listed(r, fd, dir, "irq", &b, 64) == -ENOENT, "%s: read_listed: missing: -ENOENT", mode);
	CHECK(gp_root_read_text_listed(r, fd, dir, "vendor", text, sizeof(text)) == 6 && !strcmp(text, "0x10de"),
	      "%s: read_text_listed: trimmed", mode);
	CHECK(gp_root_read_text_listed(r, fd, dir, "sixteen", text, 16) == -EFBIG,
	      "%s: read_text_listed: a file filling the buffer: -EFBIG", mode);
	CHECK(gp_root_read_text_listed(r, fd, dir, "esc", text, sizeof(text)) == -EXDEV,
	      "%s: read_text_listed: out of the root: -EXDEV", mode);
	if (fd >= 0)
		close(fd);
}

/* Each link through the folder's fd names what gp_root_link_target names (or fails as it does). */
static void links(struct gp_root *r, const char *mode)
{
	static const char *const names[] = { "driver", "physfn", "up", "above", "viaout", "absolute", "dangling",
					     "dotted", "vendor", "missing", "esc" };
	const char *dir = "/sys/devices/pci0/f0";
	struct gp_root_links c = { 0 };
	char a[GP_PATH_MAX], b[GP_PATH_MAX], nm[256], path[600];
	int fd = gp_root_open(r, dir, O_RDONLY | O_DIRECTORY), f1, same = 1, ra, rb;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		a[0] = b[0] = '\0';
		ra = gp_root_link_target(r, path, a, sizeof(a), nm, sizeof(nm));
		rb = gp_root_link_in(r, fd, dir, names[i], &c, b, sizeof(b));
		if (ra != rb || (!ra && strcmp(a, b))) {
			printf("# %s: link_target %d \"%s\", link_in %d \"%s\"\n", names[i], ra, a, rb, b);
			same = 0;
		}
	}
	CHECK(same, "%s: link_in answers as link_target for each link (inside, out, absolute, dangling, none)",
	      mode);
	CHECK(gp_root_link_in(r, fd, dir, "driver", &c, b, sizeof(b)) == 0 &&
	      !strcmp(b, "/sys/devices/real/drv/x"), "%s: the driver's place resolved through /sys/bus", mode);
	CHECK(gp_root_link_in(r, fd, dir, "viaout", &c, b, sizeof(b)) == -EXDEV,
	      "%s: a place through a symlink out of the root: -EXDEV", mode);
	CHECK(gp_root_link_in(r, fd, dir, "above", &c, b, sizeof(b)) == -EXDEV, "%s: \"..\" above the root: -EXDEV",
	      mode);
	f1 = gp_root_open(r, "/sys/devices/pci0/f1", O_RDONLY | O_DIRECTORY);
	{
		size_t before = c.n;

		CHECK(gp_root_link_in(r, f1, "/sys/devices/pci0/f1", "driver", &c, b, sizeof(b)) == 0 &&
		      !strcmp(b, "/sys/devices/real/drv/x") && c.n == before,
		      "%s: another function's link to the same place: from the cache", mode);
	}
	gp_root_links_free(&c);
	CHECK(gp_root_link_in(r, fd, dir, "driver", NULL, b, sizeof(b)) == 0 && !strcmp(b, "/sys/devices/real/drv/x"),
	      "%s: without a cache, the same", mode);
	if (f1 >= 0)
		close(f1);
	if (fd >= 0)
		close(fd);
}

/* A folder opened and listed in one call (gp_root_dir_open), by path and as an entry of its parent; a
 * file's bytes read raw (gp_root_read_raw_listed); a link's text resolved without reading it again
 * (gp_root_link_resolve). */
static void dirs(struct gp_root *r, const char *mode)
{
	const char *dir = "/sys/devices/pci0/f0";
	struct gp_root_dir d, sub, none, file;
	char buf[200], b[GP_PATH_MAX], a[GP_PATH_MAX];
	int whole = -1;
	ssize_t n;

	CHECK(gp_root_dir_open(r, &d, -1, dir, NULL) == 0 && d.fd >= 0 && d.n == 15 && !strcmp(d.path, dir) &&
	      gp_root_dir_type(&d, "vendor") == DT_REG && gp_root_dir_type(&d, "irq") == -1,
	      "%s: dir_open by path: open, listed, typed", mode);
	CHECK(gp_root_dir_open(r, &sub, d.fd, d.path, "sub") == 0 && sub.fd >= 0 && sub.n == 0 &&
	      !strcmp(sub.path, "/sys/devices/pci0/f0/sub"), "%s: dir_open of an entry through its parent", mode);
	CHECK(gp_root_dir_open(r, &none, d.fd, d.path, "nothing") == 0 && none.fd == -ENOENT && none.n == -1 &&
	      gp_root_dir_type(&none, "x") == DT_UNKNOWN, "%s: dir_open of a folder not there: -ENOENT, not listed",
	      mode);
	CHECK(gp_root_dir_open(r, &file, d.fd, d.path, "vendor") == 0 && file.fd == -ENOTDIR && file.n == -1,
	      "%s: dir_open of a file: -ENOTDIR", mode);
	gp_root_dir_close(&none);
	gp_root_dir_close(&file);
	gp_root_dir_close(&sub);
	gp_root_dir_close(&sub); /* twice: harmless */

	n = gp_root_read_raw_listed(r, d.fd, dir, "vendor", buf, sizeof(buf), &whole);
	CHECK(n == 7 && whole == 1 && !memcmp(buf, "0x10de\n", 7), "%s: read_raw_listed: the bytes, untrimmed, whole",
	      mode);
	n = gp_root_read_raw_listed(r, d.fd, dir, "sixteen", buf, 16, &whole);
	CHECK(n == 16 && whole == 0, "%s: read_raw_listed: cut at n: not whole", mode);
	n = gp_root_read_raw_listed(r, d.fd, dir, "in", buf, sizeof(buf), &whole);
	CHECK(n == 7 && whole == 0, "%s: read_raw_listed: a symlink is followed, not called whole", mode);
	CHECK(gp_root_read_raw_listed(r, d.fd, dir, "esc", buf, sizeof(buf), &whole) == -EXDEV,
	      "%s: read_raw_listed: out of the root: -EXDEV", mode);
	CHECK(gp_root_text_end(buf, 7, sizeof(buf)) == 6, "%s: text_end trims what read_raw_listed read", mode);

	CHECK(gp_root_link_in(r, d.fd, dir, "driver", NULL, a, sizeof(a)) == 0 &&
	      gp_root_link_resolve(r, dir, "driver", "../../../bus/drv/x", NULL, b, sizeof(b)) == 0 && !strcmp(a, b),
	      "%s: link_resolve of the text as link_in reads it", mode);
	CHECK(gp_root_link_resolve(r, dir, "up", "../..", NULL, b, sizeof(b)) == 0 && !strcmp(b, "/sys/devices"),
	      "%s: link_resolve: an ancestor", mode);
	CHECK(gp_root_link_resolve(r, dir, "viaout", "../../../bus2/x", NULL, b, sizeof(b)) == -EXDEV,
	      "%s: link_resolve: through a link out of the root: -EXDEV", mode);
	gp_root_dir_close(&d);

	/* a folder whose listing takes many reads (2000 names of 100 bytes: 250 KiB of entries), and one
	 * whose entries fill a read but for a little: every name, whatever a read left room for */
	mk("lroot/sys/devices/many");
	mk("lroot/sys/devices/nearly");
	for (int i = 0; i < 2000; i++) {
		snprintf(buf, sizeof(buf), "lroot/sys/devices/many/%0100d", i);
		put(buf, "");
	}
	for (int i = 0; i < 2000 && i < 60; i++) { /* 60 entries of 272 bytes: 16,320 of 16,384 */
		char rel[400];

		snprintf(rel, sizeof(rel), "lroot/sys/devices/nearly/%0248d", i);
		put(rel, "");
	}
	CHECK(gp_root_dir_open(r, &d, -1, "/sys/devices/many", NULL) == 0 && d.n == 2000,
	      "%s: a listing of many reads has every entry (%d of 2000)", mode, d.n);
	gp_root_dir_close(&d);
	CHECK(gp_root_dir_open(r, &d, -1, "/sys/devices/nearly", NULL) == 0 && d.n == 60,
	      "%s: a listing that nearly fills a read has every entry (%d of 60)", mode, d.n);
	gp_root_dir_close(&d);
}

/* A second root, TOP/lroot: the functions that read a listed folder, with openat2, with the root not
 * held (a struct filled by hand), with the realpath fallback. */
static void listed(const char *dir)
{
	struct gp_err e = { 0 };
	struct gp_root r, hand;

	build_list_tree();
	CHECK(gp_root_init(&r, dir, &e) == 0 && r.dir_fd1 > 0, "listed root opened and held: %s", e.msg);
	listing(&r, "openat2");
	links(&r, "openat2");
	dirs(&r, "openat2");
	hand = r;
	hand.dir_fd1 = 0;
	links(&hand, "root not held");
	r.no_openat2 = 1;
	listing(&r, "realpath fallback");
	links(&r, "realpath fallback");
	dirs(&r, "realpath fallback");
}

/* A mount beneath the root (FUSE, NFS: listings may come short) turns the one-read listing off; the
 * mountinfo file's fifth field, with its octal escapes, is what is compared. */
static void mounts(void)
{
	static const struct {
		const char *point, *root;
		int beneath;
	} c[] = {
		{ "/srv/snap/sys/fuse", "/srv/snap", 1 },       /* inside */
		{ "/srv/snap\\040x/sys", "/srv/snap x", 1 },    /* an escaped space: "/srv/snap x/sys" */
		{ "/srv/snap", "/srv/snap", 0 },                /* the root itself: fstatfs judged it */
		{ "/srv/snapshot/sys", "/srv/snap", 0 },        /* a sibling sharing the prefix */
		{ "/srv", "/srv/snap", 0 },                     /* above */
		{ "/srv/snap/", "/srv/snap", 0 },               /* the root, written with its slash */
	};
	char path[400];

	snprintf(path, sizeof(path), "%s/mountinfo", top);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char line[300];

		snprintf(line, sizeof(line), "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
			 "99 22 0:50 / %s rw,nosuid - fuse.sshfs host:/x rw\n", c[i].point);
		put("mountinfo", line);
		CHECK(gp_root_mount_beneath(path, c[i].root) == c[i].beneath,
		      "mount point %s beneath the root: %d", c[i].point, c[i].beneath);
	}
	CHECK(gp_root_mount_beneath("/nonexistent/mountinfo", "/srv/snap") == 1,
	      "mountinfo unreadable: taken as a mount beneath (listings read to their end)");
}

/* The same decision on real mounts (a mount namespace of its own: root only): a tmpfs root fills its
 * listings; a tmpfs mounted beneath it turns the one-read listing off, one mounted beside it (a name
 * sharing the root's prefix) does not; listings through the mount beneath stay whole. */
static void live_mounts(void)
{
	char mnt[400], side[400], inner[480], dir[520];
	struct gp_err e = { 0 };
	struct gp_root r;
	char **names = NULL;
	int n = 0;

	snprintf(mnt, sizeof(mnt), "%s/m", top);
	snprintf(side, sizeof(side), "%s/msys", top);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		SKIP("no mount namespace");
		return;
	}
	if (mkdir(mnt, 0755) || mkdir(side, 0755) || mount("gpup2p", mnt, "tmpfs", 0, "size=1m") ||
	    mkdir(strcat(strcpy(inner, mnt), "/sys"), 0755) || mount("gpup2p", side, "tmpfs", 0, "size=1m")) {
		CHECK(0, "tmpfs mounts in the namespace: %s", strerror(errno));
		return;
	}
	CHECK(gp_root_init(&r, mnt, &e) == 0 && r.fills_dirs == 1, "a tmpfs root, a tmpfs beside it: one-read "
	      "listings (%d: %s)", r.fills_dirs, e.msg);
	if (r.dir_fd1)
		close(r.dir_fd1 - 1);
	strcat(inner, "/fuse");
	if (mkdir(inner, 0755) || mount("gpup2p", inner, "tmpfs", 0, "size=1m")) {
		CHECK(0, "tmpfs beneath the root: %s", strerror(errno));
		return;
	}
	for (int i = 0; i < 300; i++) { /* more than one 16 KiB getdents64 read holds */
		snprintf(dir, sizeof(dir), "%s/entry-with-a-long-name-%03d", inner, i);
		n += !mkdir(dir, 0755);
	}
	CHECK(gp_root_init(&r, mnt, &e) == 0 && r.fills_dirs == 0, "a tmpfs mounted beneath the root: listings "
	      "read to their end (%d: %s)", r.fills_dirs, e.msg);
	CHECK(n == 300 && gp_root_list(&r, "/sys/fuse", &names) == 300, "the folder on the mount beneath listed "
	      "whole: 300 entries");
	gp_root_free_list(names);
	if (r.dir_fd1)
		close(r.dir_fd1 - 1);
	umount(inner);
	umount(side);
	umount(mnt);
}

int main(void)
{
	struct gp_err e = { 0 };
	struct gp_root r;
	char cmd[600], lroot[600];

	build_tree();
	snprintf(lroot, sizeof(lroot), "%s/lroot", top);
	CHECK(gp_root_init(&r, rootdir, &e) == 0, "root opened: %s", e.msg);
	checks(&r, "openat2");
	host_paths(&r);
	whole_files(&r);
	r.no_openat2 = 1;
	checks(&r, "realpath fallback");
	scanned_copy();
	listed(lroot);
	mounts();
	live_mounts();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (top[0] && system(cmd) != 0)
		printf("# could not remove %s\n", top);
	return unit_done();
}
