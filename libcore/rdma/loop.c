/* gpup2p — the RDMA bench's loopback: both RC queue pairs on this host, on one device and port, or on two
 * (--peer-device: each QP on its own device, the traffic crossing the wire between them). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rdma/internal.h"

/* RESET -> INIT -> RTR -> RTS of a's QP towards b's (the same port, or b's device and port). */
static int connect_qp(struct gp_rdma *s, struct gp_rdma_ep *a, struct gp_rdma_ep *b, struct gp_err *e)
{
	const struct gp_rdma_dev *da = a->dev, *db = b->dev;
	struct gp_ibv_qp_attr q;
	int rc;

	memset(&q, 0, sizeof(q));
	q.qp_state = GP_IBV_QPS_INIT;
	q.port_num = (uint8_t)da->at->port;
	q.qp_access_flags = GP_IBV_ACCESS_LOCAL_WRITE | GP_IBV_ACCESS_REMOTE_WRITE | GP_IBV_ACCESS_REMOTE_READ;
	if ((rc = s->L->ibv_modify_qp(a->qp, &q, GP_IBV_QP_STATE | GP_IBV_QP_PKEY_INDEX | GP_IBV_QP_PORT |
				      GP_IBV_QP_ACCESS_FLAGS)))
		goto fail;
	memset(&q, 0, sizeof(q));
	q.qp_state = GP_IBV_QPS_RTR;
	q.path_mtu = da->pa.active_mtu < db->pa.active_mtu ? da->pa.active_mtu : db->pa.active_mtu;
	q.dest_qp_num = b->qp->qp_num;
	q.max_dest_rd_atomic = (uint8_t)s->max_rd;
	q.min_rnr_timer = 12;
	q.ah_attr.dlid = db->pa.lid;                   /* the other port's address */
	q.ah_attr.port_num = (uint8_t)da->at->port;
	if (da->at->gid_index >= 0 && db->at->gid_index >= 0) {   /* a GRH needs the other side's GID */
		q.ah_attr.is_global = 1;
		q.ah_attr.grh.dgid = db->gid;
		q.ah_attr.grh.sgid_index = (uint8_t)da->at->gid_index;
		q.ah_attr.grh.hop_limit = 64;
	}
	if ((rc = s->L->ibv_modify_qp(a->qp, &q, GP_IBV_QP_STATE | GP_IBV_QP_AV | GP_IBV_QP_PATH_MTU | GP_IBV_QP_DEST_QPN |
				      GP_IBV_QP_RQ_PSN | GP_IBV_QP_MAX_DEST_RD_ATOMIC | GP_IBV_QP_MIN_RNR_TIMER)))
		goto fail;
	memset(&q, 0, sizeof(q));
	q.qp_state = GP_IBV_QPS_RTS;
	q.timeout = 14;
	q.retry_cnt = 7;
	q.rnr_retry = 7;
	q.max_rd_atomic = (uint8_t)s->max_rd;
	if ((rc = s->L->ibv_modify_qp(a->qp, &q, GP_IBV_QP_STATE | GP_IBV_QP_TIMEOUT | GP_IBV_QP_RETRY_CNT |
				      GP_IBV_QP_RNR_RETRY | GP_IBV_QP_SQ_PSN | GP_IBV_QP_MAX_QP_RD_ATOMIC)))
		goto fail;
	return 0;
fail:
	return gp_err_set(e, GP_E_FAIL, rc > 0 ? rc : EIO, "ibv_modify_qp on %s port %d (loopback RC QP to %s port %d): %s",
			  da->at->device, da->at->port, db->at->device, db->at->port, strerror(rc > 0 ? rc : EIO));
}

/* Open d: the device by name, else the first one whose port is ACTIVE (else the first). */
static int open_device(struct gp_rdma *s, struct gp_rdma_dev *d, const char *want, int port, struct gp_err *e)
{
	const struct gp_ibv_lib *L = s->L;
	struct gp_ibv_device **list;
	int n = 0, pick = -1;

	errno = 0;
	if (!(list = L->ibv_get_device_list(&n)) || !n) {
		int err = errno;

		if (list)
			L->ibv_free_device_list(list);
		return gp_err_set(e, GP_E_UNAVAIL, ENODEV, "no RDMA device%s: load the NIC's RDMA driver (mlx5_ib, or "
				  "rdma_rxe for soft-RoCE: rdma link add rxe0 type rxe netdev IFACE)",
				  err == ENOSYS ? " (no /dev/infiniband/uverbs*: modprobe ib_uverbs)" : "");
	}
	for (int i = 0; i < n && pick < 0; i++) {
		const char *name = L->ibv_get_device_name(list[i]);

		if (want && strcmp(name, want))
			continue;
		if (!want) {                                   /* none named: the first ACTIVE one */
			struct gp_ibv_context *c = L->ibv_open_device(list[i]);
			struct gp_ibv_port_attr pa;

			memset(&pa, 0, sizeof(pa));
			if (!c)
				continue;
			if (L->ibv_query_port(c, (uint8_t)port, &pa) || pa.state != GP_IBV_PORT_ACTIVE) {
				L->ibv_close_device(c);
				continue;
			}
			d->ctx = c;
		}
		pick = i;
	}
	if (pick < 0 && !want)
		pick = 0;                                      /* none ACTIVE: the first, whose port state says why */
	if (pick < 0) {
		char names[256] = "";

		for (int i = 0; i < n; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
				 L->ibv_get_device_name(list[i]));
		L->ibv_free_device_list(list);
		return gp_err_set(e, GP_E_USAGE, ENODEV, "no RDMA device %s (there are: %s)", want, names);
	}
	snprintf(d->at->device, sizeof(d->at->device), "%s", L->ibv_get_device_name(list[pick]));
	errno = 0;
	if (!d->ctx && !(d->ctx = L->ibv_open_device(list[pick]))) {
		L->ibv_free_device_list(list);
		return gp_err_set(e, errno == EACCES || errno == EPERM ? GP_E_PERM : GP_E_FAIL, errno ? errno : EIO,
				  "ibv_open_device %s: %s", d->at->device, strerror(errno ? errno : EIO));
	}
	L->ibv_free_device_list(list);
	return 0;
}

static const char *link_name(int ll)
{
	return ll == GP_RDMA_LINK_ETH ? "RoCE" : "InfiniBand";
}

/* The second side, when the peer's device or port differs from the first's: opened (or sharing the first's
 * context, on another port) and set up; both of one link layer. */
static int peer_side(struct gp_rdma *s, struct gp_err *e)
{
	struct gp_rdma_dev *d0 = &s->dev[0], *d1 = &s->dev[1];
	const char *name = s->o.peer_device ? s->o.peer_device : d0->at->device;
	int port = s->o.peer_ib_port ? s->o.peer_ib_port : d0->at->port, same = !strcmp(name, d0->at->device), rc;
	int gid = s->o.peer_gid_index;

	if (same && port == d0->at->port) {
		s->info.peer_nic = s->info.nic;                /* one device, one port: both QPs on it */
		return 0;
	}
	/* InfiniBand: the peer's GID index defaults to --gid-index (a GRH on one side needs a GID on the other);
	 * RoCE: to the peer port's own RoCE v2 GID (gp_rdma_port_setup) */
	if (gid < 0 && d0->at->gid_index >= 0 && d0->at->link_layer != GP_RDMA_LINK_ETH)
		gid = d0->at->gid_index;
	s->ndev = 2;
	if (same) {
		d1->ctx = d0->ctx;
		d1->pd = d0->pd;
		d1->shared = 1;
		snprintf(d1->at->device, sizeof(d1->at->device), "%s", name);
	} else if ((rc = open_device(s, d1, name, port, e))) {
		return rc;
	}
	if ((rc = gp_rdma_port_setup(s, d1, port, gid, e)))
		return rc;
	if (d1->at->link_layer != d0->at->link_layer)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "%s port %d is %s and %s port %d is %s: a loopback joins two "
				  "ports of one link layer (gpup2p bench rdma --peer-device on the same fabric)", d0->at->device,
				  d0->at->port,
				  link_name(d0->at->link_layer), d1->at->device, d1->at->port, link_name(d1->at->link_layer));
	errno = 0;
	if (!d1->shared && !(d1->pd = s->L->ibv_alloc_pd(d1->ctx)))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "ibv_alloc_pd on %s: %s", d1->at->device,
				  strerror(errno ? errno : EIO));
	s->ep[1].dev = d1;
	s->info.two_nics = 1;
	return 0;
}

int gp_rdma_loop_open(struct gp_rdma *s, struct gp_err *e)
{
	struct gp_rdma_dev *d0 = &s->dev[0];
	int port = s->o.ib_port ? s->o.ib_port : 1, rc;

	s->ndev = 1;
	if ((rc = open_device(s, d0, s->o.device, port, e)) || (rc = gp_rdma_port_setup(s, d0, port, s->o.gid_index, e)))
		return rc;
	errno = 0;
	if (!(d0->pd = s->L->ibv_alloc_pd(d0->ctx)))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "ibv_alloc_pd on %s: %s", d0->at->device,
				  strerror(errno ? errno : EIO));
	if ((rc = peer_side(s, e)))
		return rc;
	s->nep = 2;
	s->ep[0].mem = s->o.mem;
	s->ep[1].mem = s->o.peer_mem;
	for (int i = 0; i < 2; i++)
		if ((rc = gp_rdma_ep_mem(s, &s->ep[i], e)) || (rc = gp_rdma_ep_queues(s, &s->ep[i], 0, e)))
			return rc;
	if ((rc = connect_qp(s, &s->ep[0], &s->ep[1], e)) || (rc = connect_qp(s, &s->ep[1], &s->ep[0], e)))
		return rc;
	for (int i = 0; i < 2; i++) {
		s->ep[i].raddr = s->ep[!i].addr;
		s->ep[i].rkey = s->ep[!i].mr->rkey;
	}
	s->info.mem_path = s->ep[0].path;
	s->info.peer_mem_path = s->ep[1].path;
	s->info.gpu = s->ep[0].gpu;
	s->info.peer_gpu = s->ep[1].gpu;
	return 0;
}
