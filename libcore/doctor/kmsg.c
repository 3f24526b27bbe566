/* gpup2p doctor — the kernel log as gpu.xid and nvlink.sxid read it (opt-in: --kmsg), and the NVSwitch
 * driver's SXid lines. Live: /dev/kmsg without blocking, from the oldest record still in the buffer;
 * under --root: ROOT/dev/kmsg, a regular file with kmsg records or `dmesg` lines. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xid.h"

#define KMSG "/dev/kmsg"
#define LINE_MAX_ 16384          /* a kmsg record is at most 8 KiB with its dictionary */
#define LOG_MAX (256u << 20)     /* stop after this much (a runaway log) */

/* /dev/kmsg gives one record per read(), from the oldest still in the buffer (lseek to 0 asks for it),
 * and EAGAIN at its end (O_NONBLOCK); EPIPE says records were overwritten while we read. A regular file
 * gives bytes up to end of file: lines are split the same way for both. */
int gp_doctor_kmsg_read(const struct gp_doctor_ctx *c, void (*cb)(void *arg, const char *line), void *arg,
			long *lost)
{
	char *buf = malloc(LINE_MAX_ + 1);
	size_t len = 0, total = 0;
	int fd, rc = 0, skip = 0;

	if (!buf)
		return -ENOMEM;
	if ((fd = gp_root_open(c->root, KMSG, O_RDONLY | O_NONBLOCK)) < 0) {
		free(buf);
		return fd;
	}
	(void)lseek(fd, 0, SEEK_SET);
	while (total < LOG_MAX) {
		ssize_t n = read(fd, buf + len, LINE_MAX_ - len);
		char *line, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE) {
			++*lost;
			continue;
		}
		if (n < 0) {
			rc = errno == EAGAIN ? 0 : -errno;
			break;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		len += (size_t)n;
		buf[len] = '\0';
		for (line = buf; (nl = memchr(line, '\n', len - (size_t)(line - buf))); line = nl + 1) {
			*nl = '\0';
			if (!skip)
				cb(arg, line);
			skip = 0;
		}
		len -= (size_t)(line - buf);
		memmove(buf, line, len);
		if (len == LINE_MAX_) { /* a line longer than any record: not an Xid line, skip to its end */
			len = 0;
			skip = 1;
		}
	}
	if (!rc && len && !skip) {
		buf[len] = '\0';
		cb(arg, buf);
	}
	close(fd);
	free(buf);
	return rc;
}

/* "nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 20034, Fatal, Link 24 LTSSM Fault Up". The switch driver
 * prints the function; a line without one names function 0. */
int gp_doctor_sxid_parse(const char *line, struct gp_sxid *s)
{
	static const char tag[] = "SXid (";
	const char *p = strstr(line, tag), *sw, *end, *l;
	char addr[GP_BDF_LEN];
	struct gp_pci_addr a;
	long code = 0;
	int digits = 0;
	size_t n;

	if (!p || !(sw = strstr(line, "nvidia-nvswitch")) || sw > p)
		return 0;
	memset(s, 0, sizeof(*s));
	n = strcspn(sw, ": ");
	if (n >= sizeof(s->sw) || sw + n > p)
		return -EINVAL;
	snprintf(s->sw, sizeof(s->sw), "%.*s", (int)n, sw);
	p += sizeof(tag) - 1;
	if (!strncmp(p, "PCI:", 4))
		p += 4;
	if (!(end = strchr(p, ')')) || (n = (size_t)(end - p)) + 3 >= sizeof(addr) || strcspn(p, ":") < 4)
		return -EINVAL;
	snprintf(addr, sizeof(addr), "%.*s%s", (int)n, p, memchr(p, '.', n) ? "" : ".0");
	if (gp_pci_addr_parse(addr, &a) || strncmp(end, "): ", 3))
		return -EINVAL;
	gp_pci_addr_format(&a, s->bdf);
	for (p = end + 3; isdigit((unsigned char)*p) && digits < 6; p++, digits++)
		code = code * 10 + (*p - '0');
	if (!digits || digits > 5 || !code || (*p && *p != ',' && !isspace((unsigned char)*p)))
		return -EINVAL;
	s->code = (int)code;
	while (*p == ',' || *p == ' ')
		p++;
	s->fatal = !strncasecmp(p, "non-fatal", 9) ? 0 : !strncasecmp(p, "fatal", 5) ? 1 : -1;
	s->link = -1;
	if ((l = strstr(p, "Link ")) && isdigit((unsigned char)l[5]))
		s->link = atoi(l + 5);
	return 1;
}
