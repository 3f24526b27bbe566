#!/usr/bin/env python3
"""oracle_cmp.py WHAT FILES...: one comparison of tests/device/oracle.sh (stdlib only).

Prints one line per disagreement between gpup2p and NVIDIA's view of the same machine and exits 1
if any, 0 if none, 2 when an input cannot be read. WHAT and its files:
  p2p    DOCTOR_JSON SMI_P2P_RW      p2p.access (cuDeviceCanAccessPeer) vs nvidia-smi topo -p2p rw
  nvlink FACTS SMI_Q NVLINK_S NVLINK_E   links up and error counters per GPU (gpu-facts of a
                                     gpup2p snapshot) vs nvidia-smi nvlink -s / -e
  q      FACTS TOPO_JSON SMI_Q       PCIe generation/width (topo --json), BAR1, ECC, persistence
                                     (gpu-facts) vs nvidia-smi -q
  doctor LIVE_JSON SNAP_JSON         doctor --json live vs on its own snapshot (static findings)
  bench  GPUP2P_TSV NVB_TSV          medians per path and their ratio (lines "path<TAB>GB/s", or
                                     ns for paths lat_*: the ratio then nvbandwidth's over
                                     gpup2p's); below 1.00x is a disagreement only with
                                     OR_STRICT_BENCH=1
"""
import json
import os
import re
import statistics
import sys

# The numeric keys of a gpu line, in the order of keys[] in libcore/gpu/state.c: bit k of "na" is
# keys[k] (not supported by this GPU). test_oracle.sh checks this list against state.c.
STATE_KEYS = ["persistence", "mig", "virt", "compute", "retired_pending", "remap_pending",
              "remap_failed", "replay", "replay_rise", "nvlink_active", "nvlink_inactive",
              "nvlink_errors", "nvlink_errors_rise", "fabric", "fabric_status", "arch",
              "nvlink_replay", "nvlink_replay_rise", "nvlink_recovery", "nvlink_recovery_rise",
              "nvlink_crc_flit", "nvlink_crc_flit_rise", "nvlink_crc_data",
              "nvlink_crc_data_rise", "numa_id", "ecc_unc_volatile", "clk_reasons"]
# the clock event reasons gpu.throttle calls faults: NVML bit, nvidia-smi -q's name under "Clocks Event
# Reasons" (idle and the power cap change from one moment to the next: not compared)
CLK_FAULTS = [(0x8, "HW Slowdown"), (0x20, "SW Thermal Slowdown"), (0x40, "HW Thermal Slowdown"),
              (0x80, "HW Power Brake Slowdown")]
NA = "N/A"
bad = []


def say(fmt, *a):
    bad.append(fmt % a)


def bdf(s):
    """00000000:00:06.0 (nvidia-smi) -> 0000:00:06.0 (gpup2p)"""
    s = s.strip().lower()
    dom, rest = s.split(":", 1)
    return "%04x:%s" % (int(dom, 16), rest)


def facts(path):
    """gpu-facts of a snapshot: [(bdf, {key: int or NA})] in the file's (PCI) order."""
    gpus = []
    for line in open(path):
        if not line.startswith("gpu "):
            continue
        head = line.split(" name=", 1)[0].split()
        kv = dict(w.split("=", 1) for w in head[2:] if "=" in w)
        vals = {k: int(v) for k, v in kv.items() if k != "na" and v.lstrip("-").isdigit()}
        na = int(kv.get("na", "0"))
        for i, k in enumerate(STATE_KEYS):
            if na >> i & 1:
                vals[k] = NA
        gpus.append((head[1], vals))
    return gpus


def smi_q(path):
    """nvidia-smi -q: [(bdf, {"Section/Sub/Key": value})] in nvidia-smi's index order."""
    gpus, stack = [], []
    for raw in open(path):
        line = raw.rstrip("\n")
        m = re.match(r"^GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-7])\s*$", line)
        if m:
            gpus.append((bdf(m.group(1)), {}))
            stack = []
            continue
        if not gpus or not line.strip():
            continue
        ind = len(line) - len(line.lstrip(" "))
        key, sep, val = line.strip().partition(":")
        key = key.strip()
        stack = [(i, k) for i, k in stack if i < ind]
        if sep and val.strip():
            gpus[-1][1]["/".join([k for _, k in stack] + [key])] = val.strip()
        else:
            stack.append((ind, key))
    return gpus


def smi_per_gpu(path):
    """nvidia-smi nvlink -s / -e: {index: [lines of that GPU]}"""
    out, cur = {}, None
    for line in open(path):
        m = re.match(r"^GPU (\d+):", line)
        if m:
            cur = int(m.group(1))
            out[cur] = []
        elif cur is not None:
            out[cur].append(line.strip())
    return out


def gpu_name(i):
    return "GPU%d" % i


def cmp_p2p(doctor_json, rw):
    d = json.load(open(doctor_json))
    can, verdict = {}, {}
    for f in d["findings"]:
        if f["id"] != "p2p.access":
            continue
        ev = f.get("evidence", {}).get("cuDeviceCanAccessPeer", "")
        for a, b, yes in re.findall(r"GPU(\d+)->GPU(\d+) (\w+)", ev):
            can[int(a), int(b)] = yes == "yes"
        verdict[f["subject"]] = "%s: %s" % (f["severity"], f["message"])
    smi, cols = {}, []
    for line in open(rw):
        line = re.sub(r"\x1b\[[0-9;]*m", "", line).rstrip("\n")
        cells = [c.strip() for c in line.split("\t")]
        if not cols and len(cells) > 1 and cells[1].startswith("GPU"):
            cols = [int(c[3:]) for c in cells[1:] if c.startswith("GPU")]
            continue
        m = re.match(r"^GPU(\d+)$", cells[0])
        if cols and m:
            for j, c in zip(cols, cells[1:]):
                if c != "X":
                    smi[int(m.group(1)), j] = c
    if not smi:
        say("p2p: no matrix in nvidia-smi topo -p2p rw")
    for (a, b), c in sorted(smi.items()):
        if (a, b) not in can:
            say("p2p: GPU%d->GPU%d: gpup2p has no p2p.access verdict, nvidia-smi '%s'", a, b, c)
        elif can[a, b] != (c == "OK"):
            say("p2p: GPU%d->GPU%d: gpup2p %s, nvidia-smi topo -p2p rw '%s'", a, b,
                "yes" if can[a, b] else "no", c)
    for a, b in sorted(set(can) - set(smi)):
        say("p2p: GPU%d->GPU%d: gpup2p judges it, nvidia-smi has no cell", a, b)


def cmp_nvlink(facts_path, q, s, e):
    fa, order = facts(facts_path), [g for g, _ in smi_q(q)]
    by = dict(fa)
    ls, le = smi_per_gpu(s), smi_per_gpu(e)
    if len(fa) != len(order):
        say("nvlink: gpup2p recorded %d GPUs, nvidia-smi -q lists %d", len(fa), len(order))
    for i, b in enumerate(order):
        g = by.get(b)
        if g is None:
            say("nvlink: GPU%d %s: not in gpup2p's facts", i, b)
            continue
        up = sum(1 for x in ls.get(i, []) if re.search(r"Link \d+: [0-9.]+ GB/s", x))
        mine = g.get("nvlink_active", "unknown")
        if mine == NA:
            mine = 0
        if mine != up:
            say("nvlink: GPU%d: gpup2p %s links up, nvidia-smi nvlink -s %d", i, mine, up)
        for key, label in (("nvlink_replay", "Replay"), ("nvlink_recovery", "Recovery"),
                           ("nvlink_crc_flit", "CRC")):
            vals = [int(m.group(1)) for x in le.get(i, [])
                    for m in [re.search(r"Link \d+: %s Errors: (\d+)" % label, x)] if m]
            theirs = sum(vals) if vals else None
            mine = g.get(key, "unknown")
            if up == 0 and theirs is None and mine in ("unknown", NA, 0):
                continue
            # gpup2p reads the counters before nvidia-smi: one that rose in between is a rise,
            # not a disagreement, only when both are read live; an equal count is the test
            if mine != theirs:
                say("nvlink: GPU%d: %s errors: gpup2p %s, nvidia-smi nvlink -e %s", i,
                    label, mine, "none printed" if theirs is None else theirs)


def cmp_q(facts_path, topo_json, q):
    by = dict(facts(facts_path))
    topo = {d["bdf"]: d for d in json.load(open(topo_json))["devices"] if d["kind"] == "gpu"}
    for i, (b, v) in enumerate(smi_q(q)):
        g, t = by.get(b), topo.get(b)
        if g is None or t is None:
            say("q: GPU%d %s: not in gpup2p's %s", i, b, "facts" if g is None else "topo")
            continue
        link = t.get("link") or {}
        pre = "PCI/GPU Link Info/"
        for smi_key, mine in (("PCIe Generation/Max", link.get("max_gen")),
                              ("PCIe Generation/Current", link.get("gen")),
                              ("Link Width/Max", link.get("max_width")),
                              ("Link Width/Current", link.get("width"))):
            theirs = v.get(pre + smi_key, "missing").rstrip("x")
            if str(mine) != theirs:
                say("q: GPU%d: PCIe %s: gpup2p %s, nvidia-smi %s", i, smi_key, mine, theirs)
        bar1 = v.get("BAR1 Memory Usage/Total", "missing")
        mine = "%d MiB" % (g["bar1"] // 1048576) if g.get("bar1") else "unknown"
        if mine != bar1:
            say("q: GPU%d: BAR1: gpup2p %s, nvidia-smi %s", i, mine, bar1)
        pm = {1: "Enabled", 0: "Disabled"}.get(g.get("persistence"), "unknown")
        if pm != v.get("Persistence Mode", "missing"):
            say("q: GPU%d: persistence: gpup2p %s, nvidia-smi %s", i, pm,
                v.get("Persistence Mode", "missing"))
        cr = g.get("clk_reasons")
        for bit, name in CLK_FAULTS if isinstance(cr, int) else []:
            smi = v.get("Clocks Event Reasons/" + name)
            if smi is not None and (smi == "Active") != bool(cr & bit):
                say("q: GPU%d: clock event reason %s: gpup2p %s, nvidia-smi %s", i, name,
                    "active" if cr & bit else "not active", smi)
        # gpup2p records no ECC mode: NVML's volatile uncorrected count, which it cannot read
        # (na) with ECC off. Enabled <=> a count; the count = nvidia-smi's volatile uncorrectable.
        ecc = g.get("ecc_unc_volatile", "unknown")
        mode = v.get("ECC Mode/Current", "missing")
        if (mode == "Enabled") != isinstance(ecc, int):
            say("q: GPU%d: ECC: gpup2p count %s, nvidia-smi mode %s", i, ecc, mode)
        elif isinstance(ecc, int):
            unc = [int(x) for k, x in v.items() if k.startswith("ECC Errors/Volatile/")
                   and "Uncorrectable" in k and x.isdigit()]
            if unc and ecc != sum(unc):
                say("q: GPU%d: volatile uncorrected ECC: gpup2p %d, nvidia-smi %d", i, ecc,
                    sum(unc))


def cmp_doctor(live, snap):
    a, b = json.load(open(live)), json.load(open(snap))

    def key(d):
        return {(f["id"], f["subject"]): (f["severity"], f["evidence"]) for f in d["findings"]}
    ka, kb = key(a), key(b)
    # checks that say "live only" offline are not compared, nor the live-only evidence
    live_only = {f["id"] for f in b["findings"]
                 if f["severity"] == "skipped" and "live only" in f["message"]}
    drop = {"dma-buf cpu mmap", "cuDriverGetVersion"}

    def strip(v):
        return v and (v[0], {k: x for k, x in v[1].items() if k not in drop})
    for k in sorted(set(ka) | set(kb)):
        if k[0] not in live_only and strip(ka.get(k)) != strip(kb.get(k)):
            la, lb = ka.get(k), kb.get(k)
            say("doctor: %s %s: live %s, on its snapshot %s", k[0], k[1],
                la[0] if la else "absent", lb[0] if lb else "absent")
            if la and lb and la[0] == lb[0]:
                say("  evidence live %s, snapshot %s", la[1], lb[1])
    if a["host"] != b["host"]:
        say("doctor: host: live %s, snapshot %s", a["host"], b["host"])


def cmp_bench(mine, theirs):
    def load(p):
        out = {}
        for line in open(p):
            f = line.split()
            if len(f) == 2:
                out.setdefault(f[0], []).append(float(f[1]))
        return out
    a, b = load(mine), load(theirs)
    strict = os.environ.get("OR_STRICT_BENCH") == "1"
    print("%-34s %9s %9s %6s" % ("path", "gpup2p", "nvbw", "ratio"))
    for p in sorted(set(a) | set(b)):
        if p not in a or p not in b:
            say("bench: %s: measured by %s only", p, "gpup2p" if p in a else "nvbandwidth")
            continue
        x, y = statistics.median(a[p]), statistics.median(b[p])
        lat = p.startswith("lat_")  # ns per load: lower is better, the ratio nvbandwidth's over gpup2p's
        r = (y / x if x else 0.0) if lat else (x / y if y else 0.0)
        print("%-34s %9.1f %9.1f %5.3fx" % (p, x, y, r))
        if r < 1.0 and strict:
            say("bench: %s: gpup2p %.1f %s, nvbandwidth %.1f (%.3fx)", p, x, "ns" if lat else "GB/s", y, r)


def main(argv):
    what = {"p2p": (cmp_p2p, 2), "nvlink": (cmp_nvlink, 4), "q": (cmp_q, 3),
            "doctor": (cmp_doctor, 2), "bench": (cmp_bench, 2)}
    if len(argv) < 1 or argv[0] not in what or len(argv) - 1 != what[argv[0]][1]:
        print(__doc__, file=sys.stderr)
        return 64
    try:
        what[argv[0]][0](*argv[1:])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("%s: cannot compare: %s" % (argv[0], e))
        return 2
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
