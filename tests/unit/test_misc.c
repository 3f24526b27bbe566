/* Unit tests: IOMMU mode, recorded GPU facts, output quoting. */
#include <errno.h>

#include "gpup2p/gpu.h"
#include "gpup2p/iommu.h"
#include "gpup2p/out.h"
#include "unit.h"

static int parse_text(const char *text, struct gp_gpu_facts *f, struct gp_err *e)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int rc = gp_gpu_facts_parse(in, "test", f, e);

	fclose(in);
	return rc;
}

static char *capture(void (*fn)(FILE *))
{
	static char buf[1024];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	fn(f);
	fclose(f);
	return buf;
}

static void json_sample(FILE *f)
{
	struct gp_json j;

	gp_json_init(&j, f, 0);
	gp_json_obj(&j, NULL);
	gp_json_str(&j, "s", "a\"b\\c\n\x01");
	gp_json_null(&j, "n");
	gp_json_num(&j, "x", 1.0 / 0.0, 2);
	gp_json_arr_flat(&j, "a");
	gp_json_int(&j, NULL, -1);
	gp_json_u64(&j, NULL, 18446744073709551615ULL);
	gp_json_end(&j, ']');
	gp_json_end(&j, '}');
}

static void csv_sample(FILE *f)
{
	gp_csv_field(f, "plain", ',');
	gp_csv_field(f, "a,b", ',');
	gp_csv_field(f, "say \"hi\"", ',');
	gp_csv_field(f, NULL, '\n');
}

int main(void)
{
	static struct gp_gpu_facts f;
	struct gp_iommu io;
	struct gp_root r;
	struct gp_err e = { 0 };

	CHECK(gp_iommu_parse_type("DMA-FQ") == GP_IOMMU_DMA_FQ && gp_iommu_parse_type("identity") == GP_IOMMU_IDENTITY &&
	      gp_iommu_parse_type("DMA") == GP_IOMMU_DMA && gp_iommu_parse_type("x") == GP_IOMMU_UNKNOWN, "group types");
	gp_root_init(&r, unit_fixture("workstation"), &e);
	gp_iommu_read(&r, &io);
	CHECK(io.mode == GP_IOMMU_DMA_FQ && io.units == 2, "workstation: DMA-FQ, 2 units");
	CHECK_STR(io.cmdline, "intel_iommu=on", "IOMMU tokens of the command line");
	gp_root_init(&r, unit_fixture("h200x2"), &e);
	gp_iommu_read(&r, &io);
	CHECK(io.mode == GP_IOMMU_OFF && io.units == 0 && io.groups == 0, "H200 VM: off (dmesg's 'Translated' ignored)");
	CHECK(io.cmdline[0] == '\0', "H200: no IOMMU tokens (pci=realloc=off is not one)");
	gp_root_init(&r, unit_fixture("dgx-h100"), &e);
	gp_iommu_read(&r, &io);
	CHECK_STR(io.cmdline, "iommu=pt", "iommu=pt recorded");

	CHECK(parse_text("gpup2p-gpu-facts 1\ndriver 1.2\ngpu 00:06.0 vram=10 bar1=20 name=A B\n"
			 "nvlink 00:06.0 00:07.0 4\nnvlink 0000:00:07.0 0000:00:06.0 2\n", &f, &e) == 0, "facts parse");
	CHECK(f.available && f.n == 1 && f.gpus[0].vram == 10 && !strcmp(f.gpus[0].name, "A B"), "gpu line");
	CHECK(gp_gpu_nvlinks(&f, "0000:00:07.0", "0000:00:06.0") == 6, "links add up in either order");
	CHECK(gp_gpu_nvlinks(&f, "0000:00:06.0", "0000:00:08.0") == 0, "no link");
	CHECK(parse_text("gpup2p-gpu-facts 1\nunavailable NVML: driver not loaded\n", &f, &e) == 0 && !f.available &&
	      !strcmp(f.why, "NVML: driver not loaded"), "recorded unavailability");
	CHECK(gp_gpu_nvlinks(&f, "0000:00:07.0", "0000:00:06.0") == -1, "unavailable: -1");
	CHECK(parse_text("something else\n", &f, &e) < 0 && e.cls == GP_E_DATA && strstr(e.msg, "test:1"), "bad header");
	CHECK(parse_text("gpup2p-gpu-facts 1\ngpu 00:06.0 vram=x name=A\n", &f, &e) < 0 && strstr(e.msg, "test:2"),
	      "bad gpu line names the line");
	CHECK(parse_text("gpup2p-gpu-facts 1\nnvlink 00:06.0 zz 1\n", &f, &e) < 0, "bad nvlink line");
	CHECK(parse_text("", &f, &e) < 0, "empty file");

	CHECK_STR(capture(json_sample), "{\"s\": \"a\\\"b\\\\c\\n\\u0001\", \"n\": null, \"x\": null, "
					 "\"a\": [-1, 18446744073709551615]}\n", "JSON escaping and nulls");
	CHECK_STR(capture(csv_sample), "plain,\"a,b\",\"say \"\"hi\"\"\",\n", "CSV quoting");
	CHECK(gp_out_parse_color("auto") == 0 && gp_out_parse_color("sometimes") < 0, "colour modes");
	setenv("NO_COLOR", "1", 1);
	CHECK(gp_out_use_color("auto", stdout) == 0 && gp_out_use_color("always", stdout) == 1, "NO_COLOR and always");
	return unit_done();
}
