/* gpup2p snapshot — capture this machine's state into an archive that --root replays. */
#include <string.h>

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
		"A root that topo cannot read is refused with topo's error. The snapshot is written beside FILE\n"
		"and renamed into place.\n\n"
		"  --dir    write a directory FILE instead of an archive\n"
		"  --force  replace FILE if it exists and is a snapshot: an archive (gzip) without --dir, a\n"
		"           directory holding gpup2p/snapshot-info with --dir; never /, the current directory,\n"
		"           $HOME or a folder holding one of them\n"
		"  --root DIR: capture from DIR instead of the live system\n\n"
		"Exit: 0 ok, 2 could not write, 3 the root's data is malformed, 64 usage or FILE may not be\n"
		"replaced, 69 tar or PCI unavailable, 77 permission denied.\n");
}

int cmd_snapshot(struct cli *c, int argc, char **argv)
{
	struct gp_err e = { 0 };
	struct gp_snapshot_stats st;
	const char *file = NULL;
	char name[256];
	int force = 0, as_dir = 0, done;

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
	if (gp_root_init(&c->root, c->root_dir, &e) || gp_snapshot_write(&c->root, file, as_dir, force, &st, &e))
		return cli_fail(&e);
	if (!c->quiet) {
		fprintf(stderr, "gpup2p: wrote %s: %d PCI functions, %d files, NVML facts %s\n", file, st.devices,
			st.files, st.gpu_facts ? "recorded" : "unavailable (recorded as such)");
		gp_snapshot_top_name(file, name, sizeof(name));
		if (!as_dir)
			fprintf(stderr, "gpup2p: replay with: tar xzf %s && gpup2p --root %s topo\n", file, name);
	}
	return 0;
}
