/* Unit tests: a folder listed through its fd, its files read with one open (gp_root_read_listed), its
 * links resolved once per place (gp_root_link_in): the same answers as the path-by-path functions; a
 * mount beneath the root turns the one-read listing off. (Moved here from test_root.) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpup2p/root.h"
#include "root/internal.h"
#include "root_tree.h"

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
	char lroot[600];

	if (root_top_make() == 0)
		mk("outdir");   /* where the listed tree's links out of its root lead */
	snprintf(lroot, sizeof(lroot), "%s/lroot", top);
	listed(lroot);
	mounts();
	live_mounts();
	root_top_remove();
	return unit_done();
}
