/* Unit tests: nothing is read or written through a symlink that leaves --root, with openat2 and
 * with the realpath fallback; files are read whole or refused as too long. (A folder listed through its
 * fd, its links resolved once per place, and mounts beneath the root: test_root_mount.) */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/check.h"
#include "gpup2p/iommu.h"
#include "gpup2p/pci.h"
#include "gpup2p/root.h"
#include "root/internal.h"
#include "root_tree.h"

static char rootdir[300];

/* TOP/outside (a secret), TOP/outdir/, TOP/root/sys/{in, ok->in, abs->TOP/outside, rel->../../outside,
 * d->TOP/outdir, lnk->TOP/outdir (a "driver" link out), run->TOP/outdir} */
static void build_tree(void)
{
	char abs[512];

	if (root_top_make())
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

int main(void)
{
	struct gp_err e = { 0 };
	struct gp_root r;

	build_tree();
	CHECK(gp_root_init(&r, rootdir, &e) == 0, "root opened: %s", e.msg);
	checks(&r, "openat2");
	host_paths(&r);
	whole_files(&r);
	r.no_openat2 = 1;
	checks(&r, "realpath fallback");
	scanned_copy();
	root_top_remove();
	return unit_done();
}
