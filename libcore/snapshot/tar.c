/* gpup2p — snapshot: the archive written as it is captured. Each folder, file and link becomes a tar
 * member (GNU tar's format, as `tar -czf` wrote it: the same names, modes, owner and record size)
 * streamed into gzip(1), so that nothing is staged on disk: a snapshot of a host with thousands of
 * SR-IOV functions was tens of thousands of files created, archived and removed. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "snapshot/internal.h"

extern char **environ;

#define BLOCK 512
#define RECORD (20 * BLOCK)      /* GNU tar's default blocking factor: the archive is whole records */
#define NAME_MAX_FIELD 100       /* longer names and link targets go in a ././@LongLink member first */

struct gp_snap_tar {
	FILE *f;                 /* gzip's standard input */
	pid_t pid;               /* gzip */
	const char *file;        /* the archive */
	unsigned long long out;  /* bytes of tar written */
	mode_t umask;
	time_t now;
	uid_t uid;
	gid_t gid;
	char uname[32], gname[32];
	struct sigaction pipe_was; /* SIGPIPE's handling before (ignored while gzip reads) */
	char buf[1 << 18];       /* the stream's buffer: a write to gzip per 256 KiB */
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

static int put(struct gp_snap_tar *t, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, t->f) != n)
		return -EIO;
	t->out += n;
	return 0;
}

/* zeros up to the next multiple of `to` bytes */
static int pad(struct gp_snap_tar *t, unsigned long long to)
{
	static const char zero[BLOCK];
	size_t n = (size_t)((to - t->out % to) % to);

	for (int rc; n; n -= n > BLOCK ? BLOCK : n)
		if ((rc = put(t, zero, n > BLOCK ? BLOCK : n)))
			return rc;
	return 0;
}

/* One header block: name (cut to the field: a longer one was given before), type, mode, size, link. */
static int header(struct gp_snap_tar *t, const char *name, char type, unsigned mode, unsigned long long size,
		  const char *link, int longlink)
{
	unsigned char h[BLOCK];
	unsigned sum = 0;

	memset(h, 0, sizeof(h));
	memcpy(h, name, strnlen(name, NAME_MAX_FIELD));
	num((char *)h + 100, 8, mode);
	num((char *)h + 108, 8, longlink ? 0 : t->uid);
	num((char *)h + 116, 8, longlink ? 0 : t->gid);
	num((char *)h + 124, 12, size);
	num((char *)h + 136, 12, longlink ? 0 : (unsigned long long)t->now);
	h[156] = (unsigned char)type;
	if (link)
		memcpy(h + 157, link, strnlen(link, NAME_MAX_FIELD));
	memcpy(h + 257, "ustar  ", 8); /* GNU: magic and version as one field */
	memcpy(h + 265, longlink ? "root" : t->uname, strlen(longlink ? "root" : t->uname));
	memcpy(h + 297, longlink ? "root" : t->gname, strlen(longlink ? "root" : t->gname));
	memset(h + 148, ' ', 8);
	for (size_t i = 0; i < sizeof(h); i++)
		sum += h[i];
	num((char *)h + 148, 7, sum); /* six digits, a NUL and a space */
	h[155] = ' ';
	return put(t, h, sizeof(h));
}

/* A name or link target longer than its field: a ././@LongLink member of type kind ('L', 'K') first. */
static int longlink(struct gp_snap_tar *t, char kind, const char *s)
{
	size_t l = strlen(s) + 1;
	int rc;

	if (l <= NAME_MAX_FIELD)
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

	n = snprintf(name, sizeof(name), "%s%s%s", s->dir, strcmp(live, "/") ? live : "", type == GP_TAR_DIR ? "/" : "");
	if (n < 0 || (size_t)n >= sizeof(name))
		return ENAMETOOLONG;
	if (type != GP_TAR_LINK)
		mode &= ~(unsigned)t->umask;
	if ((rc = longlink(t, 'L', name)) || (link && (rc = longlink(t, 'K', link))) ||
	    (rc = header(t, name, type, mode, type == GP_TAR_FILE ? len : 0, link, 0)) ||
	    (type == GP_TAR_FILE && ((rc = put(t, data, len)) || (rc = pad(t, BLOCK)))))
		return -rc;
	return 0;
}

int gp_snap_tar_open(struct gp_snap *s, const char *file)
{
	struct gp_snap_tar *t = calloc(1, sizeof(*t));
	/* gzip's fastest level: the stream is 1 KiB of header and block per sysfs file of a few bytes, mostly
	 * zeros; at 4000 functions (113 MB of tar) -1 takes 0.44 s of CPU and writes 2.5 MB, the default
	 * -6 0.74 s and 1.6 MB: the archive's largest cost after the reads, for a size that matters little */
	char *argv[] = { "gzip", "-1", "-c", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct passwd *pw;
	struct group *gr;
	sigset_t def;
	int p[2], fd, rc;

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
	if (pipe2(p, O_CLOEXEC)) {
		rc = errno;
		close(fd), unlink(file), free(t);
		return gp_err_set(s->e, GP_E_FAIL, rc, "pipe: %s", strerror(rc));
	}
	/* gzip reads the pipe and writes the archive; it starts with SIGPIPE as the default */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	posix_spawnattr_init(&at);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawnp(&t->pid, "gzip", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[0]), close(fd);
	(void)fcntl(p[1], F_SETPIPE_SZ, 1 << 20); /* fewer, larger reads for gzip (the default cap: 1 MiB) */
	if (rc) {
		close(p[1]), unlink(file), free(t);
		return gp_err_set(s->e, GP_E_UNAVAIL, rc, "cannot run gzip: %s (install gzip, or write a directory with "
				  "gpup2p snapshot --dir)", strerror(rc));
	}
	/* a gzip that died makes a write fail (EPIPE), not this process end */
	sigaction(SIGPIPE, &ign, &t->pipe_was);
	if (!(t->f = fdopen(p[1], "w"))) {
		rc = errno;
		close(p[1]);
	} else {
		/* glibc ignores the size without a buffer: the pipe's page would make a write per 4 KiB */
		setvbuf(t->f, t->buf, _IOFBF, sizeof(t->buf));
	}
	s->tar = t;
	if (!t->f)
		return gp_snap_tar_close(s, gp_err_set(s->e, GP_E_FAIL, rc, "fdopen: %s", strerror(rc)));
	return gp_snap_tar_add(s, "/", GP_TAR_DIR, NULL, 0, NULL) ? gp_snap_tar_close(s, gp_err_set(s->e, GP_E_FAIL, EIO,
						"gzip failed writing %s", s->shown)) : 0;
}

int gp_snap_tar_close(struct gp_snap *s, int rc)
{
	struct gp_snap_tar *t = s->tar;
	int status, bad = 0;

	if (!t)
		return rc;
	/* the end: two zero blocks, then whole records */
	if (!rc && t->f && (pad(t, BLOCK) || put(t, (char[2 * BLOCK]){ 0 }, 2 * BLOCK) || pad(t, RECORD)))
		bad = 1;
	if (t->f && fclose(t->f))
		bad = 1;
	while (waitpid(t->pid, &status, 0) < 0)
		if (errno != EINTR) {
			status = -1;
			break;
		}
	sigaction(SIGPIPE, &t->pipe_was, NULL);
	if (!rc && (bad || status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
		rc = gp_err_set(s->e, GP_E_FAIL, EIO, "gzip failed writing %s", s->shown);
	if (rc)
		unlink(t->file);
	free(t);
	s->tar = NULL;
	return rc;
}
