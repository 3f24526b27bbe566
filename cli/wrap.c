/* Text for people fits the terminal: the width of a stream's terminal, and words wrapped to it
 * (cli.h). Not a terminal: nothing is wrapped, so that pipes and files get one line per record. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

#define NBSP '\x1f'             /* a space cli_wrap does not break at (printed as a space) */

int cli_term_width_fd(int fd)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	long n = cols && *cols ? strtol(cols, NULL, 10) : 0;

	if (!isatty(fd))
		return 0;
	if (!ioctl(fd, TIOCGWINSZ, &ws) && ws.ws_col > 0)
		return ws.ws_col;
	return n > 0 && n < 10000 ? (int)n : 80;
}

int cli_term_width(void)
{
	return cli_term_width_fd(STDOUT_FILENO);
}

void cli_wrap(FILE *f, const char *s, int col, int ind, int width)
{
	int words = 0;                              /* on this line */

	if (width > 0 && width - ind < 24)          /* a narrow terminal: indent less, not the text */
		ind = width > 32 ? 4 : 0;
	while (*s) {
		int w = (int)strcspn(s, " ");

		if (words && width > 0 && col + 1 + w > width) {
			/* a word wider than the line (a boot parameter) starts a line of its own, whole and
			 * unindented, so that it can be copied */
			col = w > width - ind ? 0 : ind;
			fprintf(f, "\n%*s", col, "");
			words = 0;
		} else if (words) {
			fputc(' ', f);
			col++;
		}
		words++;
		for (int k = 0; k < w; k++)
			fputc(s[k] == NBSP ? ' ' : s[k], f);
		col += w;
		s += w;
		s += strspn(s, " ");
	}
	fputc('\n', f);
}

void cli_wrapf(FILE *f, int lead, int ind, const char *fmt, ...)
{
	char small[1024], *s = small;
	va_list ap;
	int n, width;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(small)) {
		s = malloc((size_t)n + 1);
		if (!s) {                           /* out of memory: the text, unwrapped */
			va_start(ap, fmt);
			fprintf(f, "%*s", lead, "");
			vfprintf(f, fmt, ap);
			fputc('\n', f);
			va_end(ap);
			return;
		}
		va_start(ap, fmt);
		vsnprintf(s, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	fprintf(f, "%*s", lead, "");
	width = cli_term_width_fd(fileno(f));
	if (width > 0)
		cli_wrap(f, s, lead, ind, width);
	else
		fprintf(f, "%s\n", s); /* not a terminal: the text as it is, its spaces kept */
	if (s != small)
		free(s);
}
