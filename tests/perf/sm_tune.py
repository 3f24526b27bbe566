#!/usr/bin/env python3
"""Device-local SM copy kernels, side by side with the copy engine (cuMemcpyDtoDAsync, what nvbandwidth's
device_local_copy times), on one GPU: which load/store cache operators, unroll, address layout and launch
geometry reach the copy engine's bandwidth. PTX generated here, loaded with cuModuleLoadData, launched
with cuLaunchKernel through ctypes (no CUDA toolkit). Run on the GPU machine (device tool):
    [MODE=d2d|h2d|d2h] [FAMILY=tma,ld,l2,dyn,tmad] [LD_ONLY="U LAYOUT LD ST BLOCK"] [GRIDS=N,..] python3 tests/perf/sm_tune.py [SIZE_MiB] > $OUT/sm-tune.txt
Prints one line per variant (GB/s, median of REPS samples of ITERS copies, bytes copied / time, as
nvbandwidth counts) and the copy engine's figure measured between the variants. Not part of the build."""
import ctypes as C
import itertools
import os
import statistics
import sys

cu = C.CDLL("libcuda.so.1")
U64 = C.c_uint64


def ck(r, what):
    if r != 0:
        name = C.c_char_p()
        cu.cuGetErrorName(r, C.byref(name))
        raise RuntimeError("%s: %s (%d)" % (what, name.value.decode() if name.value else "?", r))


def ptx(unroll, layout, ld, st, version="7.8", target="sm_80"):
    """gp_tune(dst, src, n): copy n bytes (a multiple of 16). Super-iterations of U*T*16 bytes: thread t
    copies words at base + (t + k T) 16 (layout gs: grid-stride) or base + (W U 32 + k 32 + lane) 16
    (layout chunk: each warp W a contiguous U*512 bytes), k < U; the rest word by word, grid-stride."""
    u = unroll
    L = []
    a = L.append
    a(".version %s\n.target %s\n.address_size 64\n" % (version, target))
    a(".visible .entry gp_tune(.param .u64 p_dst, .param .u64 p_src, .param .u64 p_n)\n{")
    a("\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b32 %v<" + str(4 * u) + ">;\n\t.reg .b64 %rd<40>;")
    a("\tld.param.u64 %rd1, [p_dst];\n\tld.param.u64 %rd2, [p_src];\n\tld.param.u64 %rd3, [p_n];")
    a("\tcvta.to.global.u64 %rd1, %rd1;\n\tcvta.to.global.u64 %rd2, %rd2;")
    hint = "cache_hint" in ld or "cache_hint" in st
    if hint:  # L2 eviction policy for the whole buffer: evict_first (streamed data should not displace others)
        a("\t.reg .b64 %pol;\n\tcreatepolicy.fractional.L2::evict_first.b64 %pol, 1.0;")
    lp = ", %pol" if "cache_hint" in ld else ""
    sp = ", %pol" if "cache_hint" in st else ""
    a("\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\tmov.u32 %r4, %nctaid.x;")
    a("\tmul.wide.u32 %rd4, %r1, %r2;\n\tcvt.u64.u32 %rd5, %r3;\n\tadd.u64 %rd4, %rd4, %rd5;")  # t
    a("\tmul.wide.u32 %rd6, %r4, %r2;")  # T
    a("\tshl.b64 %rd7, %rd6, 4;")  # 16T
    a("\tmul.lo.u64 %rd8, %rd7, " + str(u) + ";")  # super = 16 T U
    if layout == "gs":
        a("\tshl.b64 %rd9, %rd4, 4;")  # o0 = 16 t
        a("\tmov.u64 %rd10, %rd7;")  # sk = 16T
    else:
        a("\tshr.u64 %rd11, %rd4, 5;\n\tand.b64 %rd12, %rd4, 31;")  # W, lane
        a("\tmul.lo.u64 %rd11, %rd11, " + str(u * 32) + ";\n\tadd.u64 %rd11, %rd11, %rd12;\n\tshl.b64 %rd9, %rd11, 4;")
        a("\tmov.u64 %rd10, 512;")
    a("\tmov.u64 %rd13, 0;")  # base
    a("MAIN:\n\tadd.u64 %rd14, %rd13, %rd8;\n\tsetp.gt.u64 %p1, %rd14, %rd3;\n\t@%p1 bra REM;")
    a("\tadd.u64 %rd15, %rd13, %rd9;\n\tadd.u64 %rd16, %rd2, %rd15;\n\tadd.u64 %rd17, %rd1, %rd15;")
    for k in range(u):
        if layout == "gs":
            if k:
                a("\tadd.u64 %rd16, %rd16, %rd10;")
            a("\t%s.v4.u32 {%%v%d, %%v%d, %%v%d, %%v%d}, [%%rd16]%s;" % (ld, 4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3, lp))
        else:
            a("\t%s.v4.u32 {%%v%d, %%v%d, %%v%d, %%v%d}, [%%rd16+%d]%s;" % (ld, 4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3, 512 * k, lp))
    for k in range(u):
        if layout == "gs":
            if k:
                a("\tadd.u64 %rd17, %rd17, %rd10;")
            a("\t%s.v4.u32 [%%rd17], {%%v%d, %%v%d, %%v%d, %%v%d}%s;" % (st, 4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3, sp))
        else:
            a("\t%s.v4.u32 [%%rd17+%d], {%%v%d, %%v%d, %%v%d, %%v%d}%s;" % (st, 512 * k, 4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3, sp))
    a("\tmov.u64 %rd13, %rd14;\n\tbra.uni MAIN;")
    a("REM:\n\tshl.b64 %rd18, %rd4, 4;\n\tadd.u64 %rd18, %rd18, %rd13;")
    a("R1:\n\tsetp.ge.u64 %p2, %rd18, %rd3;\n\t@%p2 bra DONE;")
    a("\tadd.u64 %rd19, %rd2, %rd18;\n\tadd.u64 %rd20, %rd1, %rd18;")
    a("\tld.global.v4.u32 {%v0, %v1, %v2, %v3}, [%rd19];\n\tst.global.v4.u32 [%rd20], {%v0, %v1, %v2, %v3};")
    a("\tadd.u64 %rd18, %rd18, %rd7;\n\tbra.uni R1;")
    a("DONE:\n\tret;\n}\n")
    return "\n".join(L)


def ptx_tma(ch, stages):
    """gp_tma(dst, src, nch): copy nch chunks of ch bytes with the Hopper bulk-copy engine (TMA, sm_90):
    thread 0 of each CTA moves chunks cta, cta+G, ... through `stages` shared-memory buffers: a bulk load
    completes on the stage's mbarrier, a bulk store from that buffer follows, and the next load into the
    buffer waits until the store has read it."""
    S = stages
    L = []
    a = L.append
    a(".version 8.0\n.target sm_90\n.address_size 64\n")
    a(".extern .shared .align 128 .b8 buf[];")
    a(".shared .align 8 .b64 bar[%d];" % S)
    a(".visible .entry gp_tma(.param .u64 p_dst, .param .u64 p_src, .param .u64 p_nch)\n{")
    a("\t.reg .pred %p<8>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<32>;")
    a("\tld.param.u64 %rd1, [p_dst];\n\tld.param.u64 %rd2, [p_src];\n\tld.param.u64 %rd3, [p_nch];")
    a("\tcvta.to.global.u64 %rd1, %rd1;\n\tcvta.to.global.u64 %rd2, %rd2;")
    a("\tmov.u32 %r1, %tid.x;\n\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 bra DONE;")
    a("\tmov.u32 %r2, %ctaid.x;\n\tmov.u32 %r3, %nctaid.x;\n\tcvt.u64.u32 %rd4, %r2;\n\tcvt.u64.u32 %rd5, %r3;")
    a("\tmov.u32 %r4, buf;\n\tmov.u32 %r5, bar;")
    for k in range(S):
        a("\tmbarrier.init.shared::cta.b64 [%%r5+%d], 1;" % (8 * k))
    a("\tfence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;")
    for k in range(S):
        a("\tmul.lo.u64 %%rd6, %%rd5, %d;\n\tadd.u64 %%rd6, %%rd6, %%rd4;" % k)
        a("\tsetp.ge.u64 %p2, %rd6, %rd3;\n\t@%p2 bra PRO_END;")
        a("\tmul.lo.u64 %%rd7, %%rd6, %d;\n\tadd.u64 %%rd8, %%rd2, %%rd7;" % ch)
        a("\tmbarrier.arrive.expect_tx.shared::cta.b64 %%rd9, [%%r5+%d], %d;" % (8 * k, ch))
        a("\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%r4+%d], [%%rd8], %d, [%%r5+%d];"
          % (k * ch, ch, 8 * k))
    a("PRO_END:\n\tmov.u64 %rd10, 0;\n\tmov.u64 %rd11, %rd4;\n\tmul.lo.u64 %rd16, %rd5, " + str(S) + ";")
    a("LOOP:\n\tsetp.ge.u64 %p3, %rd11, %rd3;\n\t@%p3 bra DRAIN;")
    a("\trem.u64 %%rd12, %%rd10, %d;\n\tdiv.u64 %%rd13, %%rd10, %d;\n\tand.b64 %%rd13, %%rd13, 1;" % (S, S))
    a("\tcvt.u32.u64 %r6, %rd13;\n\tcvt.u32.u64 %r7, %rd12;")
    a("\tshl.b32 %r8, %r7, 3;\n\tadd.u32 %r8, %r8, %r5;")
    a("\tmul.lo.u32 %%r9, %%r7, %d;\n\tadd.u32 %%r9, %%r9, %%r4;" % ch)
    a("WAIT:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p4, [%r8], %r6;\n\t@!%p4 bra WAIT;")
    a("\tmul.lo.u64 %%rd14, %%rd11, %d;\n\tadd.u64 %%rd15, %%rd1, %%rd14;" % ch)
    a("\tcp.async.bulk.global.shared::cta.bulk_group [%%rd15], [%%r9], %d;\n\tcp.async.bulk.commit_group;" % ch)
    a("\tadd.u64 %rd17, %rd11, %rd16;\n\tsetp.ge.u64 %p5, %rd17, %rd3;\n\t@%p5 bra NEXT;")
    a("\tcp.async.bulk.wait_group.read 0;")
    a("\tmul.lo.u64 %%rd18, %%rd17, %d;\n\tadd.u64 %%rd19, %%rd2, %%rd18;" % ch)
    a("\tmbarrier.arrive.expect_tx.shared::cta.b64 %%rd20, [%%r8], %d;" % ch)
    a("\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%r9], [%%rd19], %d, [%%r8];" % ch)
    a("NEXT:\n\tadd.u64 %rd10, %rd10, 1;\n\tadd.u64 %rd11, %rd11, %rd5;\n\tbra.uni LOOP;")
    a("DRAIN:\n\tcp.async.bulk.wait_group 0;")
    a("DONE:\n\tret;\n}\n")
    return "\n".join(L)


def ptx_dyn(u, m, ld, st):
    """gp_dyn(dst, src, nch, ctr): warps take chunks of u*m*512 bytes in order from a global counter (lane 0's
    atom.add, broadcast by shfl), so the whole GPU walks memory as one sequential front whatever the CTAs'
    drift; each chunk is m rounds of u 16-byte loads per lane (all loads, then all stores); the next
    chunk's index is asked for between the loads and the stores of this one."""
    ch = u * m * 512
    L = []
    a = L.append
    a(".version 7.8\n.target sm_80\n.address_size 64\n")
    a(".visible .entry gp_dyn(.param .u64 p_dst, .param .u64 p_src, .param .u64 p_nch, .param .u64 p_ctr)\n{")
    a("\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b32 %v<" + str(4 * u) + ">;\n\t.reg .b64 %rd<24>;")
    a("\tld.param.u64 %rd1, [p_dst];\n\tld.param.u64 %rd2, [p_src];\n\tld.param.u64 %rd3, [p_nch];")
    a("\tld.param.u64 %rd4, [p_ctr];")
    a("\tcvta.to.global.u64 %rd1, %rd1;\n\tcvta.to.global.u64 %rd2, %rd2;\n\tcvta.to.global.u64 %rd4, %rd4;")
    a("\tmov.u32 %r1, %laneid;\n\tcvt.u64.u32 %rd5, %r1;\n\tshl.b64 %rd5, %rd5, 4;")
    a("\tsetp.eq.u32 %p1, %r1, 0;\n\tmov.u64 %rd6, 0;\n\tmov.u64 %rd10, 0;")
    a("\t@%p1 atom.global.add.u64 %rd6, [%rd4], 1;")

    def bcast(reg):
        a("\tmov.b64 {%%r2, %%r3}, %s;" % reg)
        a("\tshfl.sync.idx.b32 %r2, %r2, 0, 31, -1;\n\tshfl.sync.idx.b32 %r3, %r3, 0, 31, -1;")
        a("\tmov.b64 %rd6, {%r2, %r3};")
    bcast("%rd6")
    a("LOOP:\n\tsetp.ge.u64 %p2, %rd6, %rd3;\n\t@%p2 bra DONE;")
    a("\tmul.lo.u64 %%rd7, %%rd6, %d;\n\tadd.u64 %%rd7, %%rd7, %%rd5;" % ch)
    a("\tadd.u64 %rd8, %rd2, %rd7;\n\tadd.u64 %rd9, %rd1, %rd7;")
    for r in range(m):
        for k in range(u):
            a("\t%s.v4.u32 {%%v%d, %%v%d, %%v%d, %%v%d}, [%%rd8+%d];" % (ld, 4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3,
                                                                       512 * (r * u + k)))
        if r == 0:
            a("\t@%p1 atom.global.add.u64 %rd10, [%rd4], 1;")
        for k in range(u):
            a("\t%s.v4.u32 [%%rd9+%d], {%%v%d, %%v%d, %%v%d, %%v%d};" % (st, 512 * (r * u + k), 4 * k, 4 * k + 1,
                                                                       4 * k + 2, 4 * k + 3))
    bcast("%rd10")
    a("\tbra.uni LOOP;\nDONE:\n\tret;\n}\n")
    return "\n".join(L)


def ptx_tmad(ch, stages, early=False, lag=0, reset=False):
    """gp_tmad(dst, src, nch, ctr): the bulk-copy pipeline of gp_tma, but thread 0 of each CTA takes its
    chunks in order from a global counter (one sequential front for the whole GPU); each stage remembers
    its chunk in shared memory; a stage whose chunk is past the end stops the CTA. early: the next chunk
    is asked for before waiting on the current load; lag 1: a stage is refilled one step later (its
    store has had a step to read the shared memory); reset: the CTA whose failing ask is the last one
    puts the counter back to 0 for the next launch (CTAs in all = asks past the end)."""
    S = stages
    L = []
    a = L.append
    a(".version 8.0\n.target sm_90\n.address_size 64\n")
    a(".extern .shared .align 128 .b8 buf[];")
    a(".shared .align 8 .b64 bar[%d];\n.shared .align 8 .b64 idx[%d];" % (S, S))
    a(".visible .entry gp_tmad(.param .u64 p_dst, .param .u64 p_src, .param .u64 p_nch, .param .u64 p_ctr)\n{")
    a("\t.reg .pred %p<10>;\n\t.reg .b32 %r<20>;\n\t.reg .b64 %rd<32>;")
    a("\tld.param.u64 %rd1, [p_dst];\n\tld.param.u64 %rd2, [p_src];\n\tld.param.u64 %rd3, [p_nch];")
    a("\tld.param.u64 %rd4, [p_ctr];")
    a("\tcvta.to.global.u64 %rd1, %rd1;\n\tcvta.to.global.u64 %rd2, %rd2;\n\tcvta.to.global.u64 %rd4, %rd4;")
    a("\tmov.u32 %r1, %tid.x;\n\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 bra DONE;")
    a("\tmov.u32 %r3, %nctaid.x;\n\tcvt.u64.u32 %rd5, %r3;\n\tadd.u64 %rd21, %rd3, %rd5;\n\tsub.u64 %rd21, %rd21, 1;")
    a("\tmov.u32 %r4, buf;\n\tmov.u32 %r5, bar;\n\tmov.u32 %r11, idx;\n\tmov.u32 %r10, 1;")
    for k in range(S):
        a("\tmbarrier.init.shared::cta.b64 [%%r5+%d], 1;" % (8 * k))
    a("\tfence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;")

    def failed(reg):  # an ask past the end: stop asking; the last of them resets the counter
        a("\tmov.u32 %r10, 0;")
        if reset:
            a("\tsetp.eq.u64 %%p9, %s, %%rd21;\n\t@%%p9 st.global.u64 [%%rd4], 0;" % reg)
    for k in range(S):
        a("\tatom.global.add.u64 %rd6, [%rd4], 1;")
        a("\tst.shared.u64 [%%r11+%d], %%rd6;" % (8 * k))
        a("\tsetp.ge.u64 %p2, %rd6, %rd3;\n\t@%p2 bra PRO_FAIL;")
        a("\tmul.lo.u64 %%rd7, %%rd6, %d;\n\tadd.u64 %%rd8, %%rd2, %%rd7;" % ch)
        a("\tmbarrier.arrive.expect_tx.shared::cta.b64 %%rd9, [%%r5+%d], %d;" % (8 * k, ch))
        a("\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%r4+%d], [%%rd8], %d, [%%r5+%d];"
          % (k * ch, ch, 8 * k))
    a("\tbra.uni PRO_END;\nPRO_FAIL:")
    failed("%rd6")
    a("PRO_END:\n\tmov.u64 %rd10, 0;")
    a("LOOP:\n\trem.u64 %%rd12, %%rd10, %d;\n\tdiv.u64 %%rd13, %%rd10, %d;\n\tand.b64 %%rd13, %%rd13, 1;" % (S, S))
    a("\tcvt.u32.u64 %r6, %rd13;\n\tcvt.u32.u64 %r7, %rd12;")
    a("\tshl.b32 %r12, %r7, 3;\n\tadd.u32 %r8, %r12, %r5;\n\tadd.u32 %r12, %r12, %r11;")
    a("\tld.shared.u64 %rd11, [%r12];\n\tsetp.ge.u64 %p3, %rd11, %rd3;\n\t@%p3 bra DRAIN;")
    a("\tmul.lo.u32 %%r9, %%r7, %d;\n\tadd.u32 %%r9, %%r9, %%r4;" % ch)
    # the stage refilled this step: this one (lag 0) or the previous one (lag 1; none at step 0)
    if lag:
        a("\tadd.u64 %%rd22, %%rd10, %d;\n\trem.u64 %%rd22, %%rd22, %d;\n\tcvt.u32.u64 %%r13, %%rd22;" % (S - 1, S))
        a("\tshl.b32 %r14, %r13, 3;\n\tadd.u32 %r15, %r14, %r5;\n\tadd.u32 %r14, %r14, %r11;")
        a("\tmul.lo.u32 %%r16, %%r13, %d;\n\tadd.u32 %%r16, %%r16, %%r4;" % ch)
        a("\tsetp.ne.u32 %p7, %r10, 0;\n\tsetp.ne.u64 %p8, %rd10, 0;\n\tand.pred %p7, %p7, %p8;")
    else:
        a("\tmov.u32 %r15, %r8;\n\tmov.u32 %r14, %r12;\n\tmov.u32 %r16, %r9;")
        a("\tsetp.ne.u32 %p7, %r10, 0;")
    if early:
        a("\t@%p7 atom.global.add.u64 %rd17, [%rd4], 1;")
    a("WAIT:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p4, [%r8], %r6;\n\t@!%p4 bra WAIT;")
    a("\tmul.lo.u64 %%rd14, %%rd11, %d;\n\tadd.u64 %%rd15, %%rd1, %%rd14;" % ch)
    a("\tcp.async.bulk.global.shared::cta.bulk_group [%%rd15], [%%r9], %d;\n\tcp.async.bulk.commit_group;" % ch)
    if lag:
        a("\tsetp.eq.u64 %p8, %rd10, 0;\n\t@%p8 bra NEXT;")
    a("\tsetp.eq.u32 %p5, %r10, 0;\n\t@%p5 bra STOP;")
    if not early:
        a("\tatom.global.add.u64 %rd17, [%rd4], 1;")
    a("\tst.shared.u64 [%r14], %rd17;")
    a("\tsetp.ge.u64 %p6, %rd17, %rd3;\n\t@%p6 bra FAIL;")
    a("\tcp.async.bulk.wait_group.read %d;" % lag)
    a("\tmul.lo.u64 %%rd18, %%rd17, %d;\n\tadd.u64 %%rd19, %%rd2, %%rd18;" % ch)
    a("\tmbarrier.arrive.expect_tx.shared::cta.b64 %%rd20, [%%r15], %d;" % ch)
    a("\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%r16], [%%rd19], %d, [%%r15];" % ch)
    a("\tbra.uni NEXT;\nFAIL:")
    failed("%rd17")
    a("\tbra.uni NEXT;")
    a("STOP:\n\tst.shared.u64 [%r14], %rd3;")
    a("NEXT:\n\tadd.u64 %rd10, %rd10, 1;\n\tbra.uni LOOP;")
    a("DRAIN:\n\tcp.async.bulk.wait_group 0;")
    a("DONE:\n\tret;\n}\n")
    return "\n".join(L)


def main():
    size = int(sys.argv[1] if len(sys.argv) > 1 else 512) << 20
    iters, reps = int(os.environ.get("ITERS", 16)), int(os.environ.get("REPS", 5))
    ck(cu.cuInit(0), "cuInit")
    dev, ctx = C.c_int(), C.c_void_p()
    ck(cu.cuDeviceGet(C.byref(dev), 0), "cuDeviceGet")
    ck(cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev), "retain")
    ck(cu.cuCtxSetCurrent(ctx), "set current")
    sms = C.c_int()
    ck(cu.cuDeviceGetAttribute(C.byref(sms), 16, dev), "SM count")
    name = C.create_string_buffer(128)
    cu.cuDeviceGetName(name, 128, dev)
    mode = os.environ.get("MODE", "d2d")  # d2d, h2d (source in pinned host memory), d2h (destination there)
    src, dst = U64(), U64()

    def alloc(host):
        if not host:
            d = U64()
            ck(cu.cuMemAlloc_v2(C.byref(d), U64(size)), "alloc")
            return d
        h, d = C.c_void_p(), U64()
        ck(cu.cuMemHostAlloc(C.byref(h), C.c_size_t(size), 2), "host alloc")  # DEVICEMAP
        ck(cu.cuMemHostGetDevicePointer_v2(C.byref(d), h, 0), "host device pointer")
        return d
    src, dst = alloc(mode == "h2d"), alloc(mode == "d2h")

    def fill(p, v, host):
        ck(cu.cuCtxSynchronize(), "sync")
        if host:
            C.memset(p.value, v, size)
        else:
            ck(cu.cuMemsetD8Async(p, C.c_ubyte(v), U64(size), stream), "memset")
            ck(cu.cuCtxSynchronize(), "sync")
    ctr = U64()  # the dyn families' chunk counters: one 8-byte counter per launch, zeroed per variant
    NCTR = 4096
    ck(cu.cuMemAlloc_v2(C.byref(ctr), U64(8 * NCTR)), "alloc")
    launch = [0]

    def next_ctr():
        c = U64(ctr.value + 8 * (launch[0] % NCTR))
        launch[0] += 1
        return c

    def zero_ctr():
        ck(cu.cuCtxSynchronize(), "sync")
        ck(cu.cuMemsetD8Async(ctr, C.c_ubyte(0), U64(8 * NCTR), stream), "memset")
        ck(cu.cuCtxSynchronize(), "sync")
        launch[0] = 0
    stream = C.c_void_p()
    ck(cu.cuStreamCreate(C.byref(stream), 1), "stream")
    fill(src, 0x5a, mode == "h2d")
    whole = (C.c_ubyte * size)() if mode != "d2h" else None  # the check's copy of the destination
    e0, e1 = C.c_void_p(), C.c_void_p()
    ck(cu.cuEventCreate(C.byref(e0), 0), "event")
    ck(cu.cuEventCreate(C.byref(e1), 0), "event")
    elapsed = getattr(cu, "cuEventElapsedTime_v2", None) or cu.cuEventElapsedTime

    def timed(run):
        out = []
        run()  # warm-up
        for _ in range(reps):
            ck(cu.cuEventRecord(e0, stream), "record")
            for _ in range(iters):
                run()
            ck(cu.cuEventRecord(e1, stream), "record")
            ck(cu.cuEventSynchronize(e1), "sync")
            ms = C.c_float()
            ck(elapsed(C.byref(ms), e0, e1), "elapsed")
            out.append(size * iters / (ms.value / 1e3) / 1e9)
        return statistics.median(out)

    def ce():
        if mode == "d2d":
            ck(cu.cuMemcpyDtoDAsync_v2(dst, src, U64(size), stream), "memcpy")
        else:  # unified addressing: the mapped host pointer equals the host address
            ck(cu.cuMemcpyAsync(dst, src, C.c_size_t(size), stream), "memcpy")

    print("# %s, %d SMs, %s, %d MiB, %d copies x %d samples, GB/s = bytes copied / time" % (
        name.value.decode(), sms.value, mode, size >> 20, iters, reps))
    print("ce %.2f" % timed(ce), flush=True)
    nbytes = U64(size)
    only = os.environ.get("LD_ONLY")  # e.g. "8 chunk ld.global st.global.cs 1024"
    variants = itertools.product((4, 8, 16), ("gs", "chunk"),
                                 ("ld.global", "ld.global.nc", "ld.global.cs", "ld.global.L1::no_allocate"),
                                 ("st.global", "st.global.cs"), (256, 512, 1024), (1, 2, 4, 8))
    if "l2" in os.environ.get("FAMILY", ""):  # L2 prefetch size and eviction policy hints (PTX 7.4, sm_80)
        variants = itertools.product((8, 16), ("gs", "chunk"),
                                     ("ld.global.L2::256B", "ld.global.L2::128B", "ld.global.nc.L1::no_allocate.L2::256B",
                                      "ld.global.L2::cache_hint", "ld.global.L1::no_allocate.L2::cache_hint.L2::256B"),
                                     ("st.global", "st.global.cs", "st.global.L2::cache_hint"), (512, 1024), (1,))

    def check(run, what):
        fill(dst, 0, mode == "d2h")
        run()
        ck(cu.cuStreamSynchronize(stream), "sync")
        if whole is None:
            got = C.string_at(dst.value, size)
        else:
            ck(cu.cuMemcpyDtoH_v2(whole, dst, U64(size)), "check")
            got = bytes(whole)
        return "" if got.count(0x5a) == size else " WRONG DATA"

    fams = os.environ.get("FAMILY", "tma,ld").split(",")
    grids = [int(g) for g in os.environ.get("GRIDS", "").split(",") if g]  # CTAs in all (default: SMs x 1..8)
    for ch, stages, ctas in itertools.product((8192, 16384, 32768, 65536), (2, 3, 4, 6), grids or (1, 2, 4, 8)):
        per_sm = -(-ctas // sms.value) if grids else ctas
        if "tma" not in fams or ch * stages * per_sm > 200 << 10 or size % ch:
            continue
        mod, fn = C.c_void_p(), C.c_void_p()
        r = cu.cuModuleLoadData(C.byref(mod), C.c_char_p(ptx_tma(ch, stages).encode()))
        if r:
            print("tma ch%d s%d: module load failed (%d)" % (ch, stages, r), flush=True)
            continue
        ck(cu.cuModuleGetFunction(C.byref(fn), mod, b"gp_tma"), "function")
        smem = ch * stages
        ck(cu.cuFuncSetAttribute(fn, 8, smem), "max dynamic shared")  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        nch = U64(size // ch)
        grid = ctas if grids else sms.value * ctas
        params = (C.c_void_p * 3)(C.cast(C.pointer(dst), C.c_void_p), C.cast(C.pointer(src), C.c_void_p),
                                  C.cast(C.pointer(nch), C.c_void_p))

        def tm():
            ck(cu.cuLaunchKernel(fn, grid, 1, 1, 32, 1, 1, smem, stream, params, None), "launch")
        try:
            g = timed(tm)
            print("tma ch%d s%d %s%d %.2f%s" % (ch, stages, "g" if grids else "x", ctas, g, check(tm, "tma")), flush=True)
        except RuntimeError as x:
            print("tma ch%d s%d x%d: %s" % (ch, stages, ctas, x), flush=True)
        cu.cuModuleUnload(mod)
    print("ce %.2f" % timed(ce), flush=True)
    dyn_runs(fams, sms.value, size, timed, check, ce, dst, src, next_ctr, zero_ctr, stream)
    if "ld" not in fams and "l2" not in fams:
        return
    n = 0
    if grids:
        variants = sorted({(u, l, ld, st, b, g) for u, l, ld, st, b, _ in variants for g in grids})
    for u, layout, ld, st, block, bps in variants:
        if not grids and block * bps > 2048:
            continue
        if only and "%d %s %s %s %d" % (u, layout, ld, st, block) != only:
            continue
        mod, fn = C.c_void_p(), C.c_void_p()
        text = ptx(u, layout, ld, st).encode()
        r = cu.cuModuleLoadData(C.byref(mod), C.c_char_p(text))
        if r:
            print("variant u%d %s %s %s: module load failed (%d)" % (u, layout, ld, st, r))
            continue
        ck(cu.cuModuleGetFunction(C.byref(fn), mod, b"gp_tune"), "function")
        grid = bps if grids else sms.value * bps
        params = (C.c_void_p * 3)(C.cast(C.pointer(dst), C.c_void_p), C.cast(C.pointer(src), C.c_void_p),
                                  C.cast(C.pointer(nbytes), C.c_void_p))

        def sm():
            ck(cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, stream, params, None), "launch")
        try:
            g = timed(sm)
        except RuntimeError as x:
            print("u%d %s %s %s b%d x%d: %s" % (u, layout, ld, st, block, bps, x))
            cu.cuModuleUnload(mod)
            continue
        print("u%d %s %s %s b%d x%d %.2f%s" % (u, layout, ld, st, block, bps, g, check(sm, "ld")), flush=True)
        cu.cuModuleUnload(mod)
        n += 1
        if n % 24 == 0:
            print("ce %.2f" % timed(ce), flush=True)
    print("ce %.2f" % timed(ce), flush=True)


def dyn_runs(fams, sms, size, timed, check, ce, dst, src, next_ctr, zero_ctr, stream):
    """The families whose chunks come from a global counter: dyn (warps, plain loads) and tmad (bulk copies,
    the counter reset by the kernel itself: one counter for every launch, never zeroed between them, so the
    data check after the timed launches tests the reset). Then the best TOP variants again, ROUNDS times,
    each round beside the copy engine."""
    cases = []
    if "dyn" in fams:
        for u, m, ld, st, block, bps in itertools.product((4, 8, 16), (1, 2, 4), ("ld.global",),
                                                          ("st.global", "st.global.cs"), (256, 512, 1024), (1, 2, 4)):
            if block * bps <= 2048:
                cases.append(("dyn u%d m%d %s %s b%d x%d" % (u, m, ld, st, block, bps), ptx_dyn(u, m, ld, st),
                              b"gp_dyn", u * m * 512, sms * bps, block, 0, False))
    if "tmad" in fams:
        chs = [int(c) for c in os.environ.get("TMAD_CH", "8192,16384,32768").split(",")]
        sts = [int(c) for c in os.environ.get("TMAD_STAGES", "2,3,4,6").split(",")]
        for ch, stages, per, early, lag in itertools.product(chs, sts, (1, 2), (0, 1), (0, 1)):
            if ch * stages * per <= 200 << 10:
                cases.append(("tmad ch%d s%d x%d e%d l%d" % (ch, stages, per, early, lag),
                              ptx_tmad(ch, stages, early, lag, True), b"gp_tmad", ch, sms * per, 32, ch * stages, True))
    loaded, got = [], []
    for what, text, entry, ch, grid, block, smem, reset in cases:
        if size % ch:
            continue
        mod, fn = C.c_void_p(), C.c_void_p()
        r = cu.cuModuleLoadData(C.byref(mod), C.c_char_p(text.encode()))
        if r:
            print("%s: module load failed (%d)" % (what, r), flush=True)
            continue
        ck(cu.cuModuleGetFunction(C.byref(fn), mod, entry), "function")
        if smem:
            ck(cu.cuFuncSetAttribute(fn, 8, smem), "max dynamic shared")
        nch = U64(size // ch)
        zero_ctr()
        fixed = next_ctr() if reset else None  # reset: counter 0, the same for every launch

        def run(fn=fn, grid=grid, block=block, smem=smem, nch=nch, fixed=fixed):
            c = fixed if fixed is not None else next_ctr()
            params = (C.c_void_p * 4)(C.cast(C.pointer(dst), C.c_void_p), C.cast(C.pointer(src), C.c_void_p),
                                      C.cast(C.pointer(nch), C.c_void_p), C.cast(C.pointer(c), C.c_void_p))
            ck(cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, smem, stream, params, None), "launch")
        try:
            g = timed(run)
            if not reset:
                zero_ctr()
            bad = check(run, what)
            print("%s %.2f%s" % (what, g, bad), flush=True)
            if not bad:
                got.append((g, what, run))
        except RuntimeError as x:
            print("%s: %s" % (what, x), flush=True)
        loaded.append(mod)
        if len(loaded) % 24 == 0:
            print("ce %.2f" % timed(ce), flush=True)
    top = sorted(got, key=lambda t: -t[0])[:int(os.environ.get("TOP", 6))]
    for r in range(int(os.environ.get("ROUNDS", 3)) if top else 0):
        print("round %d: ce %.2f" % (r, timed(ce)), flush=True)
        for _, what, run in top:
            zero_ctr()  # a dyn variant's counters include the fixed one of the tmad variants
            print("round %d: %s %.2f" % (r, what, timed(run)), flush=True)
        print("round %d: ce %.2f" % (r, timed(ce)), flush=True)
    for mod in loaded:
        cu.cuModuleUnload(mod)


if __name__ == "__main__":
    main()
