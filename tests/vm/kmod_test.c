/* gpup2p.ko in the guest, against nvp2p_stub.ko (nvidia_p2p_* over an ivshmem BAR): the scenarios of
 * GDRCopy's sanity suite and ours. Prints "ok"/"not ok" lines; writes what the host must find in the
 * ivshmem backing file to $GPUP2P_VM_WS/expect.txt ("BAR-OFFSET LENGTH SEED" per line). */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../kmod/uapi/gpup2p_ioctl.h"
#include "nvp2p_stub/nvp2p_stub.h"

#include "kmod_test.h"


static void version_tests(int fd)
{
	struct gpup2p_version v = { .size = sizeof(v), .user_major = GPUP2P_ABI_MAJOR, .user_minor = GPUP2P_ABI_MINOR };

	CHECK(ioctl(fd, GPUP2P_IOC_VERSION, &v) == 0 && v.abi_major == 1 && v.min_user_major == 1,
	      "VERSION handshake: driver ABI %u.%u, accepts callers from %u.%u", v.abi_major, v.abi_minor,
	      v.min_user_major, v.min_user_minor);
	v.user_major = 2;
	CHECK(ioctl(fd, GPUP2P_IOC_VERSION, &v) == -1 && errno == EPROTO && v.abi_major == 1,
	      "VERSION from a caller of ABI 2: EPROTO, and the driver's numbers are returned");
	v.user_major = 1;
	v.flags = 4;
	CHECK(ioctl(fd, GPUP2P_IOC_VERSION, &v) == -1 && errno == EINVAL, "VERSION with an unknown flag: EINVAL");
	v.flags = 0;
	v.size = 12;
	CHECK(ioctl(fd, GPUP2P_IOC_VERSION, &v) == -1 && errno == EINVAL, "VERSION with a wrong size field: EINVAL");
	CHECK(ioctl(fd, _IOWR(GPUP2P_IOC_MAGIC, 0x00, uint64_t), &v) == -1 && errno == ENOTTY,
	      "ioctl number with another size: ENOTTY");
}

static void malformed_tests(int fd, uint64_t va)
{
	uint64_t h;
	struct gpup2p_info in;
	long fails = counter("pin_failures");

	CHECK(pin(fd, va + 4096, 65536, 0, &h) == -EINVAL, "pin of an address not 64 KiB aligned: EINVAL");
	CHECK(pin(fd, va, 0, 0, &h) == -EINVAL, "pin of length 0: EINVAL");
	CHECK(pin(fd, va, 65536 + 4096, 0, &h) == -EINVAL, "pin of a length not a multiple of 64 KiB: EINVAL");
	CHECK(pin(fd, va, 1ULL << 41, 0, &h) == -EINVAL, "pin of 2 TiB (huge): EINVAL");
	CHECK(pin(fd, 0xffffffffffff0000ULL, 1ULL << 20, 0, &h) == -EOVERFLOW, "pin whose end overflows: EOVERFLOW");
	CHECK(pin(fd, va, 65536, 0x80, &h) == -EINVAL, "pin with an unknown flag: EINVAL");
	CHECK(pin(fd, NVP2P_STUB_VA_BASE + (1ULL << 36), 65536, 0, &h) == -EINVAL && counter("pin_failures") == fails + 1,
	      "pin of memory the GPU driver does not know: its EINVAL, counted in pin_failures");
	{
		struct nvp2p_stub_alloc full = alloc_fake(64 << 10, NVP2P_STUB_NOMEM);

		CHECK(pin(fd, full.va, 64 << 10, 0, &h) == -ENOMEM && counter("pin_failures") == fails + 2,
		      "pin when the GPU driver is out of BAR space: its ENOMEM, counted");
	}
	CHECK(unpin(fd, 987654) == -ENOENT, "unpin of an unknown handle: ENOENT");
	CHECK(info(fd, 987654, &in) == -ENOENT, "info of an unknown handle: ENOENT");
	{
		struct gpup2p_unpin u = { .size = sizeof(u), .flags = 1, .handle = 1 };

		CHECK(ioctl(fd, GPUP2P_IOC_UNPIN, &u) == -1 && errno == EINVAL, "unpin with a flag: EINVAL");
	}
	CHECK(ioctl(fd, _IO(GPUP2P_IOC_MAGIC, 0x7f)) == -1 && errno == ENOTTY, "unknown ioctl: ENOTTY");
}

/* Pin, map, write through one mapping, read through another, record for the host. */
static void map_tests(int fd)
{
	const uint64_t len = 1 << 20;
	struct nvp2p_stub_alloc a = alloc_fake(len, 0);
	struct gpup2p_info in;
	uint64_t h;
	uint8_t *m, *m2, *m3;
	int bad = 0;

	CHECK(a.va != 0, "stub: 1 MiB of fake GPU memory at 0x%llx (BAR offset 0x%llx)", (unsigned long long)a.va,
	      (unsigned long long)a.bar_off);
	malformed_tests(fd, a.va);
	CHECK(pin(fd, a.va, len, 0, &h) == 0, "pin 1 MiB: handle %llu", (unsigned long long)h);
	CHECK(info(fd, h, &in) == 0 && in.va == a.va && in.len == len && in.page_size == 65536 && in.npages == 16 &&
	      in.nruns == 1 && in.map_type == GPUP2P_MAP_WC && in.state == GPUP2P_STATE_VALID && in.pin_ns > 0 &&
	      in.nmaps == 0, "info: 16 pages of 64 KiB in 1 run, write-combined, valid, pinned in %llu ns",
	      (unsigned long long)in.pin_ns);
	CHECK(counter("pins") == 1 && counter("bytes_pinned") == (long)len, "counters: 1 pin, 1 MiB pinned");
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	CHECK(m != MAP_FAILED, "map the whole pin");
	if (m == MAP_FAILED)
		return;
	for (uint64_t i = 0; i < len; i++)
		m[i] = pat(1, i);
	for (uint64_t i = 0; i < len; i++)
		bad += m[i] != pat(1, i);
	CHECK(bad == 0, "1 MiB written and read back through the mapping");
	{
		long wc = wc_pages(bar2_start() + a.bar_off, len);

		CHECK(wc == (long)(len / 4096), "PAT: the pin's 256 pages are write-combining (%ld)", wc);
	}
	fprintf(expect_f, "%llu %llu %d\n", (unsigned long long)a.bar_off, (unsigned long long)len, 1);
	/* a second mapping of the same pin, 4 KiB-aligned anywhere inside */
	m2 = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)(in.mmap_offset + 3 * 4096));
	CHECK(m2 != MAP_FAILED && info(fd, h, &in) == 0 && in.nmaps == 2, "second mapping at +12 KiB (two maps of one pin)");
	if (m2 != MAP_FAILED) {
		memcpy(m2 + 4097, "odd-sized write", 15); /* 15 bytes at an odd offset */
		CHECK(!memcmp(m + 3 * 4096 + 4097, "odd-sized write", 15), "15 bytes at an odd offset through map 2 seen through map 1");
		for (int i = 0; i < 15; i++)
			m[3 * 4096 + 4097 + i] = pat(1, 3 * 4096 + 4097 + i); /* put the pattern back for the host */
	}
	m3 = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)(in.mmap_offset + len - 4096));
	CHECK(m3 == MAP_FAILED && errno == EINVAL, "a mapping running past the pin: EINVAL");
	m3 = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)in.mmap_offset);
	CHECK(m3 == MAP_FAILED && errno == EINVAL, "a private mapping: EINVAL");
	m3 = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)(in.mmap_offset + (99ULL << 40)));
	CHECK(m3 == MAP_FAILED && errno == ENOENT, "a mapping of no pin: ENOENT");
	if (m2 != MAP_FAILED)
		munmap(m2, 8192);
	munmap(m, len);
	CHECK(info(fd, h, &in) == 0 && in.nmaps == 0 && counter("maps") == 0, "unmapped: no mapping left");
	CHECK(unpin(fd, h) == 0 && counter("pins") == 0 && counter("bytes_pinned") == 0, "unpin: counters back to 0");
	{
		long wc = wc_pages(bar2_start() + a.bar_off, len);

		CHECK(wc == 0, "PAT: unpinned and unmapped, no write-combining range left (%ld pages)", wc);
	}
}

/* Physically scattered pages: each 64 KiB page its own run. */
static void scatter_tests(int fd)
{
	const uint64_t len = 512 << 10;
	struct nvp2p_stub_alloc a = alloc_fake(len, NVP2P_STUB_SCATTER);
	struct gpup2p_info in;
	uint64_t h;
	uint8_t *m;
	int bad = 0;

	CHECK(pin(fd, a.va, len, 0, &h) == 0 && info(fd, h, &in) == 0 && in.nruns == 8 && in.npages == 8,
	      "scattered pages: 8 pages in 8 runs");
	m = mmap(NULL, len - 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)(in.mmap_offset + 4096));
	CHECK(m != MAP_FAILED, "map 504 KiB from +4 KiB across the runs");
	if (m == MAP_FAILED)
		return;
	for (uint64_t i = 0; i < len - 8192; i++)
		m[i] = pat(2, i + 4096);
	for (uint64_t i = 0; i < len - 8192; i++)
		bad += m[i] != pat(2, i + 4096);
	CHECK(bad == 0, "written and read back across scattered pages");
	{
		long wc = wc_pages(bar2_start() + a.bar_off, len);

		CHECK(wc == (long)(len / 4096), "PAT: each scattered page is write-combining (%ld of %llu)",
		      wc, (unsigned long long)(len / 4096));
	}
	/* the host checks page by page: page k of the range is BAR page (npages-1-k) */
	for (uint64_t k = 0; k < 8; k++) {
		uint64_t from = k * 65536 < 4096 ? 4096 : k * 65536, to = (k + 1) * 65536 > len - 4096 ? len - 4096 : (k + 1) * 65536;

		fprintf(expect_f, "%llu %llu %d %llu\n", (unsigned long long)(a.bar_off + (7 - k) * 65536 + from - k * 65536),
			(unsigned long long)(to - from), 2, (unsigned long long)from);
	}
	munmap(m, len - 8192);
	unpin(fd, h);
}

/* Another process never gets in: a forked child, or a process the descriptor was passed to. */
static void isolation_tests(int fd)
{
	struct nvp2p_stub_alloc a = alloc_fake(128 << 10, 0);
	struct gpup2p_info in;
	uint64_t h;
	uint8_t *m, b;
	int sv[2], st;
	pid_t pid;

	pin(fd, a.va, 128 << 10, 0, &h);
	info(fd, h, &in);
	m = mmap(NULL, 128 << 10, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	m[0] = 42;
	pid = fork();
	if (pid == 0) {
		struct gpup2p_info ci;
		uint8_t cb;
		int r1 = info(fd, h, &ci), sig = touch(m, &cb);
		void *cm = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)in.mmap_offset);

		_exit((r1 == -EACCES ? 1 : 0) | (sig == SIGSEGV ? 2 : 0) | (cm == MAP_FAILED && errno == EACCES ? 4 : 0));
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7,
	      "fork: the child's ioctl and mmap are refused (EACCES), the parent's mapping is not in the child (SIGSEGV)");
	CHECK(touch(m, &b) == 0 && b == 42, "fork: the parent's mapping is unaffected");
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	pid = fork();
	if (pid == 0) {
		char c;
		struct msghdr msg = { 0 };
		struct iovec io = { &c, 1 };
		char ctl[CMSG_SPACE(sizeof(int))];
		int rfd, ok = 0;
		struct gpup2p_info ci;

		close(fd);
		msg.msg_iov = &io;
		msg.msg_iovlen = 1;
		msg.msg_control = ctl;
		msg.msg_controllen = sizeof(ctl);
		if (recvmsg(sv[1], &msg, 0) == 1 && CMSG_FIRSTHDR(&msg)) {
			memcpy(&rfd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
			ok = info(rfd, h, &ci) == -EACCES &&
			     mmap(NULL, 4096, PROT_READ, MAP_SHARED, rfd, (off_t)in.mmap_offset) == MAP_FAILED;
		}
		_exit(ok ? 0 : 1);
	} else {
		char c = 'x';
		struct msghdr msg = { 0 };
		struct iovec io = { &c, 1 };
		char ctl[CMSG_SPACE(sizeof(int))];
		struct cmsghdr *cm;

		memset(ctl, 0, sizeof(ctl));
		msg.msg_iov = &io;
		msg.msg_iovlen = 1;
		msg.msg_control = ctl;
		msg.msg_controllen = sizeof(ctl);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		sendmsg(sv[0], &msg, 0);
		waitpid(pid, &st, 0);
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "descriptor passed over a unix socket: refused in the receiver");
	munmap(m, 128 << 10);
	unpin(fd, h);
}

struct thr { int fd, n, errors; uint64_t va; };

static void *pinner(void *arg)
{
	struct thr *t = arg;

	for (int i = 0; i < t->n; i++) {
		uint64_t h;
		struct gpup2p_info in;

		if (pin(t->fd, t->va, 64 << 10, 0, &h) || info(t->fd, h, &in) || in.state != GPUP2P_STATE_VALID ||
		    unpin(t->fd, h))
			t->errors++;
	}
	return NULL;
}

static void thread_tests(int fd)
{
	pthread_t th[4];
	struct thr t[4];
	int errors = 0;

	for (int i = 0; i < 4; i++) {
		t[i] = (struct thr){ fd, 50, 0, alloc_fake(64 << 10, 0).va };
		pthread_create(&th[i], NULL, pinner, &t[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		errors += t[i].errors;
	}
	CHECK(errors == 0 && counter("pins") == 0, "4 threads pinning and unpinning 50 times each: no error, 0 pins left");
}

/* The mapping outlives close(): the VMA holds the file; munmap then releases the pins. */
static void close_tests(void)
{
	int fd = open(GPUP2P_DEVICE, O_RDWR | O_CLOEXEC);
	struct nvp2p_stub_alloc a = alloc_fake(64 << 10, 0);
	struct gpup2p_info in;
	uint64_t h;
	uint8_t *m, b;

	pin(fd, a.va, 64 << 10, 0, &h);
	info(fd, h, &in);
	m = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	close(fd);
	m[5] = 7;
	CHECK(touch(m + 5, &b) == 0 && b == 7 && counter("pins") == 1, "after close(): the mapping still works, the pin stays");
	munmap(m, 64 << 10);
	CHECK(counter("pins") == 0 && counter("maps") == 0, "after munmap: the last reference goes, the pin is released");
}

/* "ids N" (gpup2p.ko loaded with pin_ids=N): pin ids are reused once free, and an id stays taken
 * while a mapping of its pin exists. */
static int id_tests(int fd, int n)
{
	struct nvp2p_stub_alloc a = alloc_fake(64 << 10, 0);
	uint64_t h[64], extra, hm;
	struct gpup2p_info in;
	int ok = 1, distinct = 1, cycles = 0;
	uint8_t *m, b;

	if (n < 2 || n > 64 || !a.va)
		return 1;
	for (int i = 0; i < n; i++) {
		ok &= pin(fd, a.va, 64 << 10, 0, &h[i]) == 0 && h[i] >= 1 && h[i] <= (uint64_t)n;
		for (int j = 0; j < i; j++)
			distinct &= h[i] != h[j];
	}
	CHECK(ok && distinct, "pin_ids=%d: %d pins get %d distinct ids in 1..%d", n, n, n, n);
	CHECK(pin(fd, a.va, 64 << 10, 0, &extra) == -ENOSPC, "pin %d: ENOSPC, every id is taken", n + 1);
	CHECK(unpin(fd, h[1]) == 0 && pin(fd, a.va, 64 << 10, 0, &extra) == 0 && extra == h[1],
	      "unpin id %llu, pin again: the freed id is handed out again", (unsigned long long)h[1]);
	h[1] = extra;
	m = info(fd, extra, &in) ? MAP_FAILED :
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)in.mmap_offset);
	if (m != MAP_FAILED) {
		m[7] = 0x5a;
		CHECK(touch(m + 7, &b) == 0 && b == 0x5a, "the reused id's mmap offset maps the new pin");
		munmap(m, 4096);
	} else {
		CHECK(0, "the reused id's mmap offset maps the new pin");
	}
	for (int i = 0; i < n; i++)
		unpin(fd, h[i]);
	for (int i = 0; i < 5 * n; i++)
		if (pin(fd, a.va, 64 << 10, 0, &extra) == 0 && unpin(fd, extra) == 0)
			cycles++;
	CHECK(cycles == 5 * n && counter("pins") == 0, "%d pin/unpin cycles through %d ids: all pinned",
	      5 * n, n);
	/* a mapping outliving its pin keeps the id */
	ok = pin(fd, a.va, 64 << 10, 0, &hm) == 0 && info(fd, hm, &in) == 0;
	m = ok ? mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)in.mmap_offset) : MAP_FAILED;
	ok &= m != MAP_FAILED && unpin(fd, hm) == 0;
	for (int i = 0; ok && i < n - 1; i++)
		ok &= pin(fd, a.va, 64 << 10, 0, &h[i]) == 0 && h[i] != hm;
	CHECK(ok && pin(fd, a.va, 64 << 10, 0, &extra) == -ENOSPC,
	      "an unpinned pin still mapped keeps its id: %d more pins fit, not %d", n - 1, n);
	if (m != MAP_FAILED)
		munmap(m, 4096);
	CHECK(pin(fd, a.va, 64 << 10, 0, &extra) == 0 && extra == hm, "after munmap its id is free again");
	unpin(fd, extra);
	for (int i = 0; i < n - 1; i++)
		unpin(fd, h[i]);
	return failed ? 1 : 0;
}

/* "hold": pin something, say so, and wait to be killed (the unload test). */
static int hold(void)
{
	int fd = open(GPUP2P_DEVICE, O_RDWR | O_CLOEXEC);
	struct nvp2p_stub_alloc a;
	uint64_t h;

	stub = open("/dev/nvp2p_stub", O_RDWR | O_CLOEXEC);
	a = alloc_fake(64 << 10, 0);
	if (fd < 0 || stub < 0 || pin(fd, a.va, 64 << 10, 0, &h))
		return 1;
	printf("held\n");
	fflush(stdout);
	pause();
	return 0;
}

/* "hold-bar FILE": map BAR2 through its sysfs FILE (resource2_wc, say), say so, wait to be killed. */
static int hold_bar(const char *file)
{
	char path[400];
	struct stat st;
	int f;

	bar2_start();
	snprintf(path, sizeof(path), "%s/%s", bar2_dir, file);
	f = open(path, O_RDWR | O_CLOEXEC);
	if (f < 0 || fstat(f, &st) ||
	    mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0) == MAP_FAILED)
		return 1;
	printf("held\n");
	fflush(stdout);
	pause();
	return 0;
}

/* kmod_test: every scenario (the stub standing in for a driver with persistent pins);
 * kmod_test persistent yes|no: the persistent-pin checks alone; kmod_test ids N; kmod_test hold;
 * kmod_test cache: the cache-mode checks alone; kmod_test hold-bar FILE; kmod_test bar-mode FILE:
 * the mode a pin gets while BAR2 is mapped through FILE, by the kernel's memtype list. */
int main(int argc, char **argv)
{
	char path[512];
	const char *ws = getenv("GPUP2P_VM_WS");
	const char *mode = argc > 1 ? argv[1] : "all";
	int fd;

	if (!strcmp(mode, "hold"))
		return hold();
	if (!strcmp(mode, "hold-bar") && argc > 2)
		return hold_bar(argv[2]);
	if (!strcmp(mode, "bar-mode") && argc > 2) {
		uint32_t t = bar_mode_with(argv[2]);

		printf("%s\n", t == GPUP2P_MAP_WC ? "write-combined" : t == GPUP2P_MAP_UC ? "uncached" : "unknown");
		return t ? 0 : 1;
	}
	signal(SIGBUS, on_bus);
	signal(SIGSEGV, on_bus);
	snprintf(path, sizeof(path), "%s/expect.txt", ws ? ws : "/tmp");
	expect_f = fopen(path, strcmp(mode, "all") ? "a" : "w");
	stub = open("/dev/nvp2p_stub", O_RDWR | O_CLOEXEC);
	fd = open(GPUP2P_DEVICE, O_RDWR | O_CLOEXEC);
	CHECK(stub >= 0 && fd >= 0 && expect_f, "open /dev/gpup2p and /dev/nvp2p_stub");
	if (stub < 0 || fd < 0 || !expect_f)
		return 1;
	if (!strcmp(mode, "persistent") && argc > 2) {
		persistent_tests(fd, !strcmp(argv[2], "yes"));
	} else if (!strcmp(mode, "ids") && argc > 2) {
		id_tests(fd, atoi(argv[2]));
	} else if (!strcmp(mode, "cache")) {
		cache_tests(fd);
	} else {
		struct nvp2p_stub_stats st;

		version_tests(fd);
		map_tests(fd);
		cache_tests(fd);
		scatter_tests(fd);
		free_tests(fd);
		race_tests(fd);
		mmap_race_tests(fd);
		lazy_tests();
		persistent_tests(fd, 1);
		isolation_tests(fd);
		thread_tests(fd);
		close_tests();
		st = stub_stats();
		CHECK(st.bad_calls == 0 && st.put_after_free == 0,
		      "the GPU driver saw no call it refuses and no put_pages after a free callback");
	}
	fclose(expect_f);
	close(fd);
	return failed ? 1 : 0;
}
