/* kmod_test: the GPU memory going away — freed while mapped, while being mapped, while being pinned —
 * the lazy mapping orderings and persistent pins. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../kmod/uapi/gpup2p_ioctl.h"
#include "nvp2p_stub/nvp2p_stub.h"

#include "kmod_test.h"

/* The GPU memory goes away while mapped: the mapping dies at once (SIGBUS), the pin says so. */
void free_tests(int fd)
{
	struct nvp2p_stub_alloc a = alloc_fake(256 << 10, 0);
	struct gpup2p_info in;
	uint64_t h, live = 0;
	uint8_t *m, b;
	long inv = counter("invalidations");

	CHECK(pin(fd, a.va, 256 << 10, 0, &h) == 0 && info(fd, h, &in) == 0, "pin 256 KiB for the free test");
	m = mmap(NULL, 256 << 10, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	CHECK(m != MAP_FAILED && touch(m, &b) == 0, "mapped and readable before the free");
	CHECK(ioctl(stub, NVP2P_STUB_FREE, &a.va) == 0, "the GPU driver frees the memory (free callback fires)");
	CHECK(info(fd, h, &in) == 0 && in.state == GPUP2P_STATE_INVALIDATED && counter("invalidations") == inv + 1 &&
	      counter("pins") == 0, "pin reported invalidated, counted; no longer counted as pinned");
	CHECK(touch(m, &b) == SIGBUS && touch(m + (200 << 10), &b) == SIGBUS, "access after the free: SIGBUS");
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)in.mmap_offset) == MAP_FAILED && errno == ENOENT,
	      "a new mapping of the invalidated pin: ENOENT");
	munmap(m, 256 << 10);
	CHECK(unpin(fd, h) == 0 && ioctl(stub, NVP2P_STUB_LIVE, &live) == 0 && live == 0,
	      "unpin after invalidation: no put_pages, no page table left in the GPU driver");
}


/* The GPU memory is freed while it is being mapped: between the mmap handler's return and the
 * kernel linking the new mapping into the process (the stub fires the callback on another CPU in
 * that window). The callback's zap cannot see a mapping not linked yet: pages a handler mapped
 * there would stay mapped over freed GPU memory. Every access must get SIGBUS, never old data. */
void mmap_race_tests(int fd)
{
	const uint64_t len = 256 << 10;
	struct nvp2p_stub_alloc a = alloc_fake(len, 0);
	struct nvp2p_stub_free_in_mmap arm = { .va = a.va, .fd = fd };
	struct gpup2p_info in;
	uint64_t h, live = 1;
	int64_t fired = -1;
	uint8_t *m;
	int n, stale, wsig;
	long inv = counter("invalidations");

	CHECK(pin(fd, a.va, len, 0, &h) == 0 && info(fd, h, &in) == 0, "pin 256 KiB for the mmap race");
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	if (m != MAP_FAILED) {
		for (uint64_t i = 0; i < len; i++)
			m[i] = pat(3, i); /* known contents, through a mapping gone before the race */
		munmap(m, len);
	}
	CHECK(ioctl(stub, NVP2P_STUB_FREE_IN_MMAP, &arm) == 0,
	      "stub armed: the range is freed when the next mmap handler returns");
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	CHECK(ioctl(stub, NVP2P_STUB_MMAP_FIRED, &fired) == 0 && fired == 1 && m != MAP_FAILED,
	      "mmap succeeds; the free callback ran after its handler, before the mapping was linked (%lld)",
	      (long long)fired);
	CHECK(info(fd, h, &in) == 0 && in.state == GPUP2P_STATE_INVALIDATED &&
	      counter("invalidations") == inv + 1, "... the pin is invalidated, counted");
	if (m == MAP_FAILED)
		return;
	n = readable_pages(m, len, 3, &stale);
	CHECK(n == 0, "... every read of the new mapping gets SIGBUS (%d of 64 pages readable, %d with the "
	      "freed memory's old data)", n, stale);
	wsig = poke(m + 4096, 0x5a);
	CHECK(wsig == SIGBUS, "... a write gets SIGBUS too (signal %d)", wsig);
	CHECK(info(fd, h, &in) == 0 && in.nmaps == 1 && munmap(m, len) == 0 && info(fd, h, &in) == 0 &&
	      in.nmaps == 0, "... munmap: the mapping is gone");
	CHECK(unpin(fd, h) == 0 && ioctl(stub, NVP2P_STUB_LIVE, &live) == 0 && live == 0,
	      "... unpin: no page table left in the GPU driver");
}

/* Pages are mapped when first touched: orderings of mmap, free, unpin, close and munmap before
 * and after the first touch, and a mapping split by a partial munmap. */
void lazy_tests(void)
{
	const uint64_t len = 256 << 10;
	int fd = open(GPUP2P_DEVICE, O_RDWR | O_CLOEXEC);
	struct nvp2p_stub_alloc a = alloc_fake(len, 0), b = alloc_fake(len, 0);
	struct gpup2p_info in;
	uint64_t h, live = 1;
	uint8_t *m, v;
	int n, stale, bad = 0;

	/* unpinned between mmap and the first touch */
	pin(fd, a.va, len, 0, &h);
	info(fd, h, &in);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	CHECK(m != MAP_FAILED && unpin(fd, h) == 0, "mmap, then unpin before the first touch");
	if (m != MAP_FAILED) {
		n = readable_pages(m, len, 0, &stale);
		CHECK(n == 0 && poke(m, 1) == SIGBUS, "... every access gets SIGBUS (%d pages readable)", n);
		munmap(m, len);
	}
	CHECK(counter("pins") == 0 && counter("maps") == 0, "... munmap: nothing pinned or mapped");
	/* freed between mmap and the first touch */
	pin(fd, b.va, len, 0, &h);
	info(fd, h, &in);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	CHECK(m != MAP_FAILED && ioctl(stub, NVP2P_STUB_FREE, &b.va) == 0,
	      "mmap, then the GPU memory is freed before the first touch");
	if (m != MAP_FAILED) {
		n = readable_pages(m, len, 0, &stale);
		CHECK(n == 0, "... every access gets SIGBUS (%d pages readable)", n);
	}
	/* the descriptor closed with the mapping alive, then munmap: the pin goes with the mapping */
	close(fd);
	CHECK(counter("maps") == 1, "close with the invalidated pin mapped: the mapping keeps it");
	if (m != MAP_FAILED)
		munmap(m, len);
	CHECK(counter("maps") == 0 && ioctl(stub, NVP2P_STUB_LIVE, &live) == 0 && live == 0,
	      "... munmap: released, no page table left in the GPU driver");
	/* a mapping split by munmap of its middle: both parts fault in their own pages */
	fd = open(GPUP2P_DEVICE, O_RDWR | O_CLOEXEC);
	a = alloc_fake(len, 0);
	pin(fd, a.va, len, 0, &h);
	info(fd, h, &in);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	if (m == MAP_FAILED) {
		CHECK(0, "map 256 KiB to split");
		close(fd);
		return;
	}
	for (uint64_t i = 0; i < 65536; i++)
		m[i] = pat(4, i); /* the first GPU page only: the rest faults after the split */
	munmap(m + 65536, 65536);
	CHECK(info(fd, h, &in) == 0 && in.nmaps == 2, "munmap of the middle 64 KiB: two mappings of the pin");
	for (uint64_t i = 131072; i < len; i++)
		m[i] = pat(4, i);
	for (uint64_t i = 0; i < len; i++)
		if (i < 65536 || i >= 131072)
			bad += m[i] != pat(4, i);
	CHECK(bad == 0 && touch(m + 70000, &v) == SIGSEGV,
	      "both parts read back what was written (each page where it belongs), the hole is unmapped");
	fprintf(expect_f, "%llu %d %d\n", (unsigned long long)a.bar_off, 65536, 4);
	fprintf(expect_f, "%llu %llu %d %d\n", (unsigned long long)(a.bar_off + 131072),
		(unsigned long long)(len - 131072), 4, 131072);
	munmap(m, 65536);
	munmap(m + 131072, len - 131072);
	close(fd);
	CHECK(counter("pins") == 0 && counter("maps") == 0, "munmap of both parts, close: nothing left");
}

/* A persistent pin has no free callback: it stays valid until unpinned. `want`: whether the NVIDIA
 * driver gpup2p.ko was built against has persistent pins (the stub's flavour, said by the harness). */
void persistent_tests(int fd, int want)
{
	struct nvp2p_stub_alloc a = alloc_fake(64 << 10, 0);
	struct nvp2p_stub_stats st = stub_stats();
	struct gpup2p_info in;
	uint64_t h, live = 1;
	int rc;

	CHECK(counter("persistent") == want, "/sys/class/misc/gpup2p/persistent says %d", want);
	rc = pin(fd, a.va, 64 << 10, GPUP2P_PIN_PERSISTENT, &h);
	if (!want) {
		CHECK(rc == -EOPNOTSUPP, "persistent pin without a persistent entry point: EOPNOTSUPP (%d)", rc);
		CHECK(pin(fd, a.va, 64 << 10, 0, &h) == 0 && unpin(fd, h) == 0,
		      "a pin with a free callback still works");
	} else {
		CHECK(rc == 0 && info(fd, h, &in) == 0 && in.pin_flags == GPUP2P_PIN_PERSISTENT,
		      "persistent pin (no free callback) (%d)", rc);
		CHECK(ioctl(stub, NVP2P_STUB_FREE, &a.va) == 0 && info(fd, h, &in) == 0 &&
		      in.state == GPUP2P_STATE_VALID,
		      "persistent pin: still valid after the range is freed (no callback to fire)");
		CHECK(unpin(fd, h) == 0 && ioctl(stub, NVP2P_STUB_LIVE, &live) == 0 && live == 0,
		      "persistent pin: unpin gives the page table back");
	}
	CHECK(stub_stats().bad_calls == st.bad_calls,
	      "persistent pins: no call the NVIDIA driver refuses (NULL callback, wrong put function)");
}

/* The GPU memory is freed while it is being pinned: the driver calls the free callback (from another
 * thread) before get_pages has returned. The pin must come out invalidated, not valid over freed
 * memory, and its page table must not be used or given back after the callback. */
void race_tests(int fd)
{
	struct nvp2p_stub_alloc a = alloc_fake(128 << 10, NVP2P_STUB_FREE_IN_GET);
	struct nvp2p_stub_stats st = stub_stats();
	long inv = counter("invalidations"), pins = counter("pins");
	struct gpup2p_info in = { 0 };
	uint64_t h = 0, live = 1;
	int rc = pin(fd, a.va, 128 << 10, 0, &h);

	CHECK(rc == 0, "pin while the memory is freed from under get_pages: pinned (%d)", rc);
	for (int i = 0; i < 300 && rc == 0; i++) {
		if (info(fd, h, &in) || in.state != GPUP2P_STATE_VALID)
			break;
		usleep(10000);
	}
	CHECK(rc == 0 && in.state == GPUP2P_STATE_INVALIDATED && counter("invalidations") == inv + 1 &&
	      counter("pins") == pins, "... then invalidated by the callback that waited for it, counted");
	CHECK(rc == 0 && mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)in.mmap_offset) == MAP_FAILED &&
	      errno == ENOENT, "... and cannot be mapped (ENOENT)");
	CHECK(rc == 0 && unpin(fd, h) == 0 && ioctl(stub, NVP2P_STUB_LIVE, &live) == 0 && live == 0,
	      "... unpin: no page table left in the GPU driver");
	CHECK(stub_stats().put_after_free == st.put_after_free && stub_stats().callbacks == st.callbacks + 1,
	      "... the callback ran once, and its page table was never given back after it");
}
