/* gpup2p snapshot — capture this machine's state into an archive that --root replays. */
#include <string.h>

#include "cli.h"
#include "gpup2p/snapshot.h"

void help_snapshot(FILE *f)
{
	fprintf(f,
		"usage: gpup2p snapshot [--force] [--dir] [--no-hostname] FILE.tar.gz\n\n"
		"Capture what topo, bar, acs and doctor read (the PCI functions' sysfs files,\n"
		"config spaces and AER counters, IOMMU groups, NUMA nodes, RDMA devices and\n"
		"ports, /proc/cmdline, /proc/modules, the NVIDIA driver's version, parameters\n"
		"and per-GPU information, the nvidia_p2p_* symbols, a few sysctls, which device\n"
		"nodes exist, the host name) and the NVML facts used (recorded in\n"
		"gpup2p/gpu-facts) into a gzip'ed tar archive. Unpack it and pass the folder to\n"
		"--root: topo, bar and doctor report what they reported on this machine. Run as\n"
		"root to include the extended config spaces (ACS, Resizable BAR). Attach the\n"
		"archive to bug reports; it holds no memory contents, and no host name with\n"
		"--no-hostname.\n\n"
		"A root that topo cannot read is refused with topo's error. The snapshot is\n"
		"written beside FILE and renamed into place.\n\n"
		"  --dir    write a directory FILE instead of an archive\n"
		"  --force  replace FILE if it exists and is a snapshot: an archive (gzip)\n"
		"           without --dir, a directory holding gpup2p/snapshot-info with --dir;\n"
		"           never /, the current directory, $HOME or a folder holding one of\n"
		"           them\n"
		"  --no-hostname  leave /proc/sys/kernel/hostname (and random/boot_id) out\n"
		"  --root DIR: capture from DIR instead of the live system\n\n"
		"Exit: 0 ok, 2 could not write, 3 the root's data is malformed, 64 usage or FILE\n"
		"may not be replaced, 69 tar or PCI unavailable, 77 permission denied.\n");
}

int cmd_snapshot(struct cli *c, int argc, char **argv)
{
	struct gp_err e = { 0 };
	struct gp_snapshot_stats st;
	const char *file = NULL;
	char name[256];
	unsigned flags = 0;
	int done;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (cli_common_arg(c, help_snapshot, argc, argv, &i, &done)) {
			if (done >= 0)
				return done;
			continue;
		}
		if (!strcmp(a, "--force")) {
			flags |= GP_SNAP_FORCE;
		} else if (!strcmp(a, "--dir")) {
			flags |= GP_SNAP_DIR;
		} else if (!strcmp(a, "--no-hostname")) {
			flags |= GP_SNAP_NO_HOST;
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
	if (gp_root_init(&c->root, c->root_dir, &e) || gp_snapshot_write(&c->root, file, flags, &st, &e))
		return cli_fail(&e);
	if (!c->quiet) {
		fprintf(stderr, "gpup2p: wrote %s: %d PCI functions, %d files, NVML facts %s\n", file, st.devices,
			st.files, st.gpu_facts ? "recorded" : "unavailable (recorded as such)");
		gp_snapshot_top_name(file, name, sizeof(name));
		if (!(flags & GP_SNAP_DIR))
			fprintf(stderr, "gpup2p: replay with: tar xzf %s && gpup2p --root %s topo\n", file, name);
	}
	return 0;
}
