/* Unit tests: the captured config space answers as the whole 4096-byte image it once was. For every
 * function of every fixture tree (build/fixtures, tests/fixtures: real captures and generated trees),
 * the image is rebuilt here from the function's config file as the scan used to fill it (the standard
 * 256 bytes, the first extended header where the extended space is readable, 64 bytes at each decoded
 * ACS, ReBAR and ATS capability in that order, 0 elsewhere), and gp_pci_cfg_read must give the same
 * answer at every offset and width, in range or not. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "gpup2p/pci.h"
#include "unit.h"

struct tally {
	int trees, fns, wins[GP_EXT_N], reads, bad;
};

/* The old image's answer: little-endian bytes of img, -1 beyond len. */
static int64_t img_read(const uint8_t *img, int len, int off, int width)
{
	uint64_t v = 0;

	if (off < 0 || width < 1 || width > 4 || off + width > len)
		return -1;
	for (int i = width - 1; i >= 0; i--)
		v = (v << 8) | img[off + i];
	return (int64_t)v;
}

/* Copy the file's bytes [off, off + n) into img, as far as the file goes. */
static void img_put(uint8_t *img, const uint8_t *file, int flen, int off, int n)
{
	for (int i = off; i < off + n && i < flen && i < GP_CFG_MAX; i++)
		img[i] = file[i];
}

static void check_fn(const char *root, const struct gp_pci_dev *d, struct tally *t)
{
	static uint8_t file[GP_CFG_MAX], img[GP_CFG_MAX];
	const int caps[GP_EXT_N] = { d->acs_cap, d->rebar_cap, d->ats_cap };
	char path[PATH_MAX];
	int fd, flen = 0, rc;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/config", root, d->bdf);
	memset(img, 0, sizeof(img));
	if ((fd = open(path, O_RDONLY)) >= 0) {
		while (flen < GP_CFG_MAX && (rc = (int)read(fd, file + flen, (size_t)(GP_CFG_MAX - flen))) > 0)
			flen += rc;
		close(fd);
	}
	img_put(img, file, flen, 0, d->config_len < GP_CFG_STD ? d->config_len : GP_CFG_STD);
	if (d->config_len == GP_CFG_MAX)
		img_put(img, file, flen, GP_CFG_STD, 4);
	for (int k = 0; k < GP_EXT_N; k++)
		if (caps[k] > 0) {
			img_put(img, file, flen, caps[k], GP_CFG_WIN);
			t->wins[k]++;
		}
	for (int off = -4; off <= GP_CFG_MAX + 4; off++)
		for (int w = 0; w <= 5; w++) {
			int64_t want = img_read(img, d->config_len, off, w), got = gp_pci_cfg_read(d, off, w);

			t->reads++;
			if (want != got && t->bad++ < 5)
				CHECK(0, "%s %s: offset 0x%x width %d: %lld, the image has %lld", root, d->bdf, off, w,
				      (long long)got, (long long)want);
		}
	t->fns++;
}

/* Every tree under top (a folder whose sys/bus/pci/devices exists). */
static void check_trees(const char *top, struct tally *t)
{
	char cmd[PATH_MAX + 128], line[PATH_MAX];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "find '%s' -maxdepth 7 -path '*/sys/bus/pci/devices' -type d 2>/dev/null | sort", top);
	if (!(f = popen(cmd, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		static struct gp_pci p;
		struct gp_root r;
		struct gp_err e = { 0 };
		char *cut = strstr(line, "/sys/bus/pci/devices");

		*cut = '\0';
		if (gp_root_init(&r, line, &e) || gp_pci_scan(&p, &r, &e))
			continue; /* the broken trees: test_pci's */
		for (int i = 0; i < p.n; i++)
			check_fn(line, &p.devs[i], t);
		gp_pci_free(&p);
		t->trees++;
	}
	pclose(f);
}

/* The fixtures' extended spaces are mostly zeros, where a byte lost from a window reads the same as
 * one kept: on copies of dgx-h100 (ACS, ATS) and epyc6 (ACS, ReBAR), every all-zero dword past the
 * first extended header holds a pattern, so the bytes of a window differ from those around it (the
 * capabilities found are whatever the scan finds there: the image is rebuilt from them as from any
 * other tree). */
static void check_patterned(struct tally *t)
{
	char top[] = "/tmp/gpup2p-test-pci-cfg-XXXXXX", cmd[4096], a[1024];
	static const char fill[] =
		"import glob, sys\n"
		"for f in glob.glob(sys.argv[1] + '/*/sys/devices/**/config', recursive=True):\n"
		"    b = bytearray(open(f, 'rb').read())\n"
		"    for o in range(0x104, len(b) - 3, 4):\n"
		"        if not any(b[o:o + 4]): b[o:o + 4] = bytes((o * 37 + 11 + i) % 255 + 1 for i in range(4))\n"
		"    open(f, 'wb').write(b)\n";
	FILE *f;

	if (!mkdtemp(top)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(cmd, sizeof(cmd), "%s/fill.py", top);
	if ((f = fopen(cmd, "w"))) {
		fputs(fill, f);
		fclose(f);
	}
	snprintf(a, sizeof(a), "%s", unit_fixture("dgx-h100"));
	snprintf(cmd, sizeof(cmd), "mkdir '%s/t' && cp -a '%s' '%s' '%s/t' && python3 '%s/fill.py' '%s/t'", top, a,
		 unit_fixture("epyc6"), top, top, top);
	if (system(cmd) == 0)
		check_trees(top, t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", top);
}

int main(void)
{
	struct tally t = { 0 }, pat = { 0 };

	check_trees(unit_fixture(""), &t);
	check_trees("tests/fixtures", &t);
	check_patterned(&pat);
	CHECK(pat.bad == 0 && pat.trees == 2 && pat.wins[GP_EXT_ACS] > 0 && pat.wins[GP_EXT_REBAR] > 0 &&
	      pat.wins[GP_EXT_ATS] > 0, "dgx-h100 and epyc6, their zero dwords patterned: %d functions "
	      "(windows: %d ACS, %d ReBAR, %d ATS), %d reads differ from the image", pat.fns, pat.wins[GP_EXT_ACS],
	      pat.wins[GP_EXT_REBAR], pat.wins[GP_EXT_ATS], pat.bad);
	CHECK(t.bad == 0 && t.trees >= 20 && t.wins[GP_EXT_ACS] > 0 && t.wins[GP_EXT_REBAR] > 0 && t.wins[GP_EXT_ATS] > 0,
	      "%d trees, %d functions (windows: %d ACS, %d ReBAR, %d ATS): %d reads, %d differ from the image",
	      t.trees, t.fns, t.wins[GP_EXT_ACS], t.wins[GP_EXT_REBAR], t.wins[GP_EXT_ATS], t.reads, t.bad);
	return unit_done();
}
