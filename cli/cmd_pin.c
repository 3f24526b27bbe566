/* gpup2p pin / map — pin GPU memory through gpup2p.ko (and map it, copy through the mapping). */
#include <stdlib.h>
#include <string.h>

#include "gpup2p/pinmap.h"
#include "xfer_cli.h"

void help_pin(FILE *f)
{
	fprintf(f,
		"usage: gpup2p pin [--gpu N] [--size S] [--persistent] [--json]\n\n"
		"Allocate S bytes on GPU N with CUDA, pin them through gpup2p.ko, print the page\n"
		"table (GPU page size, pages, physically contiguous runs, mapping type) and the\n"
		"pin and unpin times, then release everything.\n\n"
		"  --gpu N         the GPU (default 0, PCI bus order)\n"
		"  --size S        bytes (default 2M; rounded up to 64 KiB)\n"
		"  --persistent    pin without a free callback (NVIDIA driver 515+; not on MIG\n"
		"                  or vGPU)\n"
		"  --json, -q: see gpup2p --help\n\n"
		"Exit: 0 ok, 2 pin failed (the reason: GPU refuses pinning, BAR space exhausted,\n"
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
		"type, the copy variant, the bandwidth both ways and the time of each step.\n\n"
		"  --gpu N         the GPU (default 0)\n"
		"  --size S        bytes to map and copy (default 1M)\n"
		"  --offset O      where the mapping starts in the pin: a multiple of 4K\n"
		"                  (default 0)\n"
		"  --iters K       timed copies each way (default 10)\n"
		"  --isa NAME      copy variant: memcpy, sse4.1, avx2, avx512, movdir64b\n"
		"                  (default: the best this CPU has; also $GPUP2P_WCCOPY)\n"
		"  --json, -q: see gpup2p --help\n\n"
		"Exit: 0 every byte right, 2 a wrong byte or a failure, 64 usage, 69 no CUDA /\n"
		"no GPU / gpup2p.ko not loaded, 77 no permission on /dev/gpup2p.\n");
}

static void print(const struct cli *c, const struct gp_pinmap_spec *s, const struct gp_pinmap_result *r,
		  const char *cmd)
{
	if (c->fmt == GP_OUT_JSON || c->fmt == GP_OUT_JSONL) {
		struct gp_json j;

		gp_json_init(&j, stdout, c->fmt == GP_OUT_JSON);
		gp_json_obj(&j, NULL);
		gp_json_int(&j, "schema", 1);
		gp_json_str(&j, "command", cmd);
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
		gp_json_end(&j, '}');
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
	int rc, done;

	for (int i = 1; i < argc; i++) {
		const char *v;

		if (cli_common_arg(c, map ? help_map : help_pin, argc, argv, &i, &done)) {
			if (done >= 0)
				return done;
			continue;
		}
		if ((v = cli_opt_value(argc, argv, &i, "--gpu"))) {
			if (xfer_index_arg(cmd, "--gpu", v, &s.gpu))
				return EX_USAGE_;
		} else if ((v = cli_opt_value(argc, argv, &i, "--size"))) {
			if (xfer_size_arg(cmd, "--size", v, &s.size))
				return EX_USAGE_;
		} else if (map && (v = cli_opt_value(argc, argv, &i, "--offset"))) {
			if (!strcmp(v, "0"))
				s.offset = 0;
			else if (xfer_size_arg(cmd, "--offset", v, &s.offset))
				return EX_USAGE_;
			if (s.offset % 4096)
				return cli_usage(cmd, "--offset must be a multiple of 4K, not %s", v);
		} else if (map && (v = cli_opt_value(argc, argv, &i, "--iters"))) {
			if (xfer_count_arg(cmd, "--iters", v, 100000, &s.iters))
				return EX_USAGE_;
		} else if (map && (v = cli_opt_value(argc, argv, &i, "--isa"))) {
			int k = gp_wccopy_parse(v);

			if (k < 0)
				return cli_usage(cmd, "--isa takes memcpy, sse4.1, avx2, avx512 or movdir64b, not '%s'", v);
			if (!gp_wccopy_supported((enum gp_wc_isa)k))
				return cli_usage(cmd, "this CPU has no %s", v);
			s.isa = (enum gp_wc_isa)k;
		} else if (!map && !strcmp(argv[i], "--persistent")) {
			s.persistent = 1;
		} else {
			return cli_usage(cmd, "unknown option '%s'", argv[i]);
		}
	}
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
