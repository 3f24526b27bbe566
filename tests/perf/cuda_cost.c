/* Where a fresh process's CUDA start-up time goes: dlopen of libcuda (RTLD_NOW or RTLD_LAZY), cuInit,
 * device enumeration and cuDeviceCanAccessPeer, against NVML's start-up. Built and run on the GPU
 * machine by tests/perf/doctor_cost.sh; prints one JSON line. A second argument "_exit" ends the
 * process with _exit (no atexit handlers or library destructors: what libcuda's teardown costs is the
 * difference in the process's wall time). Not part of the build. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"
#include <unistd.h>

int main(int argc, char **argv)
{
	int lazy = argc > 1 && !strcmp(argv[1], "lazy"), nvml = argc > 1 && !strcmp(argv[1], "nvml");
	double t0 = now(), t1, t2, t3, t4;
	int n = 0, can = -1, rc;
	void *lib;

	if (nvml) {
		int (*init)(void), (*count)(unsigned *);
		unsigned u = 0;

		lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
		t1 = now();
		if (!lib)
			return printf("{\"error\":\"%s\"}\n", dlerror()), 1;
		*(void **)&init = dlsym(lib, "nvmlInit_v2");
		*(void **)&count = dlsym(lib, "nvmlDeviceGetCount_v2");
		rc = init();
		t2 = now();
		count(&u);
		t3 = now();
		printf("{\"mode\":\"nvml\",\"dlopen_ms\":%.2f,\"init_ms\":%.2f,\"count_ms\":%.2f,\"rc\":%d,\"n\":%u}\n",
		       t1 - t0, t2 - t1, t3 - t2, rc, u);
		return 0;
	}
	lib = dlopen("libcuda.so.1", (lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL);
	t1 = now();
	if (!lib)
		return printf("{\"error\":\"%s\"}\n", dlerror()), 1;
	int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
	int (*count)(int *) = (int (*)(int *))dlsym(lib, "cuDeviceGetCount");
	int (*get)(int *, int) = (int (*)(int *, int))dlsym(lib, "cuDeviceGet");
	int (*peer)(int *, int, int) = (int (*)(int *, int, int))dlsym(lib, "cuDeviceCanAccessPeer");
	rc = init(0);
	t2 = now();
	count(&n);
	for (int i = 0; i < n; i++) {
		int d;

		get(&d, i);
	}
	t3 = now();
	if (n > 1)
		peer(&can, 0, 1);
	t4 = now();
	printf("{\"mode\":\"%s\",\"dlopen_ms\":%.2f,\"cuinit_ms\":%.2f,\"enum_ms\":%.2f,\"peer_ms\":%.2f,"
	       "\"rc\":%d,\"n\":%d}\n", lazy ? "lazy" : "now", t1 - t0, t2 - t1, t3 - t2, t4 - t3, rc, n);
	if (argc > 2 && !strcmp(argv[2], "_exit")) {
		fflush(stdout);
		_exit(0);
	}
	return 0;
}
