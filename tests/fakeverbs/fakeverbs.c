/* A test double of libibverbs.so.1 (tests only, never installed): the calls gpup2p makes through
 * dlsym (libcore/verbs.c), answering from the environment. Built twice: with ibv_reg_dmabuf_mr
 * (rdma-core 34 and later) and, with -DFAKEVERBS_OLD, without it (older rdma-core).
 *
 * Controls (environment):
 *   FAKEVERBS_DEVICES=a,b  the devices ibv_get_device_list returns (those whose provider was found)
 *   FAKEVERBS_NOSYS=1      ibv_get_device_list fails with ENOSYS (no uverbs device: ib_uverbs missing) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

struct ibv_device {
	char name[64];
};

EXPORT struct ibv_device **ibv_get_device_list(int *num);
EXPORT void ibv_free_device_list(struct ibv_device **list);
EXPORT const char *ibv_get_device_name(struct ibv_device *d);

struct ibv_device **ibv_get_device_list(int *num)
{
	const char *s = getenv("FAKEVERBS_DEVICES");
	struct ibv_device **v;
	int n = 0;

	if (getenv("FAKEVERBS_NOSYS")) {
		errno = ENOSYS;
		return NULL;
	}
	v = calloc(65, sizeof(*v));
	for (const char *p = s; v && p && *p && n < 64; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		size_t l = strcspn(p, ",");

		if (!l || !(v[n] = calloc(1, sizeof(**v))))
			continue;
		memcpy(v[n]->name, p, l < 63 ? l : 63);
		n++;
	}
	if (num)
		*num = n;
	return v;
}

void ibv_free_device_list(struct ibv_device **list)
{
	for (int i = 0; list && list[i]; i++)
		free(list[i]);
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *d)
{
	return d->name;
}

#ifndef FAKEVERBS_OLD
EXPORT void *ibv_reg_dmabuf_mr(void *pd, unsigned long offset, size_t length, unsigned long iova, int fd, int access);
void *ibv_reg_dmabuf_mr(void *pd, unsigned long offset, size_t length, unsigned long iova, int fd, int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
	errno = EOPNOTSUPP;
	return NULL;
}
#endif
