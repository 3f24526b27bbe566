/* gpup2p — the command: global options and the command table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpup2p/stats.h"

#ifndef GPUP2P_VERSION
#define GPUP2P_VERSION "0.0.0"
#endif

static const struct cli_cmd commands[] = {
	{ "doctor", cmd_doctor, "check what breaks or slows P2P and GPUDirect, with the fix", help_doctor, &opts_doctor },
	{ "topo", cmd_topo, "GPU/NIC connection matrix (as nvidia-smi topo -m) and the PCIe tree", help_topo, &opts_topo },
	{ "bar", cmd_bar, "BAR and Resizable BAR sizes against VRAM (large BAR), IOMMU mode", help_bar, &opts_bar },
	{ "acs", cmd_acs, "audit ACS on bridges between GPUs and NICs; disable, restore", help_acs, &opts_acs },
	{ "enable", cmd_enable, "load gpup2p.ko (and nvidia-peermem), show what is loaded, or unload", help_enable,
	  &opts_enable },
	{ "pin", cmd_pin, "pin GPU memory through gpup2p.ko: page table and timings", help_pin, &opts_pin },
	{ "map", cmd_map, "pin, map to the CPU, copy both ways through the mapping, verified", help_map, &opts_map },
	{ "copy", cmd_copy, "copy a pattern host<->GPU or GPU<->GPU and check every byte", help_copy, &opts_copy },
	{ "bench", cmd_bench, "bandwidth and latency of every copy path, verified", help_bench, &opts_bench },
	{ "report", cmd_report, "merge nodes' doctor/bench JSON: host ranges, missing, slow", help_report, &opts_report },
	{ "snapshot", cmd_snapshot, "capture this machine's PCI/GPU state into an archive for --root", help_snapshot,
	  &opts_snapshot },
};
#define NCMD (int)(sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpup2p [--root DIR] [--json|--csv|--jsonl] [--color=auto|always|never]\n"
		"              [-v] [-q] COMMAND [ARGS]\n"
		"       gpup2p help COMMAND\n"
		"       gpup2p --version\n\n"
		"commands:\n");
	for (int i = 0; i < NCMD; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\nglobal options (also accepted after COMMAND):\n");
	opts_help(f, &opts_global);
	fprintf(f,
		"\nexit codes: 0 ok, 1 warning found, 2 error found, 3 could not determine,\n"
		"            64 usage error, 69 facility unavailable, 77 permission denied\n");
}

static const struct cli_cmd *find_cmd(const char *name)
{
	for (int i = 0; i < NCMD; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* the hidden `gpup2p __complete WORD...` that the completion scripts call */
static int complete(int argc, char **argv)
{
	const struct opts_cmd *t[NCMD + 1];
	int n = 0;

	for (int k = 0; k < NCMD; k++)
		if (commands[k].opts)
			t[n++] = commands[k].opts;
	t[n++] = &opts_bench_rdma;
	return opts_complete(t, n, argc, argv);
}

int main(int argc, char **argv)
{
	struct cli c;
	const struct cli_cmd *cmd;
	int i, rc;

	memset(&c, 0, sizeof(c));
	c.color_mode = "auto";
	if (argc > 1 && !strcmp(argv[1], "__complete"))
		return complete(argc - 2, argv + 2);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		rc = opts_global_arg(&c, argc, argv, &i);
		if (rc < 0)
			return EX_USAGE_;
		if (rc == 0)
			return cli_usage(NULL, "unknown option '%s'", argv[i]);
		if (c.help) {
			usage(stdout);
			return 0;
		}
		if (c.version) {
			printf("gpup2p %s\n", GPUP2P_VERSION);
			return 0;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EX_USAGE_;
	}
	if (!strcmp(argv[i], "help")) {
		if (i + 1 >= argc) {
			usage(stdout);
			return 0;
		}
		cmd = find_cmd(argv[i + 1]);
		if (!cmd)
			return cli_usage(NULL, "no command '%s'", argv[i + 1]);
		cmd->help(stdout);
		return 0;
	}
	cmd = find_cmd(argv[i]);
	if (!cmd)
		return cli_usage(NULL, "unknown command '%s'", argv[i]);
	c.argc = argc - i;
	c.argv = argv + i;
	rc = cmd->run(&c, argc - i, argv + i);
	cli_unload(&c);
	if (getenv("GPUP2P_STATS"))
		gp_work_print(stderr);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "gpup2p: error writing output\n");
		return EX_ERROR;
	}
	return rc;
}
