/* Unit tests: a folder opened and listed once (gp_root_dir_open_in, compact or not) and its files read
 * through it (gp_root_dir_read_text, gp_root_dir_read_alloc) answer what reading each file by its path
 * answers: the same length or errno, the same text, for buffer sizes around each file's length
 * (-EFBIG), on a copy of the healthy fixture whose first RDMA port is planted with what a path read
 * reports (a file missing, a folder where a file was, a NUL in the text, a text longer than a buffer,
 * a symlink) and whose counters/ is a file (ENOTDIR for the files under it). A name the listing lacks
 * is asked of the trace, never opened. (Moved here from test_doctor_dir with doctor/dir.c.) */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <unistd.h>

#include "gpup2p/root.h"
#include "plant_port.h"

static char asked[8][GP_PATH_MAX]; /* the last paths the trace was told of */
static int nasked;

static void trace(const char *path, int err, void *arg)
{
	(void)err;
	(void)arg;
	snprintf(asked[nasked++ % 8], sizeof(asked[0]), "%s", path);
}

/* One read both ways, through d (text, and whole when n is 64) and by path. */
static void same(const struct gp_root *r, const struct gp_root_dir *d, const char *name, size_t n)
{
	char a[256], b[256], path[GP_PATH_MAX + 300], *wa = NULL, *wb = NULL;
	ssize_t ra, rb;

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	snprintf(path, sizeof(path), "%s/%s", d->path, name);
	ra = gp_root_dir_read_text(r, d, name, a, n);
	rb = gp_root_read_text(r, path, b, n);
	CHECK(ra == rb && (ra < 0 || !strcmp(a, b)), "%s (%zu bytes): through the folder %zd '%s', by path %zd '%s'",
	      path, n, ra, ra < 0 ? "" : a, rb, rb < 0 ? "" : b);
	if (n != 64)
		return;
	ra = gp_root_dir_read_alloc(r, d, name, &wa, n);
	rb = gp_root_read_alloc(r, path, &wb, n);
	CHECK(ra == rb && (ra < 0 ? !wa : wa && wb && !memcmp(wa, wb, (size_t)ra + 1)),
	      "%s (at most %zu bytes): read whole through the folder %zd, by path %zd", path, n, ra, rb);
	free(wa);
	free(wb);
}

/* The planted port's folder and its counters/ (a file): through the folder, as by path. */
static void folders(const struct gp_root *r, unsigned flags)
{
	static const char *const names[] = { "state", "phys_state", "link_layer", "rate", "sym", "counters",
					     "nope", "gid_attrs" };
	struct gp_root_dir port, sub[3], deep;
	const char *at = port0 + strlen(r->dir), *how = flags & GP_ROOT_DIR_COMPACT ? "compact" : "entries";
	char gone[GP_PATH_MAX], want[GP_PATH_MAX + 8];

	CHECK(gp_root_dir_open_in(r, &port, NULL, at, flags) == 0, "%s: %s opened", how, at);
	CHECK(port.fd >= 0 && port.n == 7, "%s: %s opened and listed (%d, %d entries)", how, at, port.fd, port.n);
	CHECK(flags & GP_ROOT_DIR_COMPACT ? port.names && !port.ents && !strcmp(port.names[0], "counters")
					  : !port.names && port.ents, "%s: the listing kept as asked", how);
	CHECK(gp_root_dir_type(&port, "state") == DT_REG && gp_root_dir_type(&port, "link_layer") == DT_DIR &&
	      gp_root_dir_type(&port, "sym") == DT_LNK && gp_root_dir_type(&port, "phys_state") == -1 &&
	      gp_root_dir_type(&port, "zzz") == -1 && gp_root_dir_type(&port, "aaa") == -1,
	      "%s: the listing's types: state a file, link_layer a folder, sym a link, phys_state none", how);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (size_t n = 1; n <= 128; n *= 2)
			same(r, &port, names[i], n);
	for (size_t n = 98; n <= 102; n++)
		same(r, &port, "rate", n);
	/* a name not listed: told to the trace, not opened */
	nasked = 0;
	gp_root_set_trace(trace, NULL);
	CHECK(gp_root_dir_read_text(r, &port, "phys_state", gone, 64) == -ENOENT, "%s: not listed: -ENOENT", how);
	gp_root_set_trace(NULL, NULL);
	snprintf(want, sizeof(want), "%s/phys_state", at);
	CHECK(nasked == 1 && !strcmp(asked[0], want), "%s: not listed: the trace told of %s once (%d)", how, want,
	      nasked);
	gp_root_dir_open_in(r, &sub[0], &port, "counters", flags);   /* a file */
	nasked = 0;
	gp_root_set_trace(trace, NULL);
	gp_root_dir_open_in(r, &sub[1], &port, "nope", flags);       /* not listed: not opened */
	gp_root_set_trace(NULL, NULL);
	CHECK(nasked == 0, "%s: a folder its parent's listing lacks is not asked for (%d)", how, nasked);
	gp_root_dir_open_in(r, &sub[2], &port, "gid_attrs", flags);  /* a folder */
	CHECK(sub[0].fd == -ENOTDIR && sub[1].fd == -ENOENT && sub[2].fd >= 0, "%s: counters (a file) %d, nope %d, "
	      "gid_attrs %d", how, sub[0].fd, sub[1].fd, sub[2].fd);
	for (int k = 0; k < 3; k++) {
		same(r, &sub[k], "symbol_error", 64);
		same(r, &sub[k], "types", 64);
	}
	/* beneath a folder that is a file: the same errno, no open */
	nasked = 0;
	gp_root_set_trace(trace, NULL);
	CHECK(gp_root_dir_open_in(r, &deep, &sub[0], "deeper", flags) == 0 && deep.fd == -ENOTDIR && deep.n == -1 &&
	      !strncmp(deep.path, sub[0].path, strlen(sub[0].path)) &&
	      !strcmp(deep.path + strlen(sub[0].path), "/deeper"), "%s: a folder beneath a file: %d", how, deep.fd);
	gp_root_set_trace(NULL, NULL);
	CHECK(nasked == 0, "%s: beneath a file: nothing asked (%d)", how, nasked);
	gp_root_dir_close(&deep);
	for (int k = 0; k < 3; k++)
		gp_root_dir_close(&sub[k]);
	gp_root_dir_close(&port);
	gp_root_dir_close(&port); /* twice: harmless */
	snprintf(gone, sizeof(gone), "%s/nothing/here", at);  /* a folder not there, opened by path */
	gp_root_dir_open_in(r, &port, NULL, gone, flags);
	CHECK(port.fd == -ENOENT && gp_root_dir_gone(&port), "%s: a missing folder: %d", how, port.fd);
	same(r, &port, "state", 64);
	gp_root_dir_close(&port);
}

int main(void)
{
	char tmp[] = "/tmp/gpup2p-rdir-XXXXXX", root[1100], cmd[2400];
	struct gp_err e = { 0 };
	struct gp_root r;

	CHECK(mkdtemp(tmp) != NULL, "a temporary folder");
	snprintf(root, sizeof(root), "%s/healthy", tmp);
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", unit_fixture("doctor/healthy"), root);
	CHECK(!system(cmd) && !plant(root), "a copy of the healthy fixture, its first port planted (%s)", root);
	if (gp_root_init(&r, root, &e)) {
		CHECK(0, "the copy opens as a root: %s", e.msg);
	} else {
		folders(&r, 0);
		folders(&r, GP_ROOT_DIR_COMPACT);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		printf("# %s left behind\n", tmp);
	return unit_done();
}
