/* gpup2p unit tests — a minimal TAP-like harness: each check prints "ok"/"not ok", a check that cannot
 * run here prints "skip - REASON"; tests/run.sh counts them and fails on a skip tests/expected-skips
 * does not declare. Fixture trees are under $GPUP2P_FIXTURES: a missing one is a failure, not a skip. */
#ifndef GPUP2P_UNIT_H
#define GPUP2P_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_failed;

#define CHECK(cond, ...) do { \
	if (cond) { printf("ok - "); printf(__VA_ARGS__); printf("\n"); } \
	else { unit_failed++; printf("not ok - "); printf(__VA_ARGS__); \
	       printf("  [%s:%d: %s]\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_STR(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	if (g_ && w_ && !strcmp(g_, w_)) { printf("ok - "); printf(__VA_ARGS__); printf("\n"); } \
	else { unit_failed++; printf("not ok - "); printf(__VA_ARGS__); \
	       printf("  [%s:%d: got \"%s\", want \"%s\"]\n", __FILE__, __LINE__, g_ ? g_ : "(null)", w_ ? w_ : "(null)"); } \
} while (0)

/* A check that cannot run on this machine; REASON as tests/expected-skips lists it (printf format). */
#define SKIP(...) do { printf("skip - "); printf(__VA_ARGS__); printf("\n"); } while (0)

static inline const char *unit_fixture(const char *name)
{
	static char buf[4096];
	const char *d = getenv("GPUP2P_FIXTURES");

	snprintf(buf, sizeof(buf), "%s/%s", d ? d : "build/fixtures", name);
	return buf;
}

static inline int unit_done(void)
{
	return unit_failed ? 1 : 0;
}

#endif
