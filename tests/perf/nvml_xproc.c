/* Where doctor's NVML time could go (tests/perf/results/nvml-xproc-*.txt). nvml_serial.c found that NVML
 * calls in the process that runs cuInit wait for it; this asks three things more. Built and run by hand
 * on a GPU machine:
 *   cc -O2 -o /tmp/nvml_xproc tests/perf/nvml_xproc.c -ldl
 *   /tmp/nvml_xproc cuinit | nvml | fork | calls | ecc
 * cuinit: dlopen + cuInit alone.  nvml: doctor's NVML work alone (init, handles, NVLink states and
 * counters, ECC, 48 P2P statuses).  fork: the NVML work in a child process while the parent runs cuInit:
 * does a second process escape the wait?  calls: what each kind of call costs, one kind at a time
 * (P2P status per capability, the NVLink counters grouped per link, per counter or one field, ECC by
 * its call and by its field, handles by index and by PCI address); ecc: the ECC field before its call,
 * in a fresh process, with return codes and values. Prints ms. No NVML or CUDA header:
 * the few entry points are called through dlsym with their documented signatures. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "probe.h"
#include <unistd.h>


static void *L;
static int (*init_)(void), (*count_)(unsigned *), (*by_index)(unsigned, void **), (*by_bus)(const char *, void **);
static int (*pci_)(void *, void *), (*lstate)(void *, unsigned, int *), (*fields)(void *, int, fv_t *);
static int (*ecc)(void *, int, int, unsigned long long *), (*p2p)(void *, void *, int, int *);
static void *dev[16];
static unsigned ngpu;
static int up[16][18];

static void load(void)
{
	L = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	if (!L) {
		fprintf(stderr, "no libnvidia-ml.so.1\n");
		exit(69);
	}
	*(void **)&init_ = dlsym(L, "nvmlInit_v2");
	*(void **)&count_ = dlsym(L, "nvmlDeviceGetCount_v2");
	*(void **)&by_index = dlsym(L, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&by_bus = dlsym(L, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&pci_ = dlsym(L, "nvmlDeviceGetPciInfo_v3");
	*(void **)&lstate = dlsym(L, "nvmlDeviceGetNvLinkState");
	*(void **)&fields = dlsym(L, "nvmlDeviceGetFieldValues");
	*(void **)&ecc = dlsym(L, "nvmlDeviceGetTotalEccErrors");
	*(void **)&p2p = dlsym(L, "nvmlDeviceGetP2PStatus");
	init_();
	count_(&ngpu);
	if (ngpu > 16)
		ngpu = 16;
}

/* Each GPU's active links' replay, recovery and CRC counters, link by link in one call (doctor's way). */
static void counters(unsigned g)
{
	fv_t f[54];
	int m = 0;

	memset(f, 0, sizeof(f));
	for (int k = 0; k < 18; k++)
		for (int c = 0; up[g][k] && c < 3; c++) {
			f[m].fieldId = 161 + (unsigned)c;
			f[m++].scopeId = (unsigned)k;
		}
	if (m)
		fields(dev[g], m, f);
}

/* doctor's NVML work, as doctor does it; returns ms. */
static double work(void)
{
	double t = now();
	unsigned long long u = 0;
	int st;

	load();
	for (unsigned g = 0; g < ngpu; g++) {
		by_index(g, &dev[g]);
		for (int k = 0; k < 18; k++)
			up[g][k] = lstate(dev[g], (unsigned)k, &st) == 0 && st == 1;
		counters(g);
		ecc(dev[g], 1, 0, &u);
	}
	for (unsigned a = 0; a < ngpu; a++)
		for (unsigned b = 0; b < ngpu; b++)
			for (int c = 0; a != b && c < 4; c++)
				p2p(dev[a], dev[b], c == 3 ? 4 : c, &st); /* read, write, NVLink, atomics (index 4) */
	return now() - t;
}

static double cuinit(void)
{
	double t = now();
	void *c = dlopen("libcuda.so.1", RTLD_NOW);
	int (*ci)(unsigned);

	if (!c)
		return -1;
	*(void **)&ci = dlsym(c, "cuInit");
	ci(0);
	return now() - t;
}

#define TIME(label, n, body)                                                                               \
	do {                                                                                               \
		double _t = now();                                                                         \
		body;                                                                                      \
		printf("  %-34s %8.2f ms  (%d calls, %.3f a call)\n", label, now() - _t, n,              \
		       (now() - _t) / ((n) > 0 ? (n) : 1));                                                    \
	} while (0)

static void calls(void)
{
	char bus[16][32], pci[128];
	unsigned long long u = 0;
	int st, n;

	TIME("init", 1, load());
	TIME("handle by index (first)", (int)ngpu, for (unsigned g = 0; g < ngpu; g++) by_index(g, &dev[g]));
	for (unsigned g = 0; g < ngpu; g++) {
		memset(pci, 0, sizeof(pci));
		pci_(dev[g], pci);
		snprintf(bus[g], sizeof(bus[g]), "%.15s", pci); /* busIdLegacy comes first in nvmlPciInfo_t */
	}
	TIME("handle by bus id (again)", (int)ngpu, for (unsigned g = 0; g < ngpu; g++) by_bus(bus[g], &dev[g]));
	TIME("link states (18 a GPU)", (int)ngpu * 18, for (unsigned g = 0; g < ngpu; g++) for (int k = 0; k < 18; k++)
		     up[g][k] = lstate(dev[g], (unsigned)k, &st) == 0 && st == 1);
	TIME("counters: 3 a link, one call a GPU", (int)ngpu, for (unsigned g = 0; g < ngpu; g++) counters(g));
	n = 0;
	TIME("counters: one call a link", n, for (unsigned g = 0; g < ngpu; g++) for (int k = 0; k < 18; k++) {
		fv_t f[3];
		memset(f, 0, sizeof(f));
		for (int c = 0; c < 3; c++) {
			f[c].fieldId = 161 + (unsigned)c;
			f[c].scopeId = (unsigned)k;
		}
		if (up[g][k]) {
			fields(dev[g], 3, f);
			n++;
		}
	});
	n = 0;
	TIME("counters: replay only, one call a GPU", (int)ngpu, for (unsigned g = 0; g < ngpu; g++) {
		fv_t f[18];
		int m = 0;
		memset(f, 0, sizeof(f));
		for (int k = 0; k < 18; k++)
			if (up[g][k]) {
				f[m].fieldId = 161;
				f[m++].scopeId = (unsigned)k;
			}
		fields(dev[g], m, f);
	});
	TIME("one field (link 0 replay) a GPU", (int)ngpu, for (unsigned g = 0; g < ngpu; g++) {
		fv_t f;
		memset(&f, 0, sizeof(f));
		f.fieldId = 161;
		fields(dev[g], 1, &f);
	});
	TIME("ECC total (call)", (int)ngpu, for (unsigned g = 0; g < ngpu; g++) ecc(dev[g], 1, 0, &u));
	TIME("ECC DBE volatile total (field 4)", (int)ngpu, for (unsigned g = 0; g < ngpu; g++) {
		fv_t f;
		memset(&f, 0, sizeof(f));
		f.fieldId = 4;
		fields(dev[g], 1, &f);
	});
	static const char *cap[] = { "read", "write", "nvlink", "atomics", "prop" };
	static const int idx[] = { 0, 1, 2, 4, 3 };
	for (int c = 0; c < 5; c++) {
		char label[48];

		snprintf(label, sizeof(label), "P2P status %s (ordered pairs)", cap[c]);
		n = (int)(ngpu * (ngpu - 1));
		TIME(label, n, for (unsigned a = 0; a < ngpu; a++) for (unsigned b = 0; b < ngpu; b++) if (a != b)
			     p2p(dev[a], dev[b], idx[c], &st));
	}
	n = (int)(ngpu * (ngpu - 1));
	TIME("P2P status read again", n, for (unsigned a = 0; a < ngpu; a++) for (unsigned b = 0; b < ngpu; b++)
		     if (a != b) p2p(dev[a], dev[b], 0, &st));
}

/* The ECC field against the ECC call, the field first in a fresh process: rc, value and ms of each. */
static void ecc_order(void)
{
	unsigned long long u = 0;
	double t;
	fv_t f;
	int rc;

	load();
	for (unsigned g = 0; g < ngpu; g++)
		by_index(g, &dev[g]);
	for (int pass = 0; pass < 2; pass++)
		for (unsigned g = 0; g < ngpu; g++) {
			memset(&f, 0, sizeof(f));
			f.fieldId = 4;
			t = now();
			rc = fields(dev[g], 1, &f);
			printf("  GPU%u field 4: rc %d field rc %d type %d value %llu latency %lld us, %.3f ms\n", g, rc,
			       f.ret, f.type, f.v, f.lat, now() - t);
			t = now();
			rc = ecc(dev[g], 1, 0, &u);
			printf("  GPU%u call: rc %d value %llu, %.3f ms\n", g, rc, u, now() - t);
		}
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "calls";
	double t0 = now();

	if (!strcmp(m, "cuinit")) {
		printf("cuinit %.1f", cuinit());
	} else if (!strcmp(m, "nvml")) {
		printf("nvml %.1f", work());
	} else if (!strcmp(m, "fork")) {
		int p[2];
		pid_t pid;
		double child = 0;

		if (pipe(p))
			return 1;
		pid = fork();
		if (pid == 0) {
			double w = work();

			if (write(p[1], &w, sizeof(w)) != sizeof(w))
				_exit(1);
			_exit(0);
		}
		printf("cuinit %.1f", cuinit());
		if (read(p[0], &child, sizeof(child)) != sizeof(child))
			child = -1;
		waitpid(pid, NULL, 0);
		printf(" nvml_child %.1f", child);
	} else if (!strcmp(m, "ecc")) {
		ecc_order();
	} else {
		calls();
	}
	printf(" wall %.1f\n", now() - t0);
	return 0;
}
