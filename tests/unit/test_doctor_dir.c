/* Unit tests: each RDMA port's files read once for every check (gp_doctor_ib_file), through the port's
 * folder opened once (gp_root_dir_open: its own cases are in test_root_dir), answer what reading each
 * file by its path answers: the same length or errno, the same text, for every buffer size the checks
 * use and around the file's length (-EFBIG), on a copy of the healthy fixture whose first port is
 * planted with what a path read reports (a file missing, a folder where a file was, a NUL in the text,
 * a text longer than a check's buffer, a symlink) and whose counters/ is a file (ENOTDIR for the files
 * under it). */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/rdma.h"
#include "doctor_fx.h"
#include "plant_port.h"

/* One read both ways: gp_doctor_ib_file of port p, file f, and by path. */
static void same(struct gp_doctor_ctx *c, const struct ibport *p, int f, const char *name, size_t n)
{
	char a[256], b[256], path[GP_PATH_MAX + 300];
	long ra, rb;

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	snprintf(path, sizeof(path), "%s/%s", p->at, name);
	ra = gp_doctor_ib_file(c, p, (enum ib_file)f, a, n);
	rb = gp_doctor_read(c, path, b, n);
	CHECK(ra == rb && (ra < 0 || !strcmp(a, b)), "%s (%zu bytes): read once: %ld '%s', by path %ld '%s'", path, n,
	      ra, ra < 0 ? "" : a, rb, rb < 0 ? "" : b);
}

/* Every file of every port, read once, for each size a check uses and around each file's length. */
static void ports(struct gp_doctor_ctx *c)
{
	static const size_t sizes[] = { 1, 2, 5, 8, 9, 10, 11, 12, 20, 21, 32, 64, 99, 100, 101, 128 };
	int seen = 0;

	for (int i = 0; i < gp_doctor_ib_count(c); i++) {
		char **names;
		int np = gp_doctor_ib_ports(c, i, &names);

		for (int k = 0; k < np; k++) {
			struct ibport p;

			gp_doctor_ib_port(c, i, k, &p);
			seen += !strcmp(p.at, port0 + strlen(c->root->dir));
			for (int f = 0; f < IBF_N; f++)
				for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
					same(c, &p, f, gp_doctor_ib_file_name((enum ib_file)f), sizes[s]);
		}
	}
	CHECK(seen == 1, "the planted port is among those read (%d)", seen);
}

int main(void)
{
	char tmp[] = "/tmp/gpup2p-dir-XXXXXX", root[1100], cmd[2400];
	struct fx x;
	struct gp_doctor_ctx c;

	CHECK(mkdtemp(tmp) != NULL, "a temporary folder");
	snprintf(root, sizeof(root), "%s/healthy", tmp);
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", unit_fixture(D("healthy")), root);
	CHECK(!system(cmd) && !plant(root), "a copy of the healthy fixture, its first port planted (%s)", root);
	if (!run_sel(root, NULL, "rdma.port", NULL, &x, &c)) {
		ports(&c);
		done(&x, &c);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		printf("# %s left behind\n", tmp);
	return unit_done();
}
