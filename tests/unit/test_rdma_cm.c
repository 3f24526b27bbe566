/* bench rdma's client and server (libcore/rdma*.c) in two threads of this process, connected through the
 * librdmacm test double (tests/fakeverbs: fakecm.c): the three operations with their data checked on the
 * side it landed, a server that goes away or falls silent, a hostile client's counts, and each refusal with
 * the fix it names. (Moved here from test_rdma.) */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpup2p/rdma.h"
#include "rdma/internal.h"   /* the control message, to send what a hostile client would */
#include "rdma_fx.h"

/* posts the test double has taken so far (tests/fakeverbs: fakeverbs_posts), -1 if it cannot say */
static long double_posts(void)
{
	void *lib = dlopen(verbs_path, RTLD_NOW | RTLD_NOLOAD);
	long (*f)(void) = lib ? (long (*)(void))dlsym(lib, "fakeverbs_posts") : NULL;
	long n = f ? f() : -1;

	if (lib)
		dlclose(lib);
	return n;
}

/* Client and server in two threads of this process, connected through the librdmacm double (fakecm.c). */
struct server {
	int mode;                      /* 0 serve, 1 close at once, 2 connect and never answer */
	int port, rc;
	struct gp_err e;
};

static void *server_main(void *arg)
{
	struct server *sv = arg;
	struct gp_rdma_opts o = { .role = GP_RDMA_SERVER, .gid_index = -1, .max_size = 65536, .timeout_s = 2,
				  .cm_port = sv->port, .root = &live };
	struct gp_rdma *s;

	gp_rdma_mem_parse("host", &o.mem);
	if ((sv->rc = gp_rdma_open(&s, &o, &sv->e)))
		return NULL;
	if (sv->mode == 0)
		sv->rc = gp_rdma_serve(s, &sv->e);
	else if (sv->mode == 2)
		sleep(2);
	gp_rdma_close(s);
	return NULL;
}

static uint64_t client_max = 65536;

static int client(struct gp_rdma **s, int port, const char *mem, struct gp_err *e)
{
	struct gp_rdma_opts o = { .role = GP_RDMA_CLIENT, .gid_index = -1, .max_size = client_max, .timeout_s = 1,
				  .cm_port = port, .host = "127.0.0.1", .root = &live };

	gp_rdma_mem_parse(mem, &o.mem);
	gp_err_clear(e);
	return gp_rdma_open(s, &o, e);
}

static void client_server(void)
{
	struct server sv = { .mode = 0, .port = 20000 + getpid() % 20000 };
	struct gp_rdma_result r;
	struct gp_rdma_info in;
	struct gp_rdma *s = NULL;
	struct gp_err e;
	pthread_t th;
	int rc;

	struct stat st0, st1;

	if (fcntl(0, F_GETFD) < 0)              /* fd 0 in use, whatever it is: a session must not close it */
		open("/dev/null", O_RDONLY);
	fstat(0, &st0);
	env_reset();
	pthread_create(&th, NULL, server_main, &sv);
	rc = client(&s, sv.port, "host", &e);
	CHECK(!rc, "client connects to the server through rdma_cm (%s)", e.msg);
	if (!rc) {
		gp_rdma_get_info(s, &in);
		CHECK_STR(in.nic.device, "rxe0", "  on the device rdma_cm chose");
		for (int op = GP_RDMA_WRITE; op <= GP_RDMA_SEND; op <<= 1)
			for (int lat = 0; lat < 2; lat++) {
				rc = gp_rdma_run(s, op, lat, lat ? 64 : 65536, 40, 2, 0, &r, &e);
				CHECK(!rc && r.verified == 1 && (lat ? r.us_median > 0 : r.gbits_avg > 0),
				      "client/server %s %s: measured, the data checked on the side it landed (%s)",
				      gp_rdma_op_name(op), lat ? "lat" : "bw", e.msg);
			}
		rc = gp_rdma_run(s, GP_RDMA_WRITE, 0, 4096, 1000, 1, 0, &r, &e);
		CHECK(!rc, "a second run of another size on the same connection (%s)", e.msg);
		gp_rdma_close(s);
	}
	pthread_join(th, NULL);
	CHECK(sv.rc == 0, "the server answered every run and ended when the client left (%s)", sv.e.msg);
	CHECK(fcntl(0, F_GETFD) >= 0 && !fstat(0, &st1) && st1.st_ino == st0.st_ino && st1.st_dev == st0.st_dev,
	      "client and server sessions closed without closing fd 0 (a queue pair side without a dma-buf)");

	/* wrong data landing on the server: the server finds it, the client reports it */
	sv = (struct server){ .mode = 0, .port = sv.port + 1 };
	pthread_create(&th, NULL, server_main, &sv);
	if (!client(&s, sv.port, "host", &e)) {
		setenv("FAKEVERBS_CORRUPT", "1", 1);
		rc = gp_rdma_run(s, GP_RDMA_WRITE, 0, 65536, 10, 1, 0, &r, &e);
		unsetenv("FAKEVERBS_CORRUPT");
		CHECK(rc == -EBADMSG && strstr(e.msg, "the server found wrong data at byte 0"),
		      "wrong data written into the server's memory is reported by the client (%s)", e.msg);
		gp_rdma_close(s);
	}
	pthread_join(th, NULL);

	/* the server goes away: a clean error, no hang */
	sv = (struct server){ .mode = 1, .port = sv.port + 1 };
	pthread_create(&th, NULL, server_main, &sv);
	if (!client(&s, sv.port, "host", &e)) {
		pthread_join(th, NULL);
		rc = gp_rdma_run(s, GP_RDMA_WRITE, 0, 65536, 10, 1, 0, &r, &e);
		CHECK(rc == -EIO && strstr(e.msg, "transport retry counter exceeded") && strstr(e.msg, "stopped answering"),
		      "server gone: the first send fails after its retries, named (%s)", e.msg);
		gp_rdma_close(s);
	} else {
		CHECK(0, "client to a closing server: %s", e.msg);
		pthread_join(th, NULL);
	}
	sv = (struct server){ .mode = 2, .port = sv.port + 1 };
	pthread_create(&th, NULL, server_main, &sv);
	if (!client(&s, sv.port, "host", &e)) {
		long n0;

		setenv("FAKEVERBS_STALL", "0", 1); /* from now on nothing completes, as with a real server gone */
		rc = gp_rdma_run(s, GP_RDMA_READ, 0, 65536, 10, 1, 0, &r, &e);
		CHECK(rc == -ETIMEDOUT && strstr(e.msg, "stopped answering"),
		      "server silent: ETIMEDOUT after --timeout 1 s (%s)", e.msg);
		n0 = double_posts();
		gp_rdma_close(s);
		unsetenv("FAKEVERBS_STALL");
		CHECK(n0 >= 0 && double_posts() == n0, "server silent: the close posts no goodbye nobody would "
		      "answer, so it waits no second --timeout (%ld posts before, %ld after)", n0, double_posts());
	}
	pthread_join(th, NULL);
	sv = (struct server){ .mode = 0, .port = sv.port + 1 };
	pthread_create(&th, NULL, server_main, &sv);
	client_max = 1 << 20;
	rc = client(&s, sv.port, "host", &e);
	client_max = 65536;
	CHECK(rc == -EINVAL && e.cls == GP_E_USAGE && strstr(e.msg, "start the server with gpup2p bench rdma --server --size 1048576"),
	      "a client wanting more than the server's buffer is told the size to give (%s)", e.msg);
	pthread_join(th, NULL);
	/* a client's run whose counts or operation are out of bounds: refused before use (EPROTO), where
	 * (long)iters * reps overflowed and a send run waited for 2^64 messages */
	for (int k = 0; k < 3; k++) {
		static const struct { uint32_t op, lat, iters, reps; const char *what; } bad[] = {
			{ GP_RDMA_SEND, 0, 0xFFFFFFFFu, 0xFFFFFFFFu, "2^32-1 x 2^32-1 sends" },
			{ GP_RDMA_WRITE, 1, GP_RDMA_MAX_ITERS, GP_RDMA_MAX_REPS, "1e11 latency round trips" },
			{ 7, 0, 10, 1, "operation 7" },
		};
		struct gp_rdma_ctl m = { .magic = GP_RDMA_MAGIC, .kind = 1, .op = bad[k].op, .lat = bad[k].lat,
					 .iters = bad[k].iters, .reps = bad[k].reps, .size = 4096, .seed = 1 };

		sv = (struct server){ .mode = 0, .port = sv.port + 1 };
		pthread_create(&th, NULL, server_main, &sv);
		if (!client(&s, sv.port, "host", &e)) {
			rc = gp_rdma_ctl_send(s, &m, &e);
			pthread_join(th, NULL);
			gp_rdma_close(s);
		} else {
			pthread_join(th, NULL);
		}
		CHECK(sv.rc == -EPROTO && strstr(sv.e.msg, "the client asked for operation") && strstr(sv.e.msg, "at most"),
		      "a client asking for %s: the server refuses it, EPROTO (%d %s)", bad[k].what, sv.rc, sv.e.msg);
	}
	sv.port++;
	rc = client(&s, sv.port + 1, "host", &e);
	CHECK(rc == -ECONNREFUSED && strstr(e.msg, "REJECTED") && strstr(e.msg, "--server"),
	      "no server on that port: refused, naming the fix (%s)", e.msg);
}

/* A slow link (the double's wire at 10 MB/s on an SDR 1x port): RDMA READ and WRITE bandwidth and READ
 * latency runs that last longer than the server's --timeout 2 on the double's clock complete nothing and
 * send nothing on the server's side, which must wait them out; a client silent after its run message is
 * still given up on. */
/* The allowance's arithmetic: a small run gets its time at 1/100 of a 100 Gb/s port (2 x (64 KiB /
 * 125 MB/s + 0.1 ms)); a huge one (1000 x 5 x 1 GiB: 11.9 hours) no more than 10 minutes. */
static void slack_cap(void)
{
	static struct gp_rdma s;
	double small, huge;

	s.info.port_gbits = 100;
	small = gp_rdma_slack(&s, 2, 64 << 10, 0);
	huge = gp_rdma_slack(&s, 5000, 1ULL << 30, 0);
	CHECK(small > 0.00124 && small < 0.00126 && huge == 600, "slow-link allowance: 64K x 2 %.5f s, 1G x 5000 "
	      "capped at %.0f s", small, huge);
}

/* The client's part in against_server: a run message for a small write, then nothing. */
static int ask_and_fall_silent(struct gp_rdma *s, struct gp_err *e)
{
	struct gp_rdma_ctl m = { .magic = GP_RDMA_MAGIC, .kind = 1, .op = GP_RDMA_WRITE, .iters = 1, .reps = 1,
				 .size = 4096, .seed = 1 };

	return gp_rdma_ctl_send(s, &m, e);
}

/* The client's part in against_server: a write run of 200 x 2 x 64 KiB, then nothing. */
static int write_run(struct gp_rdma *s, struct gp_err *e)
{
	struct gp_rdma_result r;

	return gp_rdma_run(s, GP_RDMA_WRITE, 0, 65536, 200, 2, 0, &r, e);
}

/* A server on port (sv: its outcome) and a client that does act and stays connected until the server
 * ended: act's rc, or the client's when it could not connect. */
static int against_server(struct server *sv, int port, int (*act)(struct gp_rdma *, struct gp_err *),
			  struct gp_err *e)
{
	struct gp_rdma *s = NULL;
	pthread_t th;
	int rc;

	*sv = (struct server){ .mode = 0, .port = port };
	pthread_create(&th, NULL, server_main, sv);
	if (!(rc = client(&s, port, "host", e)))
		rc = act(s, e);
	pthread_join(th, NULL);
	if (s)
		gp_rdma_close(s);
	return rc;
}

static void slow_link(void)
{
	static const struct { int op, lat, iters; } run[] = { { GP_RDMA_WRITE, 0, 200 }, { GP_RDMA_READ, 0, 200 },
		{ GP_RDMA_READ, 1, 200 } };
	struct server sv = { .mode = 0, .port = 21000 + getpid() % 20000 };
	struct gp_rdma_result r;
	struct gp_rdma *s = NULL;
	struct gp_err e;
	pthread_t th;
	int rc;

	env_reset();
	setenv("FAKEVERBS_SPEED", "1", 1);
	setenv("FAKEVERBS_WIDTH", "1", 1);
	setenv("FAKEVERBS_GBPS", "0.01", 1);
	pthread_create(&th, NULL, server_main, &sv);
	rc = client(&s, sv.port, "host", &e);
	CHECK(!rc, "slow link: the client connects (%s)", e.msg);
	for (size_t k = 0; !rc && k < sizeof(run) / sizeof(run[0]); k++) {
		double sec;

		rc = gp_rdma_run(s, run[k].op, run[k].lat, 65536, run[k].iters, 2, 0, &r, &e);
		sec = run[k].lat ? r.us_median * 2 * run[k].iters / 1e6 : 65536.0 * run[k].iters * 2 / (r.gbps * 1e9);
		CHECK(!rc && r.verified == 1 && sec > 2.5, "slow link: %s %s of %.1f s on the double's clock, past the "
		      "server's --timeout 2: measured and checked (%s)", gp_rdma_op_name(run[k].op),
		      run[k].lat ? "lat" : "bw", rc ? 0 : sec, e.msg);
	}
	if (s)
		gp_rdma_close(s);
	pthread_join(th, NULL);
	CHECK(sv.rc == 0, "slow link: the server waited out the one-sided runs and served them all (%s)", sv.e.msg);

	/* a client that asks for a small write run and then falls silent: the server still gives up */
	rc = against_server(&sv, sv.port + 1, ask_and_fall_silent, &e);
	CHECK(!rc && sv.rc == -ETIMEDOUT && strstr(sv.e.msg, "stopped answering"),
	      "a client silent after its run: the server gives up, ETIMEDOUT (%s)", sv.e.msg);

	/* a client silent after a long write run that went through: the allowance was that run's, the
	 * server gives up after --timeout alone (with the run's allowance left in place: 2 + 10.5 s) */
	rc = against_server(&sv, sv.port + 1, write_run, &e);
	CHECK(!rc && sv.rc == -ETIMEDOUT && strstr(sv.e.msg, "for 2 s: the peer stopped answering"),
	      "a client silent after a long one-sided run: the server gives up after --timeout alone (%s)", sv.e.msg);

	/* a link far slower than what the server allows for (0.5 MB/s: a fifth of 1/100 of SDR 1x's 2 Gb/s);
	 * last: the double's one wire stays busy with the posts of the run the server gave up on */
	setenv("FAKEVERBS_GBPS", "0.0005", 1);
	rc = against_server(&sv, sv.port + 1, write_run, &e);
	CHECK(rc && sv.rc == -ETIMEDOUT && strstr(sv.e.msg, "s for the peer's operations at a slow link's rate)"),
	      "a link slower than 1/100 of its port's rate: the server gives up after --timeout and the time "
	      "allowed (%s)", sv.e.msg);
	unsetenv("FAKEVERBS_SPEED");
	unsetenv("FAKEVERBS_WIDTH");
	unsetenv("FAKEVERBS_GBPS");
}

int main(void)
{
	rdma_fx_init();
	client_server();
	slack_cap();
	slow_link();
	rmdir(tmproot);
	return unit_done();
}
