/* gpup2p doctor — limits.*: the locked-memory limit RDMA registrations run into, and the size of
 * /dev/shm that NCCL's shared-memory transport needs. Facts of this process: live only. */
#include <stdint.h>
#include <stdio.h>

#include "gpup2p/bar.h"
#include "check.h"

#define SHM_MIN (1ULL << 30)

static void check_memlock(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	char sz[32];

	if (!gp_doctor_rdma_nics(c)) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "RLIMIT_MEMLOCK", "no RDMA NIC: nothing registers memory");
		return;
	}
	if (!c->proc.known) {
		gp_doctor_add(c, GP_SEV_UNKNOWN, "RLIMIT_MEMLOCK", "process limits not read");
		return;
	}
	if (c->proc.memlock == UINT64_MAX) {
		f = gp_doctor_add(c, GP_SEV_OK, "RLIMIT_MEMLOCK", "locked memory is unlimited");
		gp_finding_ev(f, "RLIMIT_MEMLOCK", "unlimited");
		return;
	}
	gp_bar_size_str(c->proc.memlock, sz, sizeof(sz));
	f = gp_doctor_add(c, GP_SEV_WARNING, "RLIMIT_MEMLOCK", "locked memory is limited to %s for this login: "
			  "ibv_reg_mr (NCCL, MPI over RDMA) fails with ENOMEM above it%s", sz,
			  c->proc.euid == 0 ? " (root is exempt, jobs are not)" : "");
	gp_finding_ev(f, "RLIMIT_MEMLOCK", "%s", sz);
	gp_finding_fix(f, "'* - memlock unlimited' in /etc/security/limits.d/, LimitMEMLOCK=infinity for services "
		       "(slurmd, sshd jobs), then log in again");
}

static void check_shm(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	char sz[32];

	if (c->topo->ngpu < 2) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "/dev/shm", "fewer than two GPUs: no shared-memory transport");
		return;
	}
	if (!c->proc.shm_known) {
		gp_doctor_add(c, GP_SEV_UNKNOWN, "/dev/shm", "/dev/shm could not be examined (statvfs failed)");
		return;
	}
	gp_bar_size_str(c->proc.shm_size, sz, sizeof(sz));
	if (c->proc.shm_size >= SHM_MIN) {
		f = gp_doctor_add(c, GP_SEV_OK, "/dev/shm", "/dev/shm holds %s", sz);
	} else {
		f = gp_doctor_add(c, GP_SEV_WARNING, "/dev/shm", "/dev/shm holds only %s: NCCL's shared-memory transport "
				  "between processes fails or falls back", sz);
		gp_finding_fix(f, "mount -o remount,size=16G /dev/shm (containers: --shm-size=16g or --ipc=host)");
	}
	gp_finding_ev(f, "statvfs /dev/shm", "%s", sz);
}

static const struct gp_doctor_check checks[] = {
	{ "limits.memlock", "RLIMIT_MEMLOCK not unlimited on a machine with RDMA NICs", GP_SRC_PROCESS | GP_SRC_SYSFS, 0,
	  check_memlock,
	  "Reads this process's RLIMIT_MEMLOCK (getrlimit): the limit a login on this machine gets. Warning when it "
	  "is not unlimited and RDMA NICs are present: memory registration (ibv_reg_mr) fails with ENOMEM beyond it. "
	  "Live only." },
	{ "limits.shm", "/dev/shm below 1 GiB with two GPUs or more", GP_SRC_PROCESS, 0, check_shm,
	  "Measures /dev/shm (statvfs). Warning below 1 GiB on a machine with two GPUs or more: NCCL's shared-memory "
	  "transport between processes needs room there (containers default to 64 MiB). Live only." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_limits, "limits", "process limits", checks);
