/* gpup2p snapshot — capture this machine's state into an archive that --root replays. */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gpup2p/snapshot.h"

void help_snapshot(FILE *f)
{
	fprintf(f,
		"usage: gpup2p snapshot [--force] [--dir] FILE.tar.gz\n\n"
		"Capture what topo and bar read (the PCI functions' sysfs files and config spaces, IOMMU\n"
		"groups, NUMA nodes, RDMA devices, /proc/cmdline, /proc/driver/nvidia/version,\n"
		"/proc/modules) and the NVML facts used (recorded in gpup2p/gpu-facts) into a gzip'ed tar\n"
		"archive. Unpack it and pass the folder to --root: topo and bar print what they printed\n"
		"on this machine. Run as root to include the extended config spaces (ACS, Resizable BAR).\n"
		"Attach the archive to bug reports; it holds no memory contents or host names.\n\n"
		"  --dir    write a directory FILE instead of an archive\n"
		"  --force  replace FILE if it exists\n"
		"  --root DIR: capture from DIR instead of the live system\n\n"
		"Exit: 0 ok, 2 could not write, 64 usage, 69 tar or PCI unavailable, 77 permission denied.\n");
}

/* "dgx.tar.gz" -> "dgx"; the archive's top-level folder. */
static void top_name(const char *file, char *buf, size_t n)
{
	char tmp[GP_PATH_MAX];
	size_t l;

	snprintf(tmp, sizeof(tmp), "%s", file);
	snprintf(buf, n, "%s", basename(tmp));
	l = strlen(buf);
	if (l > 7 && !strcmp(buf + l - 7, ".tar.gz"))
		buf[l - 7] = '\0';
	else if (l > 4 && !strcmp(buf + l - 4, ".tgz"))
		buf[l - 4] = '\0';
	if (!buf[0] || !strcmp(buf, ".") || !strcmp(buf, ".."))
		snprintf(buf, n, "gpup2p-snapshot");
}

int cmd_snapshot(struct cli *c, int argc, char **argv)
{
	struct gp_err e = { 0 };
	struct gp_snapshot_stats st;
	const char *file = NULL;
	char tmpl[GP_PATH_MAX], dir[GP_PATH_MAX], name[256];
	const char *tmp = getenv("TMPDIR");
	int force = 0, as_dir = 0, rc, done;
	struct stat sb;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (cli_common_arg(c, help_snapshot, argc, argv, &i, &done)) {
			if (done >= 0)
				return done;
			continue;
		}
		if (!strcmp(a, "--force")) {
			force = 1;
		} else if (!strcmp(a, "--dir")) {
			as_dir = 1;
		} else if (a[0] == '-' && a[1]) {
			return cli_usage("snapshot", "unknown option '%s'", a);
		} else if (file) {
			return cli_usage("snapshot", "one FILE only");
		} else {
			file = a;
		}
	}
	if (!file)
		return cli_usage("snapshot", "give the archive to write, e.g. gpup2p snapshot myhost.tar.gz");
	if (lstat(file, &sb) == 0) {
		if (!force)
			return cli_usage("snapshot", "%s exists; use --force to replace it", file);
		if (as_dir ? (S_ISDIR(sb.st_mode) ? gp_snapshot_remove_tree(file) : -ENOTDIR) : unlink(file)) {
			fprintf(stderr, "gpup2p: cannot replace %s: %s\n", file, strerror(errno ? errno : ENOTDIR));
			return EX_ERROR;
		}
	}
	if (gp_root_init(&c->root, c->root_dir, &e))
		return cli_fail(&e);
	if (as_dir) {
		if (gp_snapshot_capture(&c->root, file, &st, &e))
			return cli_fail(&e);
	} else {
		snprintf(tmpl, sizeof(tmpl), "%s/gpup2p-snapshot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(tmpl)) {
			fprintf(stderr, "gpup2p: cannot create a temporary folder in %s: %s (set TMPDIR)\n",
				tmp && *tmp ? tmp : "/tmp", strerror(errno));
			return EX_ERROR;
		}
		top_name(file, name, sizeof(name));
		snprintf(dir, sizeof(dir), "%s/%s", tmpl, name);
		rc = gp_snapshot_capture(&c->root, dir, &st, &e);
		if (!rc)
			rc = gp_snapshot_pack(dir, file, &e);
		gp_snapshot_remove_tree(tmpl);
		if (rc)
			return cli_fail(&e);
	}
	if (!c->quiet) {
		fprintf(stderr, "gpup2p: wrote %s: %d PCI functions, %d files, NVML facts %s\n", file, st.devices,
			st.files, st.gpu_facts ? "recorded" : "unavailable (recorded as such)");
		if (!as_dir)
			fprintf(stderr, "gpup2p: replay with: tar xzf %s && gpup2p --root %s topo\n", file, name);
	}
	return 0;
}
