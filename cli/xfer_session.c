/* gpup2p copy / bench — the CUDA session and option values they share. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "xfer_cli.h"

int xfer_open(struct cli *c, struct xfer_session *s)
{
	struct gp_err e = { 0 };

	memset(s, 0, sizeof(*s));
	if (gp_cuda_open(&s->cuda, &e))
		return cli_fail(&e);
	s->numa = malloc((size_t)s->cuda.n * sizeof(int));
	s->gen = calloc((size_t)s->cuda.n, sizeof(int));
	s->width = calloc((size_t)s->cuda.n, sizeof(int));
	if (!s->numa || !s->gen || !s->width) {
		xfer_close(c, s);
		gp_err_set(&e, GP_E_FAIL, ENOMEM, "out of memory");
		return cli_fail(&e);
	}
	for (int i = 0; i < s->cuda.n; i++)
		s->numa[i] = -1;
	/* the PCI facts are a bonus here: without them the copies still run, unplaced */
	if (gp_root_init(&c->root, c->root_dir, &e) == 0 && gp_pci_scan(&c->pci, &c->root, &e) == 0) {
		s->pci_ok = 1;
		for (int i = 0; i < s->cuda.n; i++) {
			const struct gp_pci_dev *d = gp_pci_find(&c->pci, s->cuda.gpu[i].bdf);

			if (!d)
				continue;
			s->numa[i] = d->numa_node;
			s->gen[i] = gp_pci_gen(d->cur_gts);
			s->width[i] = d->cur_width;
		}
	} else if (!c->quiet) {
		fprintf(stderr, "gpup2p: warning: %s (host memory is not placed on the GPUs' NUMA nodes)\n", e.msg);
	}
	{
		struct gp_gpu_facts *f = calloc(1, sizeof(*f));

		if (f && s->pci_ok && gp_gpu_facts_load(&c->root, f, 0, &e) == 0) {
			snprintf(s->driver, sizeof(s->driver), "%s", f->driver);
			s->facts = f;
		} else {
			free(f);
		}
	}
	return 0;
}

void xfer_close(struct cli *c, struct xfer_session *s)
{
	if (s->pci_ok)
		gp_pci_free(&c->pci);
	gp_cuda_close(&s->cuda);
	free(s->numa);
	free(s->gen);
	free(s->width);
	free(s->facts);
	s->facts = NULL;
	s->numa = s->gen = s->width = NULL;
	s->pci_ok = 0;
}

void xfer_ceilings(const struct cli *c, const struct xfer_session *s, struct gp_bench_row *rows, int n)
{
	const char **bdf = calloc((size_t)s->cuda.n + 1, sizeof(*bdf));
	struct gp_linkcap L;

	for (int i = 0; bdf && i < s->cuda.n; i++)
		bdf[i] = s->cuda.gpu[i].bdf;
	if (bdf && !gp_linkcap_load(&L, s->pci_ok ? &c->pci : NULL, s->facts, bdf, s->cuda.n)) {
		for (int i = 0; i < n; i++)
			rows[i].ceiling = gp_linkcap_row(&L, rows, n, i, rows[i].ceiling_why, sizeof(rows[i].ceiling_why));
		gp_linkcap_free(&L);
	}
	free(bdf);
}

int xfer_factor_arg(const char *cmd, const char *val, double *v)
{
	char *end;
	double f = strtod(val, &end);

	if (!*val || *end || !(f > 1) || f > 1024) {
		cli_usage(cmd, "--factor wants a number above 1, like 2 or 1.5, not '%s'", val);
		return -1;
	}
	*v = f;
	return 0;
}

