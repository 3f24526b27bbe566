/* gpup2p — capture a root's PCI/GPU state into a replayable directory and archive. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpup2p/gpu.h"
#include "gpup2p/snapshot.h"

extern char **environ;

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

/* Copy one file if it exists under the root (as many bytes as the reader may read). */
static int copy_file(struct snap *s, const char *live)
{
	static char buf[65536];
	ssize_t n = gp_root_read_bin(s->r, live, buf, sizeof(buf));

	if (n < 0)
		return (n == -ENOENT || n == -EACCES || n == -EPERM || n == -EIO || n == -EINVAL || n == -ENODEV) ? 0
			: gp_err_set(s->e, GP_E_FAIL, (int)-n, "%s%s: %s", s->r->dir, live, strerror((int)-n));
	return write_file(s, live, buf, (size_t)n);
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
	if (rc)
		return gp_err_set(s->e, GP_E_DATA, -rc, "%s%s: cannot resolve: %s", s->r->dir, link, strerror(-rc));
	if ((rc = make_dir(s, real)) || (rc = make_link(s, link, real)))
		return rc;
	for (size_t i = 0; i < sizeof(dev_files) / sizeof(dev_files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", real, dev_files[i]);
		if ((rc = copy_file(s, p)))
			return rc;
	}
	snprintf(p, sizeof(p), "%s/driver", real);
	if (gp_root_link_name(s->r, p, name, sizeof(name)) == 0) {
		snprintf(q, sizeof(q), "/sys/bus/pci/drivers/%s", name);
		if ((rc = make_dir(s, q)) || (rc = make_link(s, p, q)))
			return rc;
	}
	snprintf(p, sizeof(p), "%s/iommu_group", real);
	if (gp_root_link_name(s->r, p, name, sizeof(name)) == 0) {
		snprintf(q, sizeof(q), "/sys/kernel/iommu_groups/%s", name);
		if ((rc = make_dir(s, q)) || (rc = make_link(s, p, q)))
			return rc;
		snprintf(q, sizeof(q), "/sys/kernel/iommu_groups/%s/devices/%s", name, bdf);
		if ((rc = make_link(s, q, real)))
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
	for (int i = 0; i < n && !rc; i++) {
		snprintf(p, sizeof(p), "/sys/kernel/iommu_groups/%s/type", names[i]);
		rc = copy_file(s, p);
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

static int capture_facts(struct snap *s)
{
	struct gp_gpu_facts *f = calloc(1, sizeof(*f));
	char *buf = NULL, info[512];
	size_t len = 0;
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;
	FILE *m;
	int rc;

	if (!f)
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	rc = gp_gpu_facts_load(s->r, f, s->e);
	if (!rc) {
		m = open_memstream(&buf, &len);
		if (!m) {
			rc = gp_err_set(s->e, GP_E_FAIL, errno, "open_memstream: %s", strerror(errno));
		} else {
			gp_gpu_facts_write(f, m);
			fclose(m);
			rc = write_file(s, GP_GPU_FACTS_PATH, buf, len);
			free(buf);
		}
	}
	s->st->gpu_facts = f->available;
	free(f);
	if (rc)
		return rc;
	gmtime_r(&now, &tm);
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	len = (size_t)snprintf(info, sizeof(info),
			       "gpup2p-snapshot 1\nwriter gpup2p %s\ncreated %04d-%02d-%02dT%02d:%02d:%02dZ\nsource %s\nkernel %s\n",
#ifdef GPUP2P_VERSION
			       GPUP2P_VERSION,
#else
			       "unknown",
#endif
			       tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			       s->r->live ? "live" : "root", s->r->live ? u.release : "unknown");
	return write_file(s, "/gpup2p/snapshot-info", info, len);
}

int gp_snapshot_capture(const struct gp_root *r, const char *dir, struct gp_snapshot_stats *st, struct gp_err *e)
{
	struct snap s = { r, dir, st, e };
	char **names = NULL;
	int n, rc = 0;

	memset(st, 0, sizeof(*st));
	if (mkdir(dir, 0755))
		return gp_err_set(e, errno == EACCES ? GP_E_PERM : GP_E_FAIL, errno, "%s: %s", dir, strerror(errno));
	n = gp_root_list(r, "/sys/bus/pci/devices", &names);
	if (n < 0)
		rc = gp_err_set(e, GP_E_DATA, -n, "%s/sys/bus/pci/devices: %s", r->dir, strerror(-n));
	for (int i = 0; i < n && !rc; i++)
		rc = capture_device(&s, names[i]);
	gp_root_free_list(names);
	if (!rc)
		rc = capture_misc(&s);
	if (!rc)
		rc = capture_facts(&s);
	if (rc)
		gp_snapshot_remove_tree(dir);
	return rc;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) ? -1 : 0;
}

int gp_snapshot_remove_tree(const char *dir)
{
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

int gp_snapshot_pack(const char *dir, const char *file, struct gp_err *e)
{
	char d1[GP_PATH_MAX], d2[GP_PATH_MAX];
	char *argv[7];
	pid_t pid;
	int status, rc;

	snprintf(d1, sizeof(d1), "%s", dir);
	snprintf(d2, sizeof(d2), "%s", dir);
	argv[0] = "tar";
	argv[1] = "-C";
	argv[2] = dirname(d1);
	argv[3] = "-czf";
	argv[4] = (char *)file;
	argv[5] = basename(d2);
	argv[6] = NULL;
	rc = posix_spawnp(&pid, "tar", NULL, NULL, argv, environ);
	if (rc)
		return gp_err_set(e, GP_E_UNAVAIL, rc, "cannot run tar: %s (install tar, or copy the directory %s)",
				  strerror(rc), dir);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return gp_err_set(e, GP_E_FAIL, errno, "waitpid: %s", strerror(errno));
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		unlink(file);
		return gp_err_set(e, GP_E_FAIL, EIO, "tar failed writing %s", file);
	}
	return 0;
}
