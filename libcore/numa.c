/* gpup2p — NUMA placement through system calls. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gpup2p/numa.h"
#include "gpup2p/root.h"

#define MPOL_DEFAULT_ 0
#define MPOL_PREFERRED_ 1
#define MPOL_F_NODE_ 1
#define MPOL_F_ADDR_ 2

int gp_cpulist_parse(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0 || a >= CPU_SETSIZE)
			return -EINVAL;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a || b >= CPU_SETSIZE)
				return -EINVAL;
			s = end;
		}
		for (long c = a; c <= b; c++)
			CPU_SET((int)c, set);
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return CPU_COUNT(set) ? 0 : -EINVAL;
}

int gp_numa_bind(int node, struct gp_numa_saved *sv, struct gp_err *e)
{
	char path[96], buf[4096]; /* a node's cpulist: up to a page (interleaved numbering: 0,2,4,...) */
	unsigned long mask[16] = { 0 };
	struct gp_root live;
	cpu_set_t cpus;
	ssize_t len;

	memset(sv, 0, sizeof(*sv));
	if (node < 0 || node >= (int)(sizeof(mask) * 8))
		return gp_err_set(e, GP_E_USAGE, EINVAL, "NUMA node %d out of range", node);
	if (gp_root_init(&live, "/", e))
		return -EIO;
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
	if ((len = gp_root_read_text(&live, path, buf, sizeof(buf))) == -EFBIG)
		return gp_err_set(e, GP_E_DATA, EFBIG, "%s: longer than %zu bytes", path, sizeof(buf) - 1);
	if (len < 0)
		return gp_err_set(e, GP_E_USAGE, ENOENT, "no NUMA node %d on this machine (%s)", node, path);
	if (gp_cpulist_parse(buf, &cpus))
		return gp_err_set(e, GP_E_FAIL, EINVAL, "%s: cannot parse \"%s\"", path, buf);
	if (sched_getaffinity(0, sizeof(sv->cpus), &sv->cpus))
		return gp_err_set(e, GP_E_FAIL, errno, "sched_getaffinity: %s", strerror(errno));
	mask[node / (8 * sizeof(long))] |= 1UL << (node % (8 * sizeof(long)));
	if (syscall(SYS_set_mempolicy, MPOL_PREFERRED_, mask, sizeof(mask) * 8))
		return gp_err_set(e, GP_E_FAIL, errno, "set_mempolicy(node %d): %s", node, strerror(errno));
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		int err = errno;

		(void)syscall(SYS_set_mempolicy, MPOL_DEFAULT_, NULL, 0);
		return gp_err_set(e, GP_E_FAIL, err, "sched_setaffinity(node %d CPUs %s): %s", node, buf, strerror(err));
	}
	sv->bound = 1;
	return 0;
}

void gp_numa_unbind(struct gp_numa_saved *sv)
{
	if (!sv->bound)
		return;
	(void)syscall(SYS_set_mempolicy, MPOL_DEFAULT_, NULL, 0);
	(void)sched_setaffinity(0, sizeof(sv->cpus), &sv->cpus);
	sv->bound = 0;
}

int gp_numa_of(const void *p)
{
	int node = -1;

	if (syscall(SYS_get_mempolicy, &node, NULL, 0, p, MPOL_F_NODE_ | MPOL_F_ADDR_))
		return -1;
	return node;
}
