/* gpup2p — libibverbs through dlopen/dlsym: which RDMA devices user space can use (a device is listed
 * only when its provider library, e.g. libmlx5, was found) and whether dma-buf registration exists. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/verbs.h"

struct ibv_device;

void gp_verbs_probe(struct gp_verbs_probe *p)
{
	const char *path = getenv("GPUP2P_LIBIBVERBS");
	struct ibv_device **(*get_list)(int *);
	void (*free_list)(struct ibv_device **);
	const char *(*get_name)(struct ibv_device *);
	struct ibv_device **list;
	void *lib;
	int n = 0;

	memset(p, 0, sizeof(*p));
	lib = dlopen(path && *path ? path : "libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(p->why, sizeof(p->why), "libibverbs not available (%s)", dlerror());
		return;
	}
	*(void **)&get_list = dlsym(lib, "ibv_get_device_list");
	*(void **)&free_list = dlsym(lib, "ibv_free_device_list");
	*(void **)&get_name = dlsym(lib, "ibv_get_device_name");
	if (!get_list || !free_list || !get_name) {
		snprintf(p->why, sizeof(p->why), "libibverbs lacks ibv_get_device_list, ibv_free_device_list or "
			 "ibv_get_device_name");
		dlclose(lib);
		return;
	}
	p->loaded = 1;
	p->dmabuf_mr = dlsym(lib, "ibv_reg_dmabuf_mr") != NULL;
	errno = 0;
	list = get_list(&n);
	if (!list) {
		p->list_err = errno ? errno : EIO;
	} else {
		for (int i = 0; i < n && list[i] && p->ndev < GP_VERBS_MAX_DEVS; i++) {
			const char *name = get_name(list[i]);

			if (name)
				snprintf(p->dev[p->ndev++], sizeof(p->dev[0]), "%s", name);
		}
		free_list(list);
	}
	/* the library stays loaded: providers it loaded may have registered destructors */
}

int gp_verbs_has(const struct gp_verbs_probe *p, const char *name)
{
	for (int i = 0; i < p->ndev; i++)
		if (!strcmp(p->dev[i], name))
			return 1;
	return 0;
}
