/* gpup2p — capture a root's PCI/GPU state into a replayable directory: the PCI functions, IOMMU,
 * NUMA and network links here; the files outside the PCI tree in snapshot_sys.c; where the
 * snapshot goes in snapshot_write.c; writing into it in snapshot_out.c (an archive: tar.c); its marker in
 * snapshot_info.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "gpup2p/gpu.h"
#include "gpup2p/pci.h"
#include "snapshot/internal.h"

/* The per-function files topo/bar read (and libpci's sysfs method reads), then the AER counters
 * doctor reads (pcie.aer). */
static const char *const dev_files[] = {
	"vendor", "device", "class", "subsystem_vendor", "subsystem_device", "revision", "irq", "enable",
	"resource", "numa_node", "local_cpulist", "local_cpus", "current_link_speed", "current_link_width",
	"max_link_speed", "max_link_width", "config", "label", "ari_enabled", "msi_bus", "d3cold_allowed",
	"aer_dev_correctable", "aer_dev_fatal", "aer_dev_nonfatal", "aer_rootport_total_err_cor",
	"aer_rootport_total_err_fatal", "aer_rootport_total_err_nonfatal",
};

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

/* One PCI function, at the folder the scan resolved its link to (beneath the root). */
static int capture_device(struct gp_snap *s, const struct gp_pci_dev *d)
{
	char link[GP_PATH_MAX], real[GP_PATH_MAX], p[GP_PATH_MAX], q[GP_PATH_MAX], name[256];
	const char *bdf = d->bdf;
	int rc, dfd;

	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", bdf);
	snprintf(real, sizeof(real), "%s", d->sysfs_path);
	if ((rc = gp_snap_make_dir(s, real)) || (rc = gp_snap_make_link(s, link, real)))
		return rc;
	/* the function's folder is opened once, its files through it (-1: each resolved on its own) */
	dfd = gp_root_open(s->r, real, O_PATH | O_DIRECTORY);
	for (size_t i = 0; i < sizeof(dev_files) / sizeof(dev_files[0]) && !rc; i++)
		rc = gp_snap_copy_in(s, dfd, real, dev_files[i], 0, NULL);
	if (dfd >= 0)
		close(dfd);
	if (rc)
		return rc;
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
	/* the capturing environment: this process when live, else what the source snapshot recorded */
	if (s->r->live) {
		gp_snapshot_env_live(s->r, &s->info);
	} else {
		s->info.memlock_known = s->src.memlock_known;
		s->info.memlock = s->src.memlock;
		s->info.shm_known = s->src.shm_known;
		s->info.shm_size = s->src.shm_size;
		s->info.container = s->src.container;
		memcpy(s->info.container_why, s->src.container_why, sizeof(s->info.container_why));
	}
	if ((n = gp_snapshot_info_format(&s->info, &buf)) < 0)
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	rc = gp_snap_write_file(s, GP_SNAPSHOT_MARKER, buf, (size_t)n);
	free(buf);
	return rc;
}

int gp_snap_capture(const struct gp_root *r, const char *dir, const char *archive, const char *shown,
		    unsigned flags, struct gp_snapshot_stats *st, struct gp_err *e)
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
	*s = (struct gp_snap){ .r = r, .dir = dir, .flags = flags, .st = st, .e = e, .dfd = -1, .shown = shown };
	(void)gp_snapshot_info_read(r, &s->src); /* a snapshot of a snapshot keeps what its marker says */
	/* what topo loads, and how it fails: a snapshot of a root topo refuses would replay as
	 * something else (an empty bus, or facts its own reader refuses) */
	if ((rc = gp_pci_scan(&p, r, e)) || (rc = gp_gpu_facts_load(r, f, GP_GPU_HEALTH, e)))
		goto out;
	if (archive) {
		if ((rc = gp_snap_tar_open(s, archive)))
			goto out;
	} else if (mkdir(dir, 0755)) {
		rc = gp_err_set(e, errno == EACCES ? GP_E_PERM : GP_E_FAIL, errno, "%s: %s", dir, strerror(errno));
		goto out;
	} else if ((rc = gp_snap_out_open(s))) {
		gp_snapshot_remove_tree(dir);
		goto out;
	}
	for (int i = 0; i < p.n && !rc; i++)
		rc = capture_device(s, &p.devs[i]);
	gp_snapshot_info_captured(&s->info, "pci aer");
	if (!rc)
		rc = capture_misc(s);
	if (!rc)
		rc = capture_facts(s, f);
	rc = gp_snap_tar_close(s, rc); /* an archive: finished, or removed on error */
	gp_snap_out_close(s);
	if (rc && !archive)
		gp_snapshot_remove_tree(dir);
out:
	gp_pci_free(&p);
	free(f);
	free(s);
	return rc;
}

int gp_snapshot_capture(const struct gp_root *r, const char *dir, unsigned flags, struct gp_snapshot_stats *st,
			struct gp_err *e)
{
	return gp_snap_capture(r, dir, NULL, NULL, flags, st, e);
}
