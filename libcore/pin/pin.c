/* gpup2p — the kmod pin backend: /dev/gpup2p. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kmod/uapi/gpup2p_ioctl.h"
#include "gpup2p/pin.h"

/* The oldest driver ABI this library accepts (the driver states its own minimum for callers). */
#define MIN_DRIVER_MAJOR 1
#define MIN_DRIVER_MINOR 0

int gp_pin_open(struct gp_pin_dev *d, const char *path, struct gp_err *e)
{
	struct gpup2p_version v = { .size = sizeof(v), .user_major = GPUP2P_ABI_MAJOR, .user_minor = GPUP2P_ABI_MINOR };
	const char *dev = path ? path : getenv("GPUP2P_DEVICE") ? getenv("GPUP2P_DEVICE") : GPUP2P_DEVICE;

	memset(d, 0, sizeof(*d));
	d->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		int err = errno;

		if (err == ENOENT || err == ENXIO || err == ENODEV)
			return gp_err_set(e, GP_E_UNAVAIL, err, "%s: gpup2p.ko is not loaded: run 'gpup2p enable'", dev);
		if (err == EACCES || err == EPERM)
			return gp_err_set(e, GP_E_PERM, err,
					  "%s: permission denied: run as root or join the device's group (udev rule)", dev);
		return gp_err_set(e, GP_E_FAIL, err, "%s: %s", dev, strerror(err));
	}
	if (ioctl(d->fd, GPUP2P_IOC_VERSION, &v)) {
		int err = errno;

		close(d->fd);
		d->fd = -1;
		if (err == EPROTO)
			return gp_err_set(e, GP_E_UNAVAIL, err, "%s speaks ABI %u.%u and accepts callers from %u.%u; this "
					  "gpup2p speaks %u.%u: install matching versions", dev, v.abi_major, v.abi_minor,
					  v.min_user_major, v.min_user_minor, GPUP2P_ABI_MAJOR, GPUP2P_ABI_MINOR);
		return gp_err_set(e, GP_E_UNAVAIL, err, "%s: version handshake failed: %s (not gpup2p.ko?)", dev, strerror(err));
	}
	if (v.abi_major != MIN_DRIVER_MAJOR ||
	    ((uint64_t)v.abi_major << 32 | v.abi_minor) < ((uint64_t)MIN_DRIVER_MAJOR << 32 | MIN_DRIVER_MINOR)) {
		close(d->fd);
		d->fd = -1;
		return gp_err_set(e, GP_E_UNAVAIL, EPROTO, "%s speaks ABI %u.%u; this gpup2p needs %u.%u or a later %u.x: "
				  "load the gpup2p.ko of this version", dev, v.abi_major, v.abi_minor, MIN_DRIVER_MAJOR,
				  MIN_DRIVER_MINOR, MIN_DRIVER_MAJOR);
	}
	d->abi_major = v.abi_major;
	d->abi_minor = v.abi_minor;
	return 0;
}

void gp_pin_close(struct gp_pin_dev *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

int gp_pin_refresh(struct gp_pin_dev *d, struct gp_pin_region *r, struct gp_err *e)
{
	struct gpup2p_info in = { .size = sizeof(in), .handle = r->handle };

	if (ioctl(d->fd, GPUP2P_IOC_INFO, &in))
		return gp_err_set(e, GP_E_FAIL, errno, "gpup2p: info of pin %llu: %s", (unsigned long long)r->handle,
				  strerror(errno));
	r->va = in.va;
	r->len = in.len;
	r->mmap_offset = in.mmap_offset;
	r->pin_ns = in.pin_ns;
	r->page_size = in.page_size;
	r->npages = in.npages;
	r->nruns = in.nruns;
	r->map_type = in.map_type;
	r->state = in.state;
	r->nmaps = in.nmaps;
	r->flags = in.pin_flags;
	return 0;
}

int gp_pin_range(struct gp_pin_dev *d, uint64_t va, uint64_t len, uint32_t flags, struct gp_pin_region *r,
		 struct gp_err *e)
{
	struct gpup2p_pin p = { .size = sizeof(p), .flags = flags, .va = va, .len = len };

	memset(r, 0, sizeof(*r));
	if ((va | len) & (GPUP2P_GPU_PAGE_SIZE - 1) || !len)
		return gp_err_set(e, GP_E_USAGE, EINVAL,
				  "GPU address 0x%llx and length %llu must be multiples of 64 KiB (the GPU page size)",
				  (unsigned long long)va, (unsigned long long)len);
	if (ioctl(d->fd, GPUP2P_IOC_PIN, &p)) {
		int err = errno;

		switch (err) {
		case EINVAL:
			return gp_err_set(e, GP_E_FAIL, err, "the NVIDIA driver refused to pin 0x%llx+%llu: not GPU memory of "
					  "this process, or a GPU that does not allow pinning (GeForce)",
					  (unsigned long long)va, (unsigned long long)len);
		case ENOMEM:
			return gp_err_set(e, GP_E_FAIL, err, "pinning %llu bytes failed: BAR1 space exhausted (gpup2p bar shows "
					  "its size; a small BAR holds ~220 MiB of pins)", (unsigned long long)len);
		case EACCES:
			return gp_err_set(e, GP_E_PERM, err, "/dev/gpup2p refused: the descriptor belongs to another process");
		case EOPNOTSUPP:
			if (flags & GPUP2P_PIN_PERSISTENT)
				return gp_err_set(e, GP_E_UNAVAIL, err, "persistent pins are not available: gpup2p.ko was built "
						  "for an NVIDIA driver without nvidia_p2p_get_pages_persistent (before 535), or "
						  "the GPU refuses them (MIG, vGPU)");
			return gp_err_set(e, GP_E_UNAVAIL, err, "the NVIDIA driver does not support pinning 0x%llx+%llu "
					  "(MIG or vGPU?)", (unsigned long long)va, (unsigned long long)len);
		default:
			return gp_err_set(e, GP_E_FAIL, err, "pinning 0x%llx+%llu failed: %s", (unsigned long long)va,
					  (unsigned long long)len, strerror(err));
		}
	}
	r->handle = p.handle;
	return gp_pin_refresh(d, r, e);
}

int gp_pin_release(struct gp_pin_dev *d, struct gp_pin_region *r, struct gp_err *e)
{
	struct gpup2p_unpin u = { .size = sizeof(u), .handle = r->handle };

	if (ioctl(d->fd, GPUP2P_IOC_UNPIN, &u))
		return gp_err_set(e, GP_E_FAIL, errno, "unpin of pin %llu: %s", (unsigned long long)r->handle, strerror(errno));
	return 0;
}

int gp_pin_map(struct gp_pin_dev *d, const struct gp_pin_region *r, uint64_t off, uint64_t len, void **p,
	       struct gp_err *e)
{
	void *m;

	if (off % 4096 || !len || off >= r->len || len > r->len - off)
		return gp_err_set(e, GP_E_USAGE, EINVAL,
				  "mapping offset %llu length %llu: the offset must be a multiple of 4 KiB inside the %llu "
				  "pinned bytes", (unsigned long long)off, (unsigned long long)len, (unsigned long long)r->len);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, (off_t)(r->mmap_offset + off));
	if (m == MAP_FAILED)
		return gp_err_set(e, GP_E_FAIL, errno, "mmap of pin %llu: %s%s", (unsigned long long)r->handle,
				  strerror(errno), errno == ENOENT ? " (the GPU memory was freed)" : "");
	*p = m;
	return 0;
}

void gp_pin_unmap(void *p, uint64_t len)
{
	if (p)
		munmap(p, len);
}

const char *gp_pin_map_type_name(uint32_t t)
{
	switch (t) {
	case GPUP2P_MAP_WC: return "write-combined";
	case GPUP2P_MAP_UC: return "uncached";
	case GPUP2P_MAP_WB: return "cached";
	}
	return "unknown";
}
