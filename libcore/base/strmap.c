/* gpup2p — a string -> int map: open addressing with linear probing, FNV-1a hashes, at most half full. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/strmap.h"

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

int gp_strmap_get(const struct gp_strmap *m, const char *key)
{
	if (!m->cap)
		return -1;
	for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->key[i])
			return -1;
		if (!strcmp(m->key[i], key))
			return m->val[i];
	}
}

int gp_strmap_put(struct gp_strmap *m, const char *key, int val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct gp_strmap g = { .cap = m->cap ? m->cap * 2 : 64 };

		g.key = calloc(g.cap, sizeof(*g.key));
		g.val = calloc(g.cap, sizeof(*g.val));
		if (!g.key || !g.val) {
			free(g.key);
			free(g.val);
			return -ENOMEM;
		}
		for (size_t k = 0; k < m->cap; k++) {
			if (!m->key[k])
				continue;
			for (i = hash(m->key[k]) & (g.cap - 1); g.key[i]; i = (i + 1) & (g.cap - 1))
				;
			g.key[i] = m->key[k];
			g.val[i] = m->val[k];
		}
		free(m->key);
		free(m->val);
		g.n = m->n;
		*m = g;
	}
	for (i = hash(key) & (m->cap - 1); m->key[i]; i = (i + 1) & (m->cap - 1))
		if (!strcmp(m->key[i], key)) {
			m->val[i] = val;
			return 0;
		}
	if (!(m->key[i] = strdup(key)))
		return -ENOMEM;
	m->val[i] = val;
	m->n++;
	return 0;
}

void gp_strmap_free(struct gp_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->key[i]);
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}
