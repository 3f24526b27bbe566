#!/usr/bin/env python3
"""Reference numbers from PyTorch for the same copies gpup2p bench measures (tests/perf/compare.sh).

Bandwidth: `iters` copies of `size` bytes timed by the host clock between two full synchronisations
(at 1 GiB per copy the launch cost is noise); median of `reps`. Latency: 4-byte copies, each followed
by a synchronisation (host-timed, like gpup2p's host_us), and a batch of them timed with CUDA events
(like gpup2p's us, but without a gate: launch overhead included). Prints one JSON object."""
import json, statistics, sys, time

import torch


def wall(fn, sync, iters, reps):
    out = []
    fn()
    sync()
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        out.append(time.perf_counter() - t0)
    return out


def main():
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 30
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    n = torch.cuda.device_count()
    res = {"size": size, "iters": iters, "reps": reps, "torch": torch.__version__, "gpus": n}
    syncall = lambda: [torch.cuda.synchronize(d) for d in range(n)]
    gb = lambda ts, k=1: statistics.median(size * iters * k / t / 1e9 for t in ts)

    h = torch.empty(size, dtype=torch.uint8, pin_memory=True)
    h.fill_(7)
    for g in range(n):
        d = torch.empty(size, dtype=torch.uint8, device=f"cuda:{g}")
        res[f"h2d_pinned_gpu{g}"] = gb(wall(lambda: d.copy_(h, non_blocking=True), syncall, iters, reps))
        res[f"d2h_pinned_gpu{g}"] = gb(wall(lambda: h.copy_(d, non_blocking=True), syncall, iters, reps))
        del d
    if n >= 2:
        a = torch.empty(size, dtype=torch.uint8, device="cuda:0")
        b = torch.empty(size, dtype=torch.uint8, device="cuda:1")
        a2 = torch.empty(size, dtype=torch.uint8, device="cuda:1")
        b2 = torch.empty(size, dtype=torch.uint8, device="cuda:0")
        res["p2p_0to1"] = gb(wall(lambda: b.copy_(a, non_blocking=True), syncall, iters, reps))
        res["p2p_1to0"] = gb(wall(lambda: b2.copy_(a2, non_blocking=True), syncall, iters, reps))
        s0 = torch.cuda.Stream(device=0)
        s1 = torch.cuda.Stream(device=1)

        def both():
            with torch.cuda.stream(s0):
                b.copy_(a, non_blocking=True)
            with torch.cuda.stream(s1):
                b2.copy_(a2, non_blocking=True)
        res["bidir_01"] = gb(wall(both, syncall, iters, reps), 2)
        # latency: 4-byte copies
        x = torch.empty(4, dtype=torch.uint8, device="cuda:0")
        y = torch.empty(4, dtype=torch.uint8, device="cuda:1")
        k = 1000
        ts = wall(lambda: (y.copy_(x), torch.cuda.synchronize(1)), lambda: None, k, reps)
        res["lat_p2p_host_us"] = statistics.median(t / k * 1e6 for t in ts)
        with torch.cuda.device(0):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            vals = []
            for _ in range(reps):
                e0.record()
                for _ in range(k):
                    y.copy_(x, non_blocking=True)
                e1.record()
                syncall()
                vals.append(e0.elapsed_time(e1) * 1e3 / k)
            res["lat_p2p_event_us"] = statistics.median(vals)
    hs = torch.empty(4, dtype=torch.uint8, pin_memory=True)
    ds = torch.empty(4, dtype=torch.uint8, device="cuda:0")
    ts = wall(lambda: (ds.copy_(hs, non_blocking=True), torch.cuda.synchronize(0)), lambda: None, 1000, reps)
    res["lat_h2d_host_us"] = statistics.median(t / 1000 * 1e6 for t in ts)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
