/* gpup2p — libibverbs and librdmacm through dlopen and dlvsym (see verbs_lib.h). Each entry point is
 * bound by the version rdma-core gives it (ibv_reg_mr@IBVERBS_1.1, not the 1.0 compatibility one); a
 * library without version nodes (a test double) is bound by name. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/verbs_lib.h"

static struct gp_ibv_lib L;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *bind_sym(void *lib, const char *name, const char *ver)
{
	void *p = dlvsym(lib, name, ver);

	return p ? p : dlsym(lib, name);
}

static void *open_lib(const char *env, const char *dflt, struct gp_err *e)
{
	const char *path = getenv(env);
	void *lib = dlopen(path && *path ? path : dflt, RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		gp_err_set(e, GP_E_UNAVAIL, ENOENT, "%s not available (%s): install rdma-core's %s (Debian: apt install %s)",
			   dflt, dlerror(), dflt, !strcmp(dflt, "librdmacm.so.1") ? "librdmacm1" : "libibverbs1 ibverbs-providers");
	return lib;
}

const struct gp_ibv_lib *gp_ibv_load(int cm, struct gp_err *e)
{
	const struct gp_ibv_lib *r = &L;

	pthread_mutex_lock(&lock);
	if (!L.lib) {
		void *lib = open_lib("GPUP2P_LIBIBVERBS", "libibverbs.so.1", e);

		if (!lib)
			goto fail;
#define BIND(name, ver, ret, args) \
		if (!(*(void **)&L.name = bind_sym(lib, #name, ver))) { \
			gp_err_set(e, GP_E_UNAVAIL, ENOSYS, "libibverbs lacks %s@%s: rdma-core too old or broken", #name, ver); \
			memset(&L, 0, sizeof(L)); \
			dlclose(lib); \
			goto fail; \
		}
		GP_IBV_FUNCS(BIND)
#define BIND_OPT(name, ver, ret, args) *(void **)&L.name = bind_sym(lib, #name, ver);
		GP_IBV_FUNCS_OPTIONAL(BIND_OPT)
		*(void **)&L.clock_s = dlsym(lib, "gpup2p_clock_s");
		L.lib = lib;
	}
	if (cm && !L.cmlib) {
		void *lib = open_lib("GPUP2P_LIBRDMACM", "librdmacm.so.1", e);

		if (!lib)
			goto fail;
#undef BIND
#define BIND(name, ver, ret, args) \
		if (!(*(void **)&L.name = bind_sym(lib, #name, ver))) { \
			gp_err_set(e, GP_E_UNAVAIL, ENOSYS, "librdmacm lacks %s@%s: rdma-core too old or broken", #name, ver); \
			dlclose(lib); \
			goto fail; \
		}
		GP_RDMACM_FUNCS(BIND)
		L.cmlib = lib;
	}
	pthread_mutex_unlock(&lock);
	return r;
fail:
	pthread_mutex_unlock(&lock);
	return NULL;
}
