/* gpup2p — capture a root's PCI/GPU state into a replayable directory: the PCI functions, IOMMU,
 * NUMA and network links here; the files outside the PCI tree in snapshot_sys.c; where the
 * snapshot goes in snapshot_write.c; writing into it in snapshot_out.c (an archive: tar.c); its marker in
 * snapshot_info.c. */
#include <dirent.h>
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

/* The folders listed in the function's folder f (net/, infiniband/): each one's entries as folders.
 * Found there as a folder, listed through f's fd; else (a link, or a type not told) from its path. */
static int list_in(struct gp_snap *s, int f, const char *real, const char *name, int type)
{
	char p[GP_PATH_MAX];
	struct gp_root_ent *ents = NULL;
	int fd, n, rc = 0;

	snprintf(p, sizeof(p), "%s/%s", real, name);
	if (type == -1 || type == DT_REG)
		return 0; /* none there, or a file (as gp_root_list finds it: no names) */
	if (type != DT_DIR || f < 0)
		return list_dirs(s, p, p);
	fd = gp_root_open_in(s->r, f, real, name, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOTDIR ? 0 : list_dirs(s, p, p);
	n = gp_root_entries(s->r, fd, p, &ents);
	close(fd);
	for (int i = 0; i < n && !rc; i++) {
		snprintf(p, sizeof(p), "%s/%s/%s", real, name, ents[i].name);
		rc = gp_snap_make_dir(s, p);
	}
	free(ents);
	return rc;
}

/* A link of the function's folder (driver, iommu_group, physfn) as libpci reads it: the folder it
 * leads to and the link, made in the snapshot. 0 when it is not there (or not a link); its target
 * into q. `type`: its type in the folder's listing (-1: absent; DT_UNKNOWN: not told); text: the
 * link's text as the scan read it through the folder (NULL: read here). */
static int link_in(struct gp_snap *s, int f, const char *real, const char *name, int type, const char *text, char *q,
		   size_t qn, int *made)
{
	char p[GP_PATH_MAX];
	int rc;

	*made = 0;
	if (type != DT_LNK && type != DT_UNKNOWN)
		return 0;
	if (text ? gp_root_link_resolve(s->r, real, name, text, &s->links, q, qn)
		 : gp_root_link_in(s->r, f, real, name, &s->links, q, qn))
		return 0;
	snprintf(p, sizeof(p), "%s/%s", real, name);
	if ((rc = gp_snap_make_dir(s, q)) || (rc = gp_snap_make_link(s, p, q)))
		return rc;
	*made = 1;
	return 0;
}

/* One PCI function, at the folder the scan resolved its link to (beneath the root, canonical), while
 * the scan holds it open and listed (f): only the names there are read, each file with one open, read
 * and close, and those the scan read whole (its identity, resource, config space, NUMA node, CPUs,
 * links) not read again. */
static int capture_device(struct gp_snap *s, const struct gp_pci_dev *d, const struct gp_pci_fn *f)
{
	char link[GP_PATH_MAX], real[GP_PATH_MAX], q[GP_PATH_MAX], live[GP_PATH_MAX];
	const struct gp_root_dir *dir = gp_pci_fn_dir(f);
	const char *bdf = d->bdf, *data;
	int rc, dfd = dir->fd, made;
	size_t len;

	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", bdf);
	snprintf(real, sizeof(real), "%s", d->sysfs_path);
	if ((rc = gp_snap_make_dir(s, real)) || (rc = gp_snap_make_link(s, link, real)))
		return rc;
#define TYPE(name) gp_root_dir_type(dir, name)
	for (size_t i = 0; i < sizeof(dev_files) / sizeof(dev_files[0]) && !rc; i++) {
		int t = TYPE(dev_files[i]);

		if (t == DT_REG && (data = gp_pci_fn_file(f, dev_files[i], &len))) {
			snprintf(live, sizeof(live), "%s/%s", real, dev_files[i]);
			rc = gp_snap_write_file(s, live, data, len);
		} else if (t == DT_REG) {
			rc = gp_snap_copy_listed(s, dfd, real, dev_files[i], 0, NULL);
		} else if (t != -1) { /* a folder, a link, a type not told: as any file is read */
			rc = gp_snap_copy_in(s, dfd, real, dev_files[i], 0, NULL);
		}
	}
	/* the links libpci reads, to where they lead in the root (so the replay names the same) */
	if (!rc)
		rc = link_in(s, dfd, real, "driver", TYPE("driver"), gp_pci_fn_link(f, "driver"), q, sizeof(q), &made);
	if (!rc && !(rc = link_in(s, dfd, real, "iommu_group", TYPE("iommu_group"), gp_pci_fn_link(f, "iommu_group"), q,
				  sizeof(q), &made)) && made) {
		snprintf(link, sizeof(link), "%s/devices/%s", q, bdf);
		rc = gp_snap_make_link(s, link, real);
	}
	/* a virtual function's link to its physical function (doctor's nic.driver skips unbound VFs) */
	if (!rc)
		rc = link_in(s, dfd, real, "physfn", TYPE("physfn"), gp_pci_fn_link(f, "physfn"), q, sizeof(q), &made);
	if (!rc)
		rc = list_in(s, dfd, real, "net", TYPE("net"));
	if (!rc)
		rc = list_in(s, dfd, real, "infiniband", TYPE("infiniband"));
#undef TYPE
	if (!rc)
		s->st->devices++;
	return rc;
}

/* The capture's part in the scan (gp_pci_scan_each): the snapshot opened at the first function, each
 * function captured as it is read. Its error in c->rc, c->e (the scan's own come first). */
struct scan_capture {
	struct gp_snap *s;
	const char *archive;
	int opened;              /* 1: the snapshot's archive or folder was made */
	int rc;
	struct gp_err e;
};

/* Make the snapshot: the archive, or the folder s->dir. 0 or an error set (nothing left made). */
static int open_out(struct scan_capture *c)
{
	struct gp_snap *s = c->s;
	int rc;

	if (c->archive) {
		if ((rc = gp_snap_tar_open(s, c->archive)))
			return rc;
	} else if (mkdir(s->dir, 0755)) {
		return gp_err_set(s->e, errno == EACCES ? GP_E_PERM : GP_E_FAIL, errno, "%s: %s", s->dir, strerror(errno));
	} else if ((rc = gp_snap_out_open(s))) {
		gp_snapshot_remove_tree(s->dir);
		return rc;
	}
	c->opened = 1;
	return 0;
}

static gp_snapshot_progress_fn progress;

void gp_snapshot_set_progress(gp_snapshot_progress_fn fn)
{
	progress = fn;
}

static int capture_each(const struct gp_pci *p, int i, const struct gp_pci_fn *f, void *arg)
{
	struct scan_capture *c = arg;

	if (!c->opened && (c->rc = open_out(c)))
		return c->rc;
	c->rc = capture_device(c->s, &p->devs[i], f);
	if (!c->rc && progress && p->n >= 256 && ((i + 1) % 256 == 0 || i + 1 == p->n))
		progress(i + 1, p->n);
	return c->rc;
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
	struct scan_capture c = { 0 };
	struct gp_pci p;
	int rc;

	memset(st, 0, sizeof(*st));
	memset(&p, 0, sizeof(p));
	if (!f || !s) {
		rc = gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
		goto out;
	}
	*s = (struct gp_snap){ .r = r, .dir = dir, .flags = flags, .st = st, .e = &c.e, .dfd = -1, .shown = shown };
	c.s = s;
	c.archive = archive;
	(void)gp_snapshot_info_read(r, &s->src); /* a snapshot of a snapshot keeps what its marker says */
	/* what topo loads, and how it fails: a snapshot of a root topo refuses would replay as
	 * something else (an empty bus, or facts its own reader refuses). Each function is captured as
	 * the scan reads it; the errors come in the order of the steps: the scan's, the facts', then
	 * making the snapshot, then capturing */
	rc = gp_pci_scan_each(&p, r, capture_each, &c, e);
	s->e = e;
	if (rc || (rc = gp_gpu_facts_load(r, f, GP_GPU_HEALTH, e)))
		goto done;
	if ((rc = c.rc) || (!c.opened && (rc = open_out(&c)))) {
		if (c.rc)
			*e = c.e;
		goto done;
	}
	gp_snapshot_info_captured(&s->info, "pci aer");
	if (!rc)
		rc = capture_misc(s);
	if (!rc)
		rc = capture_facts(s, f);
done:
	rc = gp_snap_tar_close(s, rc); /* an archive: finished, or removed on error */
	gp_snap_out_close(s);
	if (rc && !archive && c.opened)
		gp_snapshot_remove_tree(dir);
out:
	gp_pci_free(&p);
	free(f);
	if (s)
		gp_root_links_free(&s->links);
	free(s);
	return rc;
}

int gp_snapshot_capture(const struct gp_root *r, const char *dir, unsigned flags, struct gp_snapshot_stats *st,
			struct gp_err *e)
{
	return gp_snap_capture(r, dir, NULL, NULL, flags, st, e);
}
