/* gpup2p — the kernels that the GPU's own cores run, as PTX text: the driver compiles it for whatever GPU
 * it finds (cuModuleLoadData), so the build needs no CUDA compiler. PTX ISA 7.0 / sm_70: every GPU that
 * a driver of CUDA 11.0 or later runs, Volta onwards. tests/cli/test_ptx.sh assembles it with ptxas.
 *
 * gp_copy16(dst, src, n16, tail, reps): copy n16 16-byte words and then `tail` bytes (< 16) from src
 *   to dst, `reps` times over (0 as 1). Grid-stride: thread t of T copies words t, t+T, t+2T, ...;
 *   eight of them at a time (eight 16-byte loads in flight before the eight stores), then one at a time,
 *   then threads 0..tail-1 one byte each; then the next pass from word t again, so that every pass
 *   streams the whole buffer (a thread never copies a word twice in a row). Passes in one launch have
 *   no gap between them, where launches have one each (its ramp down and up). src and dst must be
 *   16-byte aligned (the caller checks).
 * gp_copy_duplex(a, b, n16, tail): both directions at once between two buffers of n16 16-byte words and
 *   `tail` bytes (< 16), as one kernel: the buffers are cut into stripes of 512 bytes (32 words); even
 *   stripes are copied from a to b, odd stripes from b to a, so that after the copy both hold what each
 *   held in the stripes it gives. Warp w of the grid copies stripes of w's parity only: thread t copies
 *   words t, t+T, ... (eight at a time, then one at a time), and with T a multiple of 64 (the caller's
 *   block is) word t + kT is in a stripe of the same parity as warp t / 32. The tail bytes go the way
 *   of the stripe they are in (threads 0..tail-1, one byte each). Loads and stores cache in L2 only
 *   (.cg): each SM's accesses never come back. a and b 16-byte aligned.
 * gp_chase(start, hops, out, block): the one thread of block `block` follows a chain of 64-bit pointers
 *   `hops` times (each load's address is the value the previous one returned), reading %globaltimer (ns)
 *   before and after; out[0] = the last pointer, out[1] = the nanoseconds. Every other block returns at
 *   once: launched with one block per SM, the chase runs on the SM the hardware gives that block.
 * gp_copy_bulk (its own module, gp_ptx_bulk_text: PTX ISA 8.0 / sm_90, Hopper onwards): see below. */
#include "gpup2p/smcopy.h"
#include "cuda/ptx.h"

const char gp_ptx_copy_name[] = "gp_copy16";
const char gp_ptx_chase_name[] = "gp_chase";
const char gp_ptx_duplex_name[] = "gp_copy_duplex";
const char gp_ptx_bulk_name[] = "gp_copy_bulk";

/* the copy's loads and stores (cache operators: tests/perf/sm_compare.sh compared them) */
#ifndef GP_PTX_LD
#define GP_PTX_LD "ld.global"
#endif
#ifndef GP_PTX_ST
#define GP_PTX_ST "st.global"
#endif
#ifndef GP_PTX_DLD
#define GP_PTX_DLD "ld.global.cg"
#endif
#ifndef GP_PTX_DST
#define GP_PTX_DST "st.global.cg"
#endif

/* The copy kernels' common parts. HEAD(p1, p2): rd1, rd2 the first two parameters (global), rd3 n16,
 * r1 tail; rd4 = t, rd6 = T, rd7 = step (16 T bytes), rd8 = off (16 t), rd9 = end (16 n16), rd10 = 7
 * steps, rd11 = 8 steps. */
#define HEAD(p1, p2) \
	"\tld.param.u64 %rd1, [" p1 "];\n" \
	"\tld.param.u64 %rd2, [" p2 "];\n" \
	"\tld.param.u64 %rd3, [p_n16];\n" \
	"\tld.param.u32 %r1, [p_tail];\n" \
	"\tcvta.to.global.u64 %rd1, %rd1;\n" \
	"\tcvta.to.global.u64 %rd2, %rd2;\n" \
	GP_PTX_THREAD \
	"\tshl.b64 %rd7, %rd6, 4;\n" \
	"\tshl.b64 %rd8, %rd4, 4;\n" \
	"\tshl.b64 %rd9, %rd3, 4;\n" \
	"\tmul.lo.u64 %rd10, %rd7, 7;\n" \
	"\tshl.b64 %rd11, %rd7, 3;\n"

/* four loads of 16 bytes, a step apart from the address in rd13, into v[a..a+15] (rd15-rd17 scratch) */
#define LD4(ld, a, b, c, d) \
	"\tadd.u64 %rd15, %rd13, %rd7;\n" \
	"\tadd.u64 %rd16, %rd15, %rd7;\n" \
	"\tadd.u64 %rd17, %rd16, %rd7;\n" \
	"\t" ld ".v4.u32 {" a "}, [%rd13];\n" \
	"\t" ld ".v4.u32 {" b "}, [%rd15];\n" \
	"\t" ld ".v4.u32 {" c "}, [%rd16];\n" \
	"\t" ld ".v4.u32 {" d "}, [%rd17];\n"
/* four stores, a step apart from the address in rd14 (rd18-rd20 scratch) */
#define ST4(st, a, b, c, d) \
	"\tadd.u64 %rd18, %rd14, %rd7;\n" \
	"\tadd.u64 %rd19, %rd18, %rd7;\n" \
	"\tadd.u64 %rd20, %rd19, %rd7;\n" \
	"\t" st ".v4.u32 [%rd14], {" a "};\n" \
	"\t" st ".v4.u32 [%rd18], {" b "};\n" \
	"\t" st ".v4.u32 [%rd19], {" c "};\n" \
	"\t" st ".v4.u32 [%rd20], {" d "};\n"
#define V0 "%v0, %v1, %v2, %v3"
#define V1 "%v4, %v5, %v6, %v7"
#define V2 "%v8, %v9, %v10, %v11"
#define V3 "%v12, %v13, %v14, %v15"
#define V4 "%v16, %v17, %v18, %v19"
#define V5 "%v20, %v21, %v22, %v23"
#define V6 "%v24, %v25, %v26, %v27"
#define V7 "%v28, %v29, %v30, %v31"

/* The grid-stride loops from src to dst (registers): label L8 eight words at a time while the eighth is
 * inside, then L1 one at a time, then on to `next`. */
#define LOOPS(L8, L1, next, ld, st, src, dst) \
	L8 ":\n" \
	"\tadd.u64 %rd12, %rd8, %rd10;\n" \
	"\tsetp.ge.u64 %p1, %rd12, %rd9;\n" \
	"\t@%p1 bra " L1 ";\n" \
	"\tadd.u64 %rd13, " src ", %rd8;\n" \
	"\tadd.u64 %rd14, " dst ", %rd8;\n" \
	LD4(ld, V0, V1, V2, V3) \
	"\tadd.u64 %rd13, %rd17, %rd7;\n" \
	LD4(ld, V4, V5, V6, V7) \
	ST4(st, V0, V1, V2, V3) \
	"\tadd.u64 %rd14, %rd20, %rd7;\n" \
	ST4(st, V4, V5, V6, V7) \
	"\tadd.u64 %rd8, %rd8, %rd11;\n" \
	"\tbra.uni " L8 ";\n" \
	L1 ":\n" \
	"\tsetp.ge.u64 %p2, %rd8, %rd9;\n" \
	"\t@%p2 bra " next ";\n" \
	"\tadd.u64 %rd13, " src ", %rd8;\n" \
	"\tadd.u64 %rd14, " dst ", %rd8;\n" \
	"\t" ld ".v4.u32 {" V0 "}, [%rd13];\n" \
	"\t" st ".v4.u32 [%rd14], {" V0 "};\n" \
	"\tadd.u64 %rd8, %rd8, %rd7;\n" \
	"\tbra.uni " L1 ";\n"

/* the tail: thread t < tail copies byte 16 n16 + t from src to dst (registers), else on to `skip` */
#define TAIL(skip, src, dst) \
	"\tcvt.u64.u32 %rd21, %r1;\n" \
	"\tsetp.ge.u64 %p3, %rd4, %rd21;\n" \
	"\t@%p3 bra " skip ";\n" \
	"\tadd.u64 %rd22, %rd9, %rd4;\n" \
	"\tadd.u64 %rd13, " src ", %rd22;\n" \
	"\tadd.u64 %rd14, " dst ", %rd22;\n" \
	"\tld.global.u8 %h1, [%rd13];\n" \
	"\tst.global.u8 [%rd14], %h1;\n"

/* the copy kernels' parameters: two buffers, n16, tail, and `more` (further parameters, "" none) */
#define COPY_PARAMS(p1, p2, more) \
	"\t.param .u64 " p1 ",\n" \
	"\t.param .u64 " p2 ",\n" \
	"\t.param .u64 p_n16,\n" \
	"\t.param .u32 p_tail" more "\n" \
	")\n" \
	"{\n" \
	"\t.reg .pred %p<4>;\n" \
	"\t.reg .b16 %h<2>;\n" \
	"\t.reg .b32 %r<8>;\n" \
	"\t.reg .b32 %v<32>;\n" \
	"\t.reg .b64 %rd<28>;\n" \
	"\n"

const char gp_ptx_text[] =
	".version 7.0\n"
	".target sm_70\n"
	".address_size 64\n"
	"\n"
	".visible .entry gp_copy16(\n"
	COPY_PARAMS("p_dst", "p_src", ",\n\t.param .u32 p_reps")
	HEAD("p_dst", "p_src")
	"\tld.param.u32 %r6, [p_reps];\n"
	"\tmov.u64 %rd23, %rd8;\n"                /* rd23: the thread's first word, each pass's start */
	LOOPS("LOOP8", "LOOP1", "BYTES", GP_PTX_LD, GP_PTX_ST, "%rd2", "%rd1")
	"BYTES:\n"
	TAIL("PASS", "%rd2", "%rd1")
	"PASS:\n"                                 /* another pass while reps > 1 */
	"\tsetp.le.u32 %p1, %r6, 1;\n"
	"\t@%p1 bra DONE;\n"
	"\tsub.u32 %r6, %r6, 1;\n"
	"\tmov.u64 %rd8, %rd23;\n"
	"\tbra.uni LOOP8;\n"
	"DONE:\n"
	"\tret;\n"
	"}\n"
	"\n"
	".visible .entry gp_copy_duplex(\n"
	COPY_PARAMS("p_a", "p_b", "")
	HEAD("p_a", "p_b")
	"\tshr.u64 %rd5, %rd4, 5;\n"
	"\tand.b64 %rd5, %rd5, 1;\n"
	"\tsetp.ne.u64 %p3, %rd5, 0;\n"          /* p3: an odd warp, b to a */
	"\tselp.b64 %rd24, %rd2, %rd1, %p3;\n"   /* rd24 = its source */
	"\tselp.b64 %rd25, %rd1, %rd2, %p3;\n"   /* rd25 = its destination */
	LOOPS("DLOOP8", "DLOOP1", "DBYTES", GP_PTX_DLD, GP_PTX_DST, "%rd24", "%rd25")
	"DBYTES:\n"                              /* the tail: the way of word n16's stripe */
	"\tshr.u64 %rd26, %rd3, 5;\n"
	"\tand.b64 %rd26, %rd26, 1;\n"
	"\tsetp.ne.u64 %p3, %rd26, 0;\n"
	"\tselp.b64 %rd24, %rd2, %rd1, %p3;\n"
	"\tselp.b64 %rd25, %rd1, %rd2, %p3;\n"
	TAIL("DDONE", "%rd24", "%rd25")
	"DDONE:\n"
	"\tret;\n"
	"}\n"
	"\n"
	".visible .entry gp_chase(\n"
	"\t.param .u64 p_start,\n"
	"\t.param .u64 p_hops,\n"
	"\t.param .u64 p_out,\n"
	"\t.param .u32 p_block\n"
	")\n"
	"{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b32 %r<3>;\n"
	"\t.reg .b64 %rd<8>;\n"
	"\n"
	"\tld.param.u32 %r1, [p_block];\n"
	"\tmov.u32 %r2, %ctaid.x;\n"
	"\tsetp.ne.u32 %p1, %r1, %r2;\n"
	"\t@%p1 bra CDONE;\n"
	"\tld.param.u64 %rd1, [p_start];\n"
	"\tld.param.u64 %rd2, [p_hops];\n"
	"\tld.param.u64 %rd3, [p_out];\n"
	"\tcvta.to.global.u64 %rd3, %rd3;\n"
	"\tmov.u64 %rd4, %globaltimer;\n"
	"\tsetp.eq.u64 %p1, %rd2, 0;\n"
	"\t@%p1 bra CHASED;\n"
	"CHASE:\n"
	"\tld.global.u64 %rd1, [%rd1];\n"
	"\tsub.u64 %rd2, %rd2, 1;\n"
	"\tsetp.ne.u64 %p1, %rd2, 0;\n"
	"\t@%p1 bra CHASE;\n"
	"CHASED:\n"
	"\tmov.u64 %rd5, %globaltimer;\n"
	"\tsub.u64 %rd6, %rd5, %rd4;\n"
	"\tst.global.u64 [%rd3], %rd1;\n"
	"\tst.global.u64 [%rd3+8], %rd6;\n"
	"CDONE:\n"
	"\tret;\n"
	"}\n";

/* gp_copy_bulk(dst, src, nch, rem, ctr): copy nch chunks of GP_SM_BULK_CHUNK bytes and then rem bytes
 * (< a chunk) from src to dst, with the bulk-copy unit (TMA) of each SM. Blocks of 64 threads, one per
 * SM, GP_SM_BULK_STAGES chunk buffers of dynamic shared memory each.
 *   Thread 0 of every block runs a pipeline: a chunk is loaded into a free buffer (cp.async.bulk, done
 *   when the buffer's mbarrier has its bytes), stored from it to dst (a bulk store), and the buffer is
 *   loaded again once that store has read it. The chunks come in order from a counter in GPU memory
 *   (*ctr, atom.add), not by block number: all SMs move through memory as one front, whatever the drift
 *   between blocks. That ordering is what lets SM copies reach the copy engine's bandwidth within a GPU
 *   (tests/perf/sm_tune.py, family tmad); each buffer's chunk number is kept in shared memory.
 *   Every block asks until it is told a number >= nch, so there are exactly nch + blocks asks: the one
 *   that gets nch + blocks - 1 is the last, and that block puts *ctr back to 0 for the next launch
 *   (a relaxed store at GPU scope: every other ask has happened, none follows in this launch; *ctr
 *   must be 0 at launch: one counter per stream, whose kernels run one after another).
 *   Warp 1 of block 0 copies the rem bytes after the chunks: 16-byte words, then single bytes.
 * src, dst 16-byte aligned; n = nch * chunk + rem. */
#define GP_STR_(x) #x
#define GP_STR(x) GP_STR_(x)
#define CH GP_STR(GP_SM_BULK_CHUNK)
#if GP_SM_BULK_STAGES != 3
#error "gp_copy_bulk's prologue issues exactly three loads"
#endif
/* ask for a chunk: %rd6 = the number; the last ask past the end resets the counter */
#define ASK_PRO(k) \
	"\tatom.global.add.u64 %rd6, [%rd4], 1;\n" \
	"\tst.shared.u64 [%r11+" #k "*8], %rd6;\n" \
	"\tsetp.ge.u64 %p2, %rd6, %rd3;\n" \
	"\t@%p2 bra PRO_FAIL;\n" \
	"\tmul.lo.u64 %rd7, %rd6, " CH ";\n" \
	"\tadd.u64 %rd8, %rd2, %rd7;\n" \
	"\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd9, [%r5+" #k "*8], " CH ";\n" \
	"\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4+" #k "*" CH "], [%rd8], " CH \
	", [%r5+" #k "*8];\n"

const char gp_ptx_bulk_text[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	".extern .shared .align 128 .b8 buf[];\n"
	".shared .align 8 .b64 bar[3];\n"
	".shared .align 8 .b64 idx[3];\n"
	"\n"
	".visible .entry gp_copy_bulk(\n"
	"\t.param .u64 p_dst,\n"
	"\t.param .u64 p_src,\n"
	"\t.param .u64 p_nch,\n"
	"\t.param .u64 p_rem,\n"
	"\t.param .u64 p_ctr\n"
	")\n"
	"{\n"
	"\t.reg .pred %p<10>;\n"
	"\t.reg .b16 %h<2>;\n"
	"\t.reg .b32 %r<20>;\n"
	"\t.reg .b32 %v<4>;\n"
	"\t.reg .b64 %rd<32>;\n"
	"\n"
	"\tld.param.u64 %rd1, [p_dst];\n"
	"\tld.param.u64 %rd2, [p_src];\n"
	"\tld.param.u64 %rd3, [p_nch];\n"
	"\tld.param.u64 %rd23, [p_rem];\n"
	"\tld.param.u64 %rd4, [p_ctr];\n"
	"\tcvta.to.global.u64 %rd1, %rd1;\n"
	"\tcvta.to.global.u64 %rd2, %rd2;\n"
	"\tcvta.to.global.u64 %rd4, %rd4;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tsetp.eq.u32 %p1, %r1, 0;\n"
	"\t@%p1 bra PIPE;\n"
	"\tmov.u32 %r2, %ctaid.x;\n"
	"\tsetp.ne.u32 %p1, %r2, 0;\n"
	"\t@%p1 bra DONE;\n"
	"\tsetp.lt.u32 %p1, %r1, 32;\n"
	"\t@%p1 bra DONE;\n"
	/* the rem bytes: warp 1 of block 0 */
	"\tsub.u32 %r17, %r1, 32;\n"
	"\tcvt.u64.u32 %rd24, %r17;\n"              /* rd24 = lane */
	"\tmul.lo.u64 %rd25, %rd3, " CH ";\n"       /* rd25 = where the rest begins */
	"\tshr.u64 %rd26, %rd23, 4;\n"
	"\tshl.b64 %rd27, %rd26, 4;\n"
	"\tadd.u64 %rd27, %rd27, %rd25;\n"          /* rd27 = end of its 16-byte words */
	"\tshl.b64 %rd28, %rd24, 4;\n"
	"\tadd.u64 %rd28, %rd28, %rd25;\n"          /* rd28 = this lane's word */
	"REMW:\n"
	"\tsetp.ge.u64 %p2, %rd28, %rd27;\n"
	"\t@%p2 bra REMB;\n"
	"\tadd.u64 %rd29, %rd2, %rd28;\n"
	"\tadd.u64 %rd30, %rd1, %rd28;\n"
	"\tld.global.v4.u32 {%v0, %v1, %v2, %v3}, [%rd29];\n"
	"\tst.global.v4.u32 [%rd30], {%v0, %v1, %v2, %v3};\n"
	"\tadd.u64 %rd28, %rd28, 512;\n"
	"\tbra.uni REMW;\n"
	"REMB:\n"
	"\tand.b64 %rd29, %rd23, 15;\n"
	"\tsetp.ge.u64 %p2, %rd24, %rd29;\n"
	"\t@%p2 bra DONE;\n"
	"\tadd.u64 %rd29, %rd27, %rd24;\n"
	"\tadd.u64 %rd30, %rd2, %rd29;\n"
	"\tadd.u64 %rd31, %rd1, %rd29;\n"
	"\tld.global.u8 %h1, [%rd30];\n"
	"\tst.global.u8 [%rd31], %h1;\n"
	"\tbra.uni DONE;\n"
	/* the pipeline: thread 0 of each block */
	"PIPE:\n"
	"\tmov.u32 %r3, %nctaid.x;\n"
	"\tcvt.u64.u32 %rd5, %r3;\n"
	"\tadd.u64 %rd21, %rd3, %rd5;\n"
	"\tsub.u64 %rd21, %rd21, 1;\n"              /* rd21 = the last ask's number */
	"\tmov.u32 %r4, buf;\n"
	"\tmov.u32 %r5, bar;\n"
	"\tmov.u32 %r11, idx;\n"
	"\tmov.u32 %r10, 1;\n"                      /* r10 = still asking */
	"\tmbarrier.init.shared::cta.b64 [%r5], 1;\n"
	"\tmbarrier.init.shared::cta.b64 [%r5+8], 1;\n"
	"\tmbarrier.init.shared::cta.b64 [%r5+16], 1;\n"
	"\tfence.mbarrier_init.release.cluster;\n"
	"\tfence.proxy.async.shared::cta;\n"
	ASK_PRO(0)
	ASK_PRO(1)
	ASK_PRO(2)
	"\tbra.uni PRO_END;\n"
	"PRO_FAIL:\n"
	"\tmov.u32 %r10, 0;\n"
	"\tsetp.eq.u64 %p9, %rd6, %rd21;\n"
	"\t@%p9 st.relaxed.gpu.global.u64 [%rd4], 0;\n"
	"PRO_END:\n"
	"\tmov.u64 %rd10, 0;\n"                     /* rd10 = step j: buffer j % 3, its (j / 3)th use */
	"LOOP:\n"
	"\trem.u64 %rd12, %rd10, 3;\n"
	"\tdiv.u64 %rd13, %rd10, 3;\n"
	"\tand.b64 %rd13, %rd13, 1;\n"
	"\tcvt.u32.u64 %r6, %rd13;\n"               /* r6 = the mbarrier phase to wait for */
	"\tcvt.u32.u64 %r7, %rd12;\n"
	"\tshl.b32 %r12, %r7, 3;\n"
	"\tadd.u32 %r8, %r12, %r5;\n"               /* r8 = its mbarrier */
	"\tadd.u32 %r12, %r12, %r11;\n"             /* r12 = its chunk number's place */
	"\tld.shared.u64 %rd11, [%r12];\n"
	"\tsetp.ge.u64 %p3, %rd11, %rd3;\n"
	"\t@%p3 bra DRAIN;\n"                       /* past the end: every later buffer is too */
	"\tmul.lo.u32 %r9, %r7, " CH ";\n"
	"\tadd.u32 %r9, %r9, %r4;\n"                /* r9 = the buffer */
	"WAIT:\n"
	"\tmbarrier.try_wait.parity.shared::cta.b64 %p4, [%r8], %r6;\n"
	"\t@!%p4 bra WAIT;\n"
	"\tmul.lo.u64 %rd14, %rd11, " CH ";\n"
	"\tadd.u64 %rd15, %rd1, %rd14;\n"
	"\tcp.async.bulk.global.shared::cta.bulk_group [%rd15], [%r9], " CH ";\n"
	"\tcp.async.bulk.commit_group;\n"
	"\tsetp.eq.u32 %p5, %r10, 0;\n"
	"\t@%p5 bra STOP;\n"
	"\tatom.global.add.u64 %rd17, [%rd4], 1;\n"
	"\tst.shared.u64 [%r12], %rd17;\n"
	"\tsetp.ge.u64 %p6, %rd17, %rd3;\n"
	"\t@%p6 bra FAIL;\n"
	"\tcp.async.bulk.wait_group.read 0;\n"      /* the store has read the buffer */
	"\tmul.lo.u64 %rd18, %rd17, " CH ";\n"
	"\tadd.u64 %rd19, %rd2, %rd18;\n"
	"\tmbarrier.arrive.expect_tx.shared::cta.b64 %rd20, [%r8], " CH ";\n"
	"\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r9], [%rd19], " CH ", [%r8];\n"
	"\tbra.uni NEXT;\n"
	"FAIL:\n"
	"\tmov.u32 %r10, 0;\n"
	"\tsetp.eq.u64 %p9, %rd17, %rd21;\n"
	"\t@%p9 st.relaxed.gpu.global.u64 [%rd4], 0;\n"
	"\tbra.uni NEXT;\n"
	"STOP:\n"
	"\tst.shared.u64 [%r12], %rd3;\n"           /* asking is over: this buffer gets no chunk */
	"NEXT:\n"
	"\tadd.u64 %rd10, %rd10, 1;\n"
	"\tbra.uni LOOP;\n"
	"DRAIN:\n"
	"\tcp.async.bulk.wait_group 0;\n"
	"DONE:\n"
	"\tret;\n"
	"}\n";
