/* What the parts of the libibverbs test double share (fakeverbs.c: contexts, memory, queue pairs;
 * fakedev.c: the device list and protection domains; fakeport.c: ports and GIDs). */
#ifndef GPUP2P_FAKEVERBS_H
#define GPUP2P_FAKEVERBS_H

#include "rdma/verbs_abi.h"

#define EXPORT __attribute__((visibility("default")))

struct gp_ibv_device {
	char name[64];
	int place;                     /* in FAKEVERBS_DEVICES: its LID and GIDs */
};

struct gp_ibv_pd {
	struct gp_ibv_context *context;
	uint32_t handle;
};

#define API(ret, name, args) EXPORT ret name args; ret name args

/* $name as a number (strtol base 0), dflt when unset or empty. */
long env_long(const char *name, long dflt);

#endif
