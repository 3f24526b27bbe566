/* gpup2p — IOMMU mode detection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/iommu.h"

enum gp_iommu_mode gp_iommu_parse_type(const char *s)
{
	if (strcmp(s, "identity") == 0)
		return GP_IOMMU_IDENTITY;
	if (strcmp(s, "DMA") == 0)
		return GP_IOMMU_DMA;
	if (strcmp(s, "DMA-FQ") == 0)
		return GP_IOMMU_DMA_FQ;
	if (strcmp(s, "blocked") == 0)
		return GP_IOMMU_BLOCKED;
	if (strcmp(s, "unmanaged") == 0)
		return GP_IOMMU_UNMANAGED;
	return GP_IOMMU_UNKNOWN;
}

const char *gp_iommu_mode_name(enum gp_iommu_mode m)
{
	switch (m) {
	case GP_IOMMU_UNKNOWN: return "unknown";
	case GP_IOMMU_OFF: return "off";
	case GP_IOMMU_IDENTITY: return "identity";
	case GP_IOMMU_DMA: return "DMA";
	case GP_IOMMU_DMA_FQ: return "DMA-FQ";
	case GP_IOMMU_BLOCKED: return "blocked";
	case GP_IOMMU_UNMANAGED: return "unmanaged";
	case GP_IOMMU_MIXED: return "mixed";
	}
	return "unknown";
}

enum gp_iommu_mode gp_iommu_group_mode(const struct gp_root *r, int group)
{
	char path[128], buf[64];

	if (group < 0)
		return GP_IOMMU_UNKNOWN;
	snprintf(path, sizeof(path), "/sys/kernel/iommu_groups/%d/type", group);
	if (gp_root_read_text(r, path, buf, sizeof(buf)) <= 0)
		return GP_IOMMU_UNKNOWN;
	return gp_iommu_parse_type(buf);
}

static int iommu_token(const char *t)
{
	static const char *const prefixes[] = { "iommu=", "iommu.", "intel_iommu=", "amd_iommu=",
						"amd_iommu_intr=" };

	/* pci= takes a comma list: keep the token when one of its options is about ACS */
	if (!strncmp(t, "pci=", 4) && (strstr(t, "disable_acs_redir=") || strstr(t, "config_acs=")))
		return 1;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(t, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static void read_cmdline(const struct gp_root *r, struct gp_iommu *io, int *asks_on, int *asks_off)
{
	char *buf = NULL, *save = NULL, *t;
	size_t used = 0;

	*asks_on = *asks_off = 0;
	/* read whole (a page on Linux; a longer file is no command line) */
	if (gp_root_read_alloc(r, "/proc/cmdline", &buf, 64 * 1024) < 0)
		return;
	for (t = strtok_r(buf, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
		if (strcmp(t, "--") == 0)
			break; /* what follows goes to init, not the kernel */
		if (!iommu_token(t))
			continue;
		if (strstr(t, "_iommu=on") || strstr(t, "iommu=force"))
			*asks_on = 1;
		if (strstr(t, "_iommu=off") || strcmp(t, "iommu=off") == 0)
			*asks_off = 1;
		/* the IOMMU tokens of a real command line (a page at most) always fit */
		if (used + 1 + strlen(t) < sizeof(io->cmdline))
			used += (size_t)snprintf(io->cmdline + used, sizeof(io->cmdline) - used, "%s%s", used ? " " : "", t);
	}
	free(buf);
}

void gp_iommu_read(const struct gp_root *r, struct gp_iommu *io)
{
	char **units = NULL, **groups = NULL;
	int counts[GP_IOMMU_MIXED + 1] = { 0 };
	int asks_on, asks_off, kinds = 0;
	enum gp_iommu_mode last = GP_IOMMU_UNKNOWN;

	memset(io, 0, sizeof(*io));
	io->units = gp_root_list(r, "/sys/class/iommu", &units);
	io->groups = gp_root_list(r, "/sys/kernel/iommu_groups", &groups);
	if (io->units < 0)
		io->units = 0;
	if (io->groups < 0)
		io->groups = 0;
	for (int i = 0; i < io->units; i++) {
		size_t l = strlen(io->unit_names), room = sizeof(io->unit_names) - l;

		/* a name that does not fit is not cut: the list ends saying how many were left out */
		if (strlen(units[i]) + 1 + 16 >= room) {
			snprintf(io->unit_names + l, room, "%s+%d more", l ? "," : "", io->units - i);
			break;
		}
		snprintf(io->unit_names + l, room, "%s%s", l ? "," : "", units[i]);
	}
	for (int i = 0; i < io->groups; i++) {
		enum gp_iommu_mode m = gp_iommu_group_mode(r, atoi(groups[i]));

		counts[m]++;
	}
	gp_root_free_list(units);
	gp_root_free_list(groups);
	read_cmdline(r, io, &asks_on, &asks_off);

	/* Groups owned by VFIO ("unmanaged") say nothing about the default domain. */
	kinds = 0;
	for (int m = GP_IOMMU_IDENTITY; m <= GP_IOMMU_BLOCKED; m++) {
		if (counts[m]) {
			kinds++;
			last = (enum gp_iommu_mode)m;
		}
	}
	if (io->units == 0 && io->groups == 0)
		io->mode = GP_IOMMU_OFF;
	else if (kinds == 0)
		io->mode = counts[GP_IOMMU_UNMANAGED] ? GP_IOMMU_UNMANAGED : GP_IOMMU_UNKNOWN;
	else
		io->mode = kinds == 1 ? last : GP_IOMMU_MIXED;
	if (io->mode == GP_IOMMU_OFF && asks_on)
		snprintf(io->note, sizeof(io->note),
			 "the kernel command line asks for an IOMMU but none is registered (firmware VT-d/AMD-Vi off?)");
	else if (io->mode != GP_IOMMU_OFF && asks_off)
		snprintf(io->note, sizeof(io->note), "the kernel command line turns an IOMMU off but units are registered");
}
