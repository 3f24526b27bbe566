/* Unit tests: listing the GPUs through libcuda and NVML (the test doubles tests/fakecuda and
 * tests/fakenvml, built next to the fixtures): every GPU of a machine with more than 64, PCI bus order by
 * number with Intel VMD domains (5 to 8 hex digits), and each CUDA ordinal kept with its own address. */
#include <dlfcn.h>
#include <stdint.h>

#include "gpup2p/cuda.h"
#include "gpup2p/gpu.h"
#include "unit.h"

static const char *double_path(const char *rel)
{
	static char path[1024];
	const char *fx = getenv("GPUP2P_FIXTURES");

	snprintf(path, sizeof(path), "%s/../tests/%s", fx ? fx : "build/fixtures", rel);
	return path;
}

/* 70 GPUs: every one listed, in bus order, each CUDA ordinal with the bus id the double gives it
 * (device d of n at domain:bus = n - d, past 15 GPUs). */
static void cuda_many(void)
{
	struct gp_cuda c;
	struct gp_err e = { 0 };
	int rc, order_ok = 1, seen_ok = 1;
	unsigned char seen[70] = { 0 };

	setenv("FAKECUDA_GPUS", "70", 1);
	rc = gp_cuda_open(&c, &e);
	CHECK(rc == 0 && c.n == 70, "CUDA sees 70 GPUs: all 70 listed (rc %d, %d: %s)", rc, rc ? 0 : c.n, e.msg);
	if (rc)
		return;
	for (int i = 0; i < c.n; i++) {
		int o = c.gpu[i].ordinal, k = 70 - o;
		char want[GP_BDF_LEN], name[32];

		snprintf(want, sizeof(want), "%04x:%02x:00.0", k >> 8, k & 0xff);
		snprintf(name, sizeof(name), "Fake GPU %d", o);
		if (o < 0 || o >= 70 || seen[o]++ || strcmp(c.gpu[i].bdf, want) || strcmp(c.gpu[i].name, name))
			seen_ok = 0;
		/* reverse CUDA order: bus order is ordinal 69, 68, ..., 0 */
		if (o != 69 - i)
			order_ok = 0;
	}
	CHECK(seen_ok, "each of the 70 CUDA ordinals once, with its own name and bus id");
	CHECK(order_ok, "in PCI bus order (GPU0 = CUDA 69 at 0000:01:00.0, GPU69 = CUDA 0 at 0000:46:00.0)");
	CHECK(gp_cuda_peer(&c, 69, 65, 1, &e) == 0 && gp_cuda_peer(&c, 65, 69, 1, &e) == 0 &&
	      gp_cuda_peer(&c, 69, 65, 0, &e) == 0, "peer access between GPU69 and GPU65 on and off (%s)", e.msg);
	gp_cuda_close(&c);
	CHECK(c.gpu == NULL && c.n == 0, "closed");
}

/* Bus ids with domains of 4, 5 and 8 digits, upper case, listed out of order: sorted by number (as
 * strings, "10000:" would come before "2000:"), each ordinal keeping its address. */
static void cuda_vmd(void)
{
	static const struct { const char *bdf; int ordinal; } want[] = {
		{ "0000:3b:00.0", 3 }, { "0000:3b:00.1", 1 }, { "2000:01:00.0", 2 }, { "10000:e0:00.0", 0 },
		{ "1000b:00:00.0", 4 },
	};
	struct gp_cuda c;
	struct gp_err e = { 0 };
	int rc;

	setenv("FAKECUDA_GPUS", "5", 1);
	setenv("FAKECUDA_BUSIDS", "10000:E0:00.0,0000:3B:00.1,2000:01:00.0,0000:3B:00.0,0001000B:00:00.0", 1);
	rc = gp_cuda_open(&c, &e);
	CHECK(rc == 0 && c.n == 5, "five GPUs, two behind Intel VMD domains (rc %d: %s)", rc, e.msg);
	if (rc == 0) {
		for (int i = 0; i < 5; i++) {
			char name[32];

			snprintf(name, sizeof(name), "Fake GPU %d", want[i].ordinal);
			CHECK(!strcmp(c.gpu[i].bdf, want[i].bdf) && c.gpu[i].ordinal == want[i].ordinal &&
			      !strcmp(c.gpu[i].name, name), "GPU%d = CUDA %d at %s (got CUDA %d at %s, %s)", i, want[i].ordinal,
			      want[i].bdf, c.gpu[i].ordinal, c.gpu[i].bdf, c.gpu[i].name);
		}
		gp_cuda_close(&c);
	}
	setenv("FAKECUDA_GPUS", "2", 1);
	setenv("FAKECUDA_BUSIDS", "0000:3b:00.0,0000:3b:zz.0", 1);
	memset(&e, 0, sizeof(e));
	rc = gp_cuda_open(&c, &e);
	CHECK(rc < 0 && e.cls == GP_E_DATA && strstr(e.msg, "'0000:3b:zz.0'") && !strchr(e.msg, '\n'),
	      "a bus id that is no PCI address: data error naming it (rc %d: %s)", rc, e.msg);
	unsetenv("FAKECUDA_BUSIDS");
}

/* NVML with 64 GPUs: all read; with more: an error saying how many, not the first 64. */
static void nvml_many(void)
{
	static struct gp_gpu_facts f;
	struct gp_err e = { 0 };
	/* loaded by path first: its soname makes gpup2p's dlopen("libnvidia-ml.so.1") find this one */
	void *lib = dlopen(double_path("fakenvml/libnvidia-ml.so.1"), RTLD_NOW | RTLD_GLOBAL);
	int rc, distinct = 1;

	CHECK(lib != NULL, "the NVML test double loads (%s)", lib ? "" : dlerror());
	if (!lib)
		return;
	setenv("FAKENVML_GPUS", "64", 1);
	rc = gp_gpu_nvml_read(&f, 0, &e);
	CHECK(rc == 0 && f.available && f.n == 64, "NVML with 64 GPUs: all 64 read (rc %d, n %d: %s %s)", rc, f.n, e.msg,
	      f.why);
	for (int i = 0; i < f.n; i++)
		for (int j = i + 1; j < f.n; j++)
			distinct &= strcmp(f.gpus[i].bdf, f.gpus[j].bdf) != 0;
	CHECK(distinct && f.n == 64 && !strcmp(f.gpus[63].bdf, "0000:40:00.0"), "each with its own address (last %s)",
	      f.n ? f.gpus[f.n - 1].bdf : "-");
	for (int i = 0; i < 2; i++) {
		const char *n = i ? "300" : "65";

		setenv("FAKENVML_GPUS", n, 1);
		memset(&e, 0, sizeof(e));
		rc = gp_gpu_nvml_read(&f, 0, &e);
		CHECK(rc < 0 && e.cls == GP_E_DATA && strstr(e.msg, n) && strstr(e.msg, "64") && f.n == 0,
		      "NVML with %s GPUs: a data error saying so, not the first 64 (rc %d, n %d: %s)", n, rc, f.n, e.msg);
	}
	unsetenv("FAKENVML_GPUS");
	dlclose(lib);
}

int main(void)
{
	setenv("GPUP2P_LIBCUDA", double_path("fakecuda/libcuda.so.1"), 1);
	unsetenv("FAKECUDA_BUSIDS");
	unsetenv("CUDA_VISIBLE_DEVICES");
	cuda_many();
	cuda_vmd();
	nvml_many();
	return unit_done();
}
