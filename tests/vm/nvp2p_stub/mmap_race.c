// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Test only: nvp2p_stub.ko's NVP2P_STUB_FREE_IN_MMAP (see nvp2p_stub.h). A kretprobe on the mmap
 * handler of a client's file frees a range between the handler's return and the kernel linking the
 * new mapping: the callbacks run on another CPU while the handler's caller waits for them.
 */
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/errno.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "internal.h"
#include "nvp2p_stub.h"

#ifdef CONFIG_KRETPROBES
/* NVP2P_STUB_FREE_IN_MMAP: the kretprobe on the client's mmap handler, and what it does. */
static struct {
	struct kretprobe rp;
	bool registered;
	atomic_t armed;
	pid_t tgid;
	u64 va;
	struct work_struct work;
	int done;
	long result;
} mm_race;

static void mmap_race_work(struct work_struct *w)
{
	long rc = stub_free(mm_race.va);

	WRITE_ONCE(mm_race.result, rc ? rc : 1);
	smp_store_release(&mm_race.done, 1);
}

/* The handler has returned; the kernel has not linked the mapping yet. Runs with preemption off:
 * the range is freed on another CPU while this one waits (at most 2 s). */
static int mmap_returned(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	unsigned int cpu;
	u64 t0;

	if (current->tgid != READ_ONCE(mm_race.tgid) || (int)regs_return_value(regs) != 0 ||
	    atomic_cmpxchg(&mm_race.armed, 1, 0) != 1)
		return 0;
	cpu = cpumask_any_but(cpu_online_mask, smp_processor_id());
	if (cpu >= nr_cpu_ids) {
		WRITE_ONCE(mm_race.result, -EOPNOTSUPP);
		return 0;
	}
	queue_work_on(cpu, system_highpri_wq, &mm_race.work);
	t0 = ktime_get_ns();
	while (!smp_load_acquire(&mm_race.done)) {
		if (ktime_get_ns() - t0 > 2 * NSEC_PER_SEC) {
			WRITE_ONCE(mm_race.result, -ETIMEDOUT);
			break;
		}
		cpu_relax();
	}
	return 0;
}

long mmap_race_disarm(void)
{
	if (!mm_race.registered)
		return 0;
	unregister_kretprobe(&mm_race.rp);
	flush_work(&mm_race.work);
	mm_race.registered = false;
	return READ_ONCE(mm_race.result);
}

long mmap_race_arm(const struct nvp2p_stub_free_in_mmap *req)
{
	struct file *f = fget(req->fd);
	long rc;

	if (!f)
		return -EBADF;
	mmap_race_disarm();
	memset(&mm_race.rp, 0, sizeof(mm_race.rp));
	mm_race.rp.kp.addr = (kprobe_opcode_t *)f->f_op->mmap;
	mm_race.rp.handler = mmap_returned;
	mm_race.rp.maxactive = 4;
	mm_race.tgid = current->tgid;
	mm_race.va = req->va;
	mm_race.done = 0;
	mm_race.result = 0;
	INIT_WORK(&mm_race.work, mmap_race_work);
	atomic_set(&mm_race.armed, 1);
	rc = f->f_op->mmap ? register_kretprobe(&mm_race.rp) : -EINVAL;
	fput(f);
	mm_race.registered = !rc;
	return rc;
}
#else
long mmap_race_disarm(void)
{
	return -EOPNOTSUPP;
}

long mmap_race_arm(const struct nvp2p_stub_free_in_mmap *req)
{
	return -EOPNOTSUPP;
}
#endif
