/* Unit tests: every write-combined copy variant this CPU has, to and from ordinary memory, at every
 * alignment of source and destination and sizes around the vector widths; the choice and its
 * override. (Write-combining itself is a property of the mapping: tested in the guest.) */
#include <stdint.h>

#include "gpup2p/wccopy.h"
#include "unit.h"

int main(void)
{
	static uint8_t src[4096 + 128], dst[4096 + 128], want[4096 + 128];
	static const size_t sizes[] = { 0, 1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 1000, 4096 };
	int nsup = 0;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 131 + 7);
	for (int isa = 0; isa < GP_WC_COUNT; isa++) {
		int bad_to = 0, bad_from = 0, cases = 0;

		if (!gp_wccopy_supported((enum gp_wc_isa)isa)) {
			printf("# %s: not on this CPU\n", gp_wccopy_name((enum gp_wc_isa)isa));
			continue;
		}
		nsup++;
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			for (int so = 0; so < 64; so += 7)
				for (int dof = 0; dof < 64; dof += 5) {
					size_t n = sizes[k];

					memset(dst, 0xee, sizeof(dst));
					memset(want, 0xee, sizeof(want));
					memcpy(want + dof, src + so, n);
					gp_wccopy_to(dst + dof, src + so, n, (enum gp_wc_isa)isa);
					bad_to += memcmp(dst, want, sizeof(dst)) != 0;
					memset(dst, 0xee, sizeof(dst));
					gp_wccopy_from(dst + dof, src + so, n, (enum gp_wc_isa)isa);
					bad_from += memcmp(dst, want, sizeof(dst)) != 0;
					cases++;
				}
		CHECK(!bad_to && !bad_from, "%s: %d copies to and from, every alignment, no byte outside touched",
		      gp_wccopy_name((enum gp_wc_isa)isa), cases);
	}
	CHECK(nsup >= 2, "at least memcpy and one vector variant run here (%d)", nsup);
	CHECK(gp_wccopy_supported(gp_wccopy_choose()), "the chosen variant (%s) is supported", gp_wccopy_name(gp_wccopy_choose()));
	setenv("GPUP2P_WCCOPY", "memcpy", 1);
	CHECK(gp_wccopy_choose() == GP_WC_MEMCPY, "GPUP2P_WCCOPY=memcpy forces memcpy");
	setenv("GPUP2P_WCCOPY", "bogus", 1);
	CHECK(gp_wccopy_choose() != GP_WC_MEMCPY || nsup == 1, "an unknown GPUP2P_WCCOPY falls back to the best");
	CHECK(gp_wccopy_parse("avx2") == GP_WC_AVX2 && gp_wccopy_parse("x") == -1, "names parse");
	return unit_done();
}
