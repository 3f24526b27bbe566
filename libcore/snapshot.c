/* gpup2p — capture a root's PCI/GPU state into a replayable directory (where it goes: snapshot_write.c). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "gpup2p/gpu.h"
#include "gpup2p/pci.h"
#include "gpup2p/snapshot.h"

/* How much of a file is copied: sysfs and /proc files are small, and no reader reads more than a
 * few KiB of one (config space: 4096 bytes), so a longer file replays the same from its start. */
#define SNAP_FILE_MAX (1u << 20)

/* The per-function files topo/bar read (and libpci's sysfs method reads). */
static const char *const dev_files[] = {
	"vendor", "device", "class", "subsystem_vendor", "subsystem_device", "revision", "irq", "enable",
	"resource", "numa_node", "local_cpulist", "local_cpus", "current_link_speed", "current_link_width",
	"max_link_speed", "max_link_width", "config", "label", "ari_enabled", "msi_bus", "d3cold_allowed",
};

struct snap {
	const struct gp_root *r;
	const char *dir;
	struct gp_snapshot_stats *st;
	struct gp_err *e;
};

/* Host path of a live path inside the snapshot directory. */
static int out_path(const struct snap *s, const char *live, char *buf, size_t n)
{
	int len = snprintf(buf, n, "%s%s", s->dir, live);

	return (len < 0 || (size_t)len >= n) ? -ENAMETOOLONG : 0;
}

/* The host path of a live path in the snapshot, with its parent folder created. */
static int out_path_parent(struct snap *s, const char *live, char *path, size_t n)
{
	char dir[GP_PATH_MAX];
	int rc;

	if (out_path(s, live, path, n))
		return gp_err_set(s->e, GP_E_FAIL, ENAMETOOLONG, "path too long: %s", live);
	snprintf(dir, sizeof(dir), "%s", path);
	rc = gp_mkdir_p(dirname(dir));
	return rc ? gp_err_set(s->e, GP_E_FAIL, -rc, "%s: %s", path, strerror(-rc)) : 0;
}

static int write_file(struct snap *s, const char *live, const void *data, size_t len)
{
	char path[GP_PATH_MAX];
	int fd, rc;

	if ((rc = out_path_parent(s, live, path, sizeof(path))))
		return rc;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len)) {
		rc = errno;
		if (fd >= 0)
			close(fd);
		return gp_err_set(s->e, GP_E_FAIL, rc, "%s: %s", path, strerror(rc));
	}
	close(fd);
	s->st->files++;
	return 0;
}

static int make_dir(struct snap *s, const char *live)
{
	char path[GP_PATH_MAX];
	int rc;

	if (out_path(s, live, path, sizeof(path)))
		return gp_err_set(s->e, GP_E_FAIL, ENAMETOOLONG, "path too long: %s", live);
	rc = gp_mkdir_p(path);
	return rc ? gp_err_set(s->e, GP_E_FAIL, -rc, "%s: %s", path, strerror(-rc)) : 0;
}

/* Copy one file as the commands read it. One they would find unreadable (absent, no permission, a
 * symlink out of the root, a device or pipe, a sysfs read error) is left out, so that the replay
 * finds it unreadable too; a directory where a file belongs stays a directory. */
static int copy_file(struct snap *s, const char *live)
{
	char *buf = NULL;
	ssize_t n = gp_root_read_alloc(s->r, live, &buf, SNAP_FILE_MAX);
	int rc;

	if (n < 0) {
		switch ((int)-n) {
		case EISDIR:
			return make_dir(s, live);
		case ENOENT: case ENOTDIR: case EACCES: case EPERM: case EIO: case EINVAL: case ENODEV: case ENXIO:
		case EXDEV: case ELOOP: case EAGAIN: case EMEDIUMTYPE:
			return 0;
		case ENOMEM:
			return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
		default:
			return gp_err_set(s->e, GP_E_DATA, (int)-n, "%s%s: cannot read it: %s", s->r->dir, live,
					  gp_root_strerror((int)-n));
		}
	}
	rc = write_file(s, live, buf, (size_t)n);
	free(buf);
	return rc;
}

/* A symlink at live path `from` pointing at live path `to`, written relative as sysfs does. */
static int make_link(struct snap *s, const char *from, const char *to)
{
	char path[GP_PATH_MAX], rel[GP_PATH_MAX];
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
	for (const char *p = strchr(f + 1, '/'); p; p = strchr(p + 1, '/'))
		used += (size_t)snprintf(rel + used, sizeof(rel) - used, "../");
	snprintf(rel + used, sizeof(rel) - used, "%s", t + 1);
	if ((rc = out_path_parent(s, from, path, sizeof(path))))
		return rc;
	if (symlink(rel, path) && errno != EEXIST)
		return gp_err_set(s->e, GP_E_FAIL, errno, "%s: %s", path, strerror(errno));
	return 0;
}

static int list_dirs(struct snap *s, const char *live, const char *under)
{
	char **names = NULL, p[GP_PATH_MAX];
	int n = gp_root_list(s->r, live, &names), rc = 0;

	for (int i = 0; i < n && !rc; i++) {
		snprintf(p, sizeof(p), "%s/%s", under, names[i]);
		rc = make_dir(s, p);
	}
	gp_root_free_list(names);
	return rc;
}

static int capture_device(struct snap *s, const char *bdf)
{
	char link[GP_PATH_MAX], real[GP_PATH_MAX], p[GP_PATH_MAX], q[GP_PATH_MAX], name[256];
	int rc;

	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", bdf);
	rc = gp_root_realpath(s->r, link, real, sizeof(real));
	if (rc) /* the scan resolved it a moment ago */
		return gp_err_set(s->e, GP_E_DATA, -rc, "%s%s: cannot resolve: %s", s->r->dir, link, gp_root_strerror(-rc));
	if ((rc = make_dir(s, real)) || (rc = make_link(s, link, real)))
		return rc;
	for (size_t i = 0; i < sizeof(dev_files) / sizeof(dev_files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", real, dev_files[i]);
		if ((rc = copy_file(s, p)))
			return rc;
	}
	/* the links libpci reads, to where they lead in the root (so the replay names the same) */
	snprintf(p, sizeof(p), "%s/driver", real);
	if (gp_root_link_target(s->r, p, q, sizeof(q), name, sizeof(name)) == 0 &&
	    ((rc = make_dir(s, q)) || (rc = make_link(s, p, q))))
		return rc;
	snprintf(p, sizeof(p), "%s/iommu_group", real);
	if (gp_root_link_target(s->r, p, q, sizeof(q), name, sizeof(name)) == 0) {
		if ((rc = make_dir(s, q)) || (rc = make_link(s, p, q)))
			return rc;
		snprintf(link, sizeof(link), "%s/devices/%s", q, bdf);
		if ((rc = make_link(s, link, real)))
			return rc;
	}
	snprintf(p, sizeof(p), "%s/net", real);
	if ((rc = list_dirs(s, p, p)))
		return rc;
	snprintf(p, sizeof(p), "%s/infiniband", real);
	if ((rc = list_dirs(s, p, p)))
		return rc;
	s->st->devices++;
	return 0;
}

static int capture_misc(struct snap *s)
{
	char **names = NULL, p[GP_PATH_MAX], real[GP_PATH_MAX];
	int n, rc = 0;

	if ((rc = list_dirs(s, "/sys/class/iommu", "/sys/class/iommu")))
		return rc;
	n = gp_root_list(s->r, "/sys/kernel/iommu_groups", &names);
	for (int i = 0; i < n && !rc; i++) { /* every group counts, with or without a readable type */
		snprintf(p, sizeof(p), "/sys/kernel/iommu_groups/%s", names[i]);
		if (!(rc = make_dir(s, p))) {
			snprintf(p, sizeof(p), "/sys/kernel/iommu_groups/%s/type", names[i]);
			rc = copy_file(s, p);
		}
	}
	gp_root_free_list(names);
	n = gp_root_list(s->r, "/sys/class/infiniband", &names);
	for (int i = 0; i < n && !rc; i++) {
		snprintf(p, sizeof(p), "/sys/class/infiniband/%s/device", names[i]);
		if (gp_root_realpath(s->r, p, real, sizeof(real)) == 0)
			rc = make_link(s, p, real);
		snprintf(p, sizeof(p), "/sys/class/infiniband/%s/parent", names[i]); /* soft-RoCE: its netdev */
		if (!rc)
			rc = copy_file(s, p);
	}
	gp_root_free_list(names);
	/* interfaces whose device is below a PCI function (virtio-net: .../0000:01:00.0/virtio0) */
	n = gp_root_list(s->r, "/sys/class/net", &names);
	for (int i = 0; i < n && !rc; i++) {
		snprintf(p, sizeof(p), "/sys/class/net/%s/device", names[i]);
		if (gp_root_realpath(s->r, p, real, sizeof(real)) == 0 && strncmp(real, "/sys/devices/pci", 16) == 0 &&
		    !(rc = make_dir(s, real)))
			rc = make_link(s, p, real);
	}
	gp_root_free_list(names);
	n = gp_root_list(s->r, "/sys/devices/system/node", &names);
	for (int i = 0; i < n && !rc; i++) {
		if (strncmp(names[i], "node", 4) != 0)
			continue;
		snprintf(p, sizeof(p), "/sys/devices/system/node/%s", names[i]);
		if (!(rc = make_dir(s, p))) {
			snprintf(p, sizeof(p), "/sys/devices/system/node/%s/cpulist", names[i]);
			rc = copy_file(s, p);
		}
	}
	gp_root_free_list(names);
	if (rc)
		return rc;
	if ((rc = make_dir(s, "/proc")) || (rc = copy_file(s, "/proc/cmdline")) ||
	    (rc = copy_file(s, "/proc/driver/nvidia/version")) || (rc = copy_file(s, "/proc/modules")))
		return rc;
	return make_dir(s, "/sys/bus/pci/devices");
}

/* The facts as loaded, then the marker (written last: a directory holding it is a whole snapshot). */
static int capture_facts(struct snap *s, const struct gp_gpu_facts *f)
{
	char *buf = NULL, info[512];
	size_t len = 0;
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;
	FILE *m;
	int rc;

	m = open_memstream(&buf, &len);
	if (!m)
		return gp_err_set(s->e, GP_E_FAIL, errno, "open_memstream: %s", strerror(errno));
	rc = gp_gpu_facts_write(f, m);
	if (fclose(m) || rc) {
		free(buf);
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	rc = write_file(s, GP_GPU_FACTS_PATH, buf, len);
	free(buf);
	s->st->gpu_facts = f->available;
	if (rc)
		return rc;
	gmtime_r(&now, &tm);
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	len = (size_t)snprintf(info, sizeof(info),
			       GP_SNAPSHOT_MAGIC "1\nwriter gpup2p %s\ncreated %04d-%02d-%02dT%02d:%02d:%02dZ\nsource %s\nkernel %s\n",
#ifdef GPUP2P_VERSION
			       GPUP2P_VERSION,
#else
			       "unknown",
#endif
			       tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			       s->r->live ? "live" : "root", s->r->live ? u.release : "unknown");
	return write_file(s, GP_SNAPSHOT_MARKER, info, len);
}

int gp_snapshot_capture(const struct gp_root *r, const char *dir, struct gp_snapshot_stats *st, struct gp_err *e)
{
	struct snap s = { r, dir, st, e };
	struct gp_gpu_facts *f = calloc(1, sizeof(*f));
	struct gp_pci p;
	int rc;

	memset(st, 0, sizeof(*st));
	if (!f)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	/* what topo loads, and how it fails: a snapshot of a root topo refuses would replay as
	 * something else (an empty bus, or facts its own reader refuses) */
	if ((rc = gp_pci_scan(&p, r, e)) || (rc = gp_gpu_facts_load(r, f, e)))
		goto out;
	if (mkdir(dir, 0755)) {
		rc = gp_err_set(e, errno == EACCES ? GP_E_PERM : GP_E_FAIL, errno, "%s: %s", dir, strerror(errno));
		goto out;
	}
	for (int i = 0; i < p.n && !rc; i++)
		rc = capture_device(&s, p.devs[i].bdf);
	if (!rc)
		rc = capture_misc(&s);
	if (!rc)
		rc = capture_facts(&s, f);
	if (rc)
		gp_snapshot_remove_tree(dir);
out:
	gp_pci_free(&p);
	free(f);
	return rc;
}
