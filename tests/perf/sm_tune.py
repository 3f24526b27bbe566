#!/usr/bin/env python3
"""Device-local SM copy kernels, side by side with the copy engine (cuMemcpyDtoDAsync, what nvbandwidth's
device_local_copy times), on one GPU: which load/store cache operators, unroll, address layout and launch
geometry reach the copy engine's bandwidth. PTX generated here, loaded with cuModuleLoadData, launched
with cuLaunchKernel through ctypes (no CUDA toolkit). Run on the GPU machine (device tool):
    [FAMILY=tma,ld,l2] [LD_ONLY="U LAYOUT LD ST BLOCK"] [GRIDS=N,..] python3 tests/perf/sm_tune.py [SIZE_MiB] > $OUT/sm-tune.txt
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
    src, dst = U64(), U64()
    ck(cu.cuMemAlloc_v2(C.byref(src), U64(size)), "alloc")
    ck(cu.cuMemAlloc_v2(C.byref(dst), U64(size)), "alloc")
    ck(cu.cuMemsetD8_v2(src, C.c_ubyte(0x5a), U64(size)), "memset")
    stream = C.c_void_p()
    ck(cu.cuStreamCreate(C.byref(stream), 1), "stream")
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
        ck(cu.cuMemcpyDtoDAsync_v2(dst, src, U64(size), stream), "memcpy")

    print("# %s, %d SMs, %d MiB, %d copies x %d samples, GB/s = bytes copied / time" % (name.value.decode(), sms.value,
                                                                                        size >> 20, iters, reps))
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
        h = (C.c_ubyte * 16)()
        ck(cu.cuMemsetD8_v2(dst, C.c_ubyte(0), U64(size)), "memset")
        run()
        ck(cu.cuStreamSynchronize(stream), "sync")
        ok = True
        for off in list(range(0, size, 1 << 12)) + [size - 16]:
            ck(cu.cuMemcpyDtoH_v2(h, U64(dst.value + off), U64(16)), "check")
            ok &= all(b == 0x5a for b in h)
        return "" if ok else " WRONG DATA"

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


if __name__ == "__main__":
    main()
