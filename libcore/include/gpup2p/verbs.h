/* gpup2p — libibverbs, loaded with dlopen at run time (never linked): the binary runs, and says what
 * it could not check, on a machine without rdma-core. GPUP2P_LIBIBVERBS names another library (a
 * test double, tests/fakeverbs). Only opaque handles cross the boundary: no rdma-core header needed. */
#ifndef GPUP2P_VERBS_H
#define GPUP2P_VERBS_H

#define GP_VERBS_MAX_DEVS 64

/* What gp_verbs_probe found. */
struct gp_verbs_probe {
	int loaded;                    /* libibverbs.so.1 and its device-list calls could be loaded */
	char why[256];                 /* why not */
	int list_err;                  /* ibv_get_device_list failed: its errno (ENOSYS: no uverbs), else 0 */
	int ndev;                      /* devices it returned: those whose provider library was found */
	char dev[GP_VERBS_MAX_DEVS][64];
	int dmabuf_mr;                 /* 1 when ibv_reg_dmabuf_mr is exported (rdma-core 34+), else 0 */
};

/* Load libibverbs, list its devices (ibv_get_device_list, ibv_get_device_name) and look for
 * ibv_reg_dmabuf_mr; no device is opened. Never fails: p says what happened. */
void gp_verbs_probe(struct gp_verbs_probe *p);

/* 1 when the probe's device list holds name. */
int gp_verbs_has(const struct gp_verbs_probe *p, const char *name);

#endif
