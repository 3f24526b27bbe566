// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Test only (never installed): an empty module named nv_peer_mem, so that the guest can check that
 * `gpup2p enable --peermem` refuses to load nvidia-peermem beside Mellanox's nv_peer_mem. */
#include <linux/module.h>

static int __init fake_init(void)
{
	return 0;
}

static void __exit fake_exit(void)
{
}

module_init(fake_init);
module_exit(fake_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("gpup2p tests: stands in for nv_peer_mem (never install)");
