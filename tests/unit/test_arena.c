/* Unit tests: the arena (gpup2p/arena.h): what is taken is aligned, holds what was put there and stays
 * put; a long request gets a block of its own and leaves the newest block's room to the next ones; a
 * trimmed take gives its tail back; an array that is the last take grows where it lies, and only that
 * one; texts formatted in place and past a block's room read the same as snprintf's. */
#include <stdarg.h>
#include <stdint.h>

#include "gpup2p/arena.h"
#include "unit.h"

static char *fmt(struct gp_arena *a, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *fmt(struct gp_arena *a, const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	s = gp_arena_vfmt(a, f, ap);
	va_end(ap);
	return s;
}

static void takes(void)
{
	struct gp_arena a = GP_ARENA_INIT;
	char *t = gp_arena_take(&a, 3, 1), *u, *big, *v;
	long *w;

	CHECK(t != NULL, "a first take");
	memcpy(t, "ab", 3);
	w = gp_arena_take(&a, 4 * sizeof(long), sizeof(long));
	CHECK(w && (uintptr_t)w % sizeof(long) == 0 && (char *)w >= t + 3, "aligned, after the text");
	u = gp_arena_str(&a, "a copy");
	CHECK(u && !strcmp(u, "a copy") && u == (char *)(w + 4), "a copy of a text, after the array");
	big = gp_arena_take(&a, 40000, 1); /* fits the block's room: taken there */
	CHECK(big == u + strlen(u) + 1, "a long take that fits the newest block's room is taken there");
	u = gp_arena_str(&a, "a second copy");
	big = gp_arena_take(&a, 40000, 1); /* over a quarter of a block, past its room: a block of its own */
	CHECK(big != NULL, "a long take");
	memset(big, 'x', 40000);
	v = gp_arena_str(&a, "next");
	CHECK(v == u + strlen(u) + 1, "after a long take past the room, the next one follows the last short one "
	      "(%p, %p)", (void *)v, (void *)(u + strlen(u) + 1));
	CHECK(!strcmp(t, "ab") && !strcmp(u, "a second copy") && big[0] == 'x' && big[39999] == 'x',
	      "what was taken holds what was put there");
	big = gp_arena_take(&a, 200000, 1); /* over a whole block */
	CHECK(big != NULL, "a take over a block's size");
	memset(big, 'y', 200000);
	CHECK(big[199999] == 'y' && !strcmp(v, "next"), "a take over a block's size holds all its bytes");
	gp_arena_free(&a);
	CHECK(a.head == NULL, "freed: empty");
	gp_arena_free(&a); /* twice: harmless */
}

static void trims(void)
{
	struct gp_arena a = GP_ARENA_INIT;
	char *t = gp_arena_take(&a, 100, 1), *u;

	gp_arena_trim(&a, t, 10);
	u = gp_arena_take(&a, 1, 1);
	CHECK(u == t + 10, "a trimmed take gives its tail to the next (%td)", u - t);
	gp_arena_trim(&a, t, 5); /* not the last take: nothing changes */
	CHECK(gp_arena_take(&a, 1, 1) == u + 1, "trimming what is not the last take changes nothing");
	gp_arena_free(&a);
}

static void grows(void)
{
	struct gp_arena a = GP_ARENA_INIT;
	int *v = gp_arena_take(&a, sizeof(int), sizeof(int)), same = 1;
	char *t;

	v[0] = 0;
	for (int n = 1; n < 100; n++) {
		same &= gp_arena_extend(&a, v, sizeof(int) * (size_t)n, sizeof(int) * (size_t)(n + 1));
		v[n] = n;
	}
	CHECK(same, "an array that is the last take grows where it lies");
	t = gp_arena_str(&a, "after");
	CHECK(t == (char *)(v + 100), "what is taken next follows it");
	CHECK(!gp_arena_extend(&a, v, sizeof(int) * 100, sizeof(int) * 101) && !strcmp(t, "after"),
	      "an array that is not the last take is not extended");
	CHECK(!gp_arena_extend(&a, t, 6, 70000) && gp_arena_str(&a, "x") == t + 6,
	      "the last take is not extended past its block's room");
	CHECK(!gp_arena_extend(&a, t, 3, 7) && gp_arena_take(&a, 1, 1) == t + 8,
	      "nor when its length is not the one taken");
	gp_arena_free(&a);
}

static void formats(void)
{
	struct gp_arena a = GP_ARENA_INIT;
	char want[300], *s, *first, *big, *after;
	int ok = 1;

	first = fmt(&a, "%s %d", "port", 1);
	CHECK(first && !strcmp(first, "port 1"), "a text formatted in the arena");
	/* texts of every length around the end of the first block's room: each whole, each NUL-ended */
	for (int i = 0; i < 400; i++) {
		snprintf(want, sizeof(want), "%0*d", 1 + i % 250, i);
		s = fmt(&a, "%0*d", 1 + i % 250, i);
		ok &= s && !strcmp(s, want);
	}
	CHECK(ok, "400 texts across blocks' ends read as snprintf writes them");
	gp_arena_free(&a);
	/* texts of 7 characters after k bytes: whatever the block's size, one k leaves each room at its end */
	for (int k = 1; k <= 8; k++) {
		char *prev = NULL;

		gp_arena_take(&a, (size_t)k, 1);
		for (int i = 0; i < 20000; i++) {
			s = fmt(&a, "%07d", i);
			snprintf(want, sizeof(want), "%07d", i);
			ok &= s && !strcmp(s, want) && (!prev || !strcmp(prev, "0000000") || strlen(prev) == 7);
			prev = s;
		}
		gp_arena_free(&a);
	}
	CHECK(ok, "texts that fill a block's end exactly, or nearly, are whole");
	first = fmt(&a, "%s %d", "port", 2);
	big = fmt(&a, "%070000d", 7);
	after = fmt(&a, "%s", "after");
	CHECK(big && strlen(big) == 70000 && big[69999] == '7' && after && !strcmp(after, "after") &&
	      !strcmp(first, "port 2"), "a text over a block's size");
	gp_arena_free(&a);
}

int main(void)
{
	takes();
	trims();
	grows();
	formats();
	return unit_done();
}
