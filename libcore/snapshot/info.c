/* gpup2p — gpup2p/snapshot-info, the marker a snapshot ends with: its format, the version that
 * wrote it, what it captured and which files its source could not give. Written by capture, read
 * by doctor (and by a capture whose source is itself a snapshot). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include "gpup2p/snapshot.h"

/* What a format-1 snapshot (gpup2p 0.1.0) holds; it has no "captured" line. */
static const char format1_groups[] = "pci iommu numa net rdma cmdline modules nvidia-version nvml";

void gp_snapshot_info_captured(struct gp_snapshot_info *inf, const char *group)
{
	size_t l = strlen(inf->captured);

	snprintf(inf->captured + l, sizeof(inf->captured) - l, "%s%s", l ? " " : "", group);
}

void gp_snapshot_info_unread(struct gp_snapshot_info *inf, const char *path, int err)
{
	if (inf->nunread >= GP_SNAPSHOT_UNREAD_MAX || strlen(path) >= sizeof(inf->unread[0].path) ||
	    strpbrk(path, " \n") || gp_snapshot_unreadable(inf, path))
		return;
	inf->unread[inf->nunread].err = err;
	strcpy(inf->unread[inf->nunread++].path, path);
}

int gp_snapshot_info_has(const struct gp_snapshot_info *inf, const char *group)
{
	size_t l = strlen(group);

	for (const char *p = inf->captured; (p = strstr(p, group)); p += l)
		if ((p == inf->captured || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\0'))
			return 1;
	return 0;
}

int gp_snapshot_unreadable(const struct gp_snapshot_info *inf, const char *path)
{
	for (int i = 0; i < inf->nunread; i++)
		if (!strcmp(inf->unread[i].path, path))
			return inf->unread[i].err;
	return 0;
}

long gp_snapshot_info_format(const struct gp_snapshot_info *inf, char **buf)
{
	size_t len = 0;
	FILE *m = open_memstream(buf, &len);

	if (!m)
		return -ENOMEM;
	fprintf(m, GP_SNAPSHOT_MAGIC "%d\nwriter %s\ncreated %s\nsource %s\nkernel %s\ncaptured %s\n", inf->format,
		inf->writer, inf->created, inf->source, inf->kernel, inf->captured);
	/* errno and its text: the number for the reader, the words for a person */
	for (int i = 0; i < inf->nunread; i++)
		fprintf(m, "unreadable %s %d %s\n", inf->unread[i].path, inf->unread[i].err, strerror(inf->unread[i].err));
	if (inf->memlock_known && inf->memlock == UINT64_MAX)
		fprintf(m, "memlock unlimited\n");
	else if (inf->memlock_known)
		fprintf(m, "memlock %" PRIu64 "\n", inf->memlock);
	if (inf->shm_known)
		fprintf(m, "shm %" PRIu64 "\n", inf->shm_size);
	if (inf->container >= 0)
		fprintf(m, "container %s%s%s\n", inf->container ? "yes" : "no", inf->container_why[0] ? " " : "",
			inf->container_why);
	if (fclose(m)) {
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	return (long)len;
}

/* "key value": copy the value of line `l` when it starts with key, 1 if it did. */
static int field(const char *l, const char *key, char *out, size_t n)
{
	size_t k = strlen(key);

	if (strncmp(l, key, k) || l[k] != ' ')
		return 0;
	snprintf(out, n, "%s", l + k + 1);
	return 1;
}

/* A byte count of a marker line: 1 and *v when the whole value is digits. */
static int bytes_of(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && *end == '\0' && *v != UINT64_MAX;
}

/* The environment lines: "memlock unlimited|N", "shm N", "container yes|no [WHY]". A value that does
 * not parse leaves the fact unknown. */
static void env_line(struct gp_snapshot_info *inf, const char *l)
{
	if (!strcmp(l, "memlock unlimited")) {
		inf->memlock_known = 1;
		inf->memlock = UINT64_MAX;
	} else if (!strncmp(l, "memlock ", 8)) {
		inf->memlock_known = bytes_of(l + 8, &inf->memlock);
	} else if (!strncmp(l, "shm ", 4)) {
		inf->shm_known = bytes_of(l + 4, &inf->shm_size);
	} else if (!strncmp(l, "container ", 10)) {
		const char *v = l + 10;

		inf->container = !strncmp(v, "yes", 3) && (v[3] == ' ' || !v[3]) ? 1 :
				 !strncmp(v, "no", 2) && (v[2] == ' ' || !v[2]) ? 0 : -1;
		snprintf(inf->container_why, sizeof(inf->container_why), "%s",
			 inf->container >= 0 && strchr(v, ' ') ? strchr(v, ' ') + 1 : "");
	}
}

int gp_snapshot_container(const struct gp_root *r, char *why, size_t n)
{
	static const char *const files[] = { "/.dockerenv", "/run/.containerenv" };
	static const char *const names[] = { "docker", "kubepods", "containerd", "libpod", "lxc", "garden" };
	char buf[4096];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (gp_root_exists(r, files[i])) {
			snprintf(why, n, "%s", files[i]);
			return 1;
		}
	if (gp_root_read_text(r, "/run/systemd/container", buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, " \n")] = '\0';
		snprintf(why, n, "/run/systemd/container %.40s", buf);
		return 1;
	}
	if (gp_root_read_text(r, "/proc/1/cgroup", buf, sizeof(buf)) <= 0)
		return -1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strstr(buf, names[i])) {
			snprintf(why, n, "cgroup %s", names[i]);
			return 1;
		}
	return 0;
}

void gp_snapshot_env_live(const struct gp_root *r, struct gp_snapshot_info *inf)
{
	struct rlimit rl;
	struct statvfs sv;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
		inf->memlock_known = 1;
		inf->memlock = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	}
	if (statvfs("/dev/shm", &sv) == 0) {
		inf->shm_known = 1;
		inf->shm_size = (uint64_t)sv.f_blocks * sv.f_frsize;
	}
	inf->container_why[0] = '\0';
	inf->container = gp_snapshot_container(r, inf->container_why, sizeof(inf->container_why));
}

int gp_snapshot_info_read(const struct gp_root *r, struct gp_snapshot_info *inf)
{
	char *buf = NULL, *save = NULL, *l;
	ssize_t n;

	memset(inf, 0, sizeof(*inf));
	inf->container = -1;
	if (r->live)
		return -ENOENT;
	n = gp_root_read_alloc(r, GP_SNAPSHOT_MARKER, &buf, 64 * 1024);
	if (n < 0)
		return (int)n;
	if (strncmp(buf, GP_SNAPSHOT_MAGIC, strlen(GP_SNAPSHOT_MAGIC)) ||
	    (inf->format = atoi(buf + strlen(GP_SNAPSHOT_MAGIC))) <= 0) {
		free(buf);
		memset(inf, 0, sizeof(*inf));
		inf->container = -1;
		return -EINVAL;
	}
	for (l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char path[sizeof(inf->unread[0].path)];
		int err;

		if (field(l, "writer", inf->writer, sizeof(inf->writer)) ||
		    field(l, "created", inf->created, sizeof(inf->created)) ||
		    field(l, "source", inf->source, sizeof(inf->source)) ||
		    field(l, "kernel", inf->kernel, sizeof(inf->kernel)) ||
		    field(l, "captured", inf->captured, sizeof(inf->captured)))
			continue;
		/* "unreadable PATH ERRNO TEXT" (an unknown line of a later format is ignored) */
		if (sscanf(l, "unreadable %111s %d", path, &err) == 2 && path[0] == '/' && err > 0)
			gp_snapshot_info_unread(inf, path, err);
		else
			env_line(inf, l);
	}
	free(buf);
	if (inf->format == 1 && !inf->captured[0])
		snprintf(inf->captured, sizeof(inf->captured), "%s", format1_groups);
	return 0;
}
