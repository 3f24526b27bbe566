/* gpup2p doctor — limits.*: the locked-memory limit RDMA registrations run into, and the size of
 * /dev/shm that NCCL's shared-memory transport needs. Facts of this process live; under a snapshot,
 * those its capturing process recorded (an older snapshot records none: skipped, never an alarm). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpup2p/bar.h"
#include "check.h"

#define SHM_MIN (1ULL << 30)

/* Not live and nothing recorded: skipped, saying so. 1 when it did. One message for a plain root, an
 * older live snapshot and a snapshot of a root (it has no process of its own): doctor says the same on
 * a root and on its snapshot. */
static int not_recorded(struct gp_doctor_ctx *c, const char *subject, int known)
{
	if (c->root->live || known)
		return 0;
	gp_doctor_add(c, GP_SEV_SKIPPED, subject, "live only: no process limits recorded offline (root %s: a "
		      "snapshot of a live system records them; older gpup2p did not)", c->root->dir);
	return 1;
}

/* Where the facts come from, for a message: "" live; a snapshot's capturing process otherwise. */
static const char *whose(const struct gp_doctor_ctx *c)
{
	if (!c->proc.recorded)
		return "";
	return c->proc.container == 1 ? " (recorded by the snapshot, taken inside a container: the container's "
					"limit, which jobs started there get)"
	       : " (recorded by the snapshot's capturing process)";
}

static void ev_container(struct gp_finding *f, const struct gp_doctor_ctx *c)
{
	if (c->proc.recorded || c->root->live) /* live and offline alike (doctor on its own snapshot) */
		gp_finding_ev(f, "container", "%s%s%s", c->proc.container < 0 ? "unknown" : c->proc.container ? "yes" : "no",
			      c->proc.container_why[0] ? ", " : "", c->proc.container_why);
}

static void check_memlock(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	char sz[32];

	if (!gp_doctor_rdma_nics(c)) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "RLIMIT_MEMLOCK", "no RDMA NIC: nothing registers memory");
		return;
	}
	if (not_recorded(c, "RLIMIT_MEMLOCK", c->proc.known))
		return;
	if (!c->proc.known) {
		gp_doctor_add(c, GP_SEV_UNKNOWN, "RLIMIT_MEMLOCK", "process limits not read");
		return;
	}
	if (c->proc.memlock == UINT64_MAX) {
		f = gp_doctor_add(c, GP_SEV_OK, "RLIMIT_MEMLOCK", "locked memory is unlimited%s", whose(c));
		gp_finding_ev(f, "RLIMIT_MEMLOCK", "unlimited");
		ev_container(f, c);
		return;
	}
	gp_bar_size_str(c->proc.memlock, sz, sizeof(sz));
	f = gp_doctor_add(c, GP_SEV_WARNING, "RLIMIT_MEMLOCK", "locked memory is limited to %s for this login%s: "
			  "ibv_reg_mr (NCCL, MPI over RDMA) fails with ENOMEM above it%s", sz, whose(c),
			  c->proc.euid == 0 ? " (root is exempt, jobs are not)" : "");
	gp_finding_ev(f, "RLIMIT_MEMLOCK", "%s", sz);
	ev_container(f, c);
	if (c->proc.container == 1)
		gp_finding_fix(f, "start the container with --ulimit memlock=-1 (Kubernetes: LimitMEMLOCK=infinity "
			       "in the container runtime's service)");
	else
		gp_finding_fix(f, "'* - memlock unlimited' in /etc/security/limits.d/, LimitMEMLOCK=infinity for "
			       "services (slurmd, sshd jobs), then log in again");
}

static void check_shm(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	char sz[32];

	if (c->topo->ngpu < 2) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "/dev/shm", "fewer than two GPUs: no shared-memory transport");
		return;
	}
	if (not_recorded(c, "/dev/shm", c->proc.shm_known))
		return;
	if (!c->proc.shm_known) {
		gp_doctor_add(c, GP_SEV_UNKNOWN, "/dev/shm", "/dev/shm could not be examined (statvfs failed)");
		return;
	}
	gp_bar_size_str(c->proc.shm_size, sz, sizeof(sz));
	if (c->proc.shm_size >= SHM_MIN) {
		f = gp_doctor_add(c, GP_SEV_OK, "/dev/shm", "/dev/shm holds %s%s", sz, whose(c));
	} else {
		f = gp_doctor_add(c, GP_SEV_WARNING, "/dev/shm", "/dev/shm holds only %s%s: NCCL's shared-memory "
				  "transport between processes fails or falls back", sz, whose(c));
		gp_finding_fix(f, c->proc.container == 1 ? "start the container with --shm-size=16g "
			       "or --ipc=host (Kubernetes: an emptyDir of medium Memory on /dev/shm)" :
			       "mount -o remount,size=16G /dev/shm (containers: --shm-size=16g or --ipc=host)");
	}
	gp_finding_ev(f, "statvfs /dev/shm", "%s", sz);
	ev_container(f, c);
}

static const struct gp_doctor_check checks[] = {
	{ "limits.memlock", "RLIMIT_MEMLOCK not unlimited on a machine with RDMA NICs", GP_SRC_PROCESS | GP_SRC_SYSFS, 0,
	  check_memlock,
	  "Reads this process's RLIMIT_MEMLOCK (getrlimit): the limit a login on this machine gets. Warning when it "
	  "is not unlimited and RDMA NICs are present: memory registration (ibv_reg_mr) fails with ENOMEM beyond it. "
	  "Offline, a snapshot's record of the process that captured it is judged (and whether that ran inside a "
	  "container, whose fix is --ulimit memlock=-1); a root without that record is skipped." },
	{ "limits.shm", "/dev/shm below 1 GiB with two GPUs or more", GP_SRC_PROCESS, 0, check_shm,
	  "Measures /dev/shm (statvfs). Warning below 1 GiB on a machine with two GPUs or more: NCCL's shared-memory "
	  "transport between processes needs room there (containers default to 64 MiB). Offline, the size the "
	  "snapshot's capturing process recorded (and whether it ran in a container); without one, skipped." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_limits, "limits", "process limits", checks);
