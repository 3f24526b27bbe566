/* gpup2p — in-process fuzz target "rdma": the control messages of bench rdma --server/--connect as
 * libcore/rdma decodes them (cm.c, serve.c): a client's run request on the server (decode, then the
 * checks before anything is used), the server's replies on the client, the private data of a
 * connection on both sides. Checks: what passes the server's check stays within rdma.h's bounds.
 *
 * Input: [buffer size: 8 bytes LE][kind expected][bytes of the message or private data...] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rdma/internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_rdma_ctl m;
	struct gp_rdma_pdata pd;
	struct gp_err e = { 0 };
	uint64_t max = 0;
	uint32_t kind;
	const uint8_t *msg;
	size_t n;
	uint8_t *copy;

	if (size < 9)
		return 0;
	memcpy(&max, data, 8);
	kind = data[8] % 7;
	msg = data + 9;
	n = size - 9;
	/* the bytes as they arrive: a heap buffer of exactly n bytes, so that a read past them is reported */
	if (!(copy = malloc(n ? n : 1)))
		abort();
	memcpy(copy, msg, n);
	/* the server: any kind, then a run is checked before its numbers are used */
	if (!gp_rdma_ctl_decode(copy, n, 0, &m, &e) && m.kind == 1 && !gp_rdma_run_check(&m, max, &e)) {
		uint64_t total = (uint64_t)m.iters * m.reps;

		if ((m.op != GP_RDMA_WRITE && m.op != GP_RDMA_READ && m.op != GP_RDMA_SEND) || m.lat > 1 || !m.size ||
		    m.size > max || !m.iters || !m.reps || m.iters > GP_RDMA_MAX_ITERS || m.reps > GP_RDMA_MAX_REPS ||
		    (m.lat && total > GP_RDMA_MAX_SAMPLES))
			fz_fail("rdma", "the server took a run it cannot serve: op %u lat %u %u x %u of %llu bytes (buffer %llu)",
				m.op, m.lat, m.iters, m.reps, (unsigned long long)m.size, (unsigned long long)max);
	}
	/* the client: a reply of the kind it waits for, then the result's verdict */
	memset(&e, 0, sizeof(e));
	if (!gp_rdma_ctl_decode(copy, n, kind, &m, &e) && kind == 4) {
		struct gp_rdma_result r = { .op = 1 << (max % 3), .bytes = max, .iters = 1, .reps = 1 };
		int rc = gp_rdma_result_check(&m, &r, "node1", &e);

		if (rc && rc != -EBADMSG)
			fz_fail("rdma", "the client's result check returned %d", rc);
	}
	/* the private data of a connection, on either side */
	memset(&e, 0, sizeof(e));
	gp_rdma_pdata_decode(n ? copy : NULL, n, 1, max, &pd, &e);
	gp_rdma_pdata_decode(n ? copy : NULL, n, 0, max, &pd, &e);
	free(copy);
	return 0;
}
