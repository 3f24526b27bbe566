/* gpup2p — a growing string buffer (git's strbuf, small): for text whose length depends on the
 * machine (boot parameters listing every bridge, pair lists, ReBAR size lists), so that nothing is
 * cut at a fixed size. After an allocation failure the buffer keeps what it had and remembers it. */
#ifndef GPUP2P_BUF_H
#define GPUP2P_BUF_H

#include <stddef.h>

struct gp_buf {
	char *s;          /* NUL-terminated text, NULL while empty */
	size_t len, cap;
	int oom;          /* an append failed for lack of memory: the text is incomplete */
};

#define GP_BUF_INIT { NULL, 0, 0, 0 }

/* Append printf-style text. 0, or -ENOMEM (then b->oom is set and b keeps its previous text). */
int gp_buf_addf(struct gp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append the strings given, up to a NULL (no format: for long lists built a piece at a time). 0, or
 * -ENOMEM as gp_buf_addf (then b keeps its previous text). */
int gp_buf_add(struct gp_buf *b, ...) __attribute__((sentinel));

/* The text so far: "" while empty, never NULL. Valid until the next append or gp_buf_free. */
const char *gp_buf_str(const struct gp_buf *b);

/* Forget the text but keep the memory for reuse; oom stays set (something written since was incomplete). */
void gp_buf_reset(struct gp_buf *b);

/* Release the memory; b is empty (GP_BUF_INIT) afterwards. */
void gp_buf_free(struct gp_buf *b);

#endif
