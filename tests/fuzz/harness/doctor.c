/* gpup2p — in-process fuzz target "doctor": `doctor --root` (and --kmsg) as cli/cmd_doctor.c runs it, on
 * the doctor fixtures of build/fixtures/doctor with their /proc, /sys and /dev files mutated (fx.c's
 * records: contents, FIFOs, links out of the root, missing files, folders). Checks: exit code, --json
 * strict JSON, the decoy outside the root untouched; a read that blocks is a timeout (libFuzzer -timeout).
 *
 * Input: [fixture][command][mutation records...]
 *   command % 9: doctor --kmsg, --kmsg --json, --kmsg -v, --json, --kmsg --only gpu.xid --json, --kmsg
 *   --prometheus, --kmsg --nagios, --kmsg --strict -q, --only kmod,driver,rdma. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int cmd_doctor(struct cli *c, int argc, char **argv);

static const char *const names[] = { "doctor/healthy", "doctor/gpu-xid", "doctor/kmod-loaded", "doctor/iommu-dma",
				     "doctor/pm-dmabuf", "doctor/drv-params", "doctor/nvlink-errors", "doctor/acs-boot" };
#define NFX (int)(sizeof(names) / sizeof(names[0]))
static struct fz_tree fx[NFX];
/* what doctor reads beside the PCI tree (tests/fuzz/mutate.py's DOCTOR list) */
static const char *const extra[] = {
	"proc/modules", "proc/kallsyms", "proc/cmdline", "proc/driver/nvidia/version", "proc/driver/nvidia/params",
	"proc/sys/kernel/hostname", "proc/sys/kernel/random/boot_id", "proc/sys/kernel/numa_balancing",
	"proc/sys/kernel/modules_disabled", "sys/module/module/parameters/sig_enforce", "dev", "dev/kmsg",
	"dev/gpup2p", "dev/nvidiactl", "dev/nvidia0", "dev/nvidia-uvm", "dev/infiniband", "dev/infiniband/uverbs0",
	"gpup2p/gpu-facts", "proc/driver/nvidia/gpus", "sys/devices/system/node", "proc/self/limits",
	"proc/sys/vm/max_map_count", "sys/kernel/iommu_groups", "sys/class/infiniband", "sys/module/nvidia_peermem",
	"sys/module/nvidia/parameters", "etc/default/grub", "proc/meminfo", "proc/driver/nvidia/gpus/0000:13:00.0",
	NULL
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_trees_open(fx, names, NFX, extra);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		int fmt;
		const char *argv[6];
	} cmds[] = {
		{ GP_OUT_TABLE, { "doctor", "--kmsg" } },
		{ GP_OUT_JSON, { "doctor", "--kmsg" } },
		{ GP_OUT_TABLE, { "doctor", "--kmsg", "-v" } },
		{ GP_OUT_JSON, { "doctor" } },
		{ GP_OUT_JSON, { "doctor", "--kmsg", "--only", "gpu.xid" } },
		{ GP_OUT_TABLE, { "doctor", "--kmsg", "--prometheus" } },
		{ GP_OUT_TABLE, { "doctor", "--kmsg", "--nagios" } },
		{ GP_OUT_TABLE, { "doctor", "--kmsg", "--strict", "-q" } },
		{ GP_OUT_TABLE, { "doctor", "--only", "kmod,driver,rdma" } },
	};
	struct fz_tree *t;
	char *argv[8];
	int argc = 0, k, rc;
	const char *o, *why;
	size_t n;

	if (size < 2)
		return 0;
	t = &fx[data[0] % NFX];
	k = data[1] % (int)(sizeof(cmds) / sizeof(cmds[0]));
	while (argc < 6 && cmds[k].argv[argc]) {
		argv[argc] = (char *)cmds[k].argv[argc];
		argc++;
	}
	argv[argc] = NULL;
	fz_tree_mutate(t, data + 2, size - 2);
	rc = fz_cli(cmd_doctor, t->root, cmds[k].fmt, 0, argc, argv);
	o = fz_out(&n);
	if (cmds[k].fmt == GP_OUT_JSON && rc != 64 && n && (why = fz_bad_json(o, n)))
		fz_fail("json", "doctor --json printed no strict JSON: %s", why);
	fz_tree_restore(t);
	return 0;
}
