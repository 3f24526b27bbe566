/* Unit tests: gp_cuda_probe opens libcuda once per library path (the test doubles of tests/fakecuda),
 * follows GPUP2P_LIBCUDA when a test switches libraries, and keeps working around a CUDA session's
 * open and close. dlopen is wrapped here to count the opens of a libcuda. */
#include <dlfcn.h>
#include <stdlib.h>

#include "gpup2p/cuda.h"
#include "unit.h"

static int cuda_opens;

/* Every dlopen of this program (libgpup2p is linked in statically): count those of a libcuda. */
void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "dlopen");
	if (file && strstr(file, "libcuda"))
		cuda_opens++;
	return real(file, mode);
}

static void lib(const char *dir)
{
	static char path[1024];
	const char *fx = getenv("GPUP2P_FIXTURES");

	snprintf(path, sizeof(path), "%s/../tests/%s/libcuda.so.1", fx ? fx : "build/fixtures", dir);
	setenv("GPUP2P_LIBCUDA", path, 1);
}

int main(void)
{
	struct gp_cuda_probe p;
	struct gp_err e = { 0 };
	struct gp_cuda *cu = calloc(1, sizeof(*cu));
	int ok = 1;

	unsetenv("FAKECUDA_GPUS");
	lib("fakecuda");
	for (int i = 0; i < 3; i++) {
		gp_cuda_probe(&p);
		ok &= p.loaded && p.init == 0 && p.devices > 0;
	}
	CHECK(ok, "three probes of the test double: loaded, cuInit 0, devices (%d)", p.devices);
	CHECK(cuda_opens == 1, "... one dlopen for all three (%d)", cuda_opens);
	lib("fakecuda-dmabuf");
	gp_cuda_probe(&p);
	CHECK(p.loaded && cuda_opens == 2, "another GPUP2P_LIBCUDA: that library opened (%d opens)", cuda_opens);
	setenv("GPUP2P_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	gp_cuda_probe(&p);
	CHECK(!p.loaded && strstr(p.why, "CUDA not available"), "a library that is not there: not loaded (%s)", p.why);
	lib("fakecuda");
	gp_cuda_probe(&p);
	CHECK(p.loaded && p.devices > 0, "back to the first double: loaded again (%d devices)", p.devices);
	/* a session opens and closes its own reference, and clears the bound API: the probe binds it again */
	if (cu && !gp_cuda_open_gpus(cu, 1, &e)) {
		gp_cuda_close(cu);
		gp_cuda_probe(&p);
		CHECK(p.loaded && p.init == 0 && p.devices > 0, "a probe after a session's close still answers (%d devices)",
		      p.devices);
	} else {
		CHECK(0, "a CUDA session on the test double: %s", e.msg);
	}
	free(cu);
	unsetenv("GPUP2P_LIBCUDA");
	return unit_done();
}
