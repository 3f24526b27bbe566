/* gpup2p unit tests: the snapshot marker (gpup2p/snapshot-info) written and read back, older and
 * later formats, what is not a marker. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/check.h"
#include "gpup2p/snapshot.h"
#include "unit.h"

/* Write text as the marker of a fresh root under dir; 0 or -1. */
static int put_marker(const char *dir, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/sys", dir);
	if (gp_mkdir_p(p))
		return -1;
	snprintf(p, sizeof(p), "%s/gpup2p", dir);
	if (gp_mkdir_p(p))
		return -1;
	snprintf(p, sizeof(p), "%s%s", dir, GP_SNAPSHOT_MARKER);
	if (!(f = fopen(p, "w")))
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

/* Read the marker text as a root under dir would hold it. */
static int read_marker(const char *dir, const char *text, struct gp_snapshot_info *inf)
{
	struct gp_root r;
	struct gp_err e = { 0 };

	if (put_marker(dir, text) || gp_root_init(&r, dir, &e))
		return -999;
	return gp_snapshot_info_read(&r, inf);
}

int main(void)
{
	static struct gp_snapshot_info a, b;
	char dir[] = "/tmp/gpup2p-unit-snapXXXXXX", path[128];
	struct gp_root live = { .live = 1 };
	char *text = NULL;
	long n;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	/* written, read back the same */
	a.format = GP_SNAPSHOT_FORMAT;
	strcpy(a.writer, "gpup2p 9.9.9");
	strcpy(a.created, "2026-01-02T03:04:05Z");
	strcpy(a.source, "live");
	strcpy(a.kernel, "6.1.0-x");
	gp_snapshot_info_captured(&a, "pci");
	gp_snapshot_info_captured(&a, "dev nvml");
	gp_snapshot_info_unread(&a, "/proc/kallsyms", EACCES);
	gp_snapshot_info_unread(&a, "/proc/kallsyms", ENOENT);   /* listed once: the first reason stays */
	gp_snapshot_info_unread(&a, "/bad path", ENOENT);        /* a space would break the line: not listed */
	CHECK(a.nunread == 1 && gp_snapshot_unreadable(&a, "/proc/kallsyms") == EACCES &&
	      gp_snapshot_unreadable(&a, "/proc/modules") == 0, "unreadable: listed once, looked up by path");
	n = gp_snapshot_info_format(&a, &text);
	CHECK(n > 0 && strstr(text, "gpup2p-snapshot 2\n") == text && strstr(text, "\ncaptured pci dev nvml\n") &&
	      strstr(text, "\nunreadable /proc/kallsyms 13 Permission denied\n"), "marker text: magic, groups, unreadable");
	CHECK(text && read_marker(dir, text, &b) == 0 && !memcmp(&a, &b, sizeof(a)), "marker round trip");
	free(text);
	/* a later format: unknown lines ignored, known ones read */
	CHECK(read_marker(dir, "gpup2p-snapshot 7\nwriter gpup2p 3.0\nfuture thing\ncaptured pci\n"
			  "unreadable /dev 2 No such file or directory\nunreadable relative 2 x\n", &b) == 0 &&
	      b.format == 7 && !strcmp(b.captured, "pci") && b.nunread == 1 && gp_snapshot_unreadable(&b, "/dev") == ENOENT,
	      "a later format: what it adds is ignored, an entry that is no absolute path too");
	/* format 1 (gpup2p 0.1.0) wrote no captured line: its fixed set is assumed */
	CHECK(read_marker(dir, "gpup2p-snapshot 1\nwriter gpup2p 0.1.0\ncreated 2026-11-22T16:08:55Z\nsource live\n"
			  "kernel 6.18\n", &b) == 0 && b.format == 1 && !strcmp(b.source, "live") &&
	      !strcmp(b.captured, "pci iommu numa net rdma cmdline modules nvidia-version nvml") && b.nunread == 0,
	      "format 1: its groups");
	CHECK(read_marker(dir, "not a marker\n", &b) == -EINVAL && b.format == 0, "no magic: -EINVAL");
	CHECK(read_marker(dir, "gpup2p-snapshot x\n", &b) == -EINVAL, "no format number: -EINVAL");
	CHECK(gp_snapshot_info_read(&live, &b) == -ENOENT, "live: no marker");
	snprintf(path, sizeof(path), "%s%s", dir, GP_SNAPSHOT_MARKER);
	unlink(path);
	{
		struct gp_root r;
		struct gp_err e = { 0 };

		CHECK(gp_root_init(&r, dir, &e) == 0 && gp_snapshot_info_read(&r, &b) == -ENOENT,
		      "a tree without the marker (a fixture): -ENOENT");
	}
	/* doctor asks whether a group was captured: whole names only */
	{
		struct gp_doctor_ctx c;
		struct gp_root r = { .live = 0 };

		memset(&c, 0, sizeof(c));
		c.root = &live;
		CHECK(gp_doctor_captured(&c, "aer") == 1, "captured: live has everything");
		c.root = &r;
		CHECK(gp_doctor_captured(&c, "aer") == 1, "captured: a tree that is no snapshot (fixture) is taken as it is");
		c.src.snapshot = 1;
		strcpy(c.src.snap.captured, "pci iommu numa net rdma cmdline modules nvidia-version nvml");
		CHECK(gp_doctor_captured(&c, "pci") && gp_doctor_captured(&c, "nvml") && gp_doctor_captured(&c, "rdma"),
		      "captured: first, last and middle names found");
		CHECK(!gp_doctor_captured(&c, "aer") && !gp_doctor_captured(&c, "rdma-ports") && !gp_doctor_captured(&c, "ci") &&
		      !gp_doctor_captured(&c, "nvidia"), "captured: an older snapshot lacks aer, rdma-ports; no partial names");
	}
	for (int i = 0; i < GP_SNAPSHOT_UNREAD_MAX + 3; i++) {
		snprintf(path, sizeof(path), "/f%d", i);
		gp_snapshot_info_unread(&a, path, EIO);
	}
	CHECK(a.nunread == GP_SNAPSHOT_UNREAD_MAX, "at most %d unreadable entries", GP_SNAPSHOT_UNREAD_MAX);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		return 1;
	return unit_done();
}
