/* gpup2p — an arena of small texts and arrays freed together (gpup2p/arena.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/arena.h"

#define BLOCK 65536 /* bytes a block holds (a longer request: its own block) */

struct gp_arena_block {
	struct gp_arena_block *next; /* the older blocks */
	size_t used, size;
	_Alignas(16) char data[];
};

void *gp_arena_take(struct gp_arena *a, size_t n, size_t align)
{
	struct gp_arena_block *b = a->head;
	size_t at = b ? (b->used + align - 1) & ~(align - 1) : 0, size = n > BLOCK ? n : BLOCK;

	if (b && at <= b->size && n <= b->size - at) {
		b->used = at + n;
		return a->last = b->data + at;
	}
	if (n > SIZE_MAX - sizeof(*b) || !(b = malloc(sizeof(*b) + size)))
		return NULL;
	b->size = size;
	b->used = n;
	if (n > BLOCK / 4 && a->head) { /* a block of its own, behind the newest: that one keeps its room */
		b->next = a->head->next;
		a->head->next = b;
		a->last = NULL;
		return b->data;
	}
	b->next = a->head;
	a->head = b;
	return a->last = b->data;
}

void gp_arena_trim(struct gp_arena *a, void *p, size_t n)
{
	struct gp_arena_block *b = a->head;

	if (p && p == a->last && n <= (size_t)(b->data + b->used - a->last))
		b->used = (size_t)(a->last - b->data) + n;
}

int gp_arena_extend(struct gp_arena *a, void *p, size_t n, size_t want)
{
	struct gp_arena_block *b = a->head;

	if (!p || p != a->last || a->last + n != b->data + b->used || want < n || want - n > b->size - b->used)
		return 0;
	b->used += want - n;
	return 1;
}

char *gp_arena_str(struct gp_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = gp_arena_take(a, n, 1);

	return d ? memcpy(d, s, n) : NULL;
}

char *gp_arena_vfmt(struct gp_arena *a, const char *fmt, va_list ap)
{
	struct gp_arena_block *b = a->head;
	size_t room = b ? b->size - b->used : 0;
	va_list again;
	char *d = NULL;
	int n;

	va_copy(again, ap);
	n = vsnprintf(b ? b->data + b->used : NULL, room, fmt, ap);
	if (n >= 0 && (size_t)n < room) {
		d = a->last = b->data + b->used;
		b->used += (size_t)n + 1;
	} else if (n >= 0 && (d = gp_arena_take(a, (size_t)n + 1, 1))) {
		vsnprintf(d, (size_t)n + 1, fmt, again);
	}
	va_end(again);
	return d;
}

void gp_arena_free(struct gp_arena *a)
{
	for (struct gp_arena_block *b = a->head, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
	a->last = NULL;
}
