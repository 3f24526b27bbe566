#!/usr/bin/env python3
"""SM copies between host and GPU on every GPU at once (host2all / all2host, issue 24): do launch
geometries differ once the GPUs share the host? On one GPU gpup2p's copy kernel and nvbandwidth's equal
the link (results/oracle-*.log, h2d_sm 1.000x); with four GPUs copying together host2all_sm came out
below nvbandwidth in 4 of 5 single oracle rounds. Each variant is the grid-stride kernel of
tests/perf/sm_tune.py (U loads of 16 bytes in flight per thread, then U stores) with a launch geometry:
  gpup2p: U 8, 2 blocks of 512 per SM (libcore/cuda/smcopy.c gp_sm_geometry for a large copy)
  nvb:    U 12, 1 block of 512 per SM (nvbandwidth's stridingMemcpyKernel: the same pattern)
  and a few around them. Every GPU copies SIZE MiB ITERS times between its own pinned host buffer and its
memory; the copy engine (cuMemcpyAsync on every GPU) runs between the variants as the control. ROUNDS
rounds, the variants in turn in each; per variant the median over rounds of the aggregate (bytes of all
GPUs over the wall time from the first launch to the last GPU's end) and of the per-GPU rates (each on
its own events). Run on the GPU machine (device tool), no CUDA toolkit:
    [MODE=h2d|d2h] [ROUNDS=5] [ITERS=16] [GPUS=n] python3 tests/perf/sm_contend.py [SIZE_MiB] > $OUT/x.txt
Not part of the build."""
import ctypes as C
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sm_tune import U64, ck, cu, ptx  # noqa: E402

VARIANTS = [("gpup2p", 8, 2), ("nvb", 12, 1), ("u8x1", 8, 1), ("u12x2", 12, 2), ("u4x4", 4, 4), ("u16x1", 16, 1)]


def main():
    size = int(sys.argv[1] if len(sys.argv) > 1 else 512) << 20
    mode, rounds, iters = os.environ.get("MODE", "h2d"), int(os.environ.get("ROUNDS", 5)), int(os.environ.get("ITERS", 16))
    ck(cu.cuInit(0), "cuInit")
    n = C.c_int()
    ck(cu.cuDeviceGetCount(C.byref(n)), "count")
    ngpu = min(n.value, int(os.environ.get("GPUS", n.value)))
    gpus = []
    for g in range(ngpu):
        dev, ctx, sms = C.c_int(), C.c_void_p(), C.c_int()
        ck(cu.cuDeviceGet(C.byref(dev), g), "cuDeviceGet")
        ck(cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev), "retain")
        ck(cu.cuCtxSetCurrent(ctx), "set current")
        ck(cu.cuDeviceGetAttribute(C.byref(sms), 16, dev), "SM count")
        h, hd, d, st = C.c_void_p(), U64(), U64(), C.c_void_p()
        ck(cu.cuMemHostAlloc(C.byref(h), C.c_size_t(size), 2), "host alloc")  # DEVICEMAP, this context's
        ck(cu.cuMemHostGetDevicePointer_v2(C.byref(hd), h, 0), "host device pointer")
        ck(cu.cuMemAlloc_v2(C.byref(d), U64(size)), "alloc")
        C.memset(h.value, 0x5a, size)
        ck(cu.cuStreamCreate(C.byref(st), 1), "stream")
        ck(cu.cuMemsetD32Async(d, C.c_uint(0xa5a5a5a5), U64(size // 4), st), "memset")
        ck(cu.cuStreamSynchronize(st), "sync")
        e0, e1 = C.c_void_p(), C.c_void_p()
        ck(cu.cuEventCreate(C.byref(e0), 0), "event")
        ck(cu.cuEventCreate(C.byref(e1), 0), "event")
        src, dst = (hd, d) if mode == "h2d" else (d, hd)
        fns = {}
        for name, u, per_sm in VARIANTS:
            mod, fn = C.c_void_p(), C.c_void_p()
            ck(cu.cuModuleLoadData(C.byref(mod), C.c_char_p(ptx(u, "gs", "ld.global", "st.global").encode())), "JIT")
            ck(cu.cuModuleGetFunction(C.byref(fn), mod, b"gp_tune"), "function")
            fns[name] = (fn, sms.value * per_sm)
        gpus.append(dict(ctx=ctx, st=st, e0=e0, e1=e1, src=src, dst=dst, h=h, d=d, fns=fns, sms=sms.value))
    elapsed = getattr(cu, "cuEventElapsedTime_v2", None) or cu.cuEventElapsedTime
    nbytes = U64(size)

    def run(name):
        """Every GPU's ITERS copies queued at once; (aggregate GB/s by the wall clock, per-GPU GB/s)."""
        for g in gpus:  # warm-up, outside the time
            ck(cu.cuCtxSetCurrent(g["ctx"]), "set current")
            launch(g, name)
        for g in gpus:
            ck(cu.cuCtxSetCurrent(g["ctx"]), "set current")
            ck(cu.cuStreamSynchronize(g["st"]), "sync")
        t0 = time.perf_counter()
        for g in gpus:
            ck(cu.cuCtxSetCurrent(g["ctx"]), "set current")
            ck(cu.cuEventRecord(g["e0"], g["st"]), "record")
        for _ in range(iters):
            for g in gpus:
                ck(cu.cuCtxSetCurrent(g["ctx"]), "set current")
                launch(g, name)
        for g in gpus:
            ck(cu.cuCtxSetCurrent(g["ctx"]), "set current")
            ck(cu.cuEventRecord(g["e1"], g["st"]), "record")
        for g in gpus:
            ck(cu.cuEventSynchronize(g["e1"]), "sync")
        wall = time.perf_counter() - t0
        per = []
        for g in gpus:
            ms = C.c_float()
            ck(elapsed(C.byref(ms), g["e0"], g["e1"]), "elapsed")
            per.append(size * iters / (ms.value / 1e3) / 1e9)
        return size * iters * len(gpus) / wall / 1e9, per

    def launch(g, name):
        if name == "ce" and mode == "h2d":
            ck(cu.cuMemcpyHtoDAsync_v2(g["d"], g["h"], C.c_size_t(size), g["st"]), "memcpy")
            return
        if name == "ce":
            ck(cu.cuMemcpyDtoHAsync_v2(g["h"], g["d"], C.c_size_t(size), g["st"]), "memcpy")
            return
        fn, grid = g["fns"][name]
        dst, src = U64(g["dst"].value), U64(g["src"].value)
        params = (C.c_void_p * 3)(C.cast(C.byref(dst), C.c_void_p), C.cast(C.byref(src), C.c_void_p),
                                  C.cast(C.byref(nbytes), C.c_void_p))
        ck(cu.cuLaunchKernel(fn, grid, 1, 1, 512, 1, 1, 0, g["st"], params, None), "launch")

    names = ["ce"] + [v[0] for v in VARIANTS]
    res = {k: ([], []) for k in names}
    print("# %d GPUs (%d SMs each), %s, %d MiB each, %d copies per GPU, %d rounds; GB/s" % (
        len(gpus), gpus[0]["sms"], mode, size >> 20, iters, rounds))
    for r in range(rounds):
        line = []
        for k in names:
            agg, per = run(k)
            res[k][0].append(agg)
            res[k][1].append(per)
            line.append("%s %.1f" % (k, agg))
        print("round %d: %s" % (r + 1, ", ".join(line)), flush=True)
    print("%-8s %9s %9s  %s" % ("variant", "aggregate", "min-max", "per GPU (medians over rounds)"))
    for k in names:
        a = res[k][0]
        per = [statistics.median(p[i] for p in res[k][1]) for i in range(len(gpus))]
        print("%-8s %9.2f %4.1f-%4.1f  %s" % (k, statistics.median(a), min(a), max(a), " ".join("%.2f" % x for x in per)))
    # the data: the last copy of the last variant reached every destination
    for g in gpus:
        ck(cu.cuCtxSetCurrent(g["ctx"]), "set current")
        ck(cu.cuStreamSynchronize(g["st"]), "sync")
        probe = (C.c_ubyte * 4096)()
        if mode == "h2d":
            ck(cu.cuMemcpyDtoHAsync_v2(probe, g["d"], C.c_size_t(4096), g["st"]), "check copy")
            ck(cu.cuStreamSynchronize(g["st"]), "sync")
            want = 0x5a
        else:
            C.memmove(probe, g["h"].value, 4096)
            want = 0xa5
        if any(b != want for b in probe):
            print("DATA WRONG on a GPU: the copies did not land")
            return 1
    print("data checked: the first 4 KiB of every destination hold the source's byte")
    return 0


if __name__ == "__main__":
    sys.exit(main())
