/* gpup2p — capture a root's PCI/GPU state into a replayable directory: the PCI functions, IOMMU,
 * NUMA and network links here; the files outside the PCI tree in snapshot_sys.c; where the
 * snapshot goes in snapshot_write.c; its marker in snapshot_info.c. */
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
#include "snapshot_internal.h"

/* How much of a file is copied: sysfs and /proc files are small, and no reader reads more than a
 * few KiB of one (config space: 4096 bytes), so a longer file replays the same from its start. */
#define SNAP_FILE_MAX (1u << 20)

/* The per-function files topo/bar read (and libpci's sysfs method reads), then the AER counters
 * doctor reads (pcie.aer). */
static const char *const dev_files[] = {
	"vendor", "device", "class", "subsystem_vendor", "subsystem_device", "revision", "irq", "enable",
	"resource", "numa_node", "local_cpulist", "local_cpus", "current_link_speed", "current_link_width",
	"max_link_speed", "max_link_width", "config", "label", "ari_enabled", "msi_bus", "d3cold_allowed",
	"aer_dev_correctable", "aer_dev_fatal", "aer_dev_nonfatal", "aer_rootport_total_err_cor",
	"aer_rootport_total_err_fatal", "aer_rootport_total_err_nonfatal",
};

/* Host path of a live path inside the snapshot directory. */
static int out_path(const struct gp_snap *s, const char *live, char *buf, size_t n)
{
	int len = snprintf(buf, n, "%s%s", s->dir, live);

	return (len < 0 || (size_t)len >= n) ? -ENAMETOOLONG : 0;
}

/* The host path of a live path in the snapshot, with its parent folder created. */
static int out_path_parent(struct gp_snap *s, const char *live, char *path, size_t n)
{
	char dir[GP_PATH_MAX];
	int rc;

	if (out_path(s, live, path, n))
		return gp_err_set(s->e, GP_E_FAIL, ENAMETOOLONG, "path too long: %s", live);
	snprintf(dir, sizeof(dir), "%s", path);
	rc = gp_mkdir_p(dirname(dir));
	return rc ? gp_err_set(s->e, GP_E_FAIL, -rc, "%s: %s", path, strerror(-rc)) : 0;
}

int gp_snap_write_file(struct gp_snap *s, const char *live, const void *data, size_t len)
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

int gp_snap_make_dir(struct gp_snap *s, const char *live)
{
	char path[GP_PATH_MAX];
	int rc;

	if (out_path(s, live, path, sizeof(path)))
		return gp_err_set(s->e, GP_E_FAIL, ENAMETOOLONG, "path too long: %s", live);
	rc = gp_mkdir_p(path);
	return rc ? gp_err_set(s->e, GP_E_FAIL, -rc, "%s: %s", path, strerror(-rc)) : 0;
}

/* One the commands would find unreadable (absent, no permission, a symlink out of the root, a
 * device or pipe, a sysfs read error) is left out, so that the replay finds it unreadable too. */
int gp_snap_copy_file(struct gp_snap *s, const char *live, size_t max, int *left_out)
{
	char *buf = NULL;
	ssize_t n = gp_root_read_alloc(s->r, live, &buf, max ? max : SNAP_FILE_MAX);
	int rc;

	if (left_out)
		*left_out = 0;
	if (n < 0) {
		switch ((int)-n) {
		case EISDIR:
			return gp_snap_make_dir(s, live);
		case ENOENT: case ENOTDIR: case EACCES: case EPERM: case EIO: case EINVAL: case ENODEV: case ENXIO:
		case EXDEV: case ELOOP: case EAGAIN: case EMEDIUMTYPE:
			if (left_out)
				*left_out = (int)-n;
			return 0;
		case ENOMEM:
			return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
		default:
			return gp_err_set(s->e, GP_E_DATA, (int)-n, "%s%s: cannot read it: %s", s->r->dir, live,
					  gp_root_strerror((int)-n));
		}
	}
	rc = gp_snap_write_file(s, live, buf, (size_t)n);
	free(buf);
	return rc;
}

int gp_snap_make_link(struct gp_snap *s, const char *from, const char *to)
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

static int list_dirs(struct gp_snap *s, const char *live, const char *under)
{
	char **names = NULL, p[GP_PATH_MAX];
	int n = gp_root_list(s->r, live, &names), rc = 0;

	for (int i = 0; i < n && !rc; i++) {
		snprintf(p, sizeof(p), "%s/%s", under, names[i]);
		rc = gp_snap_make_dir(s, p);
	}
	gp_root_free_list(names);
	return rc;
}

static int capture_device(struct gp_snap *s, const char *bdf)
{
	char link[GP_PATH_MAX], real[GP_PATH_MAX], p[GP_PATH_MAX], q[GP_PATH_MAX], name[256];
	int rc;

	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", bdf);
	rc = gp_root_realpath(s->r, link, real, sizeof(real));
	if (rc) /* the scan resolved it a moment ago */
		return gp_err_set(s->e, GP_E_DATA, -rc, "%s%s: cannot resolve: %s", s->r->dir, link, gp_root_strerror(-rc));
	if ((rc = gp_snap_make_dir(s, real)) || (rc = gp_snap_make_link(s, link, real)))
		return rc;
	for (size_t i = 0; i < sizeof(dev_files) / sizeof(dev_files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", real, dev_files[i]);
		if ((rc = gp_snap_copy_file(s, p, 0, NULL)))
			return rc;
	}
	/* the links libpci reads, to where they lead in the root (so the replay names the same) */
	snprintf(p, sizeof(p), "%s/driver", real);
	if (gp_root_link_target(s->r, p, q, sizeof(q), name, sizeof(name)) == 0 &&
	    ((rc = gp_snap_make_dir(s, q)) || (rc = gp_snap_make_link(s, p, q))))
		return rc;
	snprintf(p, sizeof(p), "%s/iommu_group", real);
	if (gp_root_link_target(s->r, p, q, sizeof(q), name, sizeof(name)) == 0) {
		if ((rc = gp_snap_make_dir(s, q)) || (rc = gp_snap_make_link(s, p, q)))
			return rc;
		snprintf(link, sizeof(link), "%s/devices/%s", q, bdf);
		if ((rc = gp_snap_make_link(s, link, real)))
			return rc;
	}
	/* a virtual function's link to its physical function (doctor's nic.driver skips unbound VFs) */
	snprintf(p, sizeof(p), "%s/physfn", real);
	if (gp_root_link_target(s->r, p, q, sizeof(q), name, sizeof(name)) == 0 &&
	    ((rc = gp_snap_make_dir(s, q)) || (rc = gp_snap_make_link(s, p, q))))
		return rc;
	snprintf(p, sizeof(p), "%s/net", real);
	if ((rc = list_dirs(s, p, p)))
		return rc;
	snprintf(p, sizeof(p), "%s/infiniband", real);
	if ((rc = list_dirs(s, p, p)))
		return rc;
	s->st->devices++;
	return 0;
}

static int capture_misc(struct gp_snap *s)
{
	char **names = NULL, p[GP_PATH_MAX], real[GP_PATH_MAX];
	int n, rc = 0;

	if ((rc = list_dirs(s, "/sys/class/iommu", "/sys/class/iommu")))
		return rc;
	n = gp_root_list(s->r, "/sys/kernel/iommu_groups", &names);
	for (int i = 0; i < n && !rc; i++) { /* every group counts, with or without a readable type */
		snprintf(p, sizeof(p), "/sys/kernel/iommu_groups/%s", names[i]);
		if (!(rc = gp_snap_make_dir(s, p))) {
			snprintf(p, sizeof(p), "/sys/kernel/iommu_groups/%s/type", names[i]);
			rc = gp_snap_copy_file(s, p, 0, NULL);
		}
	}
	gp_root_free_list(names);
	gp_snapshot_info_captured(&s->info, "iommu");
	/* interfaces whose device is below a PCI function (virtio-net: .../0000:01:00.0/virtio0) */
	n = gp_root_list(s->r, "/sys/class/net", &names);
	for (int i = 0; i < n && !rc; i++) {
		snprintf(p, sizeof(p), "/sys/class/net/%s/device", names[i]);
		if (gp_root_realpath(s->r, p, real, sizeof(real)) == 0 && strncmp(real, "/sys/devices/pci", 16) == 0 &&
		    !(rc = gp_snap_make_dir(s, real)))
			rc = gp_snap_make_link(s, p, real);
	}
	gp_root_free_list(names);
	gp_snapshot_info_captured(&s->info, "net");
	/* NUMA nodes: doctor tells a folder without nodes from no folder at all */
	if (!gp_root_exists(s->r, "/sys/devices/system/node"))
		gp_snap_unread(s, "/sys/devices/system/node", ENOENT);
	else if (!rc)
		rc = gp_snap_make_dir(s, "/sys/devices/system/node");
	n = gp_root_list(s->r, "/sys/devices/system/node", &names);
	for (int i = 0; i < n && !rc; i++) {
		if (strncmp(names[i], "node", 4) != 0)
			continue;
		snprintf(p, sizeof(p), "/sys/devices/system/node/%s", names[i]);
		if (!(rc = gp_snap_make_dir(s, p))) {
			snprintf(p, sizeof(p), "/sys/devices/system/node/%s/cpulist", names[i]);
			rc = gp_snap_copy_file(s, p, 0, NULL);
		}
	}
	gp_root_free_list(names);
	gp_snapshot_info_captured(&s->info, "numa");
	if (rc || (rc = gp_snap_capture_rdma(s)) || (rc = gp_snap_make_dir(s, "/proc")) || (rc = gp_snap_capture_sys(s)))
		return rc;
	return gp_snap_make_dir(s, "/sys/bus/pci/devices");
}

void gp_snap_unread(struct gp_snap *s, const char *path, int err)
{
	/* under a root, what is missing was not captured there, unless its own marker says the live
	 * system behind it could not give it */
	if (!s->r->live)
		err = gp_snapshot_unreadable(&s->src, path);
	if (err)
		gp_snapshot_info_unread(&s->info, path, err);
}

/* The facts as loaded, then the marker (written last: a directory holding it is a whole snapshot). */
static int capture_facts(struct gp_snap *s, const struct gp_gpu_facts *f)
{
	char *buf = NULL;
	size_t len = 0;
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;
	FILE *m;
	long n;
	int rc;

	m = open_memstream(&buf, &len);
	if (!m)
		return gp_err_set(s->e, GP_E_FAIL, errno, "open_memstream: %s", strerror(errno));
	rc = gp_gpu_facts_write(f, m);
	if (fclose(m) || rc) {
		free(buf);
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	rc = gp_snap_write_file(s, GP_GPU_FACTS_PATH, buf, len);
	free(buf);
	s->st->gpu_facts = f->available;
	if (rc)
		return rc;
	gp_snapshot_info_captured(&s->info, "nvml");
	gmtime_r(&now, &tm);
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	s->info.format = GP_SNAPSHOT_FORMAT;
	snprintf(s->info.writer, sizeof(s->info.writer), "gpup2p %s",
#ifdef GPUP2P_VERSION
		 GPUP2P_VERSION
#else
		 "unknown"
#endif
	);
	snprintf(s->info.created, sizeof(s->info.created), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	snprintf(s->info.source, sizeof(s->info.source), "%s", s->r->live ? "live" : "root");
	snprintf(s->info.kernel, sizeof(s->info.kernel), "%s", s->r->live && u.release[0] ? u.release : "unknown");
	if ((n = gp_snapshot_info_format(&s->info, &buf)) < 0)
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	rc = gp_snap_write_file(s, GP_SNAPSHOT_MARKER, buf, (size_t)n);
	free(buf);
	return rc;
}

int gp_snapshot_capture(const struct gp_root *r, const char *dir, unsigned flags, struct gp_snapshot_stats *st,
			struct gp_err *e)
{
	struct gp_snap *s = calloc(1, sizeof(*s));
	struct gp_gpu_facts *f = calloc(1, sizeof(*f));
	struct gp_pci p;
	int rc;

	memset(st, 0, sizeof(*st));
	memset(&p, 0, sizeof(p));
	if (!f || !s) {
		rc = gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
		goto out;
	}
	*s = (struct gp_snap){ .r = r, .dir = dir, .flags = flags, .st = st, .e = e };
	(void)gp_snapshot_info_read(r, &s->src); /* a snapshot of a snapshot keeps what its marker says */
	/* what topo loads, and how it fails: a snapshot of a root topo refuses would replay as
	 * something else (an empty bus, or facts its own reader refuses) */
	if ((rc = gp_pci_scan(&p, r, e)) || (rc = gp_gpu_facts_load(r, f, e)))
		goto out;
	if (mkdir(dir, 0755)) {
		rc = gp_err_set(e, errno == EACCES ? GP_E_PERM : GP_E_FAIL, errno, "%s: %s", dir, strerror(errno));
		goto out;
	}
	for (int i = 0; i < p.n && !rc; i++)
		rc = capture_device(s, p.devs[i].bdf);
	gp_snapshot_info_captured(&s->info, "pci aer");
	if (!rc)
		rc = capture_misc(s);
	if (!rc)
		rc = capture_facts(s, f);
	if (rc)
		gp_snapshot_remove_tree(dir);
out:
	gp_pci_free(&p);
	free(f);
	free(s);
	return rc;
}
