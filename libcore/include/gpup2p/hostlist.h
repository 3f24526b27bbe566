/* gpup2p — host lists as Slurm and pdsh's dshbak -c write them: node[01-12,14],gpu[1-3]-ib.
 * A name's last run of digits is its number; zero padding is kept ("node[08-10]" is node08..node10). */
#ifndef GPUP2P_HOSTLIST_H
#define GPUP2P_HOSTLIST_H

#include "gpup2p/err.h"

#define GP_HOSTLIST_MAX (1 << 20)      /* most names one expression may expand to */
#define GP_HOSTNAME_MAX 255

struct gp_hostlist {
	char **v;
	int n, cap;
};

/* 1 when c may appear in a host name (letters, digits, '-', '.', '_': what --expect and the
 * "host: " labels of pdsh, clush and srun take), else 0. */
int gp_hostlist_name_char(int c);

/* 1 when name is a host name: 1 to GP_HOSTNAME_MAX characters, each gp_hostlist_name_char. */
int gp_hostlist_valid(const char *name);

/* Expand expr ("node[01-04,07],login1,rack[1-2]-n[1-3]") and append the names to h.
 * 0, or -EINVAL (GP_E_USAGE, e says what is wrong and where), -E2BIG, -ENOMEM. */
int gp_hostlist_parse(struct gp_hostlist *h, const char *expr, struct gp_err *e);

/* Append one name (copied). 0 or -ENOMEM. */
int gp_hostlist_add(struct gp_hostlist *h, const char *name);

/* Sort h in host order (gp_hostlist_cmp) and drop repeated names. */
void gp_hostlist_uniq(struct gp_hostlist *h);

/* Host order: by the text around the number, then the number's value, then its width (node2 < node10). */
int gp_hostlist_cmp(const char *a, const char *b);

/* The names folded into ranges, in host order, repeats dropped: "node[01-03,07],x1-ib" (malloc'd; NULL
 * when out of memory). names is not changed. */
char *gp_hostlist_format(char *const *names, int n);

/* Free the names and the list. */
void gp_hostlist_free(struct gp_hostlist *h);

#endif
