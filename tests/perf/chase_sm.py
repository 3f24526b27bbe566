#!/usr/bin/env python3
"""Does an SM pointer chase's latency depend on which SM runs it? gpup2p's bench latency --sm chases with
one thread of a one-block launch; nvbandwidth's latency tests (host_device_latency_sm,
device_to_device_latency_sm) launch one block per SM and let block b chase, for every b in turn, each
time from the chain's start (testcases_sm.cpp, kernels.cu ptrChasingKernel), and report the mean.
This chases the same chain (64-bit pointers STRIDE bytes apart in address order over SIZE bytes, as
both tools build it) in GPU 1's memory and in page-locked host memory from GPU 0: once per block of a
grid of one block per SM, recording %smid and the ns per load by %globaltimer, and as a one-block
launch (gpup2p's way). Prints the distribution over SMs. Run on the GPU machine (device tool), no CUDA
toolkit:
    [SIZE=969600] [STRIDE=128] [HOPS=7575] python3 tests/perf/chase_sm.py > $OUT/chase.txt
Not part of the build."""
import ctypes as C
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sm_tune import U64, ck, cu  # noqa: E402

PTX = """.version 7.0
.target sm_70
.address_size 64
.visible .entry chase(.param .u64 p_start, .param .u64 p_hops, .param .u64 p_out, .param .u32 p_target)
{
	.reg .pred %p<3>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<8>;
	ld.param.u32 %r1, [p_target];
	mov.u32 %r2, %ctaid.x;
	setp.ne.u32 %p2, %r1, %r2;
	@%p2 bra DONE;
	ld.param.u64 %rd1, [p_start];
	ld.param.u64 %rd2, [p_hops];
	ld.param.u64 %rd3, [p_out];
	cvta.to.global.u64 %rd3, %rd3;
	mov.u64 %rd4, %globaltimer;
CHASE:
	ld.global.u64 %rd1, [%rd1];
	sub.u64 %rd2, %rd2, 1;
	setp.ne.u64 %p1, %rd2, 0;
	@%p1 bra CHASE;
	mov.u64 %rd5, %globaltimer;
	sub.u64 %rd6, %rd5, %rd4;
	mov.u32 %r3, %smid;
	st.global.u64 [%rd3], %rd1;
	st.global.u64 [%rd3+8], %rd6;
	st.global.u32 [%rd3+16], %r3;
DONE:
	ret;
}
"""


def main():
    size, stride, hops = (int(os.environ.get(k, d)) for k, d in (("SIZE", 969600), ("STRIDE", 128), ("HOPS", 7575)))
    if hops < 1 or stride < 8 or stride % 8 or size % stride or size // stride < 2:
        print("chase_sm.py: HOPS >= 1; STRIDE a multiple of 8; SIZE a multiple of STRIDE, two slots at least",
              file=sys.stderr)
        return 64
    n = size // stride
    ck(cu.cuInit(0), "cuInit")
    cnt = C.c_int()
    ck(cu.cuDeviceGetCount(C.byref(cnt)), "count")
    ctx = []
    for g in range(min(cnt.value, 2)):
        dev, c = C.c_int(), C.c_void_p()
        ck(cu.cuDeviceGet(C.byref(dev), g), "cuDeviceGet")
        ck(cu.cuDevicePrimaryCtxRetain(C.byref(c), dev), "retain")
        ctx.append(c)
    ck(cu.cuCtxSetCurrent(ctx[0]), "set current")
    sms = C.c_int()
    ck(cu.cuDeviceGetAttribute(C.byref(sms), 16, 0), "SM count")
    mod, fn = C.c_void_p(), C.c_void_p()
    ck(cu.cuModuleLoadData(C.byref(mod), C.c_char_p(PTX.encode())), "JIT")
    ck(cu.cuModuleGetFunction(C.byref(fn), mod, b"chase"), "function")
    st, out = C.c_void_p(), U64()
    ck(cu.cuStreamCreate(C.byref(st), 1), "stream")
    ck(cu.cuMemAlloc_v2(C.byref(out), U64(64)), "alloc")
    chains = []
    img = (C.c_uint64 * (size // 8))()
    if len(ctx) > 1:  # GPU 1's memory, GPU 0 reading it over peer access
        ck(cu.cuCtxSetCurrent(ctx[1]), "set current")
        d = U64()
        ck(cu.cuMemAlloc_v2(C.byref(d), U64(size)), "alloc")
        for i in range(n):
            img[i * stride // 8] = d.value + ((i + 1) % n) * stride
        ck(cu.cuMemcpyHtoDAsync_v2(d, img, C.c_size_t(size), None), "fill")
        ck(cu.cuCtxSynchronize(), "sync")
        ck(cu.cuCtxSetCurrent(ctx[0]), "set current")
        ck(cu.cuCtxEnablePeerAccess(ctx[1], 0), "peer access")
        chains.append(("peer GPU1", d.value))
    h, hd = C.c_void_p(), U64()
    ck(cu.cuMemHostAlloc(C.byref(h), C.c_size_t(size), 2), "host alloc")
    ck(cu.cuMemHostGetDevicePointer_v2(C.byref(hd), h, 0), "host device pointer")
    arr = (C.c_uint64 * (size // 8)).from_address(h.value)
    for i in range(n):
        arr[i * stride // 8] = hd.value + ((i + 1) % n) * stride
    chains.append(("host", hd.value))
    res = (C.c_uint64 * 3)()

    def run(start, grid, target):
        a, b, o, t = U64(start), U64(hops), U64(out.value), C.c_uint(target)
        params = (C.c_void_p * 4)(*(C.cast(C.byref(x), C.c_void_p) for x in (a, b, o, t)))
        ck(cu.cuLaunchKernel(fn, grid, 1, 1, 1, 1, 1, 0, st, params, None), "launch")
        ck(cu.cuStreamSynchronize(st), "sync")
        ck(cu.cuMemcpyDtoHAsync_v2(res, out, C.c_size_t(24), st), "result")
        ck(cu.cuStreamSynchronize(st), "sync")
        return res[1] / hops, res[2] & 0xffffffff

    print("# GPU 0 (%d SMs) chasing %d bytes, slots %d bytes apart, %d loads a launch, from the chain's start"
          % (sms.value, size, stride, hops))
    for name, start in chains:
        run(start, 1, 0)  # warm-up
        one = [run(start, 1, 0) for _ in range(5)]
        per = [run(start, sms.value, b) for b in range(sms.value)]
        ns = sorted(x for x, _ in per)
        print("%s: one-block launch %.1f ns (SM %s); a block per SM, each in turn: mean %.1f, median %.1f,"
              " min %.1f, max %.1f ns over %d SMs" % (name, statistics.median(x for x, _ in one),
                                                       ",".join(sorted({str(s) for _, s in one})),
                                                       statistics.mean(ns), statistics.median(ns), ns[0], ns[-1],
                                                       len({s for _, s in per})))
        print("  by SM: " + " ".join("%d:%.0f" % (s, x) for x, s in sorted(per, key=lambda p: p[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
