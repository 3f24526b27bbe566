/* gpup2p — gpup2p/snapshot-info, the marker a snapshot ends with: its format, the version that
 * wrote it, what it captured and which files its source could not give. Written by capture, read
 * by doctor (and by a capture whose source is itself a snapshot). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int gp_snapshot_info_read(const struct gp_root *r, struct gp_snapshot_info *inf)
{
	char *buf = NULL, *save = NULL, *l;
	ssize_t n;

	memset(inf, 0, sizeof(*inf));
	if (r->live)
		return -ENOENT;
	n = gp_root_read_alloc(r, GP_SNAPSHOT_MARKER, &buf, 64 * 1024);
	if (n < 0)
		return (int)n;
	if (strncmp(buf, GP_SNAPSHOT_MAGIC, strlen(GP_SNAPSHOT_MAGIC)) ||
	    (inf->format = atoi(buf + strlen(GP_SNAPSHOT_MAGIC))) <= 0) {
		free(buf);
		memset(inf, 0, sizeof(*inf));
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
	}
	free(buf);
	if (inf->format == 1 && !inf->captured[0])
		snprintf(inf->captured, sizeof(inf->captured), "%s", format1_groups);
	return 0;
}
