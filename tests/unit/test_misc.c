/* Unit tests: IOMMU mode, recorded GPU facts, output quoting. */
#include <errno.h>

#include "gpup2p/gpu.h"
#include "gpup2p/iommu.h"
#include "gpup2p/out.h"
#include "gpup2p/topo.h"
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

/* NUMA Affinity as nvidia-smi prints it where sysfs numa_node is -1: the nodes the CPU affinity covers. */
static void numa_affinity(void)
{
	static struct gp_pci_dev dev[1];
	static struct gp_pci_node nodes[4] = { { 10, "48-63" }, { 1, "16-31" }, { 0, "0-15" }, { 2, "" } };
	struct gp_pci p = { .devs = dev, .n = 1, .nodes = nodes, .nnodes = 4 };
	struct gp_topo_dev td = { .pci = 0 };
	struct gp_topo t = { .pci = &p, .devs = &td, .n = 1 };
	char buf[64];

	dev[0].numa_node = -1;
	dev[0].cpulist = "0-31";
	CHECK_STR(gp_topo_numa_affinity(&t, 0, buf, sizeof(buf)), "0-1", "CPUs 0-31 cover nodes 0 and 1");
	dev[0].cpulist = "0-20,48-63";
	CHECK_STR(gp_topo_numa_affinity(&t, 0, buf, sizeof(buf)), "0,10", "0-20,48-63: nodes 0 and 10, not 1");
	dev[0].cpulist = "3-5";
	CHECK_STR(gp_topo_numa_affinity(&t, 0, buf, sizeof(buf)), "N/A", "part of a node: N/A");
	p.nnodes = 1;
	CHECK_STR(gp_topo_numa_affinity(&t, 0, buf, sizeof(buf)), "10", "one node: that node");
	p.nnodes = 0;
	CHECK_STR(gp_topo_numa_affinity(&t, 0, buf, sizeof(buf)), "0", "no node listed (no NUMA): 0");
	dev[0].numa_node = 3;
	CHECK_STR(gp_topo_numa_affinity(&t, 0, buf, sizeof(buf)), "3", "sysfs numa_node wins");
	CHECK_STR(gp_topo_gpu_numa_id(&t, 0, buf, sizeof(buf)), "N/A", "no facts: GPU NUMA ID N/A");
}

int main(void)
{
	static struct gp_gpu_facts f;
	struct gp_iommu io;
	struct gp_root r;
	struct gp_err e = { 0 };

	numa_affinity();
	CHECK(gp_iommu_parse_type("DMA-FQ") == GP_IOMMU_DMA_FQ && gp_iommu_parse_type("identity") == GP_IOMMU_IDENTITY &&
	      gp_iommu_parse_type("DMA") == GP_IOMMU_DMA && gp_iommu_parse_type("x") == GP_IOMMU_UNKNOWN, "group types");
	CHECK(gp_root_init(&r, unit_fixture("workstation"), &e) == 0, "workstation fixture opens (%s)", e.msg);
	gp_iommu_read(&r, &io);
	CHECK(io.mode == GP_IOMMU_DMA_FQ && io.units == 2, "workstation: DMA-FQ, 2 units");
	CHECK_STR(io.cmdline, "intel_iommu=on", "IOMMU tokens of the command line");
	CHECK(gp_root_init(&r, unit_fixture("h200x2"), &e) == 0, "h200x2 fixture opens (%s)", e.msg);
	gp_iommu_read(&r, &io);
	CHECK(io.mode == GP_IOMMU_OFF && io.units == 0 && io.groups == 0, "H200 VM: off (dmesg's 'Translated' ignored)");
	CHECK(io.cmdline[0] == '\0', "H200: no IOMMU tokens (pci=realloc=off is not one)");
	CHECK(gp_root_init(&r, unit_fixture("dgx-h100"), &e) == 0, "dgx-h100 fixture opens (%s)", e.msg);
	gp_iommu_read(&r, &io);
	CHECK_STR(io.cmdline, "iommu=pt", "iommu=pt recorded");

	CHECK(parse_text("gpup2p-gpu-facts 1\ndriver 1.2\ngpu 00:06.0 vram=10 bar1=20 name=A B\n"
			 "nvlink 00:06.0 00:07.0 4\nnvlink 0000:00:07.0 0000:00:08.0 2\n", &f, &e) == 0, "facts parse");
	CHECK(f.available && f.n == 1 && f.gpus[0].vram == 10 && !strcmp(f.gpus[0].name, "A B"), "gpu line");
	CHECK(gp_gpu_nvlinks(&f, "0000:00:07.0", "0000:00:06.0") == 4, "a pair's links, asked in either order");
	CHECK(gp_gpu_nvlinks(&f, "0000:00:06.0", "0000:00:08.0") == 0, "no link");
	/* the real H200 pair: each GPU sees the same 18 links, nvidia-smi says NV18, never NV36 */
	CHECK(parse_text("gpup2p-gpu-facts 1\nnvlink 00:06.0 00:07.0 18\nnvlink 00:07.0 00:06.0 18\n", &f, &e) < 0 &&
	      e.cls == GP_E_DATA && strstr(e.msg, "test:3") && strstr(e.msg, "given twice (first on line 2)"),
	      "a pair listed again (other order) is refused, naming both lines");
	CHECK(parse_text("gpup2p-gpu-facts 1\nnvlink 00:06.0 00:07.0 40\nnvlink 00:06.0 00:07.0 40\n", &f, &e) < 0 &&
	      strstr(e.msg, "test:3"), "repeated pair lines are not summed");
	CHECK(parse_text("gpup2p-gpu-facts 1\nnvlink 00:06.0 00:07.0 65\n", &f, &e) < 0 && strstr(e.msg, "0 to 64"),
	      "more links than a pair can have");
	CHECK(parse_text("gpup2p-gpu-facts 1\ngpu 00:06.0 vram=1 bar1=2 name=A\ngpu 0000:00:06.0 vram=3 bar1=4 name=B\n",
			 &f, &e) < 0 && strstr(e.msg, "test:3") && strstr(e.msg, "given twice"), "a GPU listed twice");
	CHECK(parse_text("gpup2p-gpu-facts 1\nunavailable NVML: driver not loaded\n", &f, &e) == 0 && !f.available &&
	      !strcmp(f.why, "NVML: driver not loaded"), "recorded unavailability");
	CHECK(gp_gpu_nvlinks(&f, "0000:00:07.0", "0000:00:06.0") == -1, "unavailable: -1");
	CHECK(parse_text("something else\n", &f, &e) < 0 && e.cls == GP_E_DATA && strstr(e.msg, "test:1"), "bad header");
	CHECK(parse_text("gpup2p-gpu-facts 1\ngpu 00:06.0 vram=x name=A\n", &f, &e) < 0 && strstr(e.msg, "test:2"),
	      "bad gpu line names the line");
	CHECK(parse_text("gpup2p-gpu-facts 1\nnvlink 00:06.0 zz 1\n", &f, &e) < 0, "bad nvlink line");
	CHECK(parse_text("", &f, &e) < 0, "empty file");
	/* what the writer writes, the reader reads back to the same facts */
	{
		static const char *const texts[] = {
			("gpup2p-gpu-facts 1\nsource nvml\ndriver 580.1\ngpu 00:06.0 vram=10 bar1=20 switch_links=18 name=H 1\n"
			 "gpu 00:07.0 vram=10 bar1=20 name=\nnvlink 00:07.0 00:06.0 18\n"),
			"gpup2p-gpu-facts 1\ngpu 00:06.0 vram=1 bar1=2 name=A\nunavailable NVML: gone\nnvlink 00:06.0 00:07.0 4\n",
			"gpup2p-gpu-facts 1\nnvlink 00:06.0 00:07.0 64\nnvlink 00:06.0 00:08.0 0\n",
		};
		static struct gp_gpu_facts g;

		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
			char *out = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&out, &len);
			int rc = parse_text(texts[i], &f, &e);

			gp_gpu_facts_write(&f, m);
			fclose(m);
			CHECK(rc == 0 && parse_text(out, &g, &e) == 0 && !memcmp(&f, &g, sizeof(f)),
			      "facts round trip %zu: written, read back the same", i);
			free(out);
		}
	}

	CHECK_STR(capture(json_sample), "{\"s\": \"a\\\"b\\\\c\\n\\u0001\", \"n\": null, \"x\": null, "
					 "\"a\": [-1, 18446744073709551615]}\n", "JSON escaping and nulls");
	CHECK_STR(capture(csv_sample), "plain,\"a,b\",\"say \"\"hi\"\"\",\n", "CSV quoting");
	CHECK(gp_out_parse_color("auto") == 0 && gp_out_parse_color("sometimes") < 0, "colour modes");
	setenv("NO_COLOR", "1", 1);
	CHECK(gp_out_use_color("auto", stdout) == 0 && gp_out_use_color("always", stdout) == 1, "NO_COLOR and always");
	return unit_done();
}
