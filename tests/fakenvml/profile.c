/* The NVML test double's recorded machine and clock (tests only). FAKENVML_PROBE=PATH[:PATH...] names an
 * nvml_probe.txt (tests/fixtures/h200x4-hgx): its GPU lines give each NVLink error counter of a GPU,
 * summed over its links, as read the second time, with its rise since the first read 3 s before
 * ("GPU0 DL_REPLAY=0 (+0, rc 0) ... DL_CRC_DATA=399 (+22, rc 0) ..."); its call lines give what each
 * NVML function cost ("GetNvLinkErrorCounter calls 720 total 655.6 ms max 2.80 ms"). The double then
 * lists those GPUs, and each read of a counter answers as the machine did: the nth read of a link's
 * counter is its share of the first value plus n times its share of the rise. Every call is counted
 * and charged its recorded mean cost on the double's own clock, per GPU, so that a test can assert how
 * many calls a command makes and what they would cost on the machine, independent of this host's speed.
 * Read back (dlsym): fakenvml_calls(NAME), fakenvml_cost_ns(GPU) (-1: calls on no GPU),
 * fakenvml_counter_reads(COUNTER) (reads of that NVLink counter, every GPU and link), fakenvml_reset(). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakenvml.h"

#define COUNTERS 5 /* DL_REPLAY, DL_RECOVERY, DL_CRC_FLIT, DL_CRC_DATA, DL_ECC_DATA */
#define FUNCS 64

static const char *const counter_names[COUNTERS] = { "DL_REPLAY", "DL_RECOVERY", "DL_CRC_FLIT", "DL_CRC_DATA",
						     "DL_ECC_DATA" };

static struct {
	int gpus;
	unsigned long long value[FAKE_GPUS][COUNTERS], rise[FAKE_GPUS][COUNTERS];
	unsigned long long reads[FAKE_GPUS][FAKE_LINKS][COUNTERS];
	struct {
		char name[48];
		unsigned long long cost_ns, calls;
	} fn[FUNCS];
	int nfn;
	unsigned long long cost_ns[FAKE_GPUS + 1]; /* [FAKE_GPUS]: calls on no GPU */
} P;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void parse_gpu(const char *line)
{
	int g = atoi(line + 3);

	if (g < 0 || g >= FAKE_GPUS)
		return;
	for (int k = 0; k < COUNTERS; k++) {
		char key[32];
		const char *p;

		snprintf(key, sizeof(key), " %s=", counter_names[k]);
		if ((p = strstr(line, key)))
			sscanf(p + strlen(key), "%llu (+%llu", &P.value[g][k], &P.rise[g][k]);
	}
	if (g + 1 > P.gpus)
		P.gpus = g + 1;
}

/* One probe file's GPU and call lines (load). */
static void load_file(FILE *f, char *line, size_t n, char *name)
{
	unsigned long long calls;
	double total;

	while (fgets(line, (int)n, f)) {
		if (!strncmp(line, "GPU", 3) && line[3] >= '0' && line[3] <= '9')
			parse_gpu(line);
		else if (sscanf(line, "%47s calls %llu total %lf ms", name, &calls, &total) == 3 && calls &&
			 P.nfn < FUNCS) {
			snprintf(P.fn[P.nfn].name, sizeof(P.fn[0].name), "%s", name);
			P.fn[P.nfn++].cost_ns = (unsigned long long)(total * 1e6 / (double)calls + 0.5);
		}
	}
}

static void load(void)
{
	const char *list = getenv("FAKENVML_PROBE");
	char paths[4096], *path, *save = NULL, line[512], name[48];
	FILE *f;

	if (!list || !*list)
		return;
	snprintf(paths, sizeof(paths), "%s", list);
	for (path = strtok_r(paths, ":", &save); path; path = strtok_r(NULL, ":", &save))
		if ((f = fopen(path, "r"))) {
			load_file(f, line, sizeof(line), name);
			fclose(f);
		}
}

static void init(void)
{
	pthread_once(&once, load);
}

/* The entry of function `name`, added (cost 0: not recorded) when new; NULL when the table is full. */
static int fn_index(const char *name)
{
	for (int i = 0; i < P.nfn; i++)
		if (!strcmp(P.fn[i].name, name))
			return i;
	if (P.nfn >= FUNCS)
		return -1;
	snprintf(P.fn[P.nfn].name, sizeof(P.fn[0].name), "%s", name);
	P.fn[P.nfn].cost_ns = 0;
	return P.nfn++;
}

static int gpu_of(const void *dev)
{
	uintptr_t h = (uintptr_t)dev;

	return h >= FAKE_LIST_HANDLE && h < FAKE_LIST_HANDLE + FAKE_GPUS ? (int)(h - FAKE_LIST_HANDLE) : -1;
}

void fake_tick(const char *name, const void *dev)
{
	int i, g = gpu_of(dev);

	init();
	pthread_mutex_lock(&lock);
	if ((i = fn_index(name)) >= 0) {
		P.fn[i].calls++;
		P.cost_ns[g >= 0 ? g : FAKE_GPUS] += P.fn[i].cost_ns;
	}
	pthread_mutex_unlock(&lock);
}

int fake_profile_gpus(void)
{
	init();
	return P.gpus;
}

int fake_profile_gpu(const void *dev)
{
	int g = gpu_of(dev);

	return g >= 0 && g < fake_profile_gpus() ? g : -1;
}

int fake_busid(unsigned i, char *buf, size_t n)
{
	const char *s = getenv("FAKENVML_BUSIDS");

	for (unsigned k = 0; s && *s; k++) {
		size_t len = strcspn(s, ",");

		if (k == i) {
			snprintf(buf, n, "%.*s", (int)len, s);
			return len > 0;
		}
		s += len + (s[len] == ',');
	}
	return 0;
}

int fake_profile_bus(const char *bus)
{
	char b[32];

	for (int i = 0; i < fake_profile_gpus(); i++)
		if (fake_busid((unsigned)i, b, sizeof(b)) && !strcasecmp(b, bus))
			return i;
	return -1;
}

/* x spread over the links: link l's share. */
static unsigned long long share(unsigned long long x, unsigned l)
{
	return x / FAKE_LINKS + (l < x % FAKE_LINKS);
}

int fake_profile_counter(const void *dev, unsigned link, int counter, unsigned long long *v)
{
	int g = fake_profile_gpu(dev);
	unsigned long long n;

	if (g < 0 || link >= FAKE_LINKS)
		return INVALID_ARGUMENT;
	if (counter < 0 || counter >= COUNTERS)
		return INVALID_ARGUMENT;
	pthread_mutex_lock(&lock);
	n = P.reads[g][link][counter]++;
	pthread_mutex_unlock(&lock);
	*v = share(P.value[g][counter] - P.rise[g][counter], link) + n * share(P.rise[g][counter], link);
	return OK;
}

EXPORT unsigned long long fakenvml_calls(const char *name)
{
	unsigned long long c = 0;

	init();
	pthread_mutex_lock(&lock);
	for (int i = 0; i < P.nfn; i++)
		if (!strcmp(P.fn[i].name, name))
			c = P.fn[i].calls;
	pthread_mutex_unlock(&lock);
	return c;
}

EXPORT unsigned long long fakenvml_cost_ns(int gpu)
{
	unsigned long long c;

	init();
	pthread_mutex_lock(&lock);
	c = gpu >= 0 && gpu < FAKE_GPUS ? P.cost_ns[gpu] : P.cost_ns[FAKE_GPUS];
	pthread_mutex_unlock(&lock);
	return c;
}

EXPORT unsigned long long fakenvml_counter_reads(int counter)
{
	unsigned long long c = 0;

	pthread_mutex_lock(&lock);
	for (int g = 0; counter >= 0 && counter < COUNTERS && g < FAKE_GPUS; g++)
		for (int l = 0; l < FAKE_LINKS; l++)
			c += P.reads[g][l][counter];
	pthread_mutex_unlock(&lock);
	return c;
}

EXPORT void fakenvml_reset(void)
{
	init();
	pthread_mutex_lock(&lock);
	for (int i = 0; i < P.nfn; i++)
		P.fn[i].calls = 0;
	memset(P.cost_ns, 0, sizeof(P.cost_ns));
	memset(P.reads, 0, sizeof(P.reads));
	pthread_mutex_unlock(&lock);
}
