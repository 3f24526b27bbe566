/* gpup2p — kernel modules through libkmod: whether gpup2p.ko, the NVIDIA driver, nvidia-peermem and
 * the old nv_peer_mem are loaded; loading gpup2p.ko (from the installed module tree or a file) and
 * nvidia-peermem; unloading. */
#ifndef GPUP2P_KMOD_H
#define GPUP2P_KMOD_H

#include "gpup2p/err.h"

enum gp_mod_state { GP_MOD_ABSENT = 0, GP_MOD_LIVE, GP_MOD_COMING, GP_MOD_GOING, GP_MOD_BUILTIN };

/* State of a module by name ("nvidia_peermem": dashes and underscores alike). */
enum gp_mod_state gp_kmod_state(const char *name);

/* "absent", "loaded", "loading", "unloading", "built in". */
const char *gp_kmod_state_name(enum gp_mod_state s);

/* Load a module: by name from the installed tree (with its dependencies), or from a .ko file when
 * path is set (its dependencies must be loaded). Loaded already ⇒ 0. Errors name the module and say
 * why; symbols the kernel lacks ⇒ GP_E_UNAVAIL naming them (nvidia_p2p_*: "load module nvidia"). */
int gp_kmod_load(const char *name, const char *path, struct gp_err *e);

/* Unload a module; absent ⇒ 0; in use ⇒ GP_E_FAIL "in use: close the programs using it". */
int gp_kmod_unload(const char *name, struct gp_err *e);

/* Make sure the device node of misc device `name` exists at path: when udev has not made it, create it
 * from /sys/class/misc/NAME/dev with the given mode (owner and group root). 1 created, 0 was there,
 * <0 error (GP_E_FAIL). */
int gp_kmod_devnode(const char *name, const char *path, unsigned mode, struct gp_err *e);

#endif
