/* gpup2p — in-process fuzz harnesses: the work folder, commands run in-process with their output
 * captured, and the checks fuzz.py makes on a process (exit codes, terminal-safe text, strict JSON). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gpup2p/jsonr.h"
#include "harness.h"

static char work[4096];
static FILE *out_f, *err_f;
static int fd2 = -1;                   /* the fuzzer's own fd 2 (doctor --nagios points fd 2 at /dev/null) */
static char *cap_out, *cap_err;
static size_t cap_out_n, cap_err_n;

const char *fz_work(void)
{
	return work;
}

static void cleanup(void)
{
	char cmd[4200];

	if (work[0] && strstr(work, "gpup2p-inproc.")) {
		snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", work, work);
		if (system(cmd) != 0)
			fprintf(stderr, "fuzz: could not remove %s\n", work);
	}
}

void fz_setup(void)
{
	struct statvfs st;
	const char *tmp = getenv("TMPDIR");
	char p[4200];

	if (work[0])
		return;
	if (statvfs("/dev/shm", &st) == 0 && (unsigned long long)st.f_bavail * st.f_frsize > (512ull << 20))
		tmp = "/dev/shm";
	snprintf(work, sizeof(work), "%s/gpup2p-inproc.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(work)) {
		fprintf(stderr, "fuzz: mkdtemp %s: %s\n", work, strerror(errno));
		exit(1);
	}
	atexit(cleanup);
	setenv("NO_COLOR", "1", 1);
	setenv("LC_ALL", "C", 1);
	unsetenv("GPUP2P_ROOT");
	if (!getenv("GPUP2P_PCI_IDS"))
		setenv("GPUP2P_PCI_IDS", "tests/fixtures/pci.ids", 1);
	/* the commands print through the FILE pointers stdout and stderr: point them at files (fd 1 and 2
	 * stay: libFuzzer and the sanitizers keep reporting there) */
	snprintf(p, sizeof(p), "%s/stdout", work);
	out_f = fopen(p, "w+");
	snprintf(p, sizeof(p), "%s/stderr", work);
	err_f = fopen(p, "w+");
	if (!out_f || !err_f) {
		fprintf(stderr, "fuzz: cannot create %s: %s\n", p, strerror(errno));
		exit(1);
	}
	stdout = out_f;
	stderr = err_f;
	fd2 = dup(2);
}

static char *slurp(FILE *f, char *old, size_t *n)
{
	long len;
	char *b;

	fflush(f);
	len = ftell(f);
	b = realloc(old, (size_t)(len > 0 ? len : 0) + 1);
	if (!b)
		abort();
	*n = len > 0 ? (size_t)pread(fileno(f), b, (size_t)len, 0) : 0;
	if (*n == (size_t)-1)
		*n = 0;
	b[*n] = '\0';
	return b;
}

int fz_cli(int (*cmd)(struct cli *, int, char **), const char *root, int fmt, int verbose, int argc, char **argv)
{
	struct cli c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.color_mode = "never";
	c.root_dir = root;
	c.fmt = (enum gp_out_format)fmt;
	c.verbose = verbose > 0 ? verbose : 0;
	c.quiet = verbose < 0;
	rewind(out_f);
	rewind(err_f);
	if (ftruncate(fileno(out_f), 0) || ftruncate(fileno(err_f), 0))
		abort();
	rc = cmd(&c, argc, argv);
	cli_unload(&c);
	dup2(fd2, 2);
	cap_out = slurp(out_f, cap_out, &cap_out_n);
	cap_err = slurp(err_f, cap_err, &cap_err_n);
	if (getenv("FZ_SHOW"))
		dprintf(2, "fuzz: %s exit %d\n--- stdout:\n%s--- stderr:\n%s", argv[0], rc, cap_out, cap_err);
	if (rc != 0 && rc != 1 && rc != 2 && rc != 3 && rc != 64 && rc != 69 && rc != 77)
		fz_fail("exit", "%s exited %d, which the man page does not list", argv[0], rc);
	return rc;
}

const char *fz_out(size_t *len)
{
	*len = cap_out_n;
	return cap_out ? cap_out : "";
}

const char *fz_err(size_t *len)
{
	*len = cap_err_n;
	return cap_err ? cap_err : "";
}

/* The code point at s[0..n) in *cp and its length, or 0 when it is no strict UTF-8 (overlong, surrogate,
 * past U+10FFFF, cut). */
static size_t utf8(const unsigned char *s, size_t n, unsigned *cp)
{
	size_t len = s[0] < 0xc2 ? 0 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : s[0] < 0xf5 ? 4 : 0;
	unsigned v;

	if (!len || len > n)
		return 0;
	v = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10ffff)) || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

const char *fz_unsafe(const char *str, size_t n)
{
	static char why[128];
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < n;) {
		unsigned cp = s[i];
		size_t l = 1;

		if (cp >= 0x80 && !(l = utf8(s + i, n - i, &cp))) {
			snprintf(why, sizeof(why), "byte 0x%02x at %zu is no UTF-8", s[i], i);
			return why;
		}
		if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c ||
		    cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
			snprintf(why, sizeof(why), "control U+%04X at byte %zu", cp, i);
			return why;
		}
		i += l;
	}
	return NULL;
}

const char *fz_bad_json(const char *s, size_t n)
{
	static char why[160];
	struct gp_jdoc d = { 0 };
	int rc;

	for (size_t i = 0; i < n;) {
		unsigned cp;
		size_t l = (unsigned char)s[i] < 0x80 ? 1 : utf8((const unsigned char *)s + i, n - i, &cp);

		if (!l) {
			snprintf(why, sizeof(why), "byte 0x%02x at %zu is no UTF-8", (unsigned char)s[i], i);
			return why;
		}
		i += l;
	}
	rc = gp_jdoc_parse(&d, s, n, why, sizeof(why));
	gp_jdoc_free(&d);
	return rc == -EINVAL ? why : NULL;
}

void fz_fail(const char *what, const char *fmt, ...)
{
	FILE *f = fdopen(dup(2), "w");
	va_list ap;

	if (!f)
		abort();
	fprintf(f, "fuzz finding (%s): ", what);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fprintf(f, "\n--- stdout (first 1500 bytes):\n%.1500s\n--- stderr (first 1500 bytes):\n%.1500s\n",
		cap_out ? cap_out : "", cap_err ? cap_err : "");
	fflush(f);
	abort();
}
