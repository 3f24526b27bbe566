/* gpup2p — changing ACS control registers safely: a plan (which bridges, which value), the state file
 * that records what was there before, every write read back, and a rollback that puts back what was
 * already changed when a write or read-back fails, so that a machine is never left half-changed. */
#ifndef GPUP2P_ACS_WRITE_H
#define GPUP2P_ACS_WRITE_H

#include "gpup2p/acs.h"
#include "gpup2p/err.h"

enum gp_acs_mode {
	GP_ACS_CLEAR_REDIRECT, /* clear RR|CR|EC, keep the isolation bits (pci=disable_acs_redir=) */
	GP_ACS_ZERO,           /* write 0 (NCCL's documented recipe) */
};

enum gp_acs_scope {
	GP_ACS_SCOPE_PATHS,    /* bridges on a path between two GPUs/NICs */
	GP_ACS_SCOPE_ALL,      /* every bridge with an ACS capability */
	GP_ACS_SCOPE_LISTED,   /* exactly the listed bridges */
};

/* One bridge of a plan: write `after` where `before` is now. */
struct gp_acs_change {
	int pci;               /* index in gp_pci.devs */
	char bdf[GP_BDF_LEN];
	uint16_t vendor, device;
	int off;               /* config offset of the ACS control register (capability + 6) */
	uint16_t before, after;
	uint16_t recorded;     /* restore: the value gpup2p wrote (state file), to tell a later change */
	int result;            /* 0 not attempted, 1 written and verified, 2 already so, -1 failed,
	                          -2 rolled back */
};

struct gp_acs_plan {
	int n;
	struct gp_acs_change *c;
	int nwrite;            /* entries whose before != after */
};

/* How config space is read and written. gp_acs_io_libpci() is the real one; tests pass their own
 * to inject failures. ctx is handed back to both functions. */
struct gp_acs_io {
	int (*read16)(void *ctx, const struct gp_pci_dev *d, int off, uint16_t *v);
	int (*write16)(void *ctx, const struct gp_pci_dev *d, int off, uint16_t v);
	void *ctx;
};

/* Config access through libpci on the scanned bus p (live, or a fixture tree's config files). */
struct gp_acs_io gp_acs_io_libpci(const struct gp_pci *p);

/* The control value a mode asks for, given the current one. */
uint16_t gp_acs_target(uint16_t ctl, enum gp_acs_mode mode);

/* Which bridges a --disable touches and what it writes, from the audit's scanned values.
 * bdfs/nbdf: the listed bridges for GP_ACS_SCOPE_LISTED. Errors: a malformed or unknown BDF, or a
 * listed function without an ACS capability (GP_E_USAGE); a bridge in scope whose ACS could not be
 * read (GP_E_DATA: run as root). Free with gp_acs_plan_free. */
int gp_acs_plan_disable(const struct gp_topo *t, const struct gp_acs_audit *a, enum gp_acs_scope scope,
			const char *const *bdfs, int nbdf, enum gp_acs_mode mode, struct gp_acs_plan *pl,
			struct gp_err *e);

/* What clearing ACS on a bridge would undo: GP_ACS_UNSAFE_IOMMU a function it governs is translated
 * by the IOMMU (boot with iommu=pt first), GP_ACS_UNSAFE_VFIO one is owned by VFIO (a guest's: leave
 * ACS on). The first is what booting with iommu=pt removes, the second only unbinding from VFIO. */
enum { GP_ACS_UNSAFE_IOMMU = 1, GP_ACS_UNSAFE_VFIO = 2 };

/* Where clearing ACS would undo isolation, refuse: a function below a bridge the plan changes
 * (before != after), or beside a multi-function device's function, is translated by the IOMMU (group
 * type DMA or DMA-FQ: its peer requests would no longer reach the IOMMU), in a group whose type is
 * unknown (no type file, as before Linux 5.11: it may translate), bound to vfio-pci or in a
 * group owned by a user-space driver ("unmanaged": a guest could reach another's memory). 0 when
 * none is; else the first refused bridge's GP_ACS_UNSAFE_* and a GP_E_USAGE error (exit 64), one line
 * naming the bridge, the function and why ("; boot with iommu=pt" ending an IOMMU one). The line
 * names no option: the caller adds its own override (the acs command's --force). Reads the groups'
 * types through p's root. */
int gp_acs_plan_check(const struct gp_pci *p, const struct gp_acs_plan *pl, struct gp_err *e);

/* What clearing ACS on bridge b (p->devs[b]) would undo, as gp_acs_plan_check judges it: 0 nothing,
 * else GP_ACS_UNSAFE_VFIO where any function it governs is owned by VFIO, else GP_ACS_UNSAFE_IOMMU;
 * why says which function and why, with no advice (neither iommu=pt nor an option). */
int gp_acs_bridge_unsafe(const struct gp_pci *p, int b, char *why, size_t n);

/* The line for /etc/default/grub that adds the kernel parameter param to GRUB_CMDLINE_LINUX:
 * GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX PARAM", with GRUB's command separators in PARAM (; | & < >)
 * escaped by a backslash, which the shell keeps inside double quotes and grub.cfg's lexer removes:
 * grub-mkconfig copies the value into grub.cfg's linux line, where a bare ';' would end the command.
 * Appended to b; 0 or -ENOMEM. */
int gp_acs_grub_line(const char *param, struct gp_buf *b);

/* Append the boot parameter that makes a plan permanent, for every bridge whose value it changes
 * (before != after): "pci=disable_acs_redir=A;B" for GP_ACS_CLEAR_REDIRECT,
 * "pci=config_acs=0000000@A;0000000@B" (kernel >= 6.11) for GP_ACS_ZERO; nothing when it changes
 * nothing. 0 or -ENOMEM. */
int gp_acs_plan_boot_param(const struct gp_acs_plan *pl, enum gp_acs_mode mode, struct gp_buf *b);

/* Carry out a disable plan: re-read every bridge's control register (the plan follows the live value),
 * record the values to be replaced in the state file (merged with one already there: the first value
 * recorded for a bridge is kept), then write and read back each. When a write or read-back fails,
 * the bridges already written get their previous value back (verified), the state file is put back
 * as it was and a GP_E_FAIL error names the bridge. Nothing to write ⇒ 0 and the state file is not
 * touched. Results are left in each change's `result`. */
int gp_acs_disable(const struct gp_pci *p, struct gp_acs_plan *pl, enum gp_acs_mode mode,
		   const struct gp_acs_io *io, const char *state_path, struct gp_err *e);

/* Load the state file into a restore plan: before = the value there now (read through io),
 * after = the value recorded before gpup2p changed it. A missing file ⇒ GP_E_UNAVAIL; a malformed
 * one, or one naming a function that is absent or has another vendor:device ⇒ GP_E_DATA. */
int gp_acs_plan_restore(const struct gp_pci *p, const struct gp_acs_io *io, const char *state_path,
			struct gp_acs_plan *pl, struct gp_err *e);

/* Carry out a restore plan with the same verify-and-rollback rule as gp_acs_disable, then remove
 * the state file. */
int gp_acs_restore(const struct gp_pci *p, struct gp_acs_plan *pl, const struct gp_acs_io *io,
		   const char *state_path, struct gp_err *e);

/* Release a plan. */
void gp_acs_plan_free(struct gp_acs_plan *pl);

#endif
