/* gpup2p — a small JSON reader: one document parsed into a tree of values (for `gpup2p report`,
 * which reads what doctor and bench wrote). Strings are unescaped UTF-8; numbers are doubles. */
#ifndef GPUP2P_JSONR_H
#define GPUP2P_JSONR_H

#include <stddef.h>

enum gp_jv_type { GP_JV_NULL = 0, GP_JV_BOOL, GP_JV_NUM, GP_JV_STR, GP_JV_ARR, GP_JV_OBJ };

struct gp_jv {
	enum gp_jv_type type;
	const char *key;               /* member name inside an object, else NULL */
	const char *s;                 /* GP_JV_STR */
	double n;                      /* GP_JV_NUM; GP_JV_BOOL: 0 or 1 */
	struct gp_jv *kid;             /* first element or member (arrays, objects) */
	struct gp_jv *next;            /* next sibling */
	int nkid;
};

/* A parsed document: the root value and the memory that holds the tree. */
struct gp_jdoc {
	struct gp_jv *root;
	char *mem;
	size_t used, cap;
};

/* Parse the JSON text s[0..len) (one value, whitespace around it allowed) into d. A string holding
 * \u0000 is refused (strings here are C strings: it would cut them short). 0, or -EINVAL with
 * why[] saying what was wrong and at which byte ("truncated", "expected ':' at byte 17"); -ENOMEM. */
int gp_jdoc_parse(struct gp_jdoc *d, const char *s, size_t len, char *why, size_t whylen);

/* Free what gp_jdoc_parse allocated. */
void gp_jdoc_free(struct gp_jdoc *d);

/* The member `key` of object o, or NULL (also when o is no object). */
const struct gp_jv *gp_jv_get(const struct gp_jv *o, const char *key);

/* The string member `key` of o, or NULL when absent or not a string. */
const char *gp_jv_str(const struct gp_jv *o, const char *key);

/* The number member `key` of o into *v: 1 when it is a number, else 0 (*v untouched). */
int gp_jv_num(const struct gp_jv *o, const char *key, double *v);

#endif
