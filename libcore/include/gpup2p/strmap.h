/* gpup2p — a string -> int map (open addressing, FNV-1a), for folding many hosts' results. */
#ifndef GPUP2P_STRMAP_H
#define GPUP2P_STRMAP_H

#include <stddef.h>

struct gp_strmap {                     /* zeroed: an empty map */
	char **key;
	int *val;
	size_t cap, n;
};

/* The value stored for key, or -1. */
int gp_strmap_get(const struct gp_strmap *m, const char *key);
/* Store key (copied) -> val, replacing an earlier value. 0 or -ENOMEM. */
int gp_strmap_put(struct gp_strmap *m, const char *key, int val);
/* Free the map's keys and tables (it is empty again). */
void gp_strmap_free(struct gp_strmap *m);

#endif
