/* gpup2p — client and server through librdmacm: the server listens, the client connects; each side's
 * buffer (address, rkey) travels in the connection's private data, and each measurement is driven by
 * control messages (run, ready, done, result, bye) sent on the same RC QP. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/internal.h"

/* The next CM event of type want, waiting at most ms (-1: no limit). The caller acks *ev. */
static int cm_event(struct gp_rdma *s, int want, int ms, struct gp_rdma_cm_event **ev, struct gp_err *e)
{
	struct pollfd p = { .fd = s->ch->fd, .events = POLLIN };
	int rc;

	rc = poll(&p, 1, ms);
	if (rc == 0)
		return gp_err_set(e, GP_E_FAIL, ETIMEDOUT, "rdma_cm: no %s within %d s (gpup2p bench rdma --timeout SEC)",
				  s->L->rdma_event_str((unsigned)want), ms / 1000);
	if (rc < 0 || s->L->rdma_get_cm_event(s->ch, ev))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "rdma_get_cm_event: %s", strerror(errno ? errno : EIO));
	if ((*ev)->event != want) {
		int got = (*ev)->event, st = (*ev)->status;

		s->L->rdma_ack_cm_event(*ev);
		*ev = NULL;
		return gp_err_set(e, GP_E_FAIL, got == GP_RDMA_CM_EVENT_REJECTED ? ECONNREFUSED : EIO,
				  "rdma_cm: %s (status %d) while waiting for %s%s", s->L->rdma_event_str((unsigned)got), st,
				  s->L->rdma_event_str((unsigned)want), got == GP_RDMA_CM_EVENT_REJECTED ?
				  ": is `gpup2p bench rdma --server` running there, on the port this side "
				  "uses (gpup2p bench rdma --rdma-port)?" : "");
	}
	return 0;
}

static int ms_of(const struct gp_rdma *s)
{
	return gp_rdma_timeout_s(s) * 1000;
}

/* Device, port, PD, buffer and QP on the device the CM id is bound to. */
static int setup_on_id(struct gp_rdma *s, struct gp_err *e)
{
	struct gp_rdma_dev *d = &s->dev[0];
	int rc;

	d->ctx = s->id->verbs;
	s->ndev = 1;
	snprintf(d->at->device, sizeof(d->at->device), "%s", s->L->ibv_get_device_name(d->ctx->device));
	if (s->o.device && strcmp(s->o.device, d->at->device))
		return gp_err_set(e, GP_E_USAGE, EINVAL, "rdma_cm chose %s for this address, not %s, the device asked "
				  "for: use an IP address of %s's interface", d->at->device, s->o.device, s->o.device);
	s->o.ib_port = s->id->port_num;
	if ((rc = gp_rdma_port_setup(s, d, s->o.ib_port, s->o.gid_index, e)))
		return rc;
	errno = 0;
	if (!(d->pd = s->L->ibv_alloc_pd(d->ctx)))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "ibv_alloc_pd on %s", d->at->device);
	s->nep = 1;
	s->ep[0].mem = s->o.mem;
	if ((rc = gp_rdma_ep_mem(s, &s->ep[0], e)) || (rc = gp_rdma_ep_queues(s, &s->ep[0], 1, e)))
		return rc;
	s->info.mem_path = s->ep[0].path;
	s->info.gpu = s->ep[0].gpu;
	return gp_rdma_post_recv(s, &s->ep[0], 0, 1, e);
}

static void conn_param(struct gp_rdma *s, struct gp_rdma_conn_param *cp, struct gp_rdma_pdata *pd)
{
	pd->addr = s->ep[0].addr;
	pd->rkey = s->ep[0].mr->rkey;
	pd->magic = GP_RDMA_MAGIC;
	pd->len = s->o.max_size;
	memset(cp, 0, sizeof(*cp));
	cp->private_data = pd;
	cp->private_data_len = sizeof(*pd);
	cp->responder_resources = cp->initiator_depth = (uint8_t)s->max_rd;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

int gp_rdma_pdata_decode(const void *buf, size_t len, int client, uint64_t max_size, struct gp_rdma_pdata *pd,
			 struct gp_err *e)
{
	if (!buf || len < sizeof(*pd))
		return gp_err_set(e, GP_E_FAIL, EPROTO, "the peer sent no buffer in its connection data: is it gpup2p?");
	memcpy(pd, buf, sizeof(*pd));
	if (pd->magic != GP_RDMA_MAGIC)
		return gp_err_set(e, GP_E_FAIL, EPROTO, "the peer is not gpup2p bench rdma (private data)");
	if (pd->len < max_size && client)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "the server's buffer is %llu bytes, smaller than this side's %llu: "
				  "start the server with gpup2p bench rdma --server --size %llu", (unsigned long long)pd->len,
				  (unsigned long long)max_size, (unsigned long long)max_size);
	return 0;
}

static int peer_of(struct gp_rdma *s, const struct gp_rdma_cm_event *ev, struct gp_err *e)
{
	struct gp_rdma_pdata pd;
	int rc = gp_rdma_pdata_decode(ev->param.conn.private_data, ev->param.conn.private_data_len,
				      s->o.role == GP_RDMA_CLIENT, s->o.max_size, &pd, e);

	if (rc)
		return rc;
	s->ep[0].raddr = pd.addr;
	s->ep[0].rkey = pd.rkey;
	return 0;
}

/* The address of host (NULL: every address; a server gets GP_RDMA_BIND_DEFAULT or --bind) and the
 * rdma_cm port; what names it in errors ("server", "bind address"). */
static int address(const struct gp_rdma *s, const char *host, const char *what, struct addrinfo **ai, struct gp_err *e)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = host ? 0 : AI_PASSIVE };
	char port[16];
	int rc;

	snprintf(port, sizeof(port), "%d", s->o.cm_port ? s->o.cm_port : GP_RDMA_CM_PORT);
	if ((rc = getaddrinfo(host, port, &hints, ai)))
		return gp_err_set(e, GP_E_USAGE, EINVAL, "%s %s: %s", what, host ? host : "*", gai_strerror(rc));
	return 0;
}

static int client_open(struct gp_rdma *s, struct gp_err *e)
{
	struct gp_rdma_cm_event *ev = NULL;
	struct gp_rdma_conn_param cp;
	struct gp_rdma_pdata pd;
	struct addrinfo *ai = NULL;
	int rc;

	if ((rc = address(s, s->o.host, "server", &ai, e)))
		return rc;
	rc = s->L->rdma_resolve_addr(s->id, NULL, ai->ai_addr, ms_of(s));
	freeaddrinfo(ai);
	if (rc)
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "rdma_resolve_addr %s: %s", s->o.host,
				  strerror(errno ? errno : EIO));
	if ((rc = cm_event(s, GP_RDMA_CM_EVENT_ADDR_RESOLVED, ms_of(s), &ev, e)))
		return rc;
	s->L->rdma_ack_cm_event(ev);
	if (s->L->rdma_resolve_route(s->id, ms_of(s)))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "rdma_resolve_route %s: %s", s->o.host,
				  strerror(errno ? errno : EIO));
	if ((rc = cm_event(s, GP_RDMA_CM_EVENT_ROUTE_RESOLVED, ms_of(s), &ev, e)))
		return rc;
	s->L->rdma_ack_cm_event(ev);
	if ((rc = setup_on_id(s, e)))
		return rc;
	conn_param(s, &cp, &pd);
	if (s->L->rdma_connect(s->id, &cp))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "rdma_connect %s: %s", s->o.host,
				  strerror(errno ? errno : EIO));
	if ((rc = cm_event(s, GP_RDMA_CM_EVENT_ESTABLISHED, ms_of(s), &ev, e)))
		return rc;
	rc = peer_of(s, ev, e);
	s->L->rdma_ack_cm_event(ev);
	s->connected = !rc;
	return rc;
}

static int server_open(struct gp_rdma *s, struct gp_err *e)
{
	struct gp_rdma_cm_event *ev = NULL;
	struct gp_rdma_conn_param cp;
	struct gp_rdma_pdata pd;
	struct addrinfo *ai = NULL;
	int rc;

	if ((rc = address(s, s->o.listen ? s->o.listen : GP_RDMA_BIND_DEFAULT, "bind address", &ai, e)))
		return rc;
	rc = s->L->rdma_bind_addr(s->listen_id, ai->ai_addr);
	freeaddrinfo(ai);
	if (rc || s->L->rdma_listen(s->listen_id, 1))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "rdma_cm: cannot listen on %s port %d: %s",
				  s->o.listen ? s->o.listen : GP_RDMA_BIND_DEFAULT, s->o.cm_port ? s->o.cm_port : GP_RDMA_CM_PORT,
				  strerror(errno ? errno : EIO));
	/* a server waits for its client without a limit; once connected, every wait has --timeout */
	if ((rc = cm_event(s, GP_RDMA_CM_EVENT_CONNECT_REQUEST, -1, &ev, e)))
		return rc;
	s->id = ev->id;
	if (!(rc = peer_of(s, ev, e)))
		rc = setup_on_id(s, e);
	s->L->rdma_ack_cm_event(ev);
	if (rc)
		return rc;
	conn_param(s, &cp, &pd);
	if (s->L->rdma_accept(s->id, &cp))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "rdma_accept: %s", strerror(errno ? errno : EIO));
	if ((rc = cm_event(s, GP_RDMA_CM_EVENT_ESTABLISHED, ms_of(s), &ev, e)))
		return rc;
	s->L->rdma_ack_cm_event(ev);
	s->connected = 1;
	return 0;
}

int gp_rdma_cm_open(struct gp_rdma *s, struct gp_err *e)
{
	errno = 0;
	if (!(s->ch = s->L->rdma_create_event_channel()))
		return gp_err_set(e, errno == ENODEV || errno == ENOENT ? GP_E_UNAVAIL : GP_E_FAIL, errno ? errno : EIO,
				  "rdma_create_event_channel: %s (is rdma_ucm loaded? modprobe rdma_ucm)",
				  strerror(errno ? errno : EIO));
	if (s->L->rdma_create_id(s->ch, s->o.role == GP_RDMA_SERVER ? &s->listen_id : &s->id, s, GP_RDMA_PS_TCP))
		return gp_err_set(e, GP_E_FAIL, errno ? errno : EIO, "rdma_create_id: %s", strerror(errno ? errno : EIO));
	return s->o.role == GP_RDMA_SERVER ? server_open(s, e) : client_open(s, e);
}

void gp_rdma_cm_close(struct gp_rdma *s)
{
	if (s->o.role == GP_RDMA_CLIENT && s->connected && !s->peer_lost) { /* a lost peer would not answer */
		struct gp_rdma_ctl bye = { .magic = GP_RDMA_MAGIC, .kind = 5 };
		struct gp_err e = { 0 };

		gp_rdma_ctl_send(s, &bye, &e);
	}
	if (s->id && s->connected)
		s->L->rdma_disconnect(s->id);
	for (int i = 0; i < 2; i++)
		gp_rdma_ep_free(s, &s->ep[i]);
	if (s->dev[0].pd)
		s->L->ibv_dealloc_pd(s->dev[0].pd);
	s->dev[0].pd = NULL;
	if (s->id)
		s->L->rdma_destroy_id(s->id);
	if (s->listen_id)
		s->L->rdma_destroy_id(s->listen_id);
	if (s->ch)
		s->L->rdma_destroy_event_channel(s->ch);
	s->id = s->listen_id = NULL;
	s->ch = NULL;
}

int gp_rdma_ctl_send(struct gp_rdma *s, const struct gp_rdma_ctl *m, struct gp_err *e)
{
	struct gp_rdma_ep *ep = &s->ep[0];
	long want = ep->n_send + 1;
	int rc;

	memcpy(ep->ctl + GP_RDMA_CTL, m, sizeof(*m));
	if ((rc = gp_rdma_post(s, ep, GP_IBV_WR_SEND, sizeof(*m), 1, 2, e)))
		return rc;
	while (ep->n_send < want)
		if ((rc = gp_rdma_pump(s, ep, e)))
			return rc;
	return 0;
}

int gp_rdma_ctl_recv(struct gp_rdma *s, uint32_t kind, struct gp_rdma_ctl *m, struct gp_err *e)
{
	struct gp_rdma_ep *ep = &s->ep[0];
	int rc;

	while (ep->n_ctl < 1)
		if ((rc = gp_rdma_pump(s, ep, e)))
			return rc;
	ep->n_ctl--;
	return gp_rdma_ctl_decode(ep->ctl, GP_RDMA_CTL, kind, m, e);
}

int gp_rdma_ctl_decode(const void *buf, size_t len, uint32_t kind, struct gp_rdma_ctl *m, struct gp_err *e)
{
	if (len < sizeof(*m))
		return gp_err_set(e, GP_E_FAIL, EPROTO, "the peer sent a control message of %zu bytes", len);
	memcpy(m, buf, sizeof(*m));
	if (m->magic != GP_RDMA_MAGIC || (kind && m->kind != kind))
		return gp_err_set(e, GP_E_FAIL, EPROTO, "the peer sent control message %u, expected %u", m->kind, kind);
	return 0;
}
