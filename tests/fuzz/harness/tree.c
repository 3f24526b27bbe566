/* gpup2p — in-process fuzz target "tree": the sysfs tree readers (topo, bar, acs, snapshot, doctor as the
 * commands of cli/ run them) on a fixture tree of build/fixtures mutated by the input (fx.c's records).
 * Checks: exit code, --json/--jsonl strict JSON, nothing written to or copied from the decoy outside the
 * root, topo on a snapshot prints what topo on its source printed.
 *
 * Input: [fixture][command][options][mutation records...]
 *   command % 8: topo, topo --tree, bar, acs, acs --dry-run --disable, snapshot --dir, acs --dry-run
 *   --restore --state ROOT/acs-state, doctor; options bits 0-1: text, --json, --csv, --jsonl; bit 2: --all
 *   (topo --tree, bar, acs --disable: with --mode zero); bit 3: -v; bit 4: -q. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

int cmd_topo(struct cli *c, int argc, char **argv);
int cmd_bar(struct cli *c, int argc, char **argv);
int cmd_acs(struct cli *c, int argc, char **argv);
int cmd_snapshot(struct cli *c, int argc, char **argv);
int cmd_doctor(struct cli *c, int argc, char **argv);

static const char *const names[] = { "dgx-h100", "workstation", "broken-resource", "vmd", "sriov", "acsguard" };
#define NFX (int)(sizeof(names) / sizeof(names[0]))
static struct fz_tree fx[NFX];
static const char *const extra[] = { "acs-state", NULL };
static char snap[4200], state[8300];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_trees_open(fx, names, NFX, extra);
	snprintf(snap, sizeof(snap), "%s/snap", fz_work());
	return 0;
}

/* 1 when a file beneath dir begins with the decoy's bytes (snapshot copied it through a link). */
static int has_decoy(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[4500], b[4096];
	int found = 0;

	while (d && !found && (de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			found = has_decoy(p);
		} else if (S_ISREG(st.st_mode)) {
			int fd = open(p, O_RDONLY);
			ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;

			if (fd >= 0)
				close(fd);
			if (n > 0) {
				b[n] = '\0';
				found = fz_is_decoy(b, (size_t)n);
			}
		}
	}
	if (d)
		closedir(d);
	return found;
}

static void check_json(const char *what, int fmt, int rc)
{
	size_t n;
	const char *o = fz_out(&n), *why;

	if (rc > 1 || (fmt != GP_OUT_JSON && fmt != GP_OUT_JSONL))
		return;
	if (fmt == GP_OUT_JSON) {
		if ((why = fz_bad_json(o, n)))
			fz_fail("json", "%s --json printed no strict JSON: %s", what, why);
		return;
	}
	for (const char *l = o, *e; l < o + n; l = e + 1) {
		if (!(e = memchr(l, '\n', (size_t)(o + n - l))))
			e = o + n;
		if ((why = fz_bad_json(l, (size_t)(e - l))))
			fz_fail("json", "%s --jsonl printed a line that is no strict JSON: %s", what, why);
	}
}

/* topo on the snapshot prints what it printed on the source. */
static void roundtrip(const char *root)
{
	char *argv[] = { "topo", NULL }, *a;
	size_t na, nb;
	int ra, rb;

	ra = fz_cli(cmd_topo, root, GP_OUT_TABLE, 0, 1, argv);
	if (!(a = strdup(fz_out(&na))))
		abort();
	rb = fz_cli(cmd_topo, snap, GP_OUT_TABLE, 0, 1, argv);
	if (ra != rb || strcmp(a, fz_out(&nb)))
		fz_fail("roundtrip", "topo on the source exited %d, on its snapshot %d; the source's output:\n%.1500s", ra,
			rb, a);
	free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int fmts[] = { GP_OUT_TABLE, GP_OUT_JSON, GP_OUT_CSV, GP_OUT_JSONL };
	struct fz_tree *t;
	char *argv[12];
	int argc = 0, cmd, opt, fmt, rc;
	int (*run)(struct cli *, int, char **);

	if (size < 3)
		return 0;
	t = &fx[data[0] % NFX];
	cmd = data[1] % 8;
	opt = data[2];
	fmt = fmts[opt & 3];
	fz_tree_mutate(t, data + 3, size - 3);
	switch (cmd) {
	case 0:
	case 1:
		run = cmd_topo;
		argv[argc++] = "topo";
		if (cmd == 1)
			argv[argc++] = "--tree";
		if (cmd == 1 && (opt & 4))
			argv[argc++] = "--all";
		break;
	case 2:
		run = cmd_bar;
		argv[argc++] = "bar";
		if (opt & 4)
			argv[argc++] = "--all";
		break;
	case 3:
	case 4:
	case 6:
		run = cmd_acs;
		argv[argc++] = "acs";
		if (cmd == 4) {
			argv[argc++] = "--dry-run";
			argv[argc++] = "--disable";
			if (opt & 4) {
				argv[argc++] = "--all";
				argv[argc++] = "--mode";
				argv[argc++] = "zero";
			}
		} else if (cmd == 6) {
			snprintf(state, sizeof(state), "%s/acs-state", t->root);
			argv[argc++] = "--dry-run";
			argv[argc++] = "--restore";
			argv[argc++] = "--state";
			argv[argc++] = state;
		}
		break;
	case 5:
		run = cmd_snapshot;
		fz_rm_rf(snap);
		argv[argc++] = "snapshot";
		argv[argc++] = "--dir";
		argv[argc++] = snap;
		fmt = GP_OUT_TABLE;
		break;
	default:
		run = cmd_doctor;
		argv[argc++] = "doctor";
		if (fmt == GP_OUT_CSV || fmt == GP_OUT_JSONL)
			fmt = GP_OUT_TABLE;
		break;
	}
	argv[argc] = NULL;
	rc = fz_cli(run, t->root, fmt, (opt & 8) ? 1 : (opt & 16) ? -1 : 0, argc, argv);
	check_json(argv[0], fmt, rc);
	if (cmd == 5) {
		if (has_decoy(snap))
			fz_fail("escape", "snapshot copied the decoy outside the root into %s", snap);
		if (rc == 0)
			roundtrip(t->root);
		fz_rm_rf(snap);
	}
	fz_tree_restore(t);
	return 0;
}
