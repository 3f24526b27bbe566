/* The test double of libcuda: the virtual clock. Work queued on a stream (copies, kernels, event
 * records and waits) is not timed when it is queued but when a time is read (an event's elapsed time,
 * a synchronize): then every stream's queue is played in queueing order, each stream on its own clock,
 * a stream held while it waits for an event another stream has not reached yet.
 *
 * Shared links: FAKECUDA_HOST_GBPS=R, one host link every host copy passes; FAKECUDA_NVLINK_GBPS=R,
 * each GPU's NVLinks carry R GB/s out (egress) and R in (ingress), shared by every peer copy through
 * them. A copy takes its turn on each link it passes, one copy after another in playing order, and
 * ends when both it and its turns are done (so copies that keep a link busy sum to exactly R).
 * With FAKECUDA_NVLINK_GBPS the double also replays what the 4×H200 did with gated streams (issue 24,
 * one2all --engine ce: three copies from one GPU, each timed by its own stream's events, each looked
 * as fast as alone): the copy engines of a GPU serve one stream at a time. A stream with copy-engine
 * copies queued gets the engines in queueing order and keeps them, events included, until its queue
 * is played or it waits for another stream's event; until then its work, its events too, waits.
 * FAKECUDA_XWAIT_US=U: a stream that waits for an event recorded on another GPU goes on U us after it
 * (the signal crossing between GPUs; 0 when unset). */
#include <stdlib.h>

#include "fakecuda.h"

enum { OP_COPY, OP_REC, OP_WAIT };

struct fop {
	int kind;
	double dur;               /* COPY: its own time, seconds */
	size_t n;                 /* COPY: bytes through the links */
	int host, eg, in, ce;     /* COPY: passes the host link; the NVLinks out of eg / into in (-1 none);
	                             runs on the copy engines */
	struct fevent *ev;        /* REC, WAIT */
	long seq;
	struct fop *next;
};

#define MAXS 4096
static struct fstream *streams[MAXS];
static long seq;
static int batch_open;
static double host_free, eg_free[MAXG], in_free[MAXG], ce_free[MAXG];
static struct fstream *ce_holder[MAXG];
static long ticket;

static double rate_env(const char *name)
{
	const char *v = getenv(name);

	return v && atof(v) > 0 ? atof(v) : 0;
}

void sched_add(struct fstream *s)
{
	for (int i = 0; i < MAXS; i++)
		if (!streams[i]) {
			streams[i] = s;
			return;
		}
}

void sched_remove(struct fstream *s)
{
	sched_settle();
	for (int i = 0; i < MAXS; i++)
		if (streams[i] == s)
			streams[i] = NULL;
	for (int g = 0; g < MAXG; g++)
		if (ce_holder[g] == s)
			ce_holder[g] = NULL;
}

static struct fop *push(struct fstream *s, int kind)
{
	struct fop *o = calloc(1, sizeof(*o));

	if (!o)
		abort();
	o->kind = kind;
	o->seq = ++seq;
	o->eg = o->in = -1;
	if (s->tail)
		s->tail->next = o;
	else
		s->head = o;
	s->tail = o;
	return o;
}

void sched_copy(struct fstream *s, double dur, size_t n, int host, int eg, int in, int ce)
{
	struct fop *o = push(s, OP_COPY);

	o->dur = dur;
	o->n = n;
	o->host = host;
	o->eg = eg;
	o->in = in;
	o->ce = ce;
}

void sched_record(struct fstream *s, struct fevent *e)
{
	e->recorded = 1;
	e->pending = 1;
	push(s, OP_REC)->ev = e;
}

void sched_wait(struct fstream *s, struct fevent *e)
{
	if (e->recorded)
		push(s, OP_WAIT)->ev = e;
}

void sched_gate(struct fstream *s)
{
	if (!batch_open) {              /* the first gate of a batch: what came before is done */
		sched_settle();
		host_free = 0;
		for (int g = 0; g < MAXG; g++)
			eg_free[g] = in_free[g] = ce_free[g] = 0, ce_holder[g] = NULL;
		batch_open = 1;
	}
	if (!s->head)
		s->t = 0;
}

/* A turn of n bytes on a link of rate R (GB/s) that is free at *free, for a copy ready at t0. */
static double turn(double *free, double t0, size_t n, double r)
{
	*free = (*free > t0 ? *free : t0) + (double)n / (r * 1e9);
	return *free;
}

static int blocked_wait(const struct fstream *s)
{
	return s->head && s->head->kind == OP_WAIT && s->head->ev->pending;
}

static void release(struct fstream *s)
{
	if (ce_holder[s->dev] == s) {
		ce_holder[s->dev] = NULL;
		ce_free[s->dev] = s->t;
		s->ticket = ++ticket;   /* back of the queue */
	}
}

/* Whether s may play its next op now (serial: the copy engines serve one stream at a time). */
static int can_play(struct fstream *s, int serial)
{
	if (blocked_wait(s)) {
		release(s);              /* a stream that waits yields the engines */
		return 0;
	}
	if (!serial || !s->cebound || ce_holder[s->dev] == s)
		return 1;
	if (ce_holder[s->dev])
		return 0;
	for (int i = 0; i < MAXS; i++) {
		struct fstream *o = streams[i];

		if (o && o != s && o->cebound && o->dev == s->dev && o->head && !blocked_wait(o) && o->ticket < s->ticket)
			return 0;
	}
	return 1;
}

static void play(struct fstream *s, int serial, double nvl, double host, double xwait)
{
	struct fop *o = s->head;
	double end;

	if (serial && s->cebound && ce_holder[s->dev] != s) {
		ce_holder[s->dev] = s;
		if (s->t < ce_free[s->dev])
			s->t = ce_free[s->dev];
	}
	s->head = o->next;
	if (!s->head)
		s->tail = NULL;
	switch (o->kind) {
	case OP_REC:
		o->ev->t = s->t;
		o->ev->dev = s->dev;
		o->ev->pending = 0;
		break;
	case OP_WAIT:              /* an event of another GPU: its signal crosses to this one (xwait) */
		if (o->ev->t + (o->ev->dev != s->dev ? xwait : 0) > s->t)
			s->t = o->ev->t + (o->ev->dev != s->dev ? xwait : 0);
		break;
	case OP_COPY:
		end = s->t + o->dur;
		if (o->host && host > 0 && turn(&host_free, s->t, o->n, host) > end)
			end = host_free;
		if (o->eg >= 0 && nvl > 0 && turn(&eg_free[o->eg], s->t, o->n, nvl) > end)
			end = eg_free[o->eg];
		if (o->in >= 0 && nvl > 0 && turn(&in_free[o->in], s->t, o->n, nvl) > end)
			end = in_free[o->in];
		s->t = end;
		break;
	}
	free(o);
	if (!s->head && serial && ce_holder[s->dev] == s) {
		release(s);
		s->cebound = 0;
	}
}

void sched_settle(void)
{
	double nvl = rate_env("FAKECUDA_NVLINK_GBPS"), host = rate_env("FAKECUDA_HOST_GBPS");
	double xwait = rate_env("FAKECUDA_XWAIT_US") * 1e-6;
	int serial = nvl > 0;

	batch_open = 0;
	for (int i = 0; i < MAXS; i++) {
		struct fstream *s = streams[i];

		if (!s || !s->head)
			continue;
		s->cebound = 0;
		for (struct fop *o = s->head; o; o = o->next)
			s->cebound |= o->kind == OP_COPY && o->ce;
		s->ticket = s->head->seq;
	}
	for (;;) {
		struct fstream *best = NULL, *any = NULL;

		for (int i = 0; i < MAXS; i++) {
			struct fstream *s = streams[i];

			if (!s || !s->head)
				continue;
			if (!any || s->head->seq < any->head->seq)
				any = s;
			if (can_play(s, serial) && (!best || s->head->seq < best->head->seq))
				best = s;
		}
		if (!any)
			return;
		if (!best) {                     /* a wait nothing will end: let it pass */
			best = any;
			if (best->head->kind == OP_WAIT)
				best->head->ev->pending = 0;
			ce_holder[best->dev] = NULL;
		}
		play(best, serial, nvl, host, xwait);
	}
}
