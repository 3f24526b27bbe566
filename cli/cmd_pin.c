/* gpup2p pin / map — pin GPU memory through gpup2p.ko (and map it, copy through the mapping). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/pinmap.h"
#include "xfer_cli.h"

static int offset_opt(const char *cmd, const struct opt *o, const char *val, void *field, void *ctx)
{
	uint64_t *off = field;

	(void)ctx;
	if (!strcmp(val, "0"))
		*off = 0;
	else if (opts_size(cmd, o->name, val, off))
		return EX_USAGE_;
	if (*off % 4096)
		return cli_usage(cmd, "--offset must be a multiple of 4K, not %s", val);
	return 0;
}

static const char *const isa_words[] = { "memcpy", "sse4.1", "avx2", "avx512", "movdir64b", NULL };

static int isa_opt(const char *cmd, const struct opt *o, const char *val, void *field, void *ctx)
{
	int k = gp_wccopy_parse(val);

	(void)o, (void)ctx;
	if (k < 0)
		return cli_usage(cmd, "--isa takes memcpy, sse4.1, avx2, avx512 or movdir64b, not '%s'", val);
	if (!gp_wccopy_supported((enum gp_wc_isa)k))
		return cli_usage(cmd, "this CPU has no %s", val);
	*(enum gp_wc_isa *)field = (enum gp_wc_isa)k;
	return 0;
}

#define O(f) (long)offsetof(struct gp_pinmap_spec, f)
static const char *const size_words[] = { "4K", "64K", "1M", "64M", "256M", "1G", NULL };
static const struct opt pin_opts[] = {
	{ "--gpu", NULL, "N", OPT_INDEX, O(gpu), .help = "the GPU (default 0, PCI bus order)" },
	{ "--size", NULL, "S", OPT_SIZE, O(size), .values = size_words,
	  .help = "bytes (default 2M; rounded up to 64 KiB)" },
	{ "--persistent", NULL, NULL, OPT_FLAG, O(persistent), 1,
	  .help = "pin without a free callback (NVIDIA driver 515+; not on MIG\nor vGPU)" },
	{ 0 },
};

static const struct opt map_opts[] = {
	{ "--gpu", NULL, "N", OPT_INDEX, O(gpu), .help = "the GPU (default 0)" },
	{ "--size", NULL, "S", OPT_SIZE, O(size), .values = size_words, .help = "bytes to map and copy (default 1M)" },
	{ "--offset", NULL, "O", OPT_CALL, O(offset), .call = offset_opt,
	  .help = "where the mapping starts in the pin: a multiple of 4K\n(default 0)" },
	{ "--iters", NULL, "K", OPT_COUNT, O(iters), .hi = 100000, .help = "timed copies each way (default 10)" },
	{ "--isa", NULL, "NAME", OPT_CALL, O(isa), .call = isa_opt, .values = isa_words,
	  .help = "copy variant: memcpy, sse4.1, avx2, avx512, movdir64b\n"
		  "(default: the best this CPU has; also $GPUP2P_WCCOPY)" },
	{ 0 },
};
#undef O

const struct opts_cmd opts_pin = {
	.name = "pin", .opts = pin_opts, .col = 18, .help = help_pin, .globals = "--json, -q: see gpup2p --help",
};

const struct opts_cmd opts_map = {
	.name = "map", .opts = map_opts, .col = 18, .help = help_map, .globals = "--json, -q: see gpup2p --help",
};

void help_pin(FILE *f)
{
	fprintf(f,
		"usage: gpup2p pin [--gpu N] [--size S] [--persistent] [--json]\n\n"
		"Allocate S bytes on GPU N with CUDA, pin them through gpup2p.ko, print the page\n"
		"table (GPU page size, pages, physically contiguous runs, mapping type) and the\n"
		"pin and unpin times, then release everything.\n\n");
	opts_help(f, &opts_pin);
	fprintf(f,
		"\nExit: 0 ok, 2 pin failed (the reason: GPU refuses pinning, BAR space exhausted,\n"
		"...), 64 usage, 69 no CUDA / no GPU / gpup2p.ko not loaded / no persistent pins\n"
		"(--persistent), 77 no permission on /dev/gpup2p.\n");
}

void help_map(FILE *f)
{
	fprintf(f,
		"usage: gpup2p map [--gpu N] [--size S] [--offset O] [--iters K] [--isa NAME]\n"
		"              [--json]\n\n"
		"Pin GPU memory through gpup2p.ko and map it into this process, write a pattern\n"
		"through the mapping and read it back through CUDA, then the other way round\n"
		"(CUDA writes, the mapping reads); every byte is checked. Prints the mapping\n"
		"type, the copy variant, the bandwidth both ways and the time of each step.\n\n");
	opts_help(f, &opts_map);
	fprintf(f,
		"\nExit: 0 every byte right, 2 a wrong byte or a failure, 64 usage, 69 no CUDA /\n"
		"no GPU / gpup2p.ko not loaded, 77 no permission on /dev/gpup2p.\n");
}

static void print(const struct cli *c, const struct gp_pinmap_spec *s, const struct gp_pinmap_result *r,
		  const char *cmd)
{
	if (c->fmt == GP_OUT_JSON || c->fmt == GP_OUT_JSONL) {
		struct gp_json j;

		cli_json_open(c, &j, stdout, c->fmt == GP_OUT_JSON, cmd, c->argc, c->argv);
		gp_json_int(&j, "gpu", s->gpu);
		gp_json_str(&j, "backend", r->backend);
		gp_json_u64(&j, "va", r->va);
		gp_json_u64(&j, "pinned", r->r.len);
		gp_json_int(&j, "page_size", r->r.page_size);
		gp_json_int(&j, "pages", r->r.npages);
		gp_json_int(&j, "runs", r->r.nruns);
		gp_json_str(&j, "mapping", gp_pin_map_type_name(r->r.map_type));
		gp_json_num(&j, "pin_us", r->r.pin_ns / 1e3, 1);
		gp_json_num(&j, "unpin_us", r->unpin_us, 1);
		if (s->what != GP_PM_PIN_ONLY) {
			gp_json_u64(&j, "size", s->size);
			gp_json_u64(&j, "offset", s->offset);
			gp_json_str(&j, "isa", gp_wccopy_name(s->isa));
			gp_json_num(&j, "map_us", r->map_us, 1);
			gp_json_num(&j, "write_gbps", r->write_gbps, 3);
			gp_json_num(&j, "read_gbps", r->read_gbps, 3);
			gp_json_bool(&j, "verified", r->verified == 1);
		}
		cli_json_end(c, &j, r->verified == 0 ? EX_ERROR : 0);
		return;
	}
	if (!strcmp(r->backend, "dmabuf"))
		printf("GPU%d: mapped through a CUDA dma-buf export (gpup2p.ko not loaded): no page table to show\n", s->gpu);
	else
		printf("GPU%d: pinned %llu bytes at GPU address 0x%llx through gpup2p.ko\n", s->gpu,
		       (unsigned long long)r->r.len, (unsigned long long)r->va);
	printf("  page table: %u pages of %u KiB in %u physically contiguous run(s); mapping %s\n", r->r.npages,
	       r->r.page_size >> 10, r->r.nruns, gp_pin_map_type_name(r->r.map_type));
	printf("  pin %.1f us (in the driver), unpin %.1f us\n", r->r.pin_ns / 1e3, r->unpin_us);
	if (s->what == GP_PM_PIN_ONLY)
		return;
	printf("  mapped %llu bytes at pin offset %llu in %.1f us; copies with %s\n", (unsigned long long)s->size,
	       (unsigned long long)s->offset, r->map_us, gp_wccopy_name(s->isa));
	printf("  write through the mapping: %.3f GB/s (fastest %.2f us), read back through CUDA: %s\n", r->write_gbps,
	       r->write_us_min, r->verified == 0 && r->bad_dir == GP_PM_WRITE ? "WRONG" : "ok");
	printf("  read through the mapping:  %.3f GB/s (fastest %.2f us), written by CUDA: %s\n", r->read_gbps,
	       r->read_us_min, r->verified == 0 && r->bad_dir == GP_PM_READ ? "WRONG" : "ok");
}

static int run(struct cli *c, int argc, char **argv, int map)
{
	struct gp_pinmap_spec s = { .size = map ? 1ULL << 20 : 2ULL << 20, .what = map ? GP_PM_BOTH : GP_PM_PIN_ONLY,
				    .iters = 10, .isa = gp_wccopy_choose() };
	const char *cmd = map ? "map" : "pin";
	struct gp_pinmap_result r;
	struct xfer_session x;
	struct gp_err e = { 0 };
	int rc;

	if ((rc = opts_parse(map ? &opts_map : &opts_pin, c, argc, argv, &s)) >= 0)
		return rc;
	if ((rc = xfer_open(c, &x)))
		return rc;
	if (s.gpu >= x.cuda.n) {
		int ng = x.cuda.n;

		xfer_close(c, &x);
		return cli_usage(cmd, "no GPU%d: CUDA sees %d GPU(s)", s.gpu, ng);
	}
	rc = gp_pinmap_run(&x.cuda, &s, &r, &e);
	if (rc) {
		xfer_close(c, &x);
		if (s.persistent && e.cls == GP_E_UNAVAIL && e.errnum == EOPNOTSUPP)    /* libcore: no persistent pins */
			return cli_error(EX_UNAVAIL, NULL, "%s: pin without --persistent", e.msg);
		return cli_fail(&e);
	}
	print(c, &s, &r, cmd);
	xfer_close(c, &x);
	if (r.verified == 0) {
		fprintf(stderr, "gpup2p: %s: data wrong at byte %lld %s: expected 0x%02x, got 0x%02x\n", cmd,
			(long long)r.bad_offset, r.bad_dir == GP_PM_WRITE ? "written through the mapping" : "read through the mapping",
			r.want, r.got);
		return EX_ERROR;
	}
	return 0;
}

int cmd_pin(struct cli *c, int argc, char **argv)
{
	return run(c, argc, argv, 0);
}

int cmd_map(struct cli *c, int argc, char **argv)
{
	return run(c, argc, argv, 1);
}
