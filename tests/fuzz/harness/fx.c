/* gpup2p — in-process fuzz harnesses: fixture trees mutated by the input and put back after it.
 *
 * Mutation records, one after another until the input ends:
 *   [path index, 2 bytes little-endian][op][len][len bytes of data]
 * The path list is the extra paths the target names (the readers' own files, present or not), then every
 * entry of the fixture, sorted; an index with bit 15 set picks among the extra paths, else among all.
 * ops (modulo 11): 0 write data; 1 poke: data[0..1] an offset (LE), the rest written there; 2 truncate
 * to data[0..1] bytes (LE; grows with zeros); 3 append data; 4 remove (a folder with all it holds);
 * 5 a named pipe nobody writes; 6 a symlink: data[0] picks the decoy outside the root (absolute), a
 * relative escape to it, /dev/zero, itself, or (data[1..2]) another path of the list, relative or
 * absolute; 7 an empty folder; 8 data repeated to (data[0] + 1) * 4 KiB (long lines, big files);
 * 9 a copy beside it named data (a new device, an odd entry in a folder); 10 insert data at offset
 * data[0..1].
 * FZ_TRACE=1 in the environment prints each record applied (to turn a finding into a fuzz.py case). */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static char decoy[4200];
/* the decoy's bytes: random, and found by their hash, never by a comparison the fuzzer could learn from
 * (libFuzzer takes the operands of memcmp and memmem into its dictionary) */
#define DECOY_LEN 64
static unsigned char decoy_bytes[DECOY_LEN];
static uint64_t decoy_hash;

static uint64_t fnv(const unsigned char *b, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

int fz_is_decoy(const void *b, size_t n)
{
	return n >= DECOY_LEN && fnv(b, DECOY_LEN) == decoy_hash;
}

const char *fz_decoy(void)
{
	return decoy;
}



static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

void fz_rm_rf(const char *p)
{
	struct stat st;

	if (lstat(p, &st))
		return;
	if (S_ISDIR(st.st_mode)) {
		chmod(p, 0755);
		nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	} else {
		unlink(p);
	}
}

static int write_file(const char *p, const void *b, size_t n, int flags)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | flags, 0644);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = n ? write(fd, b, n) : 0;
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

/* Copy src (file, link, folder, pipe) to dst, which must not exist. */
static void copy(const char *src, const char *dst)
{
	struct stat st;
	char buf[65536], a[4200], b[4200];

	if (lstat(src, &st))
		return;
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(src, buf, sizeof(buf) - 1);

		if (n >= 0) {
			buf[n] = '\0';
			if (symlink(buf, dst))
				perror(dst);
		}
	} else if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(src);
		struct dirent *de;

		mkdir(dst, st.st_mode & 07777);
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(a, sizeof(a), "%s/%s", src, de->d_name);
			snprintf(b, sizeof(b), "%s/%s", dst, de->d_name);
			copy(a, b);
		}
		if (d)
			closedir(d);
	} else if (S_ISFIFO(st.st_mode)) {
		mkfifo(dst, 0644);
	} else if (S_ISREG(st.st_mode)) {
		int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_EXCL, st.st_mode & 07777);
		ssize_t n;

		while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				break;
		if (in >= 0)
			close(in);
		if (out >= 0)
			close(out);
	}
}

static struct fz_tree *walking;
static size_t walk_skip;

static int add_path(struct fz_tree *t, const char *rel)
{
	char **p = realloc(t->path, (size_t)(t->npath + 1) * sizeof(*p));

	if (!p || !(p[t->npath] = strdup(rel)))
		abort();
	t->path = p;
	t->npath++;
	return 0;
}

static int walk_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0)
		add_path(walking, p + walk_skip);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void fz_tree_open(struct fz_tree *t, const char *name, const char *const *extra)
{
	const char *top = getenv("GPUP2P_FUZZ_FIXTURES");
	char src[4200];
	struct stat st;

	fz_setup();
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(src, sizeof(src), "%s/%s", top ? top : "build/fixtures", name);
	if (stat(src, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "fuzz: no fixture %s: run make fixtures (or set GPUP2P_FUZZ_FIXTURES)\n", src);
		exit(1);
	}
	if (!decoy[0]) {
		snprintf(decoy, sizeof(decoy), "%s/outside", fz_work());
		mkdir(decoy, 0755);
		int fd = open("/dev/urandom", O_RDONLY);

		if (fd < 0 || read(fd, decoy_bytes, DECOY_LEN) != DECOY_LEN)
			abort();
		close(fd);
		decoy_hash = fnv(decoy_bytes, DECOY_LEN);
		snprintf(decoy, sizeof(decoy), "%s/outside/decoy", fz_work());
		write_file(decoy, decoy_bytes, DECOY_LEN, O_TRUNC);
	}
	for (char *c = t->name; *c; c++)
		if (*c == '/')
			*c = '_';
	snprintf(t->pristine, sizeof(t->pristine), "%s/p-%s", fz_work(), t->name);
	snprintf(t->root, sizeof(t->root), "%s/r-%s", fz_work(), t->name);
	copy(src, t->pristine);
	copy(src, t->root);
	for (; extra && *extra; extra++)
		add_path(t, *extra);
	t->nextra = t->npath;
	walking = t;
	walk_skip = strlen(t->pristine) + 1;
	nftw(t->pristine, walk_one, 16, FTW_PHYS);
	qsort(t->path + t->nextra, (size_t)(t->npath - t->nextra), sizeof(*t->path), cmp_str);
}

void fz_trees_open(struct fz_tree *t, const char *const *names, int n, const char *const *extra)
{
	for (int i = 0; i < n; i++)
		fz_tree_open(&t[i], names[i], extra);
}

static void touch(struct fz_tree *t, const char *rel)
{
	if (t->ntouched == t->tcap) {
		t->tcap = t->tcap ? t->tcap * 2 : 16;
		t->touched = realloc(t->touched, (size_t)t->tcap * sizeof(*t->touched));
		if (!t->touched)
			abort();
	}
	if (!(t->touched[t->ntouched++] = strdup(rel)))
		abort();
}

/* The link target of a symlink at rel (op 6). */
static void link_target(const struct fz_tree *t, const char *rel, const uint8_t *d, size_t n, char *out, size_t len)
{
	int depth = 0, k = n > 0 ? d[0] % 6 : 0;
	const char *other = t->path[(n > 2 ? d[1] | d[2] << 8 : 0) % t->npath];
	char up[2048] = "";

	for (const char *c = rel; *c; c++)
		depth += *c == '/';
	for (int i = 0; i < depth && strlen(up) + 4 < sizeof(up); i++)
		strcat(up, "../");
	if (k == 0)
		snprintf(out, len, "%s", decoy);
	else if (k == 1)
		snprintf(out, len, "%s../outside/decoy", up);
	else if (k == 2)
		snprintf(out, len, "/dev/zero");
	else if (k == 3)
		snprintf(out, len, "%s", strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel);
	else if (k == 4)
		snprintf(out, len, "%s%s", up, other);
	else
		snprintf(out, len, "/%s", other);
}

/* 1 when every folder above rel in the tree is a folder (no link: a write there could leave the root). */
static int parents_real(const struct fz_tree *t, const char *rel)
{
	char p[4200];
	struct stat st;

	for (const char *c = strchr(rel, '/'); c; c = strchr(c + 1, '/')) {
		snprintf(p, sizeof(p), "%s/%.*s", t->root, (int)(c - rel), rel);
		if (lstat(p, &st) || !S_ISDIR(st.st_mode))
			return 0;
	}
	return 1;
}

static void apply(struct fz_tree *t, const char *rel, int op, const uint8_t *d, size_t n)
{
	char p[4200], q[4200], tgt[4200];
	unsigned off = n >= 2 ? (unsigned)(d[0] | d[1] << 8) : 0;
	struct stat st;
	int fd;

	if (!parents_real(t, rel))
		return;
	snprintf(p, sizeof(p), "%s/%s", t->root, rel);
	if (op != 9)
		touch(t, rel);
	switch (op) {
	case 0:
		fz_rm_rf(p);
		write_file(p, d, n, O_TRUNC);
		break;
	case 1:
	case 10:
		if (lstat(p, &st) || !S_ISREG(st.st_mode) || n < 2)
			break;
		fd = open(p, O_RDWR | O_NOFOLLOW);
		if (fd < 0)
			break;
		if (op == 10) {
			size_t sz = (size_t)st.st_size, at = off < sz ? off : sz;
			char *b = malloc(sz + n);

			if (b && pread(fd, b, sz, 0) == (ssize_t)sz) {
				memmove(b + at + n - 2, b + at, sz - at);
				memcpy(b + at, d + 2, n - 2);
				if (pwrite(fd, b, sz + n - 2, 0) < 0)
					perror(p);
			}
			free(b);
		} else if (pwrite(fd, d + 2, n - 2, off) < 0) {
			perror(p);
		}
		close(fd);
		break;
	case 2:
		if (!lstat(p, &st) && S_ISREG(st.st_mode) && truncate(p, off))
			perror(p);
		break;
	case 3:
		if (!lstat(p, &st) && S_ISREG(st.st_mode))
			write_file(p, d, n, O_APPEND);
		break;
	case 4:
		fz_rm_rf(p);
		break;
	case 5:
		fz_rm_rf(p);
		mkfifo(p, 0644);
		break;
	case 6:
		fz_rm_rf(p);
		link_target(t, rel, d, n, tgt, sizeof(tgt));
		if (symlink(tgt, p) && errno != ENOENT)
			perror(p);
		break;
	case 7:
		fz_rm_rf(p);
		mkdir(p, 0755);
		break;
	case 8: {
		size_t sz = ((size_t)(n ? d[0] : 0) + 1) * 4096;
		char *b = malloc(sz);

		if (!b)
			abort();
		for (size_t i = 0; i < sz; i++)
			b[i] = n > 1 ? (char)d[1 + i % (n - 1)] : 'x';
		fz_rm_rf(p);
		write_file(p, b, sz, O_TRUNC);
		free(b);
		break;
	}
	case 9: {
		char name[256], sib[4200];
		const char *slash = strrchr(rel, '/');
		size_t k = 0;

		for (size_t i = 0; i < n && k + 1 < sizeof(name); i++)
			if (d[i] != '/' && d[i] != '\0')
				name[k++] = (char)d[i];
		name[k] = '\0';
		if (!k || !strcmp(name, ".") || !strcmp(name, ".."))
			break;
		snprintf(sib, sizeof(sib), "%.*s%s%s", slash ? (int)(slash - rel) : 0, rel, slash ? "/" : "", name);
		snprintf(q, sizeof(q), "%s/%s", t->root, sib);
		if (!lstat(q, &st))
			break;
		touch(t, sib);
		copy(p, q);
		break;
	}
	}
}

size_t fz_tree_mutate(struct fz_tree *t, const uint8_t *data, size_t n)
{
	size_t i = 0;
	static int trace = -1;

	if (trace < 0)
		trace = getenv("FZ_TRACE") != NULL;
	while (i + 4 <= n) {
		unsigned idx = data[i] | data[i + 1] << 8;
		const char *rel = (idx & 0x8000) && t->nextra ? t->path[idx % t->nextra]
							      : t->path[idx % t->npath];
		int op = data[i + 2] % 11;
		size_t len = data[i + 3] < n - i - 4 ? data[i + 3] : n - i - 4;

		if (trace) {
			dprintf(2, "fuzz: %s: op %d on %s, %zu bytes:", t->name, op, rel, len);
			for (size_t k = 0; k < len; k++)
				dprintf(2, " %02x", data[i + 4 + k]);
			dprintf(2, "\n");
		}
		apply(t, rel, op, data + i + 4, len);
		i += 4 + len;
	}
	return i;
}

void fz_tree_restore(struct fz_tree *t)
{
	char p[4200], q[4200], b[DECOY_LEN + 16];
	int fd;
	ssize_t n;

	/* last change first: a folder replaced after a change beneath it is back before that change is undone */
	for (int i = t->ntouched - 1; i >= 0; i--) {
		snprintf(p, sizeof(p), "%s/%s", t->root, t->touched[i]);
		snprintf(q, sizeof(q), "%s/%s", t->pristine, t->touched[i]);
		if (parents_real(t, t->touched[i])) {
			fz_rm_rf(p);
			copy(q, p);
		}
		free(t->touched[i]);
	}
	t->ntouched = 0;
	fd = open(decoy, O_RDONLY);
	n = fd >= 0 ? read(fd, b, sizeof(b)) : -1;
	if (fd >= 0)
		close(fd);
	if (n != DECOY_LEN || !fz_is_decoy(b, (size_t)n))
		fz_fail("escape", "the decoy outside the root %s was written", decoy);
}
