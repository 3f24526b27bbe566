/* Unit tests: what doctor's formats for machines take from libcore: which findings fit a size
 * bound (--json), the boot id and the GPUs' UUIDs (--json, --prometheus). */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/check.h"
#include "fx.h"
#include "gpup2p/root.h"

/* Findings of these severities (no text: gp_doctor_fit looks at severity and size only). */
static void list_of(struct gp_findings *l, struct gp_finding *v, const enum gp_sev *sev, int n)
{
	memset(l, 0, sizeof(*l));
	memset(v, 0, sizeof(*v) * (size_t)n);
	for (int i = 0; i < n; i++)
		v[i].sev = sev[i];
	l->v = v;
	l->n = n;
}

static const char *kept(const unsigned char *keep, int n)
{
	static char s[64];

	for (int i = 0; i < n; i++)
		s[i] = keep[i] ? '1' : '0';
	s[n] = '\0';
	return s;
}

static void fit(void)
{
	/* report order: ok, error, skipped, warning, info, unknown, ok */
	static const enum gp_sev sev[] = { GP_SEV_OK, GP_SEV_ERROR, GP_SEV_SKIPPED, GP_SEV_WARNING, GP_SEV_INFO,
					   GP_SEV_UNKNOWN, GP_SEV_OK };
	size_t size[7] = { 10, 10, 10, 10, 10, 10, 10 };
	struct gp_finding v[7];
	struct gp_findings l;
	unsigned char keep[7];
	int left;

	list_of(&l, v, sev, 7);
	left = gp_doctor_fit(&l, size, 70, keep);
	CHECK(left == 0 && !strcmp(kept(keep, 7), "1111111"), "everything fits: all kept (%d, %s)", left, kept(keep, 7));
	/* 40 bytes: error, warning, unknown, info (4 x 10) */
	left = gp_doctor_fit(&l, size, 40, keep);
	CHECK(left == 3 && !strcmp(kept(keep, 7), "0101110"), "40 bytes: error, warning, unknown, info (%d, %s)", left,
	      kept(keep, 7));
	left = gp_doctor_fit(&l, size, 39, keep);
	CHECK(left == 4 && !strcmp(kept(keep, 7), "0101010"), "39 bytes: the info is out too (%d, %s)", left, kept(keep, 7));
	/* a big error that does not fit: nothing less urgent slips in after it */
	size[1] = 100;
	left = gp_doctor_fit(&l, size, 60, keep);
	CHECK(left == 7 && !strcmp(kept(keep, 7), "0000000"), "the first error does not fit: nothing kept (%d, %s)", left,
	      kept(keep, 7));
	size[1] = 10;
	/* of two ok findings, report order decides */
	left = gp_doctor_fit(&l, size, 55, keep);
	CHECK(left == 2 && !strcmp(kept(keep, 7), "1101110"), "55 bytes: the first ok kept, the second and the skipped "
	      "not (%d, %s)", left, kept(keep, 7));
	left = gp_doctor_fit(&l, size, 0, keep);
	CHECK(left == 7 && !strcmp(kept(keep, 7), "0000000"), "no room: none (%d)", left);
}

/* Write text to root/path (creating the folders). */
static int put(const char *root, const char *path, const char *text)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, path);
	*strrchr(p, '/') = '\0';
	if (gp_mkdir_p(p))
		return -1;
	snprintf(p, sizeof(p), "%s%s", root, path);
	if (!(f = fopen(p, "w")))
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void ids(void)
{
	static struct fx x;
	char dir[] = "/tmp/gpup2p-fleet-XXXXXX", cmd[4096], buf[96];
	struct gp_doctor_ctx c;
	struct gp_err e = { 0 };

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", unit_fixture("doctor/healthy"), dir);
	/* GPU0's information as the driver writes it (550.54: the UUID after the model); GPU1's has none */
	if (system(cmd) ||
	    put(dir, "/proc/driver/nvidia/gpus/0000:13:00.0/information", "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   "
		"\t\t 557\nGPU UUID: \t GPU-5e2a7f3c-1b0d-4c8e-9a61-0f3b2d4e6a18\nVideo BIOS: \t 96.00.99.00.01\nBus "
		"Type: \t PCIe\nDevice Minor: \t 0\nGPU Excluded:\t No\n") ||
	    put(dir, "/proc/sys/kernel/random/boot_id", "0c5fd4a2-7d3b-4f6e-8a1c-3b9e2d7f6a05\n") ||
	    fx_load(&x, dir, NULL, 0, 0)) {
		CHECK(0, "the fixture copy in %s", dir);
		return;
	}
	if (gp_doctor_ctx_init(&c, &x.r, &x.p, &x.f, &x.t, &e)) {
		CHECK(0, "doctor context: %s", e.msg);
		fx_unload(&x);
		return;
	}
	CHECK_STR(gp_doctor_gpu_uuid(&c, 0, buf, sizeof(buf)), "GPU-5e2a7f3c-1b0d-4c8e-9a61-0f3b2d4e6a18",
		  "GPU0: the UUID of its information file");
	CHECK(!gp_doctor_gpu_uuid(&c, 1, buf, sizeof(buf)), "GPU1: no UUID line, NULL");
	CHECK(!gp_doctor_gpu_uuid(&c, 0, buf, 20), "a buffer too short for it: NULL, never cut");
	CHECK(!gp_doctor_gpu_uuid(&c, c.topo->ngpu, buf, sizeof(buf)), "no such GPU (a NIC's index): NULL");
	CHECK_STR(gp_doctor_boot_id(&c), "0c5fd4a2-7d3b-4f6e-8a1c-3b9e2d7f6a05", "boot id: read, newline removed");
	gp_doctor_ctx_free(&c);
	/* not a UUID: null, never passed on as if it were one */
	put(dir, "/proc/sys/kernel/random/boot_id", "0c5fd4a2-7d3b-4f6e-8a1c-3b9e2d7f6a0\n");
	if (!gp_doctor_ctx_init(&c, &x.r, &x.p, &x.f, &x.t, &e)) {
		CHECK(!gp_doctor_boot_id(&c), "a boot id one digit short: NULL");
		gp_doctor_ctx_free(&c);
	}
	fx_unload(&x);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "clean up");
}

int main(void)
{
	fit();
	ids();
	return unit_done();
}
