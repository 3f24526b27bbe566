/* gpup2p — snapshot: the archive written as it is captured. Each folder, file and link becomes a tar
 * member (POSIX ustar, as `tar --format=ustar -czf` wrote it: the same names, modes, owner and record
 * size; a name past ustar's fields, or a link target past 100 bytes, in GNU's long-name member first)
 * compressed in this process by zlib as it is made, so that nothing is staged on disk: a snapshot of a
 * host with thousands of SR-IOV functions was tens of thousands of files created, archived and removed,
 * and then a gzip(1) process fed through a pipe (at 4000 functions its 0.44 s of CPU against zlib's
 * 0.2 s for the same level). Long names go in ustar's prefix field rather than GNU's long-name members:
 * those were two blocks more for most members of a host's RDMA ports, 36% of the tar stream that zlib
 * compresses (224,000 of 614,000 blocks at 4000 functions on tests/perf/scale.sh's full host). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "snapshot/internal.h"

#define BLOCK 512
#define RECORD (20 * BLOCK)      /* GNU tar's default blocking factor: the archive is whole records */
#define NAME_MAX_FIELD 100       /* longer names go in the prefix field (ustar), or in a ././@LongLink member
                                    first, as longer link targets do */
#define PREFIX_MAX_FIELD 155

#define ZBUF (1u << 18)           /* 256 KiB of tar into zlib at a time, 256 KiB of its output out */

struct gp_snap_tar {
	z_stream z;              /* the gzip stream (deflateInit2'ed: zinit) */
	int zinit;
	int fd;                  /* the archive */
	size_t inlen;            /* tar bytes waiting in in[] */
	unsigned char in[ZBUF], zout[ZBUF];
	unsigned char tmpl[2][BLOCK];   /* a header's fields that are the same in every member: [0] a member's,
	                                   [1] a long-name member's (root, time 0) */
	const char *file;        /* its name */
	unsigned long long out;  /* bytes of tar written */
	mode_t umask;
	time_t now;
	uid_t uid;
	gid_t gid;
	char uname[32], gname[32];
};

/* v in octal into a field of w bytes (w - 1 digits and a NUL); too large for it: GNU's base-256 form. */
static void num(char *field, size_t w, unsigned long long v)
{
	if (v < (1ull << (3 * (w - 1)))) { /* digit by digit: a printf each was a tenth of the capture's CPU */
		field[w - 1] = '\0';
		for (size_t i = w - 1; i > 0; i--, v >>= 3)
			field[i - 1] = (char)('0' + (v & 7));
		return;
	}
	if (w >= 12) {
		snprintf(field, w, "%0*llo", (int)w - 1, v);
		return;
	}
	memset(field, 0, w);
	field[0] = (char)0x80;
	for (size_t i = w - 1; i > 0 && v; i--, v >>= 8)
		field[i] = (char)(v & 0xff);
}

/* Compress what waits in in[] (flush: Z_NO_FLUSH, or Z_FINISH at the end) and write what zlib gives.
 * 0 or a negative errno: the file's write's (ENOSPC, EFBIG), EIO for zlib's own failure. */
static int deflate_in(struct gp_snap_tar *t, int flush)
{
	int zrc;

	t->z.next_in = t->in;
	t->z.avail_in = (uInt)t->inlen;
	do {
		unsigned char *o = t->zout;
		size_t n;

		t->z.next_out = t->zout;
		t->z.avail_out = ZBUF;
		if ((zrc = deflate(&t->z, flush)) == Z_STREAM_ERROR)
			return -EIO;
		for (n = ZBUF - t->z.avail_out; n;) {
			ssize_t w = write(t->fd, o, n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			o += w;
			n -= (size_t)w;
		}
	} while (t->z.avail_out == 0 || (flush == Z_FINISH && zrc != Z_STREAM_END));
	t->inlen = 0;
	return 0;
}

static int put(struct gp_snap_tar *t, const void *p, size_t n)
{
	const unsigned char *b = p;
	int rc;

	t->out += n;
	while (n) {
		size_t k = ZBUF - t->inlen < n ? ZBUF - t->inlen : n;

		memcpy(t->in + t->inlen, b, k);
		t->inlen += k;
		b += k;
		n -= k;
		if (t->inlen == ZBUF && (rc = deflate_in(t, Z_NO_FLUSH)))
			return rc;
	}
	return 0;
}

/* zeros up to the next multiple of `to` bytes, written in place */
static int pad(struct gp_snap_tar *t, unsigned long long to)
{
	size_t n = (size_t)((to - t->out % to) % to);
	int rc;

	while (n) {
		size_t k = ZBUF - t->inlen < n ? ZBUF - t->inlen : n;

		memset(t->in + t->inlen, 0, k);
		t->inlen += k;
		t->out += k;
		n -= k;
		if (t->inlen == ZBUF && (rc = deflate_in(t, Z_NO_FLUSH)))
			return rc;
	}
	return 0;
}

/* Where a name longer than the header's field is cut for ustar's prefix field: the offset of the '/'
 * that leaves at most 155 bytes before it and 1 to 100 after it, or 0 when none does (or none is needed). */
static size_t ustar_split(const char *name, size_t l)
{
	if (l <= NAME_MAX_FIELD)
		return 0;
	for (size_t i = l - NAME_MAX_FIELD - 1; i <= PREFIX_MAX_FIELD && i + 1 < l; i++)
		if (name[i] == '/')
			return i;
	return 0;
}

/* The fields every header holds alike (owner, time, magic, device numbers), for a member (ll 0) or a
 * long-name member (ll 1), the checksum field as the sum counts it (spaces). */
static void header_template(struct gp_snap_tar *t, int ll)
{
	unsigned char *h = t->tmpl[ll];

	memset(h, 0, BLOCK);
	num((char *)h + 108, 8, ll ? 0 : t->uid);
	num((char *)h + 116, 8, ll ? 0 : t->gid);
	num((char *)h + 136, 12, ll ? 0 : (unsigned long long)t->now);
	memset(h + 148, ' ', 8);
	memcpy(h + 257, "ustar\0" "00", 8);
	memcpy(h + 265, ll ? "root" : t->uname, strlen(ll ? "root" : t->uname));
	memcpy(h + 297, ll ? "root" : t->gname, strlen(ll ? "root" : t->gname));
	num((char *)h + 329, 8, 0); /* device numbers: none */
	num((char *)h + 337, 8, 0);
}

/* One header block (POSIX ustar's, as GNU tar writes it with --format=ustar): name (a longer one in the
 * prefix field where it splits there, else cut to the field: a long-name member was given before),
 * type, mode, size, link; the rest from the template. Built in place in the stream's buffer (no copy
 * of it, no field written twice: with the copy and a printf each, headers were 3% of the CPU). */
static int header(struct gp_snap_tar *t, const char *name, char type, unsigned mode, unsigned long long size,
		  const char *link, int longlink)
{
	unsigned char local[BLOCK], *h = t->inlen + BLOCK <= ZBUF ? t->in + t->inlen : local;
	size_t l = strlen(name), cut = ustar_split(name, l);
	unsigned sum = 0;

	memcpy(h, t->tmpl[longlink != 0], BLOCK);
	if (cut) {
		memcpy(h, name + cut + 1, l - cut - 1);
		memcpy(h + 345, name, cut);
	} else {
		memcpy(h, name, l < NAME_MAX_FIELD ? l : NAME_MAX_FIELD);
	}
	num((char *)h + 100, 8, mode);
	num((char *)h + 124, 12, size);
	h[156] = (unsigned char)type;
	if (link)
		memcpy(h + 157, link, strnlen(link, NAME_MAX_FIELD));
	{ /* the bytes' sum, 8 at a time in 16-bit lanes (64 words of 8 bytes: at most 32,640 a lane) */
		uint64_t lanes = 0, w;

		for (size_t i = 0; i < BLOCK; i += 8) {
			memcpy(&w, h + i, 8);
			lanes += (w & 0x00ff00ff00ff00ffull) + ((w >> 8) & 0x00ff00ff00ff00ffull);
		}
		sum = (unsigned)((lanes & 0xffff) + ((lanes >> 16) & 0xffff) + ((lanes >> 32) & 0xffff) + (lanes >> 48));
	}
	num((char *)h + 148, 7, sum); /* six digits, a NUL and a space */
	h[155] = ' ';
	if (h == local)
		return put(t, h, BLOCK);
	t->inlen += BLOCK;
	t->out += BLOCK;
	return t->inlen == ZBUF ? deflate_in(t, Z_NO_FLUSH) : 0;
}

/* A name or link target longer than its field (a name: that ustar's prefix cannot take either): a
 * GNU ././@LongLink member of type kind ('L', 'K') first, which GNU tar, bsdtar and Python read in any
 * format. */
static int longlink(struct gp_snap_tar *t, char kind, const char *s)
{
	size_t l = strlen(s) + 1;
	int rc;

	if (l <= NAME_MAX_FIELD || (kind == 'L' && ustar_split(s, l - 1)))
		return 0;
	if ((rc = header(t, "././@LongLink", kind, 0644, l, NULL, 1)) || (rc = put(t, s, l)))
		return rc;
	return pad(t, BLOCK);
}

int gp_snap_tar_add(struct gp_snap *s, const char *live, char type, const void *data, size_t len, const char *link)
{
	struct gp_snap_tar *t = s->tar;
	char name[GP_PATH_MAX + 256];
	unsigned mode = type == GP_TAR_DIR ? 0755 : type == GP_TAR_LINK ? 0777 : 0644;
	int rc, n;

	/* the top folder, the live path ("/": none), a folder's slash (a printf each was 3% of the CPU) */
	{
		size_t dl = strlen(s->dir), ll = strcmp(live, "/") ? strlen(live) : 0;

		if (dl + ll + 2 > sizeof(name))
			return ENAMETOOLONG;
		memcpy(name, s->dir, dl);
		memcpy(name + dl, live, ll);
		n = (int)(dl + ll);
		if (type == GP_TAR_DIR)
			name[n++] = '/';
		name[n] = '\0';
	}
	if (type != GP_TAR_LINK)
		mode &= ~(unsigned)t->umask;
	if ((rc = longlink(t, 'L', name)) || (link && (rc = longlink(t, 'K', link))) ||
	    (rc = header(t, name, type, mode, type == GP_TAR_FILE ? len : 0, link, 0)) ||
	    (type == GP_TAR_FILE && ((rc = put(t, data, len)) || (rc = pad(t, BLOCK)))))
		return -rc;
	return 0;
}

/* The archive could not be written: rc the write's errno (EIO: zlib's own failure). */
static int gz_fail(struct gp_snap *s, int rc)
{
	return gp_err_set(s->e, GP_E_FAIL, rc, "cannot write %s: %s", s->shown, strerror(rc));
}

int gp_snap_tar_open(struct gp_snap *s, const char *file)
{
	struct gp_snap_tar *t = calloc(1, sizeof(*t));
	struct passwd *pw;
	struct group *gr;
	int fd, rc;

	if (!t)
		return gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory");
	t->file = file;
	t->umask = umask(0);
	umask(t->umask);
	t->now = time(NULL);
	t->uid = getuid();
	t->gid = getgid();
	pw = getpwuid(t->uid);
	gr = getgrgid(t->gid);
	snprintf(t->uname, sizeof(t->uname), "%s", pw ? pw->pw_name : "");
	snprintf(t->gname, sizeof(t->gname), "%s", gr ? gr->gr_name : "");
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		rc = errno;
		free(t);
		return gp_err_set(s->e, rc == EACCES ? GP_E_PERM : GP_E_FAIL, rc, "%s: %s", s->shown, strerror(rc));
	}
	/* gzip's fastest level: the stream is 1 KiB of header and block per sysfs file of a few bytes, mostly
	 * zeros; at 4000 functions (113 MB of tar) -1 writes 2.5 MB, -6 1.6 MB for 1.7 times the CPU: the
	 * archive's largest cost after the reads, for a size that matters little. Its hash table at zlib's
	 * memLevel 6, not gzopen's 8: a quarter as large, so that each 32 KiB the window slides moves less
	 * (at N=4000 on scale.sh's full host: 0.25 s of CPU, not 0.30 s, for 1.4% more bytes). */
	s->tar = t;
	t->fd = fd;
	header_template(t, 0);
	header_template(t, 1);
	if (deflateInit2(&t->z, 1, Z_DEFLATED, 15 + 16, 6, Z_DEFAULT_STRATEGY) != Z_OK)
		return gp_snap_tar_close(s, gp_err_set(s->e, GP_E_FAIL, ENOMEM, "out of memory"));
	t->zinit = 1;
	rc = gp_snap_tar_add(s, "/", GP_TAR_DIR, NULL, 0, NULL);
	return rc ? gp_snap_tar_close(s, gz_fail(s, rc)) : 0;
}

int gp_snap_tar_close(struct gp_snap *s, int rc)
{
	struct gp_snap_tar *t = s->tar;

	if (!t)
		return rc;
	/* the end: two zero blocks, then whole records, then the stream's end */
	if (!rc && t->zinit && ((rc = pad(t, BLOCK)) || (rc = put(t, (char[2 * BLOCK]){ 0 }, 2 * BLOCK)) ||
				(rc = pad(t, RECORD)) || (rc = deflate_in(t, Z_FINISH))))
		rc = gz_fail(s, -rc);
	if (t->zinit)
		deflateEnd(&t->z);
	if (close(t->fd) && !rc)
		rc = gz_fail(s, errno);
	if (rc)
		unlink(t->file);
	free(t);
	s->tar = NULL;
	return rc;
}
