/* gpup2p — snapshot: what doctor reads outside the PCI tree. The /proc and /sys files no other
 * module owns, the NVIDIA driver's per-GPU information, the nvidia_p2p_* lines of kallsyms, which
 * device nodes exist, the RDMA devices, their ports (and counters) and uverbs devices, what clears ACS
 * at boot. A device node is never opened: its presence is recorded as an empty file. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpup2p/acs.h"
#include "snapshot/internal.h"

/* Files are copied whole (a longer one than gp_snap_copy_file's bound is an error); lists are
 * as long as their folders. /proc/kallsyms, streamed, may hold this much (an error beyond). */
#define KALLSYMS_MAX (256u << 20)
#define BOOT_SCRIPT_MAX (1u << 20)     /* /etc/rc.local read for its gpup2p lines */
#define NODE_NOTE_MAX 4096u            /* a recorded device node: "" or a one-line note */

/* The single files, by group; each is one the doctor (or topo) reads. */
static const struct sys_file {
	const char *group;
	const char *path;
} sys_files[] = {
	{ "cmdline", "/proc/cmdline" },
	{ "modules", "/proc/modules" },
	{ "nvidia-version", "/proc/driver/nvidia/version" },
	{ "nvidia-params", "/proc/driver/nvidia/params" },
	{ "sysctl", "/proc/sys/kernel/numa_balancing" },
	{ "sysctl", "/proc/sys/kernel/modules_disabled" },
	{ "sysmodule", "/sys/module/module/parameters/sig_enforce" },
	{ "sysmodule", "/sys/module/gpup2p/version" },
	{ "sysmodule", "/sys/module/nvidia/version" },
	{ "hostname", "/proc/sys/kernel/hostname" },
	{ "osrelease", "/proc/sys/kernel/osrelease" },
};

/* The device nodes doctor looks for under /dev (and /dev/infiniband). */
static int wanted_node(const char *dir, const char *name)
{
	static const char *const fixed[] = { "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset", "gpup2p" };

	if (!strcmp(dir, "/dev/infiniband"))
		return !strncmp(name, "uverbs", 6) || !strcmp(name, "rdma_cm");
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(name, fixed[i]))
			return 1;
	if (strncmp(name, "nvidia", 6) || !name[6])
		return 0;
	for (const char *p = name + 6; *p; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	return 1;
}

static int capture_files(struct gp_snap *s)
{
	const char *last = NULL;
	int rc, err;

	for (size_t i = 0; i < sizeof(sys_files) / sizeof(sys_files[0]); i++) {
		const struct sys_file *f = &sys_files[i];

		if (!strcmp(f->group, "hostname") && (s->flags & GP_SNAP_NO_HOST))
			continue;
		if ((rc = gp_snap_copy_file(s, f->path, 0, &err)))
			return rc;
		if (err)
			gp_snap_unread(s, f->path, err);
		if (!last || strcmp(last, f->group))
			gp_snapshot_info_captured(&s->info, f->group);
		last = f->group;
	}
	/* this boot's id (doctor --json "boot_id"): an identity, as the host name is; absent costs no check */
	if (!(s->flags & GP_SNAP_NO_HOST))
		return gp_snap_copy_file(s, "/proc/sys/kernel/random/boot_id", 0, NULL);
	return 0;
}

/* /proc/driver/nvidia/gpus/BDF/information: the minor number and "GPU Excluded" of each GPU. */
static int capture_nvidia_gpus(struct gp_snap *s)
{
	char **names = NULL, p[GP_PATH_MAX];
	int n = gp_root_list(s->r, "/proc/driver/nvidia/gpus", &names), rc = 0;

	for (int i = 0; i < n && !rc; i++) {
		snprintf(p, sizeof(p), "/proc/driver/nvidia/gpus/%s/information", names[i]);
		rc = gp_snap_copy_file(s, p, 0, NULL);
	}
	gp_root_free_list(names);
	gp_snapshot_info_captured(&s->info, "nvidia-gpus");
	return rc;
}

/* Keep line l ("address type name[\t[module]]") when its name starts with nvidia_p2p_, with the
 * address zeroed (it tells where the kernel lies in memory; nothing reads it). */
static void keep_p2p(char *l, FILE *out)
{
	char *sp = strchr(l, ' '), *name = sp ? strchr(sp + 1, ' ') : NULL;

	if (!name || strncmp(name + 1, "nvidia_p2p_", 11))
		return;
	for (char *a = l; a < sp; a++)
		*a = '0';
	fprintf(out, "%s\n", l);
}

/* /proc/kallsyms is large (MBs): stream it and keep only the nvidia_p2p_* lines. An empty result
 * is written too: it says the symbols were looked for and not there. */
static int capture_kallsyms(struct gp_snap *s)
{
	char *buf = malloc(65536 + 1), *out = NULL, *l, *nl;
	size_t have = 0, outlen = 0, total = 0;
	int fd, rc = 0;
	FILE *m;
	ssize_t k;

	gp_snapshot_info_captured(&s->info, "kallsyms");
	if (!buf)
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	fd = gp_root_open(s->r, "/proc/kallsyms", O_RDONLY);
	if (fd < 0) {
		free(buf);
		gp_snap_unread(s, "/proc/kallsyms", -fd);
		return 0;
	}
	m = open_memstream(&out, &outlen);
	if (!m) {
		close(fd);
		free(buf);
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	while ((k = read(fd, buf + have, 65536 - have)) > 0 && (total += (size_t)k) <= KALLSYMS_MAX) {
		have += (size_t)k;
		buf[have] = '\0';
		for (l = buf; (nl = strchr(l, '\n')); l = nl + 1) {
			*nl = '\0';
			keep_p2p(l, m);
		}
		have = (size_t)(buf + have - l);
		memmove(buf, l, have);
		if (have == 65536) /* a line longer than the buffer: no symbol line is */
			have = 0;
	}
	if (have) {
		buf[have] = '\0';
		keep_p2p(buf, m);
	}
	close(fd);
	free(buf);
	if (fclose(m)) {
		free(out);
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	if (total > KALLSYMS_MAX) {
		free(out);
		return gp_err_set(s->e, GP_E_DATA, EFBIG, "%s/proc/kallsyms: longer than %u MiB: not read (no kernel's "
				  "is)", s->r->dir, KALLSYMS_MAX >> 20);
	}
	rc = gp_snap_write_file(s, "/proc/kallsyms", out, outlen);
	free(out);
	return rc;
}

/* One device node: present (an empty file), or present but not usable by the capturing user on a
 * live system ("not usable" in the file, as doctor reads it). A recorded node under a root is
 * copied as recorded. Nothing else is written. */
static int capture_node(struct gp_snap *s, const char *path)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd = gp_root_open(s->r, path, O_PATH), rc;

	if (fd < 0)
		return 0;
	rc = fstat(fd, &st);
	close(fd);
	if (rc)
		return 0;
	if (s->r->live) {
		static const char unusable[] = "not usable by the user who took the snapshot\n";

		if (!S_ISCHR(st.st_mode))
			return 0;
		if (access(path, R_OK | W_OK))
			rc = gp_snap_write_file(s, path, unusable, sizeof(unusable) - 1);
		else
			rc = gp_snap_write_file(s, path, "", 0);
		return rc;
	}
	if (!S_ISREG(st.st_mode))
		return gp_snap_write_file(s, path, "", 0);
	/* what the node's file says, whole (an unreadable one still records the node) */
	n = gp_root_read_alloc(s->r, path, &buf, NODE_NOTE_MAX);
	if (n == -EFBIG)
		return gp_err_set(s->e, GP_E_DATA, EFBIG, "%s%s: longer than %u bytes: no recorded device node is",
				  s->r->dir, path, NODE_NOTE_MAX);
	rc = gp_snap_write_file(s, path, n > 0 ? buf : "", n > 0 ? (size_t)n : 0);
	free(buf);
	return rc;
}

/* A listed device node (type: its d_type) under a root: a recorded one, a regular file, read through
 * the folder with one open, read and close; anything else that is no link recorded as present. 1 where
 * the listing cannot tell (a link, a type not told, the live system): capture_node asks. */
static int capture_listed_node(struct gp_snap *s, const struct gp_root_dir *d, const char *path, const char *name,
			       int type, int *rc)
{
	char *buf = NULL;
	ssize_t n;

	if (s->r->live || d->fd < 0 || type == DT_LNK || type == DT_UNKNOWN)
		return 1;
	if (type != DT_REG) {
		*rc = gp_snap_write_file(s, path, "", 0);
		return 0;
	}
	n = gp_root_read_listed(s->r, d->fd, d->path, name, &buf, NODE_NOTE_MAX);
	if (n == -EFBIG)
		*rc = gp_err_set(s->e, GP_E_DATA, EFBIG, "%s%s: longer than %u bytes: no recorded device node is",
				 s->r->dir, path, NODE_NOTE_MAX);
	else if (n == -ENOENT) /* gone since the listing: as capture_node finds it */
		*rc = 0;
	else
		*rc = gp_snap_write_file(s, path, n > 0 ? buf : "", n > 0 ? (size_t)n : 0);
	free(buf);
	return 0;
}

static int capture_dev(struct gp_snap *s)
{
	static const char *const dirs[] = { "/dev", "/dev/infiniband" };
	char p[GP_PATH_MAX];
	int rc = 0;

	gp_snapshot_info_captured(&s->info, "dev");
	if (!gp_root_exists(s->r, "/dev")) {
		gp_snap_unread(s, "/dev", ENOENT);
		return 0;
	}
	if ((rc = gp_snap_make_dir(s, "/dev")))
		return rc;
	for (size_t k = 0; k < sizeof(dirs) / sizeof(dirs[0]) && !rc; k++) {
		struct gp_root_dir d;

		/* listed once: each wanted node as the listing shows it */
		if (gp_root_dir_open(s->r, &d, -1, dirs[k], NULL) == -ENOMEM)
			rc = gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
		for (int i = 0; i < d.n && !rc; i++) {
			if (!wanted_node(dirs[k], d.ents[i].name))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dirs[k], d.ents[i].name);
			if (capture_listed_node(s, &d, p, d.ents[i].name, d.ents[i].type, &rc))
				rc = capture_node(s, p);
		}
		gp_root_dir_close(&d);
	}
	/* doctor says "nvidia-modprobe creates them" instead of "missing" when it is installed */
	if (!rc && gp_root_exists(s->r, "/usr/bin/nvidia-modprobe"))
		rc = gp_snap_write_file(s, "/usr/bin/nvidia-modprobe", "", 0);
	return rc;
}

/* What clears ACS redirection at boot (doctor's acs.boot): the gpup2p-acs unit's links in
 * /etc/systemd/system/X.wants, recorded as empty files (only their names are read), and the lines
 * of /etc/rc.local that run gpup2p acs --disable (nothing else of the script). A root that is a
 * snapshot which did not record them gives none, and the marker does not claim them. */
static int capture_boot_acs(struct gp_snap *s)
{
	char **dirs = NULL, **units = NULL, p[GP_PATH_MAX], *buf = NULL;
	int nd, rc = 0;
	FILE *m;
	char *out = NULL;
	size_t outlen = 0;

	if (!s->r->live && s->src.format && !gp_snapshot_info_has(&s->src, "boot-acs"))
		return 0;
	gp_snapshot_info_captured(&s->info, "boot-acs");
	nd = gp_root_list(s->r, GP_ACS_UNIT_DIR, &dirs);
	for (int i = 0; i < nd && !rc; i++) {
		size_t l = strlen(dirs[i]);
		int nu;

		if (l < 6 || strcmp(dirs[i] + l - 6, ".wants"))
			continue;
		snprintf(p, sizeof(p), GP_ACS_UNIT_DIR "/%s", dirs[i]);
		nu = gp_root_list(s->r, p, &units);
		for (int k = 0; k < nu && !rc; k++) {
			if (!gp_acs_boot_unit_name(units[k]))
				continue;
			snprintf(p, sizeof(p), GP_ACS_UNIT_DIR "/%s/%s", dirs[i], units[k]);
			rc = gp_snap_write_file(s, p, "", 0);
		}
		gp_root_free_list(units);
	}
	gp_root_free_list(dirs);
	/* a script longer than that is no boot script gpup2p wrote into: nothing of it is recorded */
	if (rc || gp_root_read_alloc(s->r, GP_ACS_BOOT_SCRIPT, &buf, BOOT_SCRIPT_MAX) < 0)
		return rc;
	if (!(m = open_memstream(&out, &outlen))) {
		free(buf);
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	for (const char *l = buf; *l;) {
		size_t ll = strcspn(l, "\n");

		if (gp_acs_boot_script_line(l, ll))
			fprintf(m, "%.*s\n", (int)ll, l);
		l += ll + (l[ll] == '\n');
	}
	free(buf);
	if (fclose(m))
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	if (outlen)
		rc = gp_snap_write_file(s, GP_ACS_BOOT_SCRIPT, out, outlen);
	free(out);
	return rc;
}

int gp_snap_capture_sys(struct gp_snap *s)
{
	int rc;

	if ((rc = capture_files(s)) || (rc = capture_nvidia_gpus(s)) || (rc = capture_kallsyms(s)) ||
	    (rc = capture_boot_acs(s)))
		return rc;
	return capture_dev(s);
}

/* The ports' counters are captured unless the source is a snapshot that did not record them (an
 * older gpup2p): a snapshot of it must say so too, not pass their absence off as "none". */
static int counters_wanted(const struct gp_snap *s)
{
	return !s->src.format || gp_snapshot_info_has(&s->src, "rdma-counters");
}

/* The folders of an RDMA device are read through fds (gp_root_dir): each opened as one entry of its
 * parent and listed once, each file read through it by name; where one cannot be opened or listed,
 * its files are read by path, as before the folders were held open: the same members, the same
 * errors (a folder that cannot be listed through its fd cannot be by path either). */
static int ib_open(struct gp_snap *s, struct gp_root_dir *d, const struct gp_root_dir *parent, const char *name)
{
	int rc = gp_root_dir_open(s->r, d, parent->fd, parent->path, name);

	if (rc == -ENOMEM)
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	if (rc)
		return gp_err_set(s->e, GP_E_FAIL, ENAMETOOLONG, "path too long: %s/%s", parent->path, name);
	return 0;
}

/* Copy the file `name` of d: read as its listing showed it (type: DT_REG, or another; -1: not
 * there, skipped), through d's fd where it is open. */
static int ib_copy(struct gp_snap *s, const struct gp_root_dir *d, const char *name, int type, int *left_out)
{
	if (left_out)
		*left_out = ENOENT;
	if (type == -1)
		return 0;
	if (gp_root_dir_gone(d)) { /* the folder is not there: nor is what it would hold */
		if (left_out)
			*left_out = -d->fd;
		return 0;
	}
	if (type == DT_REG && d->fd >= 0)
		return gp_snap_copy_listed(s, d->fd, d->path, name, 0, left_out);
	return gp_snap_copy_in(s, d->fd, d->path, name, 0, left_out);
}

/* A port's counters/ and hw_counters/ (rdma.errors, rdma.flaps): one read, the lifetime values. A
 * counter the driver does not support cannot be read (EINVAL): it is left out. */
static int capture_counters(struct gp_snap *s, const struct gp_root_dir *port)
{
	static const char *const dirs[] = { "counters", "hw_counters" };
	struct gp_root_dir d;
	int rc = 0;

	for (size_t k = 0; k < sizeof(dirs) / sizeof(dirs[0]) && !rc; k++) {
		int unread;

		if (gp_root_dir_type(port, dirs[k]) == -1 || (rc = ib_open(s, &d, port, dirs[k])))
			continue;
		for (int i = 0; i < d.n && !rc; i++)
			rc = ib_copy(s, &d, d.ents[i].name, d.ents[i].type, &unread);
		gp_root_dir_close(&d);
	}
	return rc;
}

/* One port of an RDMA device (ports: the device's ports/ folder; the port's folder opened from it,
 * listed once, each file read through it). */
static int capture_port(struct gp_snap *s, const struct gp_root_dir *ports, const char *port)
{
	static const char *const files[] = { "state", "phys_state", "rate", "link_layer" };
	struct gp_root_dir pd, ty = { .fd = -ENOENT, .n = -1 }, gids;
	int rc, gids_open = 0, has_ga;

	if ((rc = ib_open(s, &pd, ports, port)))
		return rc;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && !rc; i++)
		rc = ib_copy(s, &pd, files[i], gp_root_dir_type(&pd, files[i]), NULL);
	/* the GID table: unused entries read as EINVAL and are left out (the folder stays: no GID in use);
	 * of each one in use, the GID too (rdma.gid tells link-local ones apart). gid_attrs/types is
	 * opened from the port's folder in one call: gid_attrs/ itself is not listed (it holds types/,
	 * ndevs/ and nothing the snapshot reads: 3 system calls a port, 2% of the CPU) */
	has_ga = gp_root_dir_type(&pd, "gid_attrs") != -1;
	if (!rc && has_ga)
		rc = ib_open(s, &ty, &pd, "gid_attrs/types");
	if (!rc && has_ga && (ty.fd >= 0 || gp_root_exists(s->r, ty.path)))
		rc = gp_snap_make_dir(s, ty.path);
	for (int i = 0; i < ty.n && !rc; i++) {
		int unused;

		rc = ib_copy(s, &ty, ty.ents[i].name, ty.ents[i].type, &unused);
		if (!rc && !unused && !gids_open) {
			gids_open = 1;
			if (gp_root_dir_type(&pd, "gids") == -1) /* not listed: not there, as its open would find */
				gids = (struct gp_root_dir){ .fd = -ENOENT, .n = -1 };
			else
				rc = ib_open(s, &gids, &pd, "gids");
		}
		if (!rc && !unused)
			rc = ib_copy(s, &gids, ty.ents[i].name, gp_root_dir_type(&gids, ty.ents[i].name), NULL);
	}
	if (gids_open)
		gp_root_dir_close(&gids);
	gp_root_dir_close(&ty);
	if (!rc && counters_wanted(s))
		rc = capture_counters(s, &pd);
	gp_root_dir_close(&pd);
	return rc;
}

/* A class folder (/sys/class/C), open and listed (gp_root_dir), and where it lies ("": unknown). */
struct class_folder {
	struct gp_root_dir d;
	char canon[GP_PATH_MAX];
};

/* A class entry's folder (/sys/class/C/NAME, a link into the device tree, of class folder c): opened
 * beneath the root through the link and listed (gp_root_dir_open), where it lies into base (d's path),
 * made in the snapshot with the class's link to it. The link is read and the place it names opened
 * through no link where it can be (gp_root_link_open: no read-back of where the folder lies), else
 * the folder is opened through the link and where it lies read back from the fd. 1: d is open (close
 * it); 0: the entry does not resolve (nothing made, skipped); or an error set. A folder that cannot be
 * opened is resolved by path, and its files are then tried by path. */
static int class_dir(struct gp_snap *s, const struct class_folder *c, const char *name, struct gp_root_dir *d,
		     char *base, size_t n)
{
	char cls[GP_PATH_MAX];
	int rc, fd;

	snprintf(cls, sizeof(cls), "%s/%s", c->d.path, name);
	fd = c->canon[0] ? gp_root_link_open(s->r, c->d.fd, c->canon, name, O_RDONLY | O_DIRECTORY, base, n) : -ENOSYS;
	if ((fd >= 0 ? gp_root_dir_list(s->r, d, fd, base) : gp_root_dir_open(s->r, d, -1, cls, NULL)) == -ENOMEM) {
		gp_root_dir_close(d);
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	if (fd < 0) {
		if (d->fd >= 0 ? gp_root_fd_realpath(s->r, d->fd, cls, base, n) : gp_root_realpath(s->r, cls, base, n)) {
			gp_root_dir_close(d);
			return 0;
		}
		snprintf(d->path, sizeof(d->path), "%s", base);
	}
	if ((rc = gp_snap_make_dir(s, base)) || (strcmp(base, cls) && (rc = gp_snap_make_link(s, cls, base)))) {
		gp_root_dir_close(d);
		return rc;
	}
	return 1;
}

/* Open and list the class folder `path` (c->d; its entries, sorted, as gp_root_list gives them) and
 * where it lies. 0 or an error set. */
static int class_open(struct gp_snap *s, struct class_folder *c, const char *path)
{
	c->canon[0] = '\0';
	if (gp_root_dir_open(s->r, &c->d, -1, path, NULL) == -ENOMEM) {
		gp_root_dir_close(&c->d);
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	if (c->d.fd >= 0 && gp_root_fd_realpath(s->r, c->d.fd, path, c->canon, sizeof(c->canon)))
		c->canon[0] = '\0';
	return 0;
}

/* /sys/class/infiniband/DEV: a link to the device's folder (below its PCI function, or virtual
 * for soft-RoCE) as in sysfs, its device link, its parent (soft-RoCE: the netdev), its ports. The
 * folder is opened beneath the root once, through the class's link, where it lies read back from the
 * fd, and listed once: what is not there is not asked for; its ports/ and each port's folders are
 * opened through it, one name each, and listed once. */
static int capture_ibdev(struct gp_snap *s, const struct class_folder *c, const char *dev)
{
	char base[GP_PATH_MAX], p[GP_PATH_MAX], real[GP_PATH_MAX];
	struct gp_root_dir d, ports = { .fd = -ENOENT, .n = -1 };
	int rc, t;

	if ((rc = class_dir(s, c, dev, &d, base, sizeof(base))) <= 0)
		return rc;
	rc = 0;
	snprintf(p, sizeof(p), "%s/device", base);
	t = gp_root_dir_type(&d, "device");
	if ((t == DT_LNK || t == DT_UNKNOWN) &&
	    gp_root_link_in(s->r, d.fd >= 0 ? d.fd : -1, base, "device", &s->links, real, sizeof(real)) == 0)
		rc = gp_snap_make_link(s, p, real);
	t = gp_root_dir_type(&d, "parent");
	if (!rc && t == DT_REG)
		rc = gp_snap_copy_listed(s, d.fd, base, "parent", 0, NULL);
	else if (!rc && t != -1)
		rc = gp_snap_copy_in(s, d.fd >= 0 ? d.fd : -1, base, "parent", 0, NULL);
	if (!rc && gp_root_dir_type(&d, "ports") != -1)
		rc = ib_open(s, &ports, &d, "ports");
	for (int i = 0; i < ports.n && !rc; i++)
		rc = capture_port(s, &ports, ports.ents[i].name);
	gp_root_dir_close(&ports);
	gp_root_dir_close(&d);
	return rc;
}

/* /sys/class/infiniband_verbs/uverbsN (ib_uverbs): a link to its folder, as in sysfs, and its ibdev. The
 * folder is opened through the class's link and listed once, where it lies read back from the fd,
 * ibdev read through it. */
static int capture_uverbs(struct gp_snap *s, const struct class_folder *c, const char *name)
{
	char base[GP_PATH_MAX];
	struct gp_root_dir d;
	int rc;

	if (strncmp(name, "uverbs", 6))
		return 0;
	if ((rc = class_dir(s, c, name, &d, base, sizeof(base))) <= 0)
		return rc;
	rc = ib_copy(s, &d, "ibdev", gp_root_dir_type(&d, "ibdev"), NULL);
	gp_root_dir_close(&d);
	return rc;
}

int gp_snap_capture_rdma(struct gp_snap *s)
{
	struct class_folder *c = malloc(sizeof(*c));
	int rc;

	if (!c)
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	rc = class_open(s, c, "/sys/class/infiniband");
	for (int i = 0; !rc && i < (c->d.fd >= 0 ? c->d.n : 0); i++)
		rc = capture_ibdev(s, c, c->d.ents[i].name);
	gp_root_dir_close(&c->d);
	if (!rc && !(rc = class_open(s, c, "/sys/class/infiniband_verbs")))
		for (int i = 0; !rc && i < (c->d.fd >= 0 ? c->d.n : 0); i++)
			rc = capture_uverbs(s, c, c->d.ents[i].name);
	gp_root_dir_close(&c->d);
	free(c);
	gp_snapshot_info_captured(&s->info, counters_wanted(s) ? "rdma rdma-ports rdma-counters rdma-uverbs"
						     : "rdma rdma-ports rdma-uverbs");
	return rc;
}
