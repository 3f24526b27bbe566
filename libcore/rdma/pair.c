/* gpup2p — which NIC goes with which GPU for GPUDirect RDMA: the PCIe distance from topo's matrix; the
 * NIC's NUMA node from the PCI model. */
#include <string.h>

#include "gpup2p/pci.h"
#include "gpup2p/rdma.h"
#include "gpup2p/topo.h"

static const char *rdma_name(const struct gp_topo *t, int i)
{
	return t->devs[i].kind == GP_TOPO_NIC ? t->pci->devs[t->devs[i].pci].rdma : "";
}

int gp_rdma_nic_index(const struct gp_topo *t, const char *dev)
{
	for (int i = t->ngpu; i < t->n; i++)
		if (*rdma_name(t, i) && !strcmp(rdma_name(t, i), dev))
			return i;
	return -1;
}

const char *gp_rdma_distance(const struct gp_topo *t, int gpu, const char *dev)
{
	int n = dev ? gp_rdma_nic_index(t, dev) : -1;

	if (gpu < 0 || gpu >= t->ngpu || n < 0)
		return NULL;
	return gp_topo_class_name((enum gp_topo_class)gp_topo_link_at(t, gpu, n).pcie);
}

const char *gp_rdma_closest_nic(const struct gp_topo *t, int gpu)
{
	int best = -1, bc = 0;

	if (gpu < 0 || gpu >= t->ngpu)
		return NULL;
	for (int i = t->ngpu; i < t->n; i++) {
		int c = gp_topo_link_at(t, gpu, i).pcie;

		if (!*rdma_name(t, i))
			continue;
		if (best < 0 || c < bc) {
			best = i;
			bc = c;
		}
	}
	return best < 0 ? NULL : rdma_name(t, best);
}

const char *gp_rdma_mem_distance(const struct gp_topo *t, int gpu, const char *dev)
{
	const char *d = gpu < 0 ? "host" : t ? gp_rdma_distance(t, gpu, dev) : NULL;

	return d ? d : "unknown";
}

int gp_rdma_numa_node(const struct gp_pci *p, const char *dev)
{
	for (int i = 0; p && dev && i < p->n; i++)
		if (p->devs[i].rdma[0] && !strcmp(p->devs[i].rdma, dev))
			return p->devs[i].numa_node;
	return -1;
}
