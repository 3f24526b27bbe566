/* gpup2p unit tests — doctor's prefetch (doctor/prefetch.c): which slow sources start on threads for
 * which selection, that the checks use the prefetched answers instead of reading again, and --no-cuda. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpup2p/cuda.h"
#include "gpup2p/gpu.h"
#include "unit.h"
#include "doctor_fx.h"

static unsigned char on[512];

static void sel(const char *only)
{
	struct gp_err e = { 0 };

	CHECK(gp_doctor_select(on, only, NULL, &e) == 0, "select %s: %s", only ? only : "all", e.msg);
}

/* Lines of the fakecuda marker file equal to what. */
static int marker_count(const char *path, const char *what)
{
	char line[64];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, what, strlen(what)) && line[strlen(what)] == '\n';
	fclose(f);
	return n;
}

/* What starts for which selection. */
static void starts(void)
{
	struct gp_root live = { .live = 1 }, off = { .live = 0 };
	struct gp_doctor_pre *p;
	struct gp_cuda_probe *cu;
	double ms_cu, ms_sym;
	int has = 42;

	cuda_lib(NULL, NULL);
	sel(NULL);
	CHECK(gp_doctor_prefetch(&off, on, 0, 0) == NULL, "offline root: nothing prefetched");

	sel("driver.cuda_init");
	p = gp_doctor_prefetch(&live, on, 0, 0);
	CHECK(p != NULL, "driver.cuda_init selected, live: a prefetch");
	cu = gp_doctor_pre_cuda(p);
	CHECK(cu && cu->loaded && cu->init == 0 && cu->devices == 2, "libcuda probed on the thread: loaded %d, cuInit %d, "
	      "%d devices", cu ? cu->loaded : -1, cu ? cu->init : -1, cu ? cu->devices : -1);
	free(cu);
	cu = gp_doctor_pre_cuda(p);
	CHECK(cu && cu->devices == 2, "asked again: the same answer, no second thread");
	free(cu);
	CHECK(gp_doctor_pre_kallsyms(p, GP_DOCTOR_P2P_SYM, &has) == 0 && has == 42,
	      "kmod.nv_p2p_api not selected: kallsyms not prefetched");
	gp_doctor_prefetch_ms(p, &ms_cu, &ms_sym);
	CHECK(ms_cu >= 0 && ms_sym == -1, "thread times: libcuda %.2f ms, kallsyms %.0f (not run)", ms_cu, ms_sym);
	gp_doctor_prefetch_free(p);

	p = gp_doctor_prefetch(&live, on, 0, 1);
	CHECK(gp_doctor_pre_cuda(p) == NULL, "--no-cuda: libcuda not prefetched");
	gp_doctor_prefetch_free(p);

	sel("p2p.verify");
	p = gp_doctor_prefetch(&live, on, 0, 0);
	CHECK(gp_doctor_pre_cuda(p) == NULL, "an active check without --active: libcuda not prefetched");
	gp_doctor_prefetch_free(p);
	p = gp_doctor_prefetch(&live, on, 1, 0);
	cu = gp_doctor_pre_cuda(p);
	CHECK(cu && cu->loaded, "an active check with --active: libcuda prefetched");
	free(cu);
	gp_doctor_prefetch_free(p);

	sel("kmod.nv_p2p_api");
	p = gp_doctor_prefetch(&live, on, 0, 0);
	CHECK(gp_doctor_pre_cuda(p) == NULL, "kmod.nv_p2p_api alone: libcuda not prefetched");
	CHECK(gp_doctor_pre_kallsyms(p, "some_other_symbol", &has) == 0, "only nvidia_p2p_get_pages is prefetched");
	CHECK(gp_doctor_pre_kallsyms(p, GP_DOCTOR_P2P_SYM, &has) == 1 &&
	      has == gp_doctor_kallsyms_scan(&live, GP_DOCTOR_P2P_SYM),
	      "kallsyms prefetched: the same answer as reading it here (%d)", has);
	gp_doctor_prefetch_free(p); /* joined already: free only */

	sel(NULL);
	p = gp_doctor_prefetch(&live, on, 0, 0);
	gp_doctor_prefetch_free(p); /* never joined: free waits for both threads */
	CHECK(1, "a prefetch freed unjoined");
}

/* driver.cuda_init takes the prefetched probe: cuInit once in the process for the run. */
static struct gp_doctor_pre *pending;

static void cuda_pre(struct fx *x, struct gp_doctor_ctx *c)
{
	cuda_ok(x, c);
	c->pre = pending;
}

static void no_cuda(struct fx *x, struct gp_doctor_ctx *c)
{
	cuda_ok(x, c);
	c->no_cuda = 1;
}

static void uses_prefetch(void)
{
	struct gp_root live = { .live = 1 };
	struct fx x;
	struct gp_doctor_ctx c;
	char marker[] = "/tmp/gpup2p-fakecuda-XXXXXX";
	const struct gp_finding *f = NULL;
	int fd = mkstemp(marker), before;

	CHECK(fd >= 0, "marker file");
	if (fd < 0)
		return;
	close(fd);
	setenv("FAKECUDA_MARKER", marker, 1);
	cuda_lib(NULL, NULL);
	sel("driver.cuda_init");
	pending = gp_doctor_prefetch(&live, on, 0, 0);
	CHECK(pending != NULL, "prefetch started");
	gp_doctor_prefetch_free(NULL);
	CHECK(gp_doctor_pre_cuda(NULL) == NULL, "no prefetch: no probe");
	free(gp_doctor_pre_cuda(pending)); /* joined here, so the marker below is complete */
	before = marker_count(marker, "cuInit");
	if (!run_sel(D("healthy"), cuda_pre, "driver.cuda_init", NULL, &x, &c)) {
		for (int i = 0; i < c.out.n; i++)
			if (!strcmp(c.out.v[i].check->id, "driver.cuda_init"))
				f = &c.out.v[i];
		CHECK(f && f->sev == GP_SEV_OK && strstr(f->message, "cuInit succeeded: 2 devices"),
		      "driver.cuda_init from the prefetched probe: %s", f ? f->message : "no finding");
		CHECK(c.src.cuda == 1, "the report's sources say libcuda loaded");
		done(&x, &c); /* frees the prefetch */
	}
	CHECK(before == 1 && marker_count(marker, "cuInit") == 1, "cuInit called once (the prefetch's), not again "
	      "by the check: %d then %d", before, marker_count(marker, "cuInit"));
	unlink(marker);
	unsetenv("FAKECUDA_MARKER");
}

/* --no-cuda: every check that asks libcuda says skipped, the others run, nothing loads libcuda. */
static void skips_cuda(void)
{
	static const char *const ids[] = { "driver.cuda_init", "p2p.access", "p2p.nvml_status" };
	struct fx x;
	struct gp_doctor_ctx c;

	cuda_lib("/nonexistent/libcuda.so.1", NULL); /* loading it would show as "could not be loaded" */
	if (run_on(D("healthy"), no_cuda, &x, &c))
		return;
	for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
		const struct gp_finding *f = NULL;

		for (int i = 0; i < c.out.n; i++)
			if (!strcmp(c.out.v[i].check->id, ids[k]))
				f = &c.out.v[i];
		CHECK(f && f->sev == GP_SEV_SKIPPED && strstr(f->message, "--no-cuda"), "--no-cuda: %s skipped (%s)", ids[k],
		      f ? f->message : "no finding");
	}
	CHECK(!c.cuda_wanted && c.src.cuda == 0, "--no-cuda: libcuda not wanted, not loaded");
	for (int i = 0; i < c.out.n; i++)
		CHECK(!strstr(c.out.v[i].message, "could not be loaded"), "%s does not try libcuda: %s",
		      c.out.v[i].check->id, c.out.v[i].message);
	done(&x, &c);
}


/* NVML before CUDA: on 2x H200 (580.159.04) nvmlInit and nvmlShutdown waited 415-422 ms for a cuInit
 * running on another thread, the queries between them did not. The prefetch opens NVML's session before
 * it starts cuInit, the facts read while cuInit runs neither initialises nor shuts NVML down, and the
 * session closes after cuInit returned: the doubles' shared marker file shows the order. */
static void nvml_first(void)
{
	struct gp_root live = { .live = 1 };
	char marker[] = "/tmp/gpup2p-order-XXXXXX", path[1024], line[64], seq[512] = "";
	const char *fx = getenv("GPUP2P_FIXTURES");
	struct gp_gpu_facts *f = calloc(1, sizeof(*f));
	struct gp_doctor_pre *p;
	struct gp_err e = { 0 };
	int fd = mkstemp(marker);
	void *lib;
	FILE *in;

	snprintf(path, sizeof(path), "%s/../tests/fakenvml/libnvidia-ml.so.1", fx ? fx : "build/fixtures");
	lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* gp_gpu_nvml_open's dlopen by soname finds it */
	CHECK(fd >= 0 && lib && f, "marker file, the NVML double (%s)", lib ? path : dlerror());
	if (fd < 0 || !lib || !f) {
		free(f);
		return;
	}
	close(fd);
	setenv("FAKECUDA_MARKER", marker, 1);
	setenv("FAKENVML_MARKER", marker, 1);
	unsetenv("FAKENVML_PROBE");
	cuda_lib(NULL, NULL);
	sel("driver.cuda_init");
	p = gp_doctor_prefetch(&live, on, 0, 0);
	/* before cuInit's thread starts, so already there when the prefetch returns */
	CHECK(marker_count(marker, "nvmlInit") == 1, "NVML initialised by the prefetch, before it started cuInit");
	CHECK(gp_gpu_nvml_read(f, GP_GPU_HEALTH, &e) == 0 && f->available, "the facts read while cuInit runs: %s",
	      e.msg);
	CHECK(marker_count(marker, "nvmlInit") == 1 && marker_count(marker, "nvmlShutdown") == 0,
	      "the facts read neither initialised nor shut NVML down (%d, %d)", marker_count(marker, "nvmlInit"),
	      marker_count(marker, "nvmlShutdown"));
	free(gp_doctor_pre_cuda(p));
	gp_doctor_prefetch_free(p);
	if ((in = fopen(marker, "r"))) {
		while (fgets(line, sizeof(line), in))
			if (strcmp(line, "load\n")) {
				line[strcspn(line, "\n")] = ',';
				strncat(seq, line, sizeof(seq) - strlen(seq) - 1);
			}
		fclose(in);
	}
	CHECK(!strcmp(seq, "nvmlInit,cuInit,cuInit done,nvmlShutdown,"), "NVML opened before cuInit starts, "
	      "closed after it returned, not again between: %s", seq);
	unlink(marker);
	unsetenv("FAKECUDA_MARKER");
	unsetenv("FAKENVML_MARKER");
	free(f);
	dlclose(lib);
}

int main(void)
{
	uses_prefetch(); /* first: the double's marker counts cuInit calls from its first load */
	starts();
	skips_cuda();
	nvml_first();
	return unit_done();
}
