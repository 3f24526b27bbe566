/* kmod_test (gpup2p.ko against nvp2p_stub.ko in the guest): what its three files share. */
#ifndef GPUP2P_KMOD_TEST_H
#define GPUP2P_KMOD_TEST_H

#include <stdint.h>
#include <stdio.h>

#include "../../kmod/uapi/gpup2p_ioctl.h"
#include "nvp2p_stub/nvp2p_stub.h"

/* Not-ok checks so far; main's exit status. */
extern int failed;
#define CHECK(c, ...) do { if (c) { printf("ok - "); } else { failed++; printf("not ok - "); } \
	printf(__VA_ARGS__); printf("\n"); fflush(stdout); } while (0)

/* /dev/nvp2p_stub, open for the run. */
extern int stub;
/* $GPUP2P_VM_WS/expect.txt: "BAR-OFFSET LENGTH SEED" lines the host checks in the ivshmem file. */
extern FILE *expect_f;

/* The test pattern's byte i for seed. */
uint8_t pat(uint64_t seed, uint64_t i);
/* A fake GPU allocation of len bytes from the stub (flags: NVP2P_STUB_ALLOC_*); va 0 on failure. */
struct nvp2p_stub_alloc alloc_fake(uint64_t len, uint32_t flags);
/* GPUP2P_IOC_PIN on [va, va + len); the handle in *h; 0 or -errno. */
int pin(int fd, uint64_t va, uint64_t len, uint32_t flags, uint64_t *h);
/* GPUP2P_IOC_UNPIN of handle h; 0 or -errno. */
int unpin(int fd, uint64_t h);
/* GPUP2P_IOC_INFO of handle h into *i; 0 or -errno. */
int info(int fd, uint64_t h, struct gpup2p_info *i);
/* gpup2p.ko's counter /sys/class/misc/gpup2p/NAME, -1 if unreadable. */
long counter(const char *name);
/* SIGBUS/SIGSEGV handler: returns to the faulting touch() or poke(). */
void on_bus(int sig);
/* Read one byte at p into *out; the signal number if the read faulted, else 0. */
int touch(volatile uint8_t *p, uint8_t *out);
/* Write v at p; the signal number if the write faulted, else 0. */
int poke(volatile uint8_t *p, uint8_t v);
/* How many 4 KiB pages of [m, m + len) can be read (no SIGBUS); *stale: how many of those still hold
 * pat(seed) (the old contents of freed GPU memory). */
int readable_pages(uint8_t *m, uint64_t len, uint64_t seed, int *stale);
/* The physical address of the ivshmem device's BAR2 (the stub's "GPU memory"), 0 if not found;
 * bar2_dir: that device's sysfs folder. */
uint64_t bar2_start(void);
extern char bar2_dir[300];
/* How many 4 KiB pages of [phys, phys + len) lie in a range of type want ("write-combining",
 * "uncached-minus") of the kernel's PAT memtype list (where vmf_insert_pfn_prot takes a page's
 * cache mode from: without one, a page is mapped uncached whatever the mapping asked for); -1
 * when the list cannot be read (no PAT: the kernel keeps none). */
long memtype_pages(uint64_t phys, uint64_t len, const char *want);
#define wc_pages(phys, len) memtype_pages(phys, len, "write-combining")
/* The stub's call statistics (all ones if the ioctl failed). */
struct nvp2p_stub_stats stub_stats(void);

/* Scenarios in kmod_test_cache.c: the cache mode pins report against the kernel's own word. */
void cache_tests(int fd);
/* What a pin of BAR2 made while BAR2's sysfs file resource2 (or resource2_wc) is mapped gets, by
 * the kernel's memtype list: GPUP2P_MAP_WC or GPUP2P_MAP_UC (also without PAT); 0 if unknown. */
uint32_t bar_mode_with(const char *file);

/* Scenarios in kmod_test_life.c: the GPU memory going away. */
void free_tests(int fd);
void mmap_race_tests(int fd);
void lazy_tests(void);
void persistent_tests(int fd, int want);
void race_tests(int fd);

#endif
