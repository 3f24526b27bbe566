/* gpup2p — write-combined copies, one function per instruction set, chosen at run time. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "gpup2p/wccopy.h"

static const char *const names[GP_WC_COUNT] = { "memcpy", "sse4.1", "avx2", "avx512", "movdir64b" };

const char *gp_wccopy_name(enum gp_wc_isa isa)
{
	return isa < GP_WC_COUNT ? names[isa] : "?";
}

int gp_wccopy_parse(const char *name)
{
	for (int i = 0; i < GP_WC_COUNT; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

#if defined(__x86_64__)
static int has_movdir64b(void)
{
	unsigned a, b, c, d;

	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 28));
}

int gp_wccopy_supported(enum gp_wc_isa isa)
{
	__builtin_cpu_init();
	switch (isa) {
	case GP_WC_MEMCPY: return 1;
	case GP_WC_SSE41: return __builtin_cpu_supports("sse4.1");
	case GP_WC_AVX2: return __builtin_cpu_supports("avx2");
	case GP_WC_AVX512: return __builtin_cpu_supports("avx512f");
	case GP_WC_MOVDIR64B: return has_movdir64b();
	default: return 0;
	}
}

/* Bytes up to the next multiple of a (a power of two) from p, at most n. */
static size_t head(const void *p, size_t a, size_t n)
{
	size_t h = (a - ((uintptr_t)p & (a - 1))) & (a - 1);

	return h < n ? h : n;
}

__attribute__((target("sse4.1"))) static void to_sse(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t h = head(d, 16, n);

	memcpy(d, s, h);
	d += h, s += h, n -= h;
	for (; n >= 64; d += 64, s += 64, n -= 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));

		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	for (; n >= 16; d += 16, s += 16, n -= 16)
		_mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
	memcpy(d, s, n);
	_mm_sfence();
}

__attribute__((target("sse4.1"))) static void from_sse(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t h = head(s, 16, n);

	memcpy(d, s, h);
	d += h, s += h, n -= h;
	for (; n >= 16; d += 16, s += 16, n -= 16)
		_mm_storeu_si128((__m128i *)d, _mm_stream_load_si128((__m128i *)s));
	memcpy(d, s, n);
}

__attribute__((target("avx2"))) static void to_avx2(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t h = head(d, 32, n);

	memcpy(d, s, h);
	d += h, s += h, n -= h;
	for (; n >= 128; d += 128, s += 128, n -= 128) {
		__m256i a = _mm256_loadu_si256((const __m256i *)s), b = _mm256_loadu_si256((const __m256i *)(s + 32));
		__m256i c = _mm256_loadu_si256((const __m256i *)(s + 64)), e = _mm256_loadu_si256((const __m256i *)(s + 96));

		_mm256_stream_si256((__m256i *)d, a);
		_mm256_stream_si256((__m256i *)(d + 32), b);
		_mm256_stream_si256((__m256i *)(d + 64), c);
		_mm256_stream_si256((__m256i *)(d + 96), e);
	}
	for (; n >= 32; d += 32, s += 32, n -= 32)
		_mm256_stream_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));
	memcpy(d, s, n);
	_mm_sfence();
}

__attribute__((target("avx2"))) static void from_avx2(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t h = head(s, 32, n);

	memcpy(d, s, h);
	d += h, s += h, n -= h;
	for (; n >= 32; d += 32, s += 32, n -= 32)
		_mm256_storeu_si256((__m256i *)d, _mm256_stream_load_si256((const __m256i *)s));
	memcpy(d, s, n);
}

__attribute__((target("avx512f"))) static void to_avx512(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t h = head(d, 64, n);

	memcpy(d, s, h);
	d += h, s += h, n -= h;
	for (; n >= 64; d += 64, s += 64, n -= 64)
		_mm512_stream_si512((__m512i *)d, _mm512_loadu_si512((const void *)s));
	memcpy(d, s, n);
	_mm_sfence();
}

__attribute__((target("avx512f"))) static void from_avx512(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t h = head(s, 64, n);

	memcpy(d, s, h);
	d += h, s += h, n -= h;
	for (; n >= 64; d += 64, s += 64, n -= 64)
		_mm512_storeu_si512((void *)d, _mm512_stream_load_si512((void *)s));
	memcpy(d, s, n);
}

__attribute__((target("movdir64b"))) static void to_movdir64b(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t h = head(d, 64, n);

	memcpy(d, s, h);
	d += h, s += h, n -= h;
	for (; n >= 64; d += 64, s += 64, n -= 64)
		_movdir64b(d, s);
	memcpy(d, s, n);
	_mm_sfence();
}
#else
int gp_wccopy_supported(enum gp_wc_isa isa)
{
	return isa == GP_WC_MEMCPY;
}
#endif

enum gp_wc_isa gp_wccopy_choose(void)
{
	static const enum gp_wc_isa order[] = { GP_WC_AVX512, GP_WC_MOVDIR64B, GP_WC_AVX2, GP_WC_SSE41 };
	const char *env = getenv("GPUP2P_WCCOPY");
	int want = env ? gp_wccopy_parse(env) : -1;

	if (want >= 0 && gp_wccopy_supported((enum gp_wc_isa)want))
		return (enum gp_wc_isa)want;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (gp_wccopy_supported(order[i]))
			return order[i];
	return GP_WC_MEMCPY;
}

void gp_wccopy_to(void *dst, const void *src, size_t n, enum gp_wc_isa isa)
{
	switch (gp_wccopy_supported(isa) ? isa : GP_WC_MEMCPY) {
#if defined(__x86_64__)
	case GP_WC_SSE41: to_sse(dst, src, n); return;
	case GP_WC_AVX2: to_avx2(dst, src, n); return;
	case GP_WC_AVX512: to_avx512(dst, src, n); return;
	case GP_WC_MOVDIR64B: to_movdir64b(dst, src, n); return;
#endif
	default: memcpy(dst, src, n);
#if defined(__x86_64__)
		_mm_sfence();
#endif
	}
}

void gp_wccopy_from(void *dst, const void *src, size_t n, enum gp_wc_isa isa)
{
	switch (gp_wccopy_supported(isa) ? isa : GP_WC_MEMCPY) {
#if defined(__x86_64__)
	case GP_WC_SSE41: from_sse(dst, src, n); return;
	case GP_WC_AVX2: from_avx2(dst, src, n); return;
	case GP_WC_AVX512: from_avx512(dst, src, n); return;
	case GP_WC_MOVDIR64B: from_sse(dst, src, n); return; /* no load side: SSE4.1 streaming loads */
#endif
	default: memcpy(dst, src, n);
	}
}
