/* The libibverbs test double's ports (see fakeverbs.c's controls): device attributes, port attributes
 * (state, rate, MTU, link layer, the device's LID) and the GID table (types from FAKEVERBS_GID_TYPES,
 * addresses ::ffff:0.0.P.(index+1) with P the device's place). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeverbs.h"

API(int, ibv_query_device, (struct gp_ibv_context *c, struct gp_ibv_device_attr *a))
{
	(void)c;
	memset(a, 0, sizeof(*a));
	a->max_qp_rd_atom = a->max_qp_init_rd_atom = 16;
	a->max_qp_wr = 16384;
	a->phys_port_cnt = 1;
	return 0;
}

/* the link layer of c's device: FAKEVERBS_LINK_<name>, else FAKEVERBS_LINK; 1 InfiniBand */
static int is_ib(const struct gp_ibv_context *c)
{
	char var[96];
	const char *l;

	snprintf(var, sizeof(var), "FAKEVERBS_LINK_%s", c->device->name);
	if (!(l = getenv(var)))
		l = getenv("FAKEVERBS_LINK");
	return l && !strcmp(l, "ib");
}

/* the compat entry: fills the fields of struct _compat_ibv_port_attr */
API(int, ibv_query_port, (struct gp_ibv_context *c, uint8_t port, struct gp_ibv_port_attr *a))
{
	int ib = is_ib(c);

	if (port < 1 || port > env_long("FAKEVERBS_PORTS", 1))
		return EINVAL;
	a->state = (int)env_long("FAKEVERBS_PORT_STATE", GP_IBV_PORT_ACTIVE);
	a->max_mtu = GP_IBV_MTU_4096;
	a->active_mtu = (int)env_long("FAKEVERBS_MTU", GP_IBV_MTU_4096);
	a->gid_tbl_len = 16;
	a->lid = ib ? (uint16_t)(7 + c->device->place) : 0;
	a->active_speed = (uint8_t)env_long("FAKEVERBS_SPEED", 32);
	a->active_width = (uint8_t)env_long("FAKEVERBS_WIDTH", 2);
	a->phys_state = 5;
	a->link_layer = ib ? GP_IBV_LINK_LAYER_INFINIBAND : GP_IBV_LINK_LAYER_ETHERNET;
	return 0;
}

static int gid_type(uint32_t i)
{
	const char *s = getenv("FAKEVERBS_GID_TYPES");
	const char *p = s ? s : "1,2";

	for (uint32_t k = 0; *p; k++) {
		if (k == i)
			return atoi(p);
		p += strcspn(p, ",");
		if (*p)
			p++;
	}
	return -1;
}

API(int, ibv_query_gid, (struct gp_ibv_context *c, uint8_t port, int i, union gp_ibv_gid *g))
{
	(void)port;
	if (gid_type((uint32_t)i) < 0)
		return -1;
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	g->raw[14] = (uint8_t)c->device->place;
	g->raw[15] = (uint8_t)(i + 1);
	return 0;
}

API(int, _ibv_query_gid_ex, (struct gp_ibv_context *c, uint32_t port, uint32_t i, struct gp_ibv_gid_entry *g,
			     uint32_t flags, size_t sz))
{
	int t = gid_type(i);

	(void)flags, (void)sz;
	if (t < 0)
		return ENODATA;
	memset(g, 0, sizeof(*g));
	ibv_query_gid(c, (uint8_t)port, (int)i, &g->gid);
	g->gid_index = i;
	g->port_num = port;
	g->gid_type = (uint32_t)t;
	return 0;
}
