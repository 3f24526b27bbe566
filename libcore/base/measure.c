/* gpup2p — statistics, sizes, thresholds and the verification pattern. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/bench.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void gp_stats_compute(double *v, int n, struct gp_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (n <= 0)
		return;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	s->n = n;
	s->min = v[0];
	s->max = v[n - 1];
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	{
		int rank = (int)ceil(0.99 * n);

		s->p99 = v[(rank < 1 ? 1 : rank) - 1];
	}
}

int gp_size_parse(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	switch (toupper((unsigned char)*end)) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (shift && (!strcasecmp(end, "iB") || !strcasecmp(end, "B")))
		end += strlen(end);
	if (*end || v == 0)
		return -EINVAL;
	if (v > (1ULL << 40) >> shift)
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

const char *gp_size_str(uint64_t v, char *buf, size_t n)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && v >= 1024 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, n, "%llu", (unsigned long long)v);
	else
		snprintf(buf, n, "%llu%c", (unsigned long long)v, units[u]);
	return buf;
}

int gp_size_sweep(uint64_t min, uint64_t max, double factor, uint64_t *out, int maxn)
{
	int k = 0;

	if (min == 0 || min > max || !(factor > 1.0) || maxn < 1)
		return -EINVAL;
	for (uint64_t v = min;;) {
		double next;

		if (k == maxn)
			return -E2BIG;
		out[k++] = v;
		if (v >= max)
			break;
		next = (double)v * factor;
		if (next >= (double)max) {
			v = max;
			continue;
		}
		v = (uint64_t)next > v ? (uint64_t)next : v + 1; /* small sizes, small factors: one byte at least */
	}
	return k;
}

int gp_threshold_parse(const char *s, const char *const *modes, struct gp_threshold *t)
{
	const char *eq = strchr(s, '='), *num = eq ? eq + 1 : s;
	char *end;

	memset(t, 0, sizeof(*t));
	if (eq) {
		size_t l = (size_t)(eq - s);
		int known = 0;

		if (!l || l >= sizeof(t->mode))
			return -EINVAL;
		memcpy(t->mode, s, l);
		for (int i = 0; modes && modes[i]; i++)
			known |= !strcmp(modes[i], t->mode);
		if (!known)
			return -EINVAL;
	}
	errno = 0;
	t->gbps = strtod(num, &end);
	if (errno || end == num || *end || !(t->gbps > 0) || isinf(t->gbps))
		return -EINVAL;
	return 0;
}

double gp_threshold_for(const struct gp_threshold *t, int n, const char *mode)
{
	double generic = -1, specific = -1;

	for (int i = 0; i < n; i++) {
		if (!t[i].mode[0])
			generic = t[i].gbps;
		else if (!strcmp(t[i].mode, mode))
			specific = t[i].gbps;
	}
	return specific > 0 ? specific : generic;
}

double gp_gbps(uint64_t bytes, double ms)
{
	return ms > 0 ? (double)bytes / (ms * 1e-3) / 1e9 : 0;
}

/* splitmix64: every output bit depends on every input bit */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t gp_pattern_key(uint64_t seed)
{
	return mix(seed);
}

uint64_t gp_pattern_word(uint64_t key, uint64_t i)
{
	return mix(i ^ key);
}

void gp_pattern_fill(void *buf, size_t n, uint64_t seed)
{
	uint8_t *p = buf;
	size_t words = n / 8, i;
	uint64_t s = mix(seed);

	for (i = 0; i < words; i++) {
		uint64_t w = mix(i ^ s);

		memcpy(p + 8 * i, &w, 8);
	}
	if (n % 8) {
		uint64_t w = gp_pattern_word(s, words);

		memcpy(p + 8 * words, &w, n % 8);
	}
}

int64_t gp_pattern_check(const void *buf, size_t n, uint64_t seed, uint8_t *want, uint8_t *got)
{
	const uint8_t *p = buf;
	uint64_t s = mix(seed);

	for (size_t i = 0; i * 8 < n; i++) {
		uint64_t w = mix(i ^ s);
		size_t len = n - i * 8 < 8 ? n - i * 8 : 8;

		if (memcmp(p + 8 * i, &w, len) == 0)
			continue;
		for (size_t k = 0; k < len; k++) {
			uint8_t b = ((const uint8_t *)&w)[k];

			if (p[8 * i + k] != b) {
				*want = b;
				*got = p[8 * i + k];
				return (int64_t)(8 * i + k);
			}
		}
	}
	return -1;
}
