/* gpup2p — the arithmetic of measuring: statistics over repetitions, sizes and size sweeps,
 * bandwidth thresholds, and the verification pattern (different for every byte and iteration).
 * Nothing here touches a GPU: it is unit-tested without one. */
#ifndef GPUP2P_BENCH_H
#define GPUP2P_BENCH_H

#include <stddef.h>
#include <stdint.h>

#define GP_SWEEP_MAX 10000  /* sizes in one sweep: a longer one is refused (-E2BIG), never cut */
#define GP_THRESH_MAX 16

struct gp_stats {
	int n;
	double min, median, max, p99;
};

/* Statistics of v[0..n) (sorted in place). Median of an even count: mean of the two middle values;
 * p99: nearest rank. n == 0 gives all zeros. */
void gp_stats_compute(double *v, int n, struct gp_stats *s);

/* Parse a size: bytes, or with K/M/G/T (powers of 1024; "KiB", "KB", "k" accepted alike). Must be
 * >= 1 and <= 2^40. 0 or -EINVAL (malformed, zero, fractional) or -ERANGE (too large). */
int gp_size_parse(const char *s, uint64_t *out);

/* A size as text with the largest exact unit ("4K", "256M", "1G", "1000"). Returns buf. */
const char *gp_size_str(uint64_t v, char *buf, size_t n);

/* nccl-tests-style sweep: min, min*factor, ... up to and including max (the last size is max itself
 * when the steps do not land on it). factor > 1; each step grows by one byte at least. Returns the count,
 * -EINVAL (min > max, factor <= 1) or -E2BIG (more than maxn sizes: out holds the first maxn). */
int gp_size_sweep(uint64_t min, uint64_t max, double factor, uint64_t *out, int maxn);

/* A --min-bw threshold: "GBPS" for every mode or "MODE=GBPS". */
struct gp_threshold {
	char mode[16];                 /* "" = every mode */
	double gbps;
};

/* Parse a threshold. 0 or -EINVAL (not a positive number, or an unknown mode among `modes`,
 * a NULL-terminated list). */
int gp_threshold_parse(const char *s, const char *const *modes, struct gp_threshold *t);

/* The floor for a mode: the last threshold naming it, else the last generic one, else -1. */
double gp_threshold_for(const struct gp_threshold *t, int n, const char *mode);

/* GB/s (1e9 bytes/s) for `bytes` moved in `ms` milliseconds; 0 when ms <= 0. */
double gp_gbps(uint64_t bytes, double ms);

/* Fill buf with the pattern of `seed`: 64-bit words from a mix of (word index, seed), so every byte
 * differs by position and by seed; a tail shorter than a word takes the next word's bytes. */
void gp_pattern_fill(void *buf, size_t n, uint64_t seed);

/* Check buf against the pattern of `seed`. -1 when every byte matches, else the offset of the first bad byte, with the expected and found
 * values. */
int64_t gp_pattern_check(const void *buf, size_t n, uint64_t seed, uint8_t *want, uint8_t *got);

/* The pattern word by word, as a GPU kernel computes it (smcopy.h's gp_sm_fill, gp_sm_check): the
 * 8 bytes at offset 8 i are gp_pattern_word(gp_pattern_key(seed), i), little-endian; a tail of n % 8
 * bytes is the first bytes of the next word. */
uint64_t gp_pattern_key(uint64_t seed);
uint64_t gp_pattern_word(uint64_t key, uint64_t i);

#endif
