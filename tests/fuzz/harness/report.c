/* gpup2p — in-process fuzz target "report": `gpup2p report` (cli/cmd_report.c and libcore/report) on
 * one input: its stdin stream (pdsh/clush/srun lines, documents), or a clush --outdir folder, with
 * --expect and --below. Checks: exit code, text/CSV/stderr safe on a terminal, --json strict JSON.
 *
 * Input: [flags][--expect host list up to '\n', when flags bit 3][the rest]
 *   flags bits 0-1: text, --json, --csv, text; bit 2: -v; bit 4: the rest is a folder of files, split at
 *   each "\0\1" into "NAME\nCONTENT" (NAME: the host, '/' dropped), else it is stdin; bit 5: --below from
 *   bits 6-7 (0.5, 1, 0, 1e-300). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "harness.h"

int cmd_report(struct cli *c, int argc, char **argv);

static char dir[4200];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup();
	snprintf(dir, sizeof(dir), "%s/rep", fz_work());
	return 0;
}

/* Write the folder of files the input describes; 0, or -1 when nothing could be written. */
static int write_dir(const char *s, size_t n)
{
	char p[4500], name[256];
	size_t i = 0;
	int nfile = 0;

	fz_rm_rf(dir);
	mkdir(dir, 0755);
	while (i <= n && nfile < 64) {
		const char *sep = memmem(s + i, n - i, "\0\1", 2), *nl;
		size_t end = sep ? (size_t)(sep - s) : n, k = 0;
		int fd;

		nl = memchr(s + i, '\n', end - i);
		for (const char *c = s + i; nl && c < nl && k + 1 < sizeof(name); c++)
			if (*c != '/' && *c != '\0')
				name[k++] = *c;
		name[k] = '\0';
		if (!k || !strcmp(name, ".") || !strcmp(name, ".."))
			snprintf(name, sizeof(name), "node%02d", nfile);
		snprintf(p, sizeof(p), "%s/%s", dir, name);
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
		if (fd >= 0) {
			const char *body = nl ? nl + 1 : s + i;

			if (write(fd, body, (size_t)(s + end - body)) < 0)
				perror(p);
			close(fd);
		}
		nfile++;
		i = end + 2;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const below[] = { "0.5", "1", "0", "1e-300" };
	static const int fmt[] = { GP_OUT_TABLE, GP_OUT_JSON, GP_OUT_CSV, GP_OUT_TABLE };
	char *argv[8], *expect = NULL, *in;
	const char *s, *why, *o, *e;
	size_t n, no, ne;
	int argc = 0, flags, rc;
	FILE *f = NULL, *saved = stdin;

	if (size < 1)
		return 0;
	flags = data[0];
	s = (const char *)data + 1;
	n = size - 1;
	argv[argc++] = "report";
	if (flags & 8) {
		const char *nl = memchr(s, '\n', n);
		size_t l = nl ? (size_t)(nl - s) : n;

		if (!(expect = strndup(s, l)))
			abort();
		argv[argc++] = "--expect";
		argv[argc++] = expect;
		s += nl ? l + 1 : l;
		n -= nl ? l + 1 : l;
	}
	if (flags & 32) {
		argv[argc++] = "--below";
		argv[argc++] = (char *)below[(flags >> 6) & 3];
	}
	/* a copy: fmemopen needs a buffer it may write a NUL after (mode "r" does not, but be safe) */
	if (!(in = malloc(n + 1)))
		abort();
	memcpy(in, s, n);
	in[n] = '\0';
	if (flags & 16) {
		write_dir(in, n);
		argv[argc++] = dir;
	} else {
		argv[argc++] = "-";
		f = n ? fmemopen(in, n, "r") : fopen("/dev/null", "r");
		if (!f)
			abort();
		stdin = f;
	}
	argv[argc] = NULL;
	rc = fz_cli(cmd_report, NULL, fmt[flags & 3], (flags & 4) ? 1 : 0, argc, argv);
	stdin = saved;
	if (f)
		fclose(f);
	o = fz_out(&no);
	e = fz_err(&ne);
	if (fmt[flags & 3] == GP_OUT_JSON && rc != 64 && (why = fz_bad_json(o, no)))
		fz_fail("json", "report --json printed no strict JSON: %s", why);
	if (fmt[flags & 3] != GP_OUT_JSON && (why = fz_unsafe(o, no)))
		fz_fail("inject", "report's output is unsafe on a terminal: %s", why);
	if ((why = fz_unsafe(e, ne)))
		fz_fail("inject", "report's errors are unsafe on a terminal: %s", why);
	free(expect);
	free(in);
	return 0;
}
