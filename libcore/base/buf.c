/* gpup2p — a growing string buffer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/buf.h"

static int grow(struct gp_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 64;
	char *s;

	while (cap < need) {
		if (cap > ((size_t)-1) / 2)
			return -ENOMEM;
		cap *= 2;
	}
	if (cap == b->cap)
		return 0;
	s = realloc(b->s, cap);
	if (!s)
		return -ENOMEM;
	if (!b->s)
		s[0] = '\0';
	b->s = s;
	b->cap = cap;
	return 0;
}

int gp_buf_addf(struct gp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || grow(b, b->len + (size_t)n + 1)) {
		b->oom = 1;
		return -ENOMEM;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int gp_buf_add(struct gp_buf *b, ...)
{
	va_list ap;
	const char *s;
	size_t n = 0;

	va_start(ap, b);
	while ((s = va_arg(ap, const char *)))
		n += strlen(s);
	va_end(ap);
	if (grow(b, b->len + n + 1)) {
		b->oom = 1;
		return -ENOMEM;
	}
	va_start(ap, b);
	while ((s = va_arg(ap, const char *))) {
		size_t l = strlen(s);

		memcpy(b->s + b->len, s, l);
		b->len += l;
	}
	va_end(ap);
	b->s[b->len] = '\0';
	return 0;
}

const char *gp_buf_str(const struct gp_buf *b)
{
	return b->s ? b->s : "";
}

void gp_buf_reset(struct gp_buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

void gp_buf_free(struct gp_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}
