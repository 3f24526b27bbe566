/* gpup2p enable — load gpup2p.ko (and nvidia-peermem), show what is loaded, or unload. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gpup2p/kmod.h"
#include "gpup2p/pin.h"
#include "gpup2p/pinmap.h"

void help_enable(FILE *f)
{
	fprintf(f,
		"usage: gpup2p enable [--module PATH] [--peermem] [--dry-run]\n"
		"       gpup2p enable --status [--json]\n"
		"       gpup2p enable --disable [--peermem] [--dry-run]\n\n"
		"Load gpup2p.ko, the project's driver that pins GPU memory and maps it to user\n"
		"space, from the installed module tree (or the file --module names), and check\n"
		"that /dev/gpup2p answers.\n"
		"Idempotent: what is loaded already is left alone.\n\n");
	opts_help(f, &opts_enable);
	fprintf(f,
		"\nExit: 0 done (or nothing to do), 2 a load or unload failed, 64 usage, 69 module\n"
		"not installed or a module it needs not loaded (the NVIDIA driver), 77 not root.\n");
}

struct eopts {
	const char *module;
	int peermem, status, disable, dry_run;
};

static int module_opt(const char *cmd, const struct opt *o, const char *val, void *field, void *ctx)
{
	(void)o, (void)ctx;
	if (!*val)
		return cli_usage(cmd, "--module needs the path of a gpup2p.ko");
	if (access(val, R_OK))
		return cli_usage(cmd, "--module %s: %s", val, strerror(errno));
	*(const char **)field = val;
	return 0;
}

#define O(f) (long)offsetof(struct eopts, f)
static const struct opt enable_opts[] = {
	{ "--module", NULL, "PATH", OPT_CALL, O(module), .call = module_opt, .flags = OPT_FILE,
	  .help = "load this gpup2p.ko file instead of the installed one" },
	{ "--peermem", NULL, NULL, OPT_FLAG, O(peermem), 1,
	  .help = "also load nvidia-peermem (GPUDirect RDMA for NICs); refused\n"
		  "while the old nv_peer_mem is loaded (only one of them may be)" },
	{ "--status", NULL, NULL, OPT_FLAG, O(status), 1,
	  .help = "what is loaded and which pin backend works; changes nothing" },
	{ "--disable", NULL, NULL, OPT_FLAG, O(disable), 1, .help = "unload gpup2p.ko (and nvidia-peermem with --peermem)" },
	{ "--dry-run", NULL, NULL, OPT_FLAG, O(dry_run), 1, .help = "say what would be done; change nothing" },
	{ 0 },
};
#undef O

static const struct opt_rule enable_rules[] = {
	{ OPT_EXCLUDES, "--status", "--disable --module --peermem --dry-run", NULL, NULL },
	{ OPT_EXCLUDES, "--disable", "--module", NULL, NULL },
	{ 0 },
};

const struct opts_cmd opts_enable = {
	.name = "enable", .opts = enable_opts, .rules = enable_rules, .col = 17, .help = help_enable,
	.globals = "--json, -q: see gpup2p --help",
};

static int dev_node(char *why, size_t n)
{
	struct stat st;

	if (stat("/dev/gpup2p", &st)) {
		snprintf(why, n, "absent");
		return 0;
	}
	snprintf(why, n, "%s, mode %03o, group %u", S_ISCHR(st.st_mode) ? "character device" : "not a device",
		 st.st_mode & 0777, (unsigned)st.st_gid);
	return S_ISCHR(st.st_mode);
}

static int status(const struct cli *c)
{
	static const char *const mods[] = { "gpup2p", "nvidia", "nvidia_peermem", "nv_peer_mem" };
	struct gp_pin_dev d;
	struct gp_err e = { 0 };
	char node[96], backend[512];
	int ok = gp_pin_open(&d, NULL, &e) == 0;

	dev_node(node, sizeof(node));
	const char *name = ok ? "kmod" : NULL;

	if (ok) {
		snprintf(backend, sizeof(backend), "kmod (/dev/gpup2p, ABI %u.%u)", d.abi_major, d.abi_minor);
		gp_pin_close(&d);
	} else {
		/* without the module, the dma-buf backend may serve: ask CUDA (GPU0) */
		struct gp_cuda *cu = calloc(1, sizeof(*cu));
		struct gp_err ce = { 0 };
		char why[512];

		snprintf(why, sizeof(why), "out of memory");
		if (cu && gp_cuda_open(cu, &ce) == 0) {
			if (gp_pinmap_dmabuf_probe(cu, 0, why, sizeof(why)))
				name = "dmabuf";
			gp_cuda_close(cu);
		} else if (cu) {
			snprintf(why, sizeof(why), "%s", ce.msg);
		}
		free(cu);
		if (name)
			snprintf(backend, sizeof(backend), "dmabuf (%s)", why);
		else
			snprintf(backend, sizeof(backend), "none: kmod: %s; dma-buf: %s", e.msg, why);
	}
	if (c->fmt == GP_OUT_JSON || c->fmt == GP_OUT_JSONL) {
		struct gp_json j;

		cli_json_open(c, &j, stdout, c->fmt == GP_OUT_JSON, "enable", c->argc, c->argv);
		gp_json_obj(&j, "modules");
		for (int i = 0; i < 4; i++)
			gp_json_str(&j, mods[i], gp_kmod_state_name(gp_kmod_state(mods[i])));
		gp_json_end(&j, '}');
		gp_json_str(&j, "device", node);
		gp_json_str(&j, "pin_backend", name);
		gp_json_str(&j, "pin_backend_detail", backend);
		cli_json_end(c, &j, 0);
		return 0;
	}
	for (int i = 0; i < 4; i++)
		printf("%-16s %s\n", mods[i], gp_kmod_state_name(gp_kmod_state(mods[i])));
	printf("%-16s %s\n", "/dev/gpup2p", node);
	printf("%-16s %s\n", "pin backend", backend);
	if (!c->quiet && gp_kmod_state("nvidia_peermem") == GP_MOD_LIVE && gp_kmod_state("nv_peer_mem") == GP_MOD_LIVE)
		printf("\nBoth nvidia_peermem and nv_peer_mem are loaded: only one may be (unload nv_peer_mem).\n");
	return 0;
}

static int is_root(void)
{
	if (geteuid() == 0)
		return 1;
	fprintf(stderr, "gpup2p enable: loading and unloading kernel modules needs root: run it with sudo "
		"(--status and --dry-run do not)\n");
	return 0;
}

/* Wait for udev to create the node (at most 2 s). */
static int wait_node(void)
{
	char why[96];

	for (int i = 0; i < 200; i++) {
		if (dev_node(why, sizeof(why)))
			return 1;
		usleep(10000);
	}
	return 0;
}

static int load(const struct cli *c, const struct eopts *o)
{
	struct gp_err e = { 0 };
	int was = gp_kmod_state("gpup2p") == GP_MOD_LIVE;

	if (o->peermem && gp_kmod_state("nv_peer_mem") == GP_MOD_LIVE) {
		fprintf(stderr, "gpup2p: nv_peer_mem (Mellanox/MOFED) is loaded: nvidia-peermem must not load beside it; "
			"'rmmod nv_peer_mem' first, or keep using it without --peermem\n");
		return EX_ERROR;
	}
	if (o->dry_run) {
		printf(was ? "gpup2p.ko is loaded: nothing to do\n" : "would load gpup2p.ko from %s\n",
		       o->module ? o->module : "the installed module tree");
		if (o->peermem)
			printf(gp_kmod_state("nvidia_peermem") == GP_MOD_LIVE ? "nvidia-peermem is loaded: nothing to do\n"
									   : "would load nvidia-peermem\n");
		return 0;
	}
	if (!is_root())
		return EX_PERM;
	if (gp_kmod_load("gpup2p", o->module, &e))
		return cli_fail(&e);
	if (!wait_node()) {
		/* no udev (a container, an initramfs): make the node ourselves, as the udev rule would */
		int made = gp_kmod_devnode("gpup2p", "/dev/gpup2p", 0660, &e);

		if (made < 0)
			return cli_fail(&e);
		if (made && !c->quiet)
			printf("created /dev/gpup2p (mode 0660): no udev rule made it\n");
	}
	if (!c->quiet)
		printf(was ? "gpup2p.ko was loaded already; /dev/gpup2p ready\n" : "gpup2p.ko loaded; /dev/gpup2p ready\n");
	if (o->peermem) {
		int pwas = gp_kmod_state("nvidia_peermem") == GP_MOD_LIVE;

		if (gp_kmod_load("nvidia_peermem", NULL, &e))
			return cli_fail(&e);
		if (!c->quiet)
			printf(pwas ? "nvidia-peermem was loaded already\n" : "nvidia-peermem loaded\n");
	}
	return 0;
}

static int unload(const struct cli *c, const struct eopts *o)
{
	struct gp_err e = { 0 };
	const char *names[2] = { "gpup2p", o->peermem ? "nvidia_peermem" : NULL };

	for (int i = 0; i < 2 && names[i]; i++) {
		int was = gp_kmod_state(names[i]) != GP_MOD_ABSENT;

		if (o->dry_run) {
			printf(was ? "would unload %s\n" : "%s is not loaded: nothing to do\n", names[i]);
			continue;
		}
		if (!is_root())
			return EX_PERM;
		if (gp_kmod_unload(names[i], &e))
			return cli_fail(&e);
		if (!c->quiet)
			printf(was ? "%s unloaded\n" : "%s was not loaded\n", names[i]);
	}
	return 0;
}

int cmd_enable(struct cli *c, int argc, char **argv)
{
	struct eopts o = { 0 };
	int rc;

	if ((rc = opts_parse(&opts_enable, c, argc, argv, &o)) >= 0)
		return rc;
	if (o.status)
		return status(c);
	return o.disable ? unload(c, &o) : load(c, &o);
}
