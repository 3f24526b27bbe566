/* The NVML test double's shared parts (tests only): return codes, and the recorded machine it can
 * replay with its clock (profile.c). */
#ifndef FAKENVML_H
#define FAKENVML_H

#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))
#define OK 0
#define INVALID_ARGUMENT 2
#define NOT_SUPPORTED 3
#define UNKNOWN 999

#define FAKE_LIST_HANDLE 0x10000 /* nvmlDeviceGetHandleByIndex_v2(I) answers this + I */
#define FAKE_LINKS 18            /* NVLinks of a recorded machine's GPU */
#define FAKE_GPUS 64

/* Count a call of NVML function `name` (as nvml_probe.txt names it) on dev (NULL: none) and charge
 * the recorded cost of one call to the double's clock, never the wall clock. */
void fake_tick(const char *name, const void *dev);

/* The recorded machine's GPU index of handle dev, or -1 (not a listed GPU, or no FAKENVML_PROBE). */
int fake_profile_gpu(const void *dev);

/* GPUs of the recorded machine, 0 when none is replayed. */
int fake_profile_gpus(void);

/* The listed GPU index with PCI bus id `bus` under FAKENVML_BUSIDS while a machine is replayed, or -1. */
int fake_profile_bus(const char *bus);

/* The Ith bus id of FAKENVML_BUSIDS into buf: 1, or 0 when it gives none. */
int fake_busid(unsigned i, char *buf, size_t n);

/* The recorded counter's value at this read: the nth read of (GPU, link, counter) answers the first
 * recorded value plus n times the rise the recording saw between its two reads (spread over the links). */
int fake_profile_counter(const void *dev, unsigned link, int counter, unsigned long long *v);

#endif
