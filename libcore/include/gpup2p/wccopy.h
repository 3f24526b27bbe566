/* gpup2p — copies to and from write-combined mappings of GPU memory: non-temporal stores (and
 * streaming loads) of the widest kind the CPU has, chosen at run time, destination aligned first,
 * sfence at the end so that the data is on its way when the call returns. */
#ifndef GPUP2P_WCCOPY_H
#define GPUP2P_WCCOPY_H

#include <stddef.h>

enum gp_wc_isa { GP_WC_MEMCPY = 0, GP_WC_SSE41, GP_WC_AVX2, GP_WC_AVX512, GP_WC_MOVDIR64B, GP_WC_COUNT };

/* "memcpy", "sse4.1", "avx2", "avx512", "movdir64b". */
const char *gp_wccopy_name(enum gp_wc_isa isa);

/* Parse a name; -1 when unknown. */
int gp_wccopy_parse(const char *name);

/* 1 when this CPU (and this build) can run the variant. */
int gp_wccopy_supported(enum gp_wc_isa isa);

/* The variant to use: $GPUP2P_WCCOPY when set and supported, else the best supported for writes
 * (avx512, movdir64b, avx2, sse4.1, memcpy in that order). */
enum gp_wc_isa gp_wccopy_choose(void);

/* Copy n bytes into a write-combined mapping. */
void gp_wccopy_to(void *dst, const void *src, size_t n, enum gp_wc_isa isa);

/* Copy n bytes out of a write-combined (or uncached) mapping, with streaming loads where the variant
 * has them. */
void gp_wccopy_from(void *dst, const void *src, size_t n, enum gp_wc_isa isa);

#endif
