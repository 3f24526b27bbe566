/* gpup2p — an arena: many small texts and arrays that live and die together (a doctor run's findings,
 * the text report's folding keys) taken from a few large blocks, not one malloc each (tens of thousands
 * of findings on a host of SR-IOV NICs: each malloc's header and rounding cost as much as the text).
 * Nothing taken is freed alone; gp_arena_free frees it all. */
#ifndef GPUP2P_ARENA_H
#define GPUP2P_ARENA_H

#include <stdarg.h>
#include <stddef.h>

struct gp_arena_block;

struct gp_arena {
	struct gp_arena_block *head; /* the newest block, where the next bytes are taken; NULL: empty */
	char *last;                  /* the last take, where it lies in head (NULL: none there) */
};

#define GP_ARENA_INIT { NULL, NULL }

/* n bytes aligned to align (a power of two, at most 16; 1 for a text), or NULL out of memory. Taken
 * from the newest block where it has the room; else a request over a quarter of a block gets a block of
 * its own (the newest keeps its room for the next), a shorter one a new block. Valid until
 * gp_arena_free. */
void *gp_arena_take(struct gp_arena *a, size_t n, size_t align);

/* The last thing taken from a, p, cut to its first n bytes (the rest given back for the next take).
 * Where p is not the last take (gp_arena_take's, gp_arena_str's, gp_arena_vfmt's, gp_arena_grow's
 * answer, or the one gp_arena_extend extended), lies in a block of its own, or is shorter than n, nothing changes. */
void gp_arena_trim(struct gp_arena *a, void *p, size_t n);

/* Make p, the last thing taken from a (n bytes), want bytes (want >= n) where it lies, when its block
 * has the room: 1 then (an array filled one item at a time while nothing else is taken from a costs its
 * bytes and no more), else 0 and nothing changes (p not the last take, or no room). */
int gp_arena_extend(struct gp_arena *a, void *p, size_t n, size_t want);

/* A copy of s in a, or NULL out of memory. */
char *gp_arena_str(struct gp_arena *a, const char *s);

/* printf-style text in a (formatted straight into the newest block where it fits), or NULL. */
char *gp_arena_vfmt(struct gp_arena *a, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Free everything taken; a is empty (GP_ARENA_INIT) afterwards. */
void gp_arena_free(struct gp_arena *a);

#endif
