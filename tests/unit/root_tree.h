/* gpup2p unit tests — the scratch tree the --root tests build under $TMPDIR (test_root, test_root_mount):
 * its top folder, and files, folders and symlinks made at paths relative to it. */
#ifndef GPUP2P_UNIT_ROOT_TREE_H
#define GPUP2P_UNIT_ROOT_TREE_H

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

static char top[256];

/* Make TOP, a fresh folder under $TMPDIR (/tmp): 0, or -1 if it could not be made. */
static inline int root_top_make(void)
{
	snprintf(top, sizeof(top), "%s/gpup2p-root-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(top) ? 0 : -1;
}

/* Remove TOP and all beneath it. */
static inline void root_top_remove(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (top[0] && system(cmd) != 0)
		printf("# could not remove %s\n", top);
}

/* Write n bytes of text to the file rel (under TOP); nothing if it cannot be opened. */
static inline void put_n(const char *rel, const char *text, size_t n)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	f = fopen(p, "w");
	if (f) {
		fwrite(text, 1, n, f);
		fclose(f);
	}
}

/* Write the string text to the file rel (under TOP). */
static inline void put(const char *rel, const char *text)
{
	put_n(rel, text, strlen(text));
}

/* Make rel (under TOP) a symlink to target; a failure is printed as a comment line. */
static inline void link_to(const char *target, const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (symlink(target, p))
		printf("# symlink %s: %s\n", p, strerror(errno));
}

/* Make the folder rel (under TOP). */
static inline void mk(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	mkdir(p, 0755);
}

#endif
