/* NVML beside cuInit (tests/perf/results/nvml-serial-*.txt): does the driver serialise them, and do
 * NVML calls on one thread per GPU overlap? Built and run by hand on a GPU machine:
 *   cc -O2 -o /tmp/nvml_serial tests/perf/nvml_serial.c -ldl -lpthread
 *   for m in before parallel after; do CUINIT=$m /tmp/nvml_serial threads; done; /tmp/nvml_serial
 * CUINIT=before|parallel|after: dlopen + cuInit before the NVML work, on a thread beside it, or after;
 * "threads": one thread per GPU. Prints each phase's ms and, per call, the sum over the GPUs. No NVML or
 * CUDA header: the few entry points are called through dlsym with their documented signatures. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"
static void *L;
#define F(name) dlsym(L, name)
typedef int (*f0)(void *, ...);
static double acc[64];
static const char *nm[64];
static int nn;
static int slot(const char *n)
{
	for (int i = 0; i < nn; i++)
		if (!strcmp(nm[i], n)) return i;
	nm[nn] = n;
	return nn++;
}
#define T(label, call)                                                                                             \
	do {                                                                                                       \
		double _t = now();                                                                                 \
		call;                                                                                              \
		acc[slot(label)] += now() - _t;                                                                    \
	} while (0)
static int quiet;
static void *one(void *p)
{
	unsigned idx = (unsigned)(long)p;
	void *d;
	char buf[256];
	unsigned u = 0, u2 = 0, u3 = 0, u4 = 0;
	int st[18];
	unsigned long long ull = 0;
	double t0 = now();
	T("handle", ((int (*)(unsigned, void **))F("nvmlDeviceGetHandleByIndex_v2"))(idx, &d));
	T("pci", ((int (*)(void *, void *))F("nvmlDeviceGetPciInfo_v3"))(d, buf));
	T("arch", ((int (*)(void *, unsigned *))F("nvmlDeviceGetArchitecture"))(d, &u));
	T("numa", ((int (*)(void *, unsigned *))F("nvmlDeviceGetNumaNodeId"))(d, &u));
	T(
	    "linkstate18", for (int k = 0; k < 18; k++) {
		    st[k] = 0;
		    ((int (*)(void *, unsigned, int *))F("nvmlDeviceGetNvLinkState"))(d, k, &st[k]);
	    });
	T("replay", ((int (*)(void *, unsigned *))F("nvmlDeviceGetPcieReplayCounter"))(d, &u));
	fv_t f[64];
	int m = 0;
	for (int k = 0; k < 18; k++)
		if (st[k] == 1)
			for (int c = 0; c < 3; c++) {
				memset(&f[m], 0, sizeof(f[m]));
				f[m].fieldId = 161 + c;
				f[m].scopeId = k;
				m++;
			}
	T("fields", ((int (*)(void *, int, fv_t *))F("nvmlDeviceGetFieldValues"))(d, m, f));
	T("bar1", ((int (*)(void *, void *))F("nvmlDeviceGetBAR1MemoryInfo"))(d, buf));
	T("persistence", ((int (*)(void *, int *))F("nvmlDeviceGetPersistenceMode"))(d, (int *)&u));
	T("virt", ((int (*)(void *, int *))F("nvmlDeviceGetVirtualizationMode"))(d, (int *)&u));
	T("compute", ((int (*)(void *, int *))F("nvmlDeviceGetComputeMode"))(d, (int *)&u));
	T("retired_pending", ((int (*)(void *, int *))F("nvmlDeviceGetRetiredPagesPendingStatus"))(d, (int *)&u));
	T("ecc_total",
	  ((int (*)(void *, int, int, unsigned long long *))F("nvmlDeviceGetTotalEccErrors"))(d, 1, 0, &ull));
	T("mig", ((int (*)(void *, unsigned *, unsigned *))F("nvmlDeviceGetMigMode"))(d, &u, &u2));
	T("remapped", ((int (*)(void *, unsigned *, unsigned *, unsigned *, unsigned *))F(
			  "nvmlDeviceGetRemappedRows"))(d, &u, &u2, &u3, &u4));
	T("fabric", ((int (*)(void *, void *))F("nvmlDeviceGetGpuFabricInfo"))(d, buf));
	T("name", ((int (*)(void *, char *, unsigned))F("nvmlDeviceGetName"))(d, buf, 96));
	T("memory", ((int (*)(void *, void *))F("nvmlDeviceGetMemoryInfo"))(d, buf));
	T(
	    "linkstate18b", for (int k = 0; k < 18; k++) {
		    ((int (*)(void *, unsigned, int *))F("nvmlDeviceGetNvLinkState"))(d, k, &st[k]);
	    });
	T(
	    "remote_type", for (int k = 0; k < 18; k++) if (st[k] == 1) {
		    int ty;
		    ((int (*)(void *, unsigned, int *))F("nvmlDeviceGetNvLinkRemoteDeviceType"))(d, k, &ty);
	    });
	T(
	    "remote_pci", for (int k = 0; k < 18; k++) if (st[k] == 1) {
		    ((int (*)(void *, unsigned, void *))F("nvmlDeviceGetNvLinkRemotePciInfo_v2"))(d, k, buf);
	    });
	T("replay2", ((int (*)(void *, unsigned *))F("nvmlDeviceGetPcieReplayCounter"))(d, &u));
	T(
	    "linkstate18c", for (int k = 0; k < 18; k++) {
		    ((int (*)(void *, unsigned, int *))F("nvmlDeviceGetNvLinkState"))(d, k, &st[k]);
	    });
	T("fields2", ((int (*)(void *, int, fv_t *))F("nvmlDeviceGetFieldValues"))(d, m, f));
	if (!quiet) fprintf(stderr, "GPU%u total %.1f ms\n", idx, now() - t0);
	return NULL;
}
static double cu_ms, cu_end;
static void *ks(void *p)
{
	(void)p;
	double t = now();
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	long n = 0;
	while (f && fgets(line, sizeof line, f)) n++;
	if (f) fclose(f);
	fprintf(stderr, "kallsyms %ld lines %.1f ms\n", n, now() - t);
	return NULL;
}
static void *cu(void *p)
{
	(void)p;
	double t = now();
	void *c = dlopen("libcuda.so.1", RTLD_NOW);
	int (*ci)(unsigned) = (int (*)(unsigned))dlsym(c, "cuInit");
	int r = ci(0);
	cu_ms = now() - t;
	cu_end = now();
	fprintf(stderr, "cuInit rc=%d %.1f ms\n", r, cu_ms);
	return NULL;
}
int main(int argc, char **argv)
{
	int threads = argc > 1 && !strcmp(argv[1], "threads");
	const char *cm = getenv("CUINIT");
	pthread_t cth;
	double t;
	double start = now();
	if (cm && !strcmp(cm, "before")) {
		cu(NULL);
	} else if (cm && !strcmp(cm, "parallel"))
		pthread_create(&cth, 0, cu, 0);
	pthread_t kth;
	int kon = getenv("KALLSYMS") != NULL;
	if (kon) pthread_create(&kth, 0, ks, 0);
	t = now();
	L = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	printf("dlopen %.2f\n", now() - t);
	t = now();
	((int (*)(void))F("nvmlInit_v2"))();
	printf("init %.2f\n", now() - t);
	unsigned n = 0;
	char drv[80];
	t = now();
	((int (*)(char *, unsigned))F("nvmlSystemGetDriverVersion"))(drv, 80);
	((int (*)(unsigned *))F("nvmlDeviceGetCount_v2"))(&n);
	printf("drv+count %.2f (n=%u)\n", now() - t, n);
	t = now();
	if (threads) {
		pthread_t th[16];
		for (unsigned i = 0; i < n; i++) pthread_create(&th[i], 0, one, (void *)(long)i);
		for (unsigned i = 0; i < n; i++) pthread_join(th[i], 0);
	} else
		for (unsigned i = 0; i < n; i++) one((void *)(long)i);
	printf("gpus(%s) %.2f\n", threads ? "threads" : "seq", now() - t);
	t = now();
	((int (*)(void))F("nvmlShutdown"))();
	printf("shutdown %.2f\n", now() - t);
	if (kon) pthread_join(kth, 0);
	if (cm && !strcmp(cm, "parallel")) pthread_join(cth, 0);
	if (cm && !strcmp(cm, "after")) cu(NULL);
	printf("wall %.1f ms\n", now() - start);
	for (int i = 0; i < nn; i++) printf("  %-16s %8.2f ms (sum over GPUs)\n", nm[i], acc[i]);
	return 0;
}
