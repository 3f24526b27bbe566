/* Unit tests: reading through a folder opened once (doctor/dir.c) and each RDMA port's files read once
 * for every check (gp_doctor_ib_file) answer what reading each file by its path answers: the same
 * length or errno, the same text, for every buffer size the checks use and around the file's length
 * (-EFBIG), on a copy of the healthy fixture whose first port is planted with what a path read reports
 * (a file missing, a folder where a file was, a NUL in the text, a text longer than a check's buffer,
 * a symlink) and whose counters/ is a file (ENOTDIR for the files under it). */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/rdma.h"
#include "doctor_fx.h"

static char port0[PATH_MAX];   /* the copy's mlx5_0/1, resolved (the folder gp_doctor_ib_port's at names) */

/* Write len bytes of s into the copy's first port as file (relative to the port). */
static void put(const char *file, const char *s, size_t len)
{
	char path[1200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", port0, file);
	if (!(f = fopen(path, "w")) || fwrite(s, 1, len, f) != len) {
		CHECK(0, "%s can be written", path);
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
}

/* The planted port: phys_state gone, link_layer a folder, state with a NUL in it, rate 100 bytes (past
 * rdma.rate's 64, within expect's 128), a symlink "sym" to state, counters/ a file. */
static int plant(const char *root)
{
	char cmd[2400], cls[1024], rate[101];

	snprintf(cls, sizeof(cls), "%s/sys/class/infiniband/mlx5_0/ports/1", root);
	if (!realpath(cls, port0))
		return -1;
	snprintf(cmd, sizeof(cmd), "cd '%s' && rm -f phys_state link_layer && mkdir link_layer && rm -rf counters && "
		 "echo 7 >counters && ln -s state sym", port0);
	if (system(cmd))
		return -1;
	put("state", "4: ACT\0IVE\n", 11);
	memset(rate, 'x', sizeof(rate));
	memcpy(rate, "400 Gb/sec (4X NDR) ", 20);
	rate[99] = '\n';
	put("rate", rate, 100);
	return 0;
}

/* One read both ways: through d (or gp_doctor_ib_file of port p, file f, when d is NULL) and by path. */
static void same(struct gp_doctor_ctx *c, const struct gp_doctor_dir *d, const struct ibport *p, int f,
		 const char *name, size_t n)
{
	char a[256], b[256], path[GP_PATH_MAX + 300];
	long ra, rb;

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	snprintf(path, sizeof(path), "%s/%s", d ? d->path : p->at, name);
	ra = d ? gp_doctor_dir_text(c, d, name, a, n) : gp_doctor_ib_file(c, p, (enum ib_file)f, a, n);
	rb = gp_doctor_read(c, path, b, n);
	CHECK(ra == rb && (ra < 0 || !strcmp(a, b)), "%s (%zu bytes): %s: %ld '%s', by path %ld '%s'", path, n,
	      d ? "through the folder" : "read once", ra, ra < 0 ? "" : a, rb, rb < 0 ? "" : b);
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
					same(c, NULL, &p, f, gp_doctor_ib_file_name((enum ib_file)f), sizes[s]);
		}
	}
	CHECK(seen == 1, "the planted port is among those read (%d)", seen);
}

/* The planted port's folder and its counters/ (a file): through gp_doctor_dir, as by path. */
static void folders(struct gp_doctor_ctx *c)
{
	static const char *const names[] = { "state", "phys_state", "link_layer", "rate", "sym", "counters",
					     "nope", "gid_attrs" };
	struct gp_doctor_dir port, sub[3];
	const char *at = port0 + strlen(c->root->dir);
	char gone[GP_PATH_MAX];

	gp_doctor_dir_open(c, &port, NULL, at);
	CHECK(port.fd >= 0 && port.n == 7, "%s opened and listed (%d, %d entries)", at, port.fd, port.n);
	CHECK(gp_doctor_dir_type(&port, "state") == DT_REG && gp_doctor_dir_type(&port, "link_layer") == DT_DIR &&
	      gp_doctor_dir_type(&port, "sym") == DT_LNK && gp_doctor_dir_type(&port, "phys_state") == -1,
	      "the listing's types: state a file, link_layer a folder, sym a link, phys_state none");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (size_t n = 1; n <= 128; n *= 2)
			same(c, &port, NULL, 0, names[i], n);
	gp_doctor_dir_open(c, &sub[0], &port, "counters");   /* a file */
	gp_doctor_dir_open(c, &sub[1], &port, "nope");       /* not listed: not opened */
	gp_doctor_dir_open(c, &sub[2], &port, "gid_attrs");  /* a folder */
	CHECK(sub[0].fd == -ENOTDIR && sub[1].fd == -ENOENT && sub[2].fd >= 0, "counters (a file) %d, nope %d, "
	      "gid_attrs %d", sub[0].fd, sub[1].fd, sub[2].fd);
	for (int k = 0; k < 3; k++) {
		same(c, &sub[k], NULL, 0, "symbol_error", 64);
		same(c, &sub[k], NULL, 0, "types", 64);
		gp_doctor_dir_close(&sub[k]);
	}
	gp_doctor_dir_close(&port);
	snprintf(gone, sizeof(gone), "%s/nothing/here", at);  /* a folder not there, opened by path */
	gp_doctor_dir_open(c, &port, NULL, gone);
	CHECK(port.fd == -ENOENT, "a missing folder: %d", port.fd);
	same(c, &port, NULL, 0, "state", 64);
	gp_doctor_dir_close(&port);
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
		folders(&c);
		done(&x, &c);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		printf("# %s left behind\n", tmp);
	return unit_done();
}
