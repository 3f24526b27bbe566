/* The libibverbs test double's devices (see fakeverbs.c's controls): the list FAKEVERBS_DEVICES names
 * (or ENOSYS with FAKEVERBS_NOSYS), each with its place in it, their names, and protection domains. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fakeverbs.h"

API(struct gp_ibv_device **, ibv_get_device_list, (int *num))
{
	const char *s = getenv("FAKEVERBS_DEVICES");
	struct gp_ibv_device **v;
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
		v[n]->place = n;
		n++;
	}
	if (num)
		*num = n;
	return v;
}

API(void, ibv_free_device_list, (struct gp_ibv_device **list))
{
	for (int i = 0; list && list[i]; i++)
		free(list[i]);
	free(list);
}

API(const char *, ibv_get_device_name, (struct gp_ibv_device *d))
{
	return d->name;
}

API(struct gp_ibv_pd *, ibv_alloc_pd, (struct gp_ibv_context *c))
{
	struct gp_ibv_pd *pd = calloc(1, sizeof(*pd));

	if (pd)
		pd->context = c;
	return pd;
}

API(int, ibv_dealloc_pd, (struct gp_ibv_pd *pd))
{
	free(pd);
	return 0;
}
