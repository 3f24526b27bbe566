/* gpup2p — the RDMA bench engine: device and port, buffers (host, GPU via dma-buf or nvidia-peermem),
 * RC queue pairs, the loopback connection. Every failure names its cause and its fix. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gpup2p/bench.h"
#include "gpup2p/gdr.h"
#include "gpup2p/numa.h"
#include "rdma/internal.h"

static const char *port_state_name(int st)
{
	static const char *const n[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };

	return st >= 0 && st < 6 ? n[st] : "unknown";
}

const char *gp_rdma_op_name(int op)
{
	return op == GP_RDMA_WRITE ? "write" : op == GP_RDMA_READ ? "read" : op == GP_RDMA_SEND ? "send" : "?";
}

int gp_rdma_mem_parse(const char *s, struct gp_rdma_mem *m)
{
	char *end;
	long g;

	m->gpu = -1;
	if (!strcmp(s, "host"))
		return m->kind = GP_RMEM_HOST, 0;
	if (!strcmp(s, "auto"))
		return m->kind = GP_RMEM_AUTO, 0;
	if (!strcmp(s, "gpu"))
		return m->kind = GP_RMEM_GPU, 0;
	if (strncmp(s, "gpu:", 4) || !s[4])
		return -EINVAL;
	g = strtol(s + 4, &end, 10);
	if (*end || g < 0 || g > 1023 || (s[4] < '0' || s[4] > '9'))
		return -EINVAL;
	m->kind = GP_RMEM_GPU;
	m->gpu = (int)g;
	return 0;
}

/* The port: ACTIVE, its rate and MTU, and on RoCE a RoCE v2 GID. */
int gp_rdma_port_setup(struct gp_rdma *s, struct gp_rdma_dev *d, int port, int gid_index, struct gp_err *e)
{
	const struct gp_ibv_lib *L = s->L;
	struct gp_ibv_device_attr da;
	struct gp_rdma_nic *in = d->at;
	int rc;

	memset(&d->pa, 0, sizeof(d->pa));
	if ((rc = L->ibv_query_port(d->ctx, (uint8_t)port, &d->pa)))
		return gp_err_set(e, GP_E_FAIL, rc > 0 ? rc : errno, "%s: no port %d (ibv_query_port: %s): see "
				  "`ibv_devinfo -d %s`", in->device, port, strerror(rc > 0 ? rc : errno), in->device);
	in->port = port;
	in->link_layer = d->pa.link_layer == GP_IBV_LINK_LAYER_ETHERNET ? GP_RDMA_LINK_ETH : GP_RDMA_LINK_IB;
	in->numa_node = gp_rdma_numa_node(s->o.pci, in->device);
	if (d->pa.state != GP_IBV_PORT_ACTIVE)
		return gp_err_set(e, GP_E_FAIL, ENETDOWN, "%s port %d is %s, not ACTIVE: %s", in->device, port,
				  port_state_name(d->pa.state), in->link_layer == GP_RDMA_LINK_ETH ?
				  "bring its network interface up (ip link set IFACE up) and check the cable" :
				  "check the cable and that a subnet manager runs (opensm; `ibstat` shows the state)");
	in->active_mtu = gp_rdma_mtu_bytes(d->pa.active_mtu);
	in->port_gbits = gp_rdma_port_payload_gbits(d->pa.active_speed, d->pa.active_width, d->pa.active_mtu,
						    in->link_layer);
	if (!in->port_gbits && in->active_mtu) {       /* speed not in the table: sysfs says it in words */
		char path[128], buf[64];

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/rate", in->device, port);
		if (gp_root_read_text(s->o.root, path, buf, sizeof(buf)) > 0 && gp_rdma_rate_parse(buf) > 0)
			in->port_gbits = gp_rdma_rate_parse(buf) * in->active_mtu /
					 (in->active_mtu + gp_rdma_header_bytes(in->link_layer));
	}
	in->gid_index = gid_index;
	if (in->link_layer == GP_RDMA_LINK_ETH && in->gid_index < 0) {
		int n = 0;

		if (!L->_ibv_query_gid_ex)
			return gp_err_set(e, GP_E_FAIL, ENOSYS, "%s port %d is RoCE and this libibverbs cannot tell GID "
					  "types (no _ibv_query_gid_ex, rdma-core < 32): run gpup2p bench rdma --gid-index N (see "
					  "`show_gids`)",
					  in->device, port);
		for (int i = 0; i < 256 && in->gid_index < 0; i++) {
			struct gp_ibv_gid_entry g;

			if (L->_ibv_query_gid_ex(d->ctx, (uint32_t)port, (uint32_t)i, &g, 0, sizeof(g)))
				continue;
			n++;
			if (g.gid_type == GP_IBV_GID_TYPE_ROCE_V2)
				in->gid_index = i;
		}
		if (in->gid_index < 0)
			return gp_err_set(e, GP_E_FAIL, EADDRNOTAVAIL, "%s port %d is RoCE but has no RoCE v2 GID (%d GID(s), none "
					  "of type RoCE v2): give its network interface an IP address (ip addr add ...), and "
					  "check `show_gids` / /sys/class/infiniband/%s/ports/%d/gid_attrs/types", in->device,
					  port, n, in->device, port);
	}
	if (in->gid_index >= 0 && L->ibv_query_gid(d->ctx, (uint8_t)port, in->gid_index, &d->gid))
		return gp_err_set(e, GP_E_FAIL, EINVAL, "%s port %d has no GID %d (ibv_query_gid): see `show_gids`",
				  in->device, port, in->gid_index);
	memset(&da, 0, sizeof(da));
	if (!L->ibv_query_device(d->ctx, &da) && da.max_qp_rd_atom > 0 && da.max_qp_rd_atom < s->max_rd)
		s->max_rd = da.max_qp_rd_atom;
	if (da.max_qp_init_rd_atom > 0 && da.max_qp_init_rd_atom < s->max_rd)
		s->max_rd = da.max_qp_init_rd_atom;
	return 0;
}

/* "ulimit -l" as words. */
static void memlock_words(char *buf, size_t n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		snprintf(buf, n, "unknown");
	else if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(buf, n, "unlimited");
	else
		snprintf(buf, n, "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
}

static int reg_host(struct gp_rdma *s, struct gp_rdma_dev *d, struct gp_ibv_mr **mr, void *p, size_t n,
		    struct gp_err *e)
{
	int acc = GP_IBV_ACCESS_LOCAL_WRITE | GP_IBV_ACCESS_REMOTE_WRITE | GP_IBV_ACCESS_REMOTE_READ;
	char lim[32];

	errno = 0;
	if ((*mr = s->L->ibv_reg_mr(d->pd, p, n, acc)))
		return 0;
	if (errno == ENOMEM || errno == EAGAIN) {
		memlock_words(lim, sizeof(lim));
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "ibv_reg_mr of %zu bytes of host memory: ENOMEM: the locked-memory "
				  "limit RLIMIT_MEMLOCK is %s (ulimit -l): raise it (ulimit -l unlimited, or memlock in "
				  "/etc/security/limits.conf; LimitMEMLOCK= for a systemd unit)", n, lim);
	}
	return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "ibv_reg_mr of %zu bytes of host memory: %s", n,
			  strerror(errno ? errno : EIO));
}

static int reg_dmabuf(struct gp_rdma *s, struct gp_rdma_ep *ep, size_t n, struct gp_err *e)
{
	int acc = GP_IBV_ACCESS_LOCAL_WRITE | GP_IBV_ACCESS_REMOTE_WRITE | GP_IBV_ACCESS_REMOTE_READ, err;

	if (!s->L->ibv_reg_dmabuf_mr)
		return gp_err_set(e, GP_E_UNAVAIL, ENOSYS, "dma-buf: this libibverbs has no ibv_reg_dmabuf_mr (rdma-core "
				  "34 or later needed)");
	if (ep->fd < 0 && gp_cuda_dmabuf_fd(s->cuda, ep->gpu, ep->dptr, n, &ep->fd, e))
		return -(e->errnum ? e->errnum : EIO);
	errno = 0;
	if ((ep->mr = s->L->ibv_reg_dmabuf_mr(ep->dev->pd, 0, n, ep->dptr, ep->fd, acc)))
		return 0;
	err = errno ? errno : EIO;
	if (err == EOPNOTSUPP || err == EPROTONOSUPPORT || err == ENOSYS)
		return gp_err_set(e, GP_E_FAIL, err, "dma-buf: %s cannot register a dma-buf (ibv_reg_dmabuf_mr: %s): needs "
				  "Linux 5.12+, a NIC driver with dma-buf support (mlx5) and the NVIDIA open kernel module "
				  "515+", ep->dev->at->device, strerror(err));
	return gp_err_set(e, GP_E_FAIL, err, "dma-buf: ibv_reg_dmabuf_mr of GPU%d memory on %s: %s%s", ep->gpu,
			  ep->dev->at->device, strerror(err), err == ENOMEM ? " (RLIMIT_MEMLOCK: ulimit -l)" : "");
}

static int reg_peermem(struct gp_rdma *s, struct gp_rdma_ep *ep, size_t n, struct gp_err *e)
{
	int acc = GP_IBV_ACCESS_LOCAL_WRITE | GP_IBV_ACCESS_REMOTE_WRITE | GP_IBV_ACCESS_REMOTE_READ, err;

	if (!gp_gdr_peermem_loaded(s->o.root))
		return gp_err_set(e, GP_E_UNAVAIL, ENOENT, "peermem: the nvidia_peermem module is not loaded: "
				  "modprobe nvidia-peermem (it needs a NIC stack with PeerDirect: MOFED or a patched kernel)");
	errno = 0;
	if ((ep->mr = s->L->ibv_reg_mr(ep->dev->pd, (void *)(uintptr_t)ep->dptr, n, acc)))
		return 0;
	err = errno ? errno : EIO;
	return gp_err_set(e, GP_E_FAIL, err, "peermem: ibv_reg_mr of GPU%d memory on %s: %s: %s", ep->gpu,
			  ep->dev->at->device, strerror(err), err == EFAULT || err == EINVAL || err == EOPNOTSUPP ?
			  "nvidia-peermem did not claim the range (is this the NVIDIA driver's nvidia-peermem, matching "
			  "the running driver, and is nv_peer_mem unloaded?)" : err == ENOMEM ?
			  "RLIMIT_MEMLOCK (ulimit -l) or BAR1 space exhausted" : "see dmesg");
}

static int gpu_mem(struct gp_rdma *s, struct gp_rdma_ep *ep, size_t n, struct gp_err *e)
{
	struct gp_err er[2] = { { 0 }, { 0 } };
	int rc;

	if (!s->cuda) {
		if (!(s->cuda = calloc(1, sizeof(*s->cuda))))
			return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
		if ((rc = gp_cuda_open(s->cuda, e))) {
			free(s->cuda);
			s->cuda = NULL;
			return rc;
		}
	}
	ep->gpu = ep->mem.gpu < 0 ? 0 : ep->mem.gpu;
	if (ep->gpu >= s->cuda->n)
		return gp_err_set(e, GP_E_USAGE, ENODEV, "no GPU%d: CUDA sees %d GPU(s)", ep->gpu, s->cuda->n);
	if ((rc = gp_cuda_alloc(s->cuda, ep->gpu, n, &ep->dptr, e)))
		return rc;
	if (!(ep->host = malloc(n)))
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory (%zu bytes of staging)", n);
	ep->addr = ep->dptr;
	for (int k = 0; k < 2; k++) {      /* NCCL's order (gdr.h): dma-buf, then the peer-memory module */
		int dmabuf = gp_gdr_order[k] == GP_GDR_DMABUF;

		if (!(dmabuf ? reg_dmabuf(s, ep, n, &er[k]) : reg_peermem(s, ep, n, &er[k])))
			return ep->path = gp_gdr_path_id(gp_gdr_order[k]), 0;
	}
	return gp_err_set(e, er[0].cls == GP_E_UNAVAIL && er[1].cls == GP_E_UNAVAIL ? GP_E_UNAVAIL : GP_E_FAIL,
			  er[1].errnum ? er[1].errnum : er[0].errnum, "cannot register GPU%d memory with %s for RDMA: %s; %s",
			  ep->gpu, ep->dev->at->device, er[0].msg, er[1].msg);
}

int gp_rdma_ep_mem(struct gp_rdma *s, struct gp_rdma_ep *ep, struct gp_err *e)
{
	size_t n = s->o.max_size ? s->o.max_size : 4096;
	int rc;

	ep->fd = -1;
	ep->gpu = -1;
	if (!(ep->ctl = aligned_alloc(64, 2 * GP_RDMA_CTL)))
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	memset(ep->ctl, 0, 2 * GP_RDMA_CTL);
	if ((rc = reg_host(s, ep->dev, &ep->ctl_mr, ep->ctl, 2 * GP_RDMA_CTL, e)))
		return rc;
	if (ep->mem.kind == GP_RMEM_AUTO && !s->cuda) {       /* auto: GPU memory when CUDA sees a GPU */
		struct gp_err ce = { 0 };
		struct gp_cuda *c = calloc(1, sizeof(*c));

		if (c && !gp_cuda_open(c, &ce))
			s->cuda = c;
		else
			free(c);
	}
	if (ep->mem.kind == GP_RMEM_GPU || (ep->mem.kind == GP_RMEM_AUTO && s->cuda))
		return gpu_mem(s, ep, n, e);
	{
		struct gp_numa_saved sv = { 0 };
		struct gp_err ne = { 0 };

		if (ep->dev->at->numa_node >= 0)
			gp_numa_bind(ep->dev->at->numa_node, &sv, &ne);  /* best effort: memory near the NIC */
		if (posix_memalign(&ep->host, 4096, n)) {
			gp_numa_unbind(&sv);
			return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory (%zu bytes)", n);
		}
		memset(ep->host, 0, n);
		gp_numa_unbind(&sv);
	}
	ep->addr = (uintptr_t)ep->host;
	ep->path = "host";
	return reg_host(s, ep->dev, &ep->mr, ep->host, n, e);
}

int gp_rdma_ep_queues(struct gp_rdma *s, struct gp_rdma_ep *ep, int cm, struct gp_err *e)
{
	struct gp_ibv_qp_init_attr ia;

	errno = 0;
	if (!(ep->cq = s->L->ibv_create_cq(ep->dev->ctx, 4 * GP_RDMA_WINDOW + 16, NULL, NULL, 0)))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "ibv_create_cq on %s: %s", ep->dev->at->device,
				  strerror(errno ? errno : EIO));
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = ep->cq;
	ia.cap.max_send_wr = GP_RDMA_WINDOW + 8;
	ia.cap.max_recv_wr = GP_RDMA_WINDOW + 8;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	ia.qp_type = GP_IBV_QPT_RC;
	errno = 0;
	if (cm) {
		int rc = s->L->rdma_create_qp(s->id, ep->dev->pd, &ia);

		if (rc)
			return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "rdma_create_qp on %s: %s", ep->dev->at->device,
					  strerror(errno ? errno : EIO));
		ep->qp = s->id->qp;
		return 0;
	}
	if (!(ep->qp = s->L->ibv_create_qp(ep->dev->pd, &ia)))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "ibv_create_qp (RC) on %s: %s", ep->dev->at->device,
				  strerror(errno ? errno : EIO));
	return 0;
}

void gp_rdma_ep_free(struct gp_rdma *s, struct gp_rdma_ep *ep)
{
	if (ep->qp && (!s->id || ep->qp != s->id->qp))
		s->L->ibv_destroy_qp(ep->qp);
	else if (ep->qp)
		s->L->rdma_destroy_qp(s->id);
	if (ep->cq)
		s->L->ibv_destroy_cq(ep->cq);
	if (ep->mr)
		s->L->ibv_dereg_mr(ep->mr);
	if (ep->ctl_mr)
		s->L->ibv_dereg_mr(ep->ctl_mr);
	if (ep->fd >= 0)
		close(ep->fd);
	if (ep->dptr)
		gp_cuda_free(s->cuda, ep->gpu, ep->dptr);
	free(ep->host);
	free(ep->ctl);
	{
		struct gp_rdma_dev *d = ep->dev;

		memset(ep, 0, sizeof(*ep));
		ep->dev = d;
	}
	ep->fd = ep->gpu = -1;          /* fd 0 is a file like any other: never closed by mistake */
}

int gp_rdma_open(struct gp_rdma **out, const struct gp_rdma_opts *o, struct gp_err *e)
{
	struct gp_rdma *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	s->o = *o;
	s->max_rd = 16;
	for (int i = 0; i < 2; i++) {
		s->ep[i].fd = s->ep[i].gpu = -1;
		s->ep[i].dev = &s->dev[0];
	}
	s->dev[0].at = &s->info.nic;
	s->dev[1].at = &s->info.peer_nic;
	s->info.gpu = s->info.peer_gpu = -1;
	s->info.nic.gid_index = s->info.peer_nic.gid_index = -1;
	s->info.nic.numa_node = s->info.peer_nic.numa_node = -1;
	if (!(s->L = gp_ibv_load(o->role != GP_RDMA_LOOPBACK, e))) {
		free(s);
		return -(e->errnum ? e->errnum : ENOENT);
	}
	rc = o->role != GP_RDMA_LOOPBACK ? gp_rdma_cm_open(s, e) : gp_rdma_loop_open(s, e);
	if (rc) {
		gp_rdma_close(s);
		return rc < 0 ? rc : -EIO;
	}
	s->info.port_gbits = s->info.nic.port_gbits;       /* two ports: the slower one, unknown if either is */
	if (s->ndev == 2 && !(s->info.peer_nic.port_gbits > 0))
		s->info.port_gbits = 0;
	else if (s->ndev == 2 && s->info.peer_nic.port_gbits < s->info.port_gbits)
		s->info.port_gbits = s->info.peer_nic.port_gbits;
	*out = s;
	return 0;
}

void gp_rdma_get_info(const struct gp_rdma *s, struct gp_rdma_info *i)
{
	*i = s->info;
}

void gp_rdma_close(struct gp_rdma *s)
{
	if (!s)
		return;
	if (s->o.role != GP_RDMA_LOOPBACK)
		gp_rdma_cm_close(s);
	for (int i = 0; i < 2; i++)
		gp_rdma_ep_free(s, &s->ep[i]);
	for (int i = 1; i >= 0; i--) {
		struct gp_rdma_dev *d = &s->dev[i];

		if (d->shared)
			continue;
		if (d->pd)
			s->L->ibv_dealloc_pd(d->pd);
		if (d->ctx && s->o.role == GP_RDMA_LOOPBACK)
			s->L->ibv_close_device(d->ctx);
	}
	if (s->cuda) {
		gp_cuda_close(s->cuda);
		free(s->cuda);
	}
	free(s);
}
