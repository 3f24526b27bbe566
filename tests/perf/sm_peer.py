#!/usr/bin/env python3
"""Peer SM copies over NVLink/PCIe (issue 24: gpup2p's SM peer reads are ~0.5% below nvbandwidth's, writes
match): does one launch that loops over the buffer REPS times inside the kernel (nvbandwidth's
stridingMemcpyKernel idea) beat REPS launches of one copy each (gpup2p: a timed batch is 16 launches of
gp_copy16)? Buffers: src on GPU SRC, dst on GPU DST (GPUS="DST,SRC", default "0,1"), peer access enabled
both ways. MODE=peer_read: the kernel runs on DST and loads from the peer; MODE=peer_write: it runs on SRC
and stores to the peer. Run on a machine with 2+ GPUs (device tool), either way:
    MODE=peer_read FAMILY=loop python3 tests/perf/sm_tune.py 512 > $OUT/peer-read.txt
    MODE=peer_write python3 tests/perf/sm_peer.py 512 > $OUT/peer-write.txt
    python3 tests/perf/sm_peer.py --ptx DIR     (no GPU: writes every kernel's PTX to DIR for ptxas)
Per round (ROUNDS, default 5) one line per variant: label, what, GB/s = bytes copied / time, median of REPS
(5) samples of ITERS (16) copies, and the data check; then one summary line per variant: the median over
the rounds and its ratio to variant a. Variants:
  a  gp_copy16's shape: unroll 8, grid-stride, gp_sm_geometry's grid (2 x 512 per SM), ITERS launches
  a2 sm_tune.py's ptx(8, gs, ld.global, st.global), same grid, ITERS launches (the older generator)
  b  a's body in an outer loop of `reps` passes over the whole buffer, ONE launch with reps = ITERS
  c  b with unroll 12      d  b with 1 block of 512 per SM      f  c and d together (nvbandwidth's shape)
  e  the copy engine: ITERS cuMemcpyAsync on the running GPU's stream (DST for read, SRC for write)
Data check (dst zeroed before each variant; src a word-index pattern): after the timed copies and again
after a single copy (one launch, reps = 1), 4 MiB at the start, middle and end of dst equal src's."""
import ctypes as C
import os
import statistics
import sys

from sm_tune import U64, ck, cu, ptx, sample

MIB = 1 << 20


def ptx_copy(unroll, loop, per_sm=0, chain=False):
    """gp_peer(dst, src, n16[, reps]): gp_copy16's copy of n16 16-byte words (no tail bytes): thread t of T
    copies words t, t+T, ... in groups of `unroll` (a multiple of 4; all loads, then all stores) while the
    group's last word is inside, then one at a time. loop: the whole copy again, `reps` passes in all,
    each streaming the whole buffer from word t (no barrier between passes, as nvbandwidth's kernel).
    per_sm: tell ptxas that blocks of 512 must fit per_sm to an SM (registers capped). chain: one address
    register stepped before each access, as nvbandwidth's (gp_copy16's groups of four need 71 registers
    at unroll 12, too many for 2 x 512 per SM; chained, 64)."""
    u = unroll
    L = []
    a = L.append
    a(".version 7.0\n.target sm_70\n.address_size 64\n")
    a(".visible .entry gp_peer(.param .u64 p_dst, .param .u64 p_src, .param .u64 p_n16%s)\n{"
      % (", .param .u32 p_reps" if loop else ""))
    if per_sm:
        L[-1] = L[-1].replace("\n{", "\n.maxntid 512, 1, 1\n.minnctapersm %d\n{" % per_sm)
    a("\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b32 %v<" + str(4 * u) + ">;\n\t.reg .b64 %rd<24>;")
    a("\tld.param.u64 %rd1, [p_dst];\n\tld.param.u64 %rd2, [p_src];\n\tld.param.u64 %rd3, [p_n16];")
    a("\tcvta.to.global.u64 %rd1, %rd1;\n\tcvta.to.global.u64 %rd2, %rd2;")
    a("\tmov.u32 %r2, %ctaid.x;\n\tmov.u32 %r3, %ntid.x;\n\tmov.u32 %r4, %tid.x;\n\tmov.u32 %r5, %nctaid.x;")
    a("\tmul.wide.u32 %rd4, %r2, %r3;\n\tcvt.u64.u32 %rd5, %r4;\n\tadd.u64 %rd4, %rd4, %rd5;")  # t
    a("\tmul.wide.u32 %rd6, %r5, %r3;\n\tshl.b64 %rd7, %rd6, 4;")  # T, step = 16 T
    a("\tshl.b64 %%rd9, %%rd3, 4;\n\tmul.lo.u64 %%rd10, %%rd7, %d;\n\tmul.lo.u64 %%rd11, %%rd7, %d;" % (u - 1, u))
    if loop:
        a("\tld.param.u32 %r1, [p_reps];\n\tmov.u32 %r6, 0;")
        a("PASS:\n\tsetp.ge.u32 %p3, %r6, %r1;\n\t@%p3 bra DONE;")
    a("\tshl.b64 %rd8, %rd4, 4;")  # off = 16 t
    a("LOOPU:\n\tadd.u64 %rd12, %rd8, %rd10;\n\tsetp.ge.u64 %p1, %rd12, %rd9;\n\t@%p1 bra LOOP1;")
    a("\tadd.u64 %rd13, %rd2, %rd8;\n\tadd.u64 %rd14, %rd1, %rd8;")
    for op, base, r in (("ld", 13, 15), ("st", 14, 18)):  # gp_copy16's LD4/ST4: groups of four, a step apart
        for k in range(u if chain else 0):  # or one address register, a step on before each access
            if k:
                a("\tadd.u64 %%rd%d, %%rd%d, %%rd7;" % (base, base))
            v = "%%v%d, %%v%d, %%v%d, %%v%d" % tuple(range(4 * k, 4 * k + 4))
            a("\tld.global.v4.u32 {%s}, [%%rd%d];" % (v, base) if op == "ld" else
              "\tst.global.v4.u32 [%%rd%d], {%s};" % (base, v))
        for g in range(0 if chain else u // 4):
            if g:
                a("\tadd.u64 %%rd%d, %%rd%d, %%rd7;" % (base, r + 2))
            a("\tadd.u64 %%rd%d, %%rd%d, %%rd7;\n\tadd.u64 %%rd%d, %%rd%d, %%rd7;\n\tadd.u64 %%rd%d, %%rd%d, %%rd7;"
              % (r, base, r + 1, r, r + 2, r + 1))
            for k, ad in enumerate((base, r, r + 1, r + 2)):
                v = "%%v%d, %%v%d, %%v%d, %%v%d" % tuple(range(16 * g + 4 * k, 16 * g + 4 * k + 4))
                a("\tld.global.v4.u32 {%s}, [%%rd%d];" % (v, ad) if op == "ld" else
                  "\tst.global.v4.u32 [%%rd%d], {%s};" % (ad, v))
    a("\tadd.u64 %rd8, %rd8, %rd11;\n\tbra.uni LOOPU;")
    a("LOOP1:\n\tsetp.ge.u64 %%p2, %%rd8, %%rd9;\n\t@%%p2 bra %s;" % ("NEXT" if loop else "DONE"))
    a("\tadd.u64 %rd13, %rd2, %rd8;\n\tadd.u64 %rd14, %rd1, %rd8;")
    a("\tld.global.v4.u32 {%v0, %v1, %v2, %v3}, [%rd13];\n\tst.global.v4.u32 [%rd14], {%v0, %v1, %v2, %v3};")
    a("\tadd.u64 %rd8, %rd8, %rd7;\n\tbra.uni LOOP1;")
    if loop:
        a("NEXT:\n\tadd.u32 %r6, %r6, 1;\n\tbra.uni PASS;")
    a("DONE:\n\tret;\n}\n")
    return "\n".join(L)


def ptx_fill():
    """gp_fill(p, n4): 32-bit word i of p = i (the source pattern: a word copied to the wrong place shows)."""
    return "\n".join((
        ".version 7.0\n.target sm_70\n.address_size 64\n",
        ".visible .entry gp_fill(.param .u64 p_p, .param .u64 p_n4)\n{",
        "\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<12>;",
        "\tld.param.u64 %rd1, [p_p];\n\tld.param.u64 %rd2, [p_n4];\n\tcvta.to.global.u64 %rd1, %rd1;",
        "\tmov.u32 %r2, %ctaid.x;\n\tmov.u32 %r3, %ntid.x;\n\tmov.u32 %r4, %tid.x;\n\tmov.u32 %r5, %nctaid.x;",
        "\tmul.wide.u32 %rd3, %r2, %r3;\n\tcvt.u64.u32 %rd4, %r4;\n\tadd.u64 %rd3, %rd3, %rd4;",
        "\tmul.wide.u32 %rd5, %r5, %r3;",
        "LOOP:\n\tsetp.ge.u64 %p1, %rd3, %rd2;\n\t@%p1 bra DONE;",
        "\tshl.b64 %rd6, %rd3, 2;\n\tadd.u64 %rd6, %rd1, %rd6;\n\tcvt.u32.u64 %r1, %rd3;",
        "\tst.global.u32 [%rd6], %r1;\n\tadd.u64 %rd3, %rd3, %rd5;\n\tbra.uni LOOP;",
        "DONE:\n\tret;\n}\n"))


def sm_grid(sms, size, unroll=8, block=512, per_sm=2):
    """gp_sm_geometry (libcore/cuda/smcopy.c) for a multiple of 16 bytes: (grid, block)."""
    want = max(32, -(-(size // 16) // unroll))
    b = block if want >= block else -(-want // 32) * 32
    return min(-(-want // b), sms * per_sm), b


def variants(iters=16):
    """(label, what, PTX text, entry, unroll, blocks per SM, loop): the SM variants, ITERS copies a sample."""
    n, r = "launch x%d" % iters, "loop reps=%d" % iters
    return [("a", n + " u8 2x512 (gp_copy16)", ptx_copy(8, False), b"gp_peer", 8, 2, False),
            ("a2", n + " u8 2x512 (sm_tune ptx)", ptx(8, "gs", "ld.global", "st.global"), b"gp_tune", 8, 2, False),
            ("b", r + " u8 2x512", ptx_copy(8, True), b"gp_peer", 8, 2, True),
            ("c", r + " u12 2x512", ptx_copy(12, True, 2, True), b"gp_peer", 12, 2, True),
            ("d", r + " u8 1x512", ptx_copy(8, True), b"gp_peer", 8, 1, True),
            ("f", r + " u12 1x512 (nvbw)", ptx_copy(12, True, 0, True), b"gp_peer", 12, 1, True)]


def write_ptx(where):
    os.makedirs(where, exist_ok=True)
    for label, _, text, _, _, _, _ in variants():
        with open(os.path.join(where, "peer-%s.ptx" % label), "w") as f:
            f.write(text)
    with open(os.path.join(where, "peer-fill.ptx"), "w") as f:
        f.write(ptx_fill())


def main(size, mode):
    if cu is None:
        sys.exit("sm_peer: no libcuda.so.1 here (run it on the GPU machine)")
    if mode not in ("peer_read", "peer_write") or os.environ.get("FAMILY", "loop") != "loop":
        sys.exit("sm_peer: MODE must be peer_read or peer_write, FAMILY loop (or unset)")
    if size % (16 * MIB) or size < 16 * MIB:
        sys.exit("sm_peer: SIZE_MiB must be a multiple of 16")
    iters, reps, rounds = (int(os.environ.get(k, d)) for k, d in (("ITERS", 16), ("REPS", 5), ("ROUNDS", 5)))
    gd, gs = (int(g) for g in os.environ.get("GPUS", "0,1").split(","))
    ck(cu.cuInit(0), "cuInit")
    n = C.c_int()
    ck(cu.cuDeviceGetCount(C.byref(n)), "device count")
    if max(gd, gs) >= n.value or gd == gs:
        sys.exit("sm_peer: needs two GPUs (GPUS=%d,%d, %d GPUs here)" % (gd, gs, n.value))
    devs, ctxs, names, sms = [], [], [], []
    for g in (gd, gs):
        d, c, s = C.c_int(), C.c_void_p(), C.c_int()
        ck(cu.cuDeviceGet(C.byref(d), g), "cuDeviceGet")
        ck(cu.cuDevicePrimaryCtxRetain(C.byref(c), d), "retain")
        ck(cu.cuDeviceGetAttribute(C.byref(s), 16, d), "SM count")
        nm = C.create_string_buffer(128)
        cu.cuDeviceGetName(nm, 128, d)
        devs.append(d), ctxs.append(c), sms.append(s.value), names.append(nm.value.decode())
    for me, peer in ((0, 1), (1, 0)):
        can = C.c_int()
        ck(cu.cuDeviceCanAccessPeer(C.byref(can), devs[me], devs[peer]), "can access peer")
        if not can.value:
            sys.exit("sm_peer: GPU %d cannot access GPU %d (no P2P path)" % ((gd, gs)[me], (gd, gs)[peer]))
        ck(cu.cuCtxSetCurrent(ctxs[me]), "set current")
        r = cu.cuCtxEnablePeerAccess(ctxs[peer], 0)
        if r not in (0, 704):  # 704: CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
            ck(r, "enable peer access")
    D, S = 0, 1
    run_on = D if mode == "peer_read" else S  # the GPU whose SMs (or copy engine) do the copy

    def on(i):
        ck(cu.cuCtxSetCurrent(ctxs[i]), "set current")

    def alloc(i):
        on(i)
        p = U64()
        ck(cu.cuMemAlloc_v2(C.byref(p), U64(size)), "alloc")
        return p

    def load(i, text, entry):
        on(i)
        mod, fn = C.c_void_p(), C.c_void_p()
        ck(cu.cuModuleLoadData(C.byref(mod), C.c_char_p(text.encode())), "module load")
        ck(cu.cuModuleGetFunction(C.byref(fn), mod, entry), "function")
        return fn
    src, dst = alloc(S), alloc(D)
    fill = load(S, ptx_fill(), b"gp_fill")
    n4 = U64(size // 4)
    ck(cu.cuLaunchKernel(fill, sms[S] * 4, 1, 1, 512, 1, 1, 0, None,
                         (C.c_void_p * 2)(C.cast(C.pointer(src), C.c_void_p), C.cast(C.pointer(n4), C.c_void_p)),
                         None), "fill")
    ck(cu.cuCtxSynchronize(), "sync")
    on(run_on)
    stream, e0, e1 = C.c_void_p(), C.c_void_p(), C.c_void_p()
    ck(cu.cuStreamCreate(C.byref(stream), 1), "stream")
    ck(cu.cuEventCreate(C.byref(e0), 0), "event")
    ck(cu.cuEventCreate(C.byref(e1), 0), "event")
    host_s, host_d = (C.c_ubyte * (4 * MIB))(), (C.c_ubyte * (4 * MIB))()

    def same():  # 4 MiB at the start, middle and end of dst equal src's (src's pattern has no zero word after 0)
        for off in (0, size // 2 - 2 * MIB, size - 4 * MIB):
            ck(cu.cuMemcpyDtoH_v2(host_s, U64(src.value + off), U64(4 * MIB)), "check")
            ck(cu.cuMemcpyDtoH_v2(host_d, U64(dst.value + off), U64(4 * MIB)), "check")
            if bytes(host_s) != bytes(host_d) or bytes(host_s[-16:]) == bytes(16):
                return False
        return True

    def zero():
        on(D)
        ck(cu.cuMemsetD8_v2(dst, C.c_ubyte(0), U64(size)), "memset")
        ck(cu.cuCtxSynchronize(), "sync")
        on(run_on)

    def measure(run, per_sample, once):  # ITERS copies a sample: per_sample run()s
        zero()
        g = sample(run, per_sample, reps, (stream, e0, e1), size * iters)
        ck(cu.cuStreamSynchronize(stream), "sync")
        ok = same()
        zero()
        once()
        ck(cu.cuStreamSynchronize(stream), "sync")
        return g, ok and same()

    def ce():
        ck(cu.cuMemcpyAsync(dst, src, C.c_size_t(size), stream), "memcpy")
    cases = [("e", "copy engine x%d (cuMemcpyAsync)" % iters, lambda: measure(ce, iters, ce))]
    n16 = U64(size // 16)
    for label, what, text, entry, u, per_sm, loop in variants(iters):
        fn = load(run_on, text, entry)
        grid, block = sm_grid(sms[run_on], size, u, 512, per_sm)
        args = [dst, src, n16 if entry == b"gp_peer" else U64(size)]

        def launch(fn=fn, grid=grid, block=block, args=args, k=None):
            a = args + ([C.c_uint32(k)] if k is not None else [])
            p = (C.c_void_p * len(a))(*[C.cast(C.pointer(x), C.c_void_p) for x in a])
            ck(cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, stream, p, None), "launch")
        nreg, occ = C.c_int(), C.c_int()  # NUM_REGS; blocks an SM holds at once (under per_sm: a second wave)
        ck(cu.cuFuncGetAttribute(C.byref(nreg), 4, fn), "registers")
        ck(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(C.byref(occ), fn, block, C.c_size_t(0)), "occupancy")
        what = "%s g%d r%d occ%d" % (what, grid, nreg.value, occ.value)
        if loop:
            cases.append((label, what, lambda launch=launch: measure(lambda: launch(k=iters), 1,
                                                                    lambda: launch(k=1))))
        else:
            cases.append((label, what, lambda launch=launch: measure(launch, iters, launch)))
    print("# %s, %s: dst on GPU %d (%s, %d SMs), src on GPU %d (%s, %d SMs), runs on GPU %d, %d MiB, "
          "%d copies x %d samples x %d rounds, GB/s = bytes copied / time" % (
              mode, "the kernel loads from the peer" if mode == "peer_read" else "the kernel stores to the peer",
              gd, names[D], sms[D], gs, names[S], sms[S], (gd, gs)[run_on], size >> 20, iters, reps, rounds),
          flush=True)
    got = {}
    for r in range(rounds):
        for label, what, m in cases:
            g, ok = m()
            got.setdefault(label, []).append(g)
            print("round %d %-2s %-48s %8.2f  %s" % (r, label, what, g, "data ok" if ok else "DATA WRONG"),
                  flush=True)
    base = statistics.median(got["a"])
    for label, what, _ in cases:
        g = statistics.median(got[label])
        print("median %-2s %-48s %8.2f  x%.4f of a  (rounds %s)" % (
            label, what, g, g / base, " ".join("%.2f" % x for x in got[label])))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--ptx":
        write_ptx(sys.argv[2])
    else:
        main(int(sys.argv[1] if len(sys.argv) > 1 else 512) << 20, os.environ.get("MODE", "peer_read"))
