/* gpup2p — pinning GPU memory and mapping it into this process: backend "kmod" (gpup2p.ko's
 * /dev/gpup2p ioctls and mmap). Errors say what to do: module not loaded, GPU refuses pinning, BAR
 * space exhausted, misaligned range, descriptor of another process. */
#ifndef GPUP2P_PIN_H
#define GPUP2P_PIN_H

#include <stdint.h>

#include "gpup2p/err.h"

struct gp_pin_dev {
	int fd;
	unsigned abi_major, abi_minor;   /* the driver's */
};

struct gp_pin_region {
	uint64_t handle, va, len;
	uint64_t mmap_offset, pin_ns;
	uint32_t page_size, npages, nruns;
	uint32_t map_type;               /* GPUP2P_MAP_* */
	uint32_t state;                  /* GPUP2P_STATE_* */
	uint32_t nmaps, flags;
};

/* Open the device (NULL: /dev/gpup2p, or $GPUP2P_DEVICE) and exchange versions.
 * Absent ⇒ GP_E_UNAVAIL "gpup2p.ko is not loaded: run gpup2p enable"; no permission ⇒ GP_E_PERM;
 * an incompatible driver ⇒ GP_E_UNAVAIL naming both versions. */
int gp_pin_open(struct gp_pin_dev *d, const char *path, struct gp_err *e);

/* Close the device (pins of this descriptor are released by the driver). */
void gp_pin_close(struct gp_pin_dev *d);

/* Pin [va, va+len) of GPU memory (64 KiB aligned); r is filled from GET_INFO. Persistent pins where
 * the driver has none (EOPNOTSUPP) ⇒ GP_E_UNAVAIL. */
int gp_pin_range(struct gp_pin_dev *d, uint64_t va, uint64_t len, uint32_t flags, struct gp_pin_region *r,
		 struct gp_err *e);

/* Refresh r (state, mappings) from the driver. */
int gp_pin_refresh(struct gp_pin_dev *d, struct gp_pin_region *r, struct gp_err *e);

/* Unpin. */
int gp_pin_release(struct gp_pin_dev *d, struct gp_pin_region *r, struct gp_err *e);

/* Map [off, off+len) of the pin (off a multiple of 4 KiB) shared read/write. */
int gp_pin_map(struct gp_pin_dev *d, const struct gp_pin_region *r, uint64_t off, uint64_t len, void **p,
	       struct gp_err *e);

/* Unmap a mapping made by gp_pin_map. */
void gp_pin_unmap(void *p, uint64_t len);

/* "write-combined", "uncached", "cached", or "unknown". */
const char *gp_pin_map_type_name(uint32_t t);

#endif
