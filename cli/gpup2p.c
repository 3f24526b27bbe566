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
	{ "doctor", cmd_doctor, "check what breaks or slows P2P and GPUDirect, with the fix", help_doctor },
	{ "topo", cmd_topo, "GPU/NIC connection matrix (as nvidia-smi topo -m) and the PCIe tree", help_topo },
	{ "bar", cmd_bar, "BAR and Resizable BAR sizes against VRAM (large BAR), IOMMU mode", help_bar },
	{ "acs", cmd_acs, "audit ACS on bridges between GPUs and NICs; disable, restore", help_acs },
	{ "enable", cmd_enable, "load gpup2p.ko (and nvidia-peermem), show what is loaded, or unload", help_enable },
	{ "pin", cmd_pin, "pin GPU memory through gpup2p.ko: page table and timings", help_pin },
	{ "map", cmd_map, "pin, map to the CPU, copy both ways through the mapping, verified", help_map },
	{ "copy", cmd_copy, "copy a pattern host<->GPU or GPU<->GPU and check every byte", help_copy },
	{ "bench", cmd_bench, "bandwidth and latency of every copy path, verified", help_bench },
	{ "report", cmd_report, "merge nodes' doctor/bench JSON: host ranges, missing, slow", help_report },
	{ "snapshot", cmd_snapshot, "capture this machine's PCI/GPU state into an archive for --root", help_snapshot },
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
		"\nglobal options (also accepted after COMMAND):\n"
		"  --root DIR      read DIR/sys and DIR/proc instead of the live system\n"
		"                  (also $GPUP2P_ROOT)\n"
		"  --json          one JSON document (\"schema\": 1)\n"
		"  --csv           CSV, one row per device (--no-header drops the header line)\n"
		"  --jsonl         JSON lines, one record per device\n"
		"  --color=WHEN    auto (default: on a terminal, unless NO_COLOR is set),\n"
		"                  always, never\n"
		"  -v, --verbose   more detail; -vv (or twice) also each path read, on stderr\n"
		"  -q, --quiet     only the result: no legend, notes or warnings\n"
		"  -h, --help      this help\n"
		"  --version       print the version\n\n"
		"exit codes: 0 ok, 1 warning found, 2 error found, 3 could not determine,\n"
		"            64 usage error, 69 facility unavailable, 77 permission denied\n");
}

static const struct cli_cmd *find_cmd(const char *name)
{
	for (int i = 0; i < NCMD; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct cli c;
	const struct cli_cmd *cmd;
	int i, rc;

	memset(&c, 0, sizeof(c));
	c.color_mode = "auto";
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--version")) {
			printf("gpup2p %s\n", GPUP2P_VERSION);
			return 0;
		}
		rc = cli_global_opt(&c, argc, argv, &i);
		if (rc < 0)
			return EX_USAGE_;
		if (rc == 0)
			return cli_usage(NULL, "unknown option '%s'", argv[i]);
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
