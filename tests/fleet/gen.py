#!/usr/bin/env python3
"""Generate a fleet's doctor and bench output, as pdsh/clush would collect it, with planted differences.

gen.py HEALTHY.json FAULTY.json OUTDIR [--nodes N]
  HEALTHY.json, FAULTY.json: `gpup2p doctor --json` of a healthy fixture and of one with an error
  (old pretty or new compact form: both are read).
Writes OUTDIR/stream.txt (pdsh -w: "host: line", hosts' lines interleaved at random, seeded),
OUTDIR/outdir/ (clush --outdir: one file per host, doctor only) and OUTDIR/plan.json: what was planted,
with the line numbers of the malformed entries, for check.py.
"""
import copy
import json
import os
import random
import sys

PLANT = {
    "error": [17, 230, 411],          # acs.redirect error (the FAULTY document)
    "missing": list(range(200, 208)) + [450],
    "not_run": [99],                  # doctor could not run: exit 69, no findings
    "garbage_too": [120],             # an ssh warning line besides its (clean) doctor output
    "garbage_only": [121],            # only "command not found"
    "truncated": [300],               # its doctor line cut in half
}
# bench: three figures per node; node042 is slow on the first, node333 on the third; node404 is a bit
# slow (0.93 x) on the second, above the default 0.9 fraction: it must not be flagged
BENCH = [
    {"mode": "p2p", "path": "p2p", "src": "GPU0", "dst": "GPU1", "memory": None, "p2p": "on", "op": "write",
     "engine": "ce", "size": 268435456, "base": 48.0},
    {"mode": "p2p", "path": "p2p", "src": "GPU1", "dst": "GPU0", "memory": None, "p2p": "on", "op": "write",
     "engine": "ce", "size": 268435456, "base": 47.0},
    {"mode": "h2d", "path": "h2d", "src": "host", "dst": "GPU0", "memory": "pinned", "p2p": None, "op": None,
     "engine": "ce", "size": 67108864, "base": 25.0},
]
SLOW = {(42, 0): 0.5, (333, 2): 0.8, (404, 1): 0.93}


def name(i):
    return "node%03d" % i


def new_form(doc, host, status):
    """The envelope doctor --json writes from issue 15 on: one compact line."""
    d = copy.deepcopy(doc)
    d["host"] = host
    d["boot_id"] = "boot-" + host
    d["time"] = "2026-11-24T00:00:00Z"
    d["gpup2p"] = {"version": "0.1.0", "argv": ["doctor", "--json"]}
    d["exit_status"] = status
    return [json.dumps(d, separators=(",", ":"))]


def old_form(doc, host):
    d = copy.deepcopy(doc)
    d["host"] = host
    return json.dumps(d, indent=2).split("\n")


def bench_rows(rng, i, plan):
    rows = []
    for k, b in enumerate(BENCH):
        g = round(b["base"] * rng.uniform(0.97, 1.03) * SLOW.get((i, k), 1.0), 2)
        plan["bench"][k][name(i)] = g
        r = {"schema": 1}
        r.update({x: b[x] for x in ("mode", "path", "src", "dst", "memory", "p2p", "op", "engine", "size")})
        r.update({"iters": 20, "reps": 5, "gbps": g, "gbps_min": g, "gbps_max": g, "us": 5.0, "verified": True,
                  "skipped": None})
        rows.append(json.dumps(r, separators=(",", ":")))
    return rows


def main():
    args = sys.argv[1:]
    n = 512
    if "--nodes" in args:
        k = args.index("--nodes")
        n = int(args[k + 1])
        del args[k:k + 2]
    healthy, faulty = (json.load(open(p)) for p in args[:2])
    out = args[2]
    os.makedirs(os.path.join(out, "outdir"), exist_ok=True)
    rng = random.Random(15)
    plan = {"nodes": n, "plant": PLANT, "bench": [{} for _ in BENCH], "slow": [], "malformed": [],
            "clean": []}
    queues = {}
    for i in range(1, n + 1):
        h = name(i)
        if i in PLANT["missing"]:
            continue
        lines = []
        if i in PLANT["garbage_only"]:
            queues[h] = ["bash: gpup2p: command not found"]
            plan["malformed"].append([h, "garbage"])
            continue
        doc = faulty if i in PLANT["error"] else healthy
        if i in PLANT["not_run"]:
            lines = [json.dumps({"schema": 1, "command": "doctor", "host": None, "boot_id": None, "time": "t",
                                 "root": None, "sources": None, "summary": None, "truncated": 0, "findings": [],
                                 "error": "no NVIDIA GPU on the PCI bus", "messages": [], "exit_status": 69},
                                separators=(",", ":"))]
        elif i % 5 == 0:
            lines = old_form(doc, h)
        else:
            lines = new_form(doc, h, 2 if i in PLANT["error"] else 0)
        if i in PLANT["truncated"]:
            lines = [lines[0][:len(lines[0]) // 2]] if len(lines) == 1 else lines[:len(lines) // 2]
            plan["malformed"].append([h, "truncated"])
        with open(os.path.join(out, "outdir", h), "w") as f:
            f.write("\n".join(lines) + "\n")
        if i in PLANT["garbage_too"]:
            lines = ["Warning: Permanently added '%s' (ED25519) to the list of known hosts." % h] + lines
            plan["malformed"].append([h, "garbage"])
        if i not in PLANT["error"] + PLANT["not_run"] + PLANT["truncated"]:
            plan["clean"].append(h)
        queues[h] = lines + bench_rows(rng, i, plan)
    # pdsh prints each host's lines in order, hosts interleaved as their output arrives
    hosts = sorted(queues)
    pos = {h: 0 for h in hosts}
    first_line = {}
    ln = 0
    with open(os.path.join(out, "stream.txt"), "w") as f:
        while hosts:
            h = rng.choice(hosts)
            text = queues[h][pos[h]]
            ln += 1
            first_line.setdefault(h, ln)
            f.write("%s: %s\n" % (h, text))
            pos[h] += 1
            if pos[h] == len(queues[h]):
                hosts.remove(h)
    plan["first_line"] = first_line
    for k, b in enumerate(BENCH):
        v = sorted(plan["bench"][k].values())
        m = len(v)
        med = v[m // 2] if m % 2 else (v[m // 2 - 1] + v[m // 2]) / 2
        plan["slow"] += [[k, h, g] for h, g in sorted(plan["bench"][k].items()) if g < 0.9 * med]
    json.dump(plan, open(os.path.join(out, "plan.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
