/* The librdmacm half of the test double (built into the same library as fakeverbs.c, so that
 * GPUP2P_LIBRDMACM may name it too): a server and a client in one process, in two threads, connect through
 * it. Ports are looked up in a table of listeners (any address); events travel through a pipe per event
 * channel, so that poll() on the channel's fd works as on the real one. QPs are fakeverbs' own, moved to
 * RTS towards each other on accept; the private data of connect and accept is handed over as the real
 * rdma_cm does. A connect finding no listener (after 2 s) is REJECTED. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdma/verbs_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define API(ret, name, args) EXPORT ret name args; ret name args

/* fakeverbs.c's entry points and lock */
struct gp_ibv_device **ibv_get_device_list(int *num);
void ibv_free_device_list(struct gp_ibv_device **list);
struct gp_ibv_context *ibv_open_device(struct gp_ibv_device *d);
int ibv_query_gid(struct gp_ibv_context *c, uint8_t port, int i, union gp_ibv_gid *g);
struct gp_ibv_qp *ibv_create_qp(struct gp_ibv_pd *pd, struct gp_ibv_qp_init_attr *a);
int ibv_modify_qp(struct gp_ibv_qp *qp, struct gp_ibv_qp_attr *a, int mask);
int ibv_destroy_qp(struct gp_ibv_qp *qp);
void fakeverbs_lock(int on);

struct fch {
	int fd, wfd;                           /* struct rdma_event_channel: fd first */
	struct gp_rdma_cm_event *q[64];
	unsigned head, tail;
};

struct fid {
	struct gp_rdma_cm_id id;
	int port, listening;
	struct fid *peer;
};

struct fev {
	struct gp_rdma_cm_event ev;
	uint8_t pdata[64];
};

static struct fid *listeners[16];

static void queue(struct fch *ch, struct fid *id, struct fid *listen, int type, const void *pd, int pdlen)
{
	struct fev *e = calloc(1, sizeof(*e));
	char b = 1;

	if (!e)
		return;
	e->ev.id = &id->id;
	e->ev.listen_id = listen ? &listen->id : NULL;
	e->ev.event = type;
	if (pd && pdlen > 0) {
		memcpy(e->pdata, pd, (size_t)pdlen < sizeof(e->pdata) ? (size_t)pdlen : sizeof(e->pdata));
		e->ev.param.conn.private_data = e->pdata;
		e->ev.param.conn.private_data_len = (uint8_t)pdlen;
	}
	fakeverbs_lock(1);        /* the channel's owner destroys it under the lock (rdma_destroy_*) */
	ch->q[ch->tail++ % 64] = &e->ev;
	if (write(ch->wfd, &b, 1) != 1)
		abort();
	fakeverbs_lock(0);
}

static int port_of(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

/* The context rdma_cm binds ids to: the first device, opened once (the real one keeps its own too). */
static struct gp_ibv_context *first_device(void)
{
	static struct gp_ibv_device **list;
	static struct gp_ibv_context *ctx;
	int n = 0;

	fakeverbs_lock(1);
	if (!ctx) {
		if (!list)
			list = ibv_get_device_list(&n);
		else
			while (list[n])
				n++;
		ctx = list && n ? ibv_open_device(list[0]) : NULL;
	}
	fakeverbs_lock(0);
	return ctx;
}

API(struct gp_rdma_event_channel *, rdma_create_event_channel, (void))
{
	struct fch *c = calloc(1, sizeof(*c));
	int p[2];

	if (!c || pipe(p)) {
		free(c);
		return NULL;
	}
	c->fd = p[0];
	c->wfd = p[1];
	return (struct gp_rdma_event_channel *)c;
}

API(void, rdma_destroy_event_channel, (struct gp_rdma_event_channel *ch))
{
	struct fch *c = (struct fch *)ch;

	fakeverbs_lock(1);
	while (c->head != c->tail)              /* events nobody took */
		free(c->q[c->head++ % 64]);
	close(c->fd);
	close(c->wfd);
	free(c);
	fakeverbs_lock(0);
}

API(int, rdma_create_id, (struct gp_rdma_event_channel *ch, struct gp_rdma_cm_id **out, void *ctx, gp_rdma_port_space ps))
{
	struct fid *f = calloc(1, sizeof(*f));

	if (!f)
		return errno = ENOMEM, -1;
	f->id.channel = ch;
	f->id.context = ctx;
	f->id.ps = (int)ps;
	*out = &f->id;
	return 0;
}

API(int, rdma_destroy_id, (struct gp_rdma_cm_id *id))
{
	struct fid *f = (struct fid *)id;

	fakeverbs_lock(1);
	for (int i = 0; i < 16; i++)
		if (listeners[i] == f)
			listeners[i] = NULL;
	if (f->peer)
		f->peer->peer = NULL;
	fakeverbs_lock(0);
	free(f);
	return 0;
}

/* FAKECM_BIND_LOG=FILE: the address a listener is bound to, written there ("127.0.0.1 18515") */
API(int, rdma_bind_addr, (struct gp_rdma_cm_id *id, struct sockaddr *sa))
{
	const char *log = getenv("FAKECM_BIND_LOG");
	char a[INET6_ADDRSTRLEN] = "?";
	FILE *f;

	((struct fid *)id)->port = port_of(sa);
	if (log && sa && (f = fopen(log, "w"))) {
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, a, sizeof(a));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, a, sizeof(a));
		fprintf(f, "%s %d\n", a, port_of(sa));
		fclose(f);
	}
	return 0;
}

API(int, rdma_listen, (struct gp_rdma_cm_id *id, int backlog))
{
	struct fid *f = (struct fid *)id;

	(void)backlog;
	fakeverbs_lock(1);
	for (int i = 0; i < 16; i++)
		if (listeners[i] && listeners[i]->port == f->port) {
			fakeverbs_lock(0);
			return errno = EADDRINUSE, -1;
		}
	for (int i = 0; i < 16; i++)
		if (!listeners[i]) {
			listeners[i] = f;
			break;
		}
	fakeverbs_lock(0);
	f->listening = 1;
	return 0;
}

API(int, rdma_resolve_addr, (struct gp_rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst, int ms))
{
	struct fid *f = (struct fid *)id;

	(void)src, (void)ms;
	f->port = port_of(dst);
	if (!(id->verbs = first_device()))
		return errno = ENODEV, -1;
	id->port_num = 1;
	queue((struct fch *)id->channel, f, NULL, GP_RDMA_CM_EVENT_ADDR_RESOLVED, NULL, 0);
	return 0;
}

API(int, rdma_resolve_route, (struct gp_rdma_cm_id *id, int ms))
{
	(void)ms;
	queue((struct fch *)id->channel, (struct fid *)id, NULL, GP_RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, 0);
	return 0;
}

API(int, rdma_create_qp, (struct gp_rdma_cm_id *id, struct gp_ibv_pd *pd, struct gp_ibv_qp_init_attr *a))
{
	struct gp_ibv_qp_attr qa;

	if (!(id->qp = ibv_create_qp(pd, a)))
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = GP_IBV_QPS_INIT;
	return ibv_modify_qp(id->qp, &qa, GP_IBV_QP_STATE) ? (errno = EINVAL, -1) : 0;
}

API(void, rdma_destroy_qp, (struct gp_rdma_cm_id *id))
{
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
}

API(int, rdma_connect, (struct gp_rdma_cm_id *id, struct gp_rdma_conn_param *cp))
{
	struct fid *f = (struct fid *)id, *l = NULL, *child;

	for (int tries = 0; !l && tries < 200; tries++) {
		fakeverbs_lock(1);
		for (int i = 0; i < 16 && !l; i++)
			if (listeners[i] && listeners[i]->port == f->port)
				l = listeners[i];
		fakeverbs_lock(0);
		if (!l)
			usleep(10000);
	}
	if (!l) {
		queue((struct fch *)id->channel, f, NULL, GP_RDMA_CM_EVENT_REJECTED, NULL, 0);
		return 0;
	}
	if (!(child = calloc(1, sizeof(*child))))
		return errno = ENOMEM, -1;
	child->id.channel = l->id.channel;
	child->id.verbs = first_device();
	child->id.port_num = 1;
	child->port = l->port;
	child->peer = f;
	f->peer = child;
	queue((struct fch *)l->id.channel, child, l, GP_RDMA_CM_EVENT_CONNECT_REQUEST, cp->private_data, cp->private_data_len);
	return 0;
}

/* RTR and RTS towards the other QP. */
static int to_rts(struct gp_ibv_qp *qp, struct gp_ibv_qp *to)
{
	struct gp_ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = GP_IBV_QPS_RTR;
	a.dest_qp_num = to->qp_num;
	a.ah_attr.is_global = 1;
	ibv_query_gid(to->context, 1, 0, &a.ah_attr.grh.dgid);   /* the peer's address, as rdma_cm resolves it */
	if (ibv_modify_qp(qp, &a, GP_IBV_QP_STATE | GP_IBV_QP_AV | GP_IBV_QP_DEST_QPN))
		return -1;
	a.qp_state = GP_IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, GP_IBV_QP_STATE);
}

API(int, rdma_accept, (struct gp_rdma_cm_id *id, struct gp_rdma_conn_param *cp))
{
	struct fid *f = (struct fid *)id, *peer;
	int rc = 0;

	fakeverbs_lock(1);        /* the peer is not destroyed between its lookup and its event */
	peer = f->peer;
	if (!peer || !id->qp || !peer->id.qp || to_rts(id->qp, peer->id.qp) || to_rts(peer->id.qp, id->qp)) {
		rc = -1;
	} else {
		queue((struct fch *)id->channel, f, NULL, GP_RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
		queue((struct fch *)peer->id.channel, peer, NULL, GP_RDMA_CM_EVENT_ESTABLISHED, cp->private_data,
		      cp->private_data_len);
	}
	fakeverbs_lock(0);
	return rc ? (errno = EINVAL, -1) : 0;
}

API(int, rdma_disconnect, (struct gp_rdma_cm_id *id))
{
	struct fid *f = (struct fid *)id, *peer;

	/* under the lock from the lookup to the event: the peer's thread may be closing (rdma_destroy_id,
	 * then its channel); once its id is gone, f->peer is NULL and no event goes out */
	fakeverbs_lock(1);
	peer = f->peer;
	if (peer)
		peer->peer = NULL;
	f->peer = NULL;
	if (peer)
		queue((struct fch *)peer->id.channel, peer, NULL, GP_RDMA_CM_EVENT_DISCONNECTED, NULL, 0);
	fakeverbs_lock(0);
	return 0;
}

API(int, rdma_get_cm_event, (struct gp_rdma_event_channel *ch, struct gp_rdma_cm_event **ev))
{
	struct fch *c = (struct fch *)ch;
	char b;

	if (read(c->fd, &b, 1) != 1)
		return errno = EIO, -1;
	fakeverbs_lock(1);
	*ev = c->q[c->head++ % 64];
	fakeverbs_lock(0);
	return 0;
}

API(int, rdma_ack_cm_event, (struct gp_rdma_cm_event *ev))
{
	free(ev);
	return 0;
}

API(const char *, rdma_event_str, (gp_rdma_cm_event_type t))
{
	static const char *const n[] = { "RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR",
		"RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR", "RDMA_CM_EVENT_CONNECT_REQUEST",
		"RDMA_CM_EVENT_CONNECT_RESPONSE", "RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
		"RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED" };

	return t < sizeof(n) / sizeof(n[0]) ? n[t] : "RDMA_CM_EVENT_OTHER";
}
