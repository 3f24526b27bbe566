/* gpup2p snapshot — capture this machine's state into an archive that --root replays. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gpup2p/snapshot.h"

struct snapshot_opts {
	int force, dir, no_host;
	const char *file;
};

#define O(f) (long)offsetof(struct snapshot_opts, f)
static const struct opt snapshot_opts[] = {
	{ "--dir", NULL, NULL, OPT_FLAG, O(dir), 1, .help = "write a directory FILE instead of an archive" },
	{ "--force", NULL, NULL, OPT_FLAG, O(force), 1,
	  .help = "replace FILE if it exists and is a snapshot: an archive (gzip)\nwithout --dir, a directory holding "
		  "gpup2p/snapshot-info with --dir;\nnever /, the current directory, $HOME or a folder holding one of\n"
		  "them" },
	{ "--no-hostname", NULL, NULL, OPT_FLAG, O(no_host), 1,
	  .help = "leave /proc/sys/kernel/hostname (and random/boot_id) out" },
	{ 0 },
};
#undef O

static int snapshot_file(const char *cmd, const char *arg, void *ctx)
{
	struct snapshot_opts *o = ctx;

	if (o->file)
		return cli_usage(cmd, "one FILE only");
	o->file = arg;
	return 0;
}

const struct opts_cmd opts_snapshot = {
	.name = "snapshot", .opts = snapshot_opts, .col = 11, .help = help_snapshot,
	.globals = "--root DIR: capture from DIR instead of the live system", .positional = snapshot_file,
	.word_flags = OPT_FILE, .word_ext = "tar.gz",
};

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
		"written beside FILE and renamed into place.\n\n");
	opts_help(f, &opts_snapshot);
	fprintf(f,
		"\nExit: 0 ok, 2 could not write, 3 the root's data is malformed, 64 usage or FILE\n"
		"may not be replaced, 69 PCI unavailable, 77 permission denied.\n");
}

/* libcore says what stands in the way (its errnum which); the option that would change it is ours */
static int write_failed(const struct gp_err *e)
{
	const char *hint = e->cls != GP_E_USAGE ? NULL
			   : e->errnum == EEXIST ? "; use --force to replace it"
			   : e->errnum == EISDIR ? " (a snapshot directory is replaced with --dir)"
			   : e->errnum == ENOTDIR ? " (without --dir an archive is written)" : NULL;

	return hint ? cli_error(EX_USAGE_, NULL, "%s%s", e->msg, hint) : cli_fail(e);
}

/* On a terminal: how far the capture is (a host with thousands of SR-IOV functions takes seconds,
 * --dir tens of seconds), on one line of stderr cleared at the end. */
static void progress(int done, int total)
{
	fprintf(stderr, "\r\033[Kgpup2p: snapshot: %d of %d PCI functions", done, total);
	fflush(stderr);
}

int cmd_snapshot(struct cli *c, int argc, char **argv)
{
	struct gp_err e = { 0 };
	struct gp_snapshot_stats st;
	struct snapshot_opts o = { 0 };
	const char *file;
	char name[256];
	unsigned flags;
	int rc;

	if ((rc = opts_parse(&opts_snapshot, c, argc, argv, &o)) >= 0)
		return rc;
	file = o.file;
	flags = (o.force ? GP_SNAP_FORCE : 0) | (o.dir ? GP_SNAP_DIR : 0) | (o.no_host ? GP_SNAP_NO_HOST : 0);
	if (!file)
		return cli_usage("snapshot", "give the archive to write, e.g. gpup2p snapshot myhost.tar.gz");
	if (gp_root_init(&c->root, c->root_dir, &e))
		return cli_fail(&e);
	if (!c->quiet && isatty(STDERR_FILENO))
		gp_snapshot_set_progress(progress);
	rc = gp_snapshot_write(&c->root, file, flags, &st, &e);
	if (!c->quiet && isatty(STDERR_FILENO)) {
		gp_snapshot_set_progress(NULL);
		fprintf(stderr, "\r\033[K");
	}
	if (rc)
		return write_failed(&e);
	if (!c->quiet) {
		fprintf(stderr, "gpup2p: wrote %s: %d PCI functions, %d files, NVML facts %s\n", file, st.devices,
			st.files, st.gpu_facts ? "recorded" : "unavailable (recorded as such)");
		gp_snapshot_top_name(file, name, sizeof(name));
		if (!(flags & GP_SNAP_DIR))
			fprintf(stderr, "gpup2p: replay with: tar xzf %s && gpup2p --root %s topo\n", file, name);
	}
	return 0;
}
