/* What the hand-built probes of tests/perf (cuda_cost.c, nvml_serial.c, nvml_xproc.c) share: the
 * monotonic clock in milliseconds, and nvmlFieldValue_t as NVML documents it (no NVML header here: a
 * field id, its scope (the link), when it was read, how long it took, the value's type, the field's own
 * return code, the value). Included by path from the same folder: `cc -O2 tests/perf/X.c ...` builds. */
#ifndef GPUP2P_PERF_PROBE_H
#define GPUP2P_PERF_PROBE_H

#include <time.h>

typedef struct {
	unsigned fieldId, scopeId;
	long long ts, lat;
	int type, ret;
	unsigned long long v;
} fv_t;

static inline double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

#endif
