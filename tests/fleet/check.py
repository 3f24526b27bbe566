#!/usr/bin/env python3
"""check.py PLAN.json REPORT.json [--dir]: gpup2p report --json found exactly what gen.py planted.
Prints ok/not ok lines. --dir: the report read gen.py's clush --outdir copy (doctor only, no bench,
no ssh noise: the garbage-only host wrote no file)."""
import json
import re
import sys


def expand(s):
    """node[001-003,007],x1 -> names (the single-bracket form gen.py's names fold to)."""
    out = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", s or ""):
        m = re.match(r"^([^\[]*)\[([^\]]*)\](.*)$", item)
        if not m:
            out.append(item)
            continue
        for r in m.group(2).split(","):
            lo, _, hi = r.partition("-")
            for v in range(int(lo), int(hi or lo) + 1):
                out.append("%s%0*d%s" % (m.group(1), len(lo) if lo.startswith("0") else 0, v, m.group(3)))
    return out


def check(cond, what):
    print(("ok - " if cond else "not ok - ") + what)


def main():
    plan = json.load(open(sys.argv[1]))
    rep = json.load(open(sys.argv[2]))
    d = "--dir" in sys.argv
    p = plan["plant"]
    name = lambda i: "node%03d" % i
    errors = [g for g in rep["findings"] if g["severity"] == "error"]
    check(len(errors) == 1 and errors[0]["id"] == "acs.redirect", "one error finding, acs.redirect: %s" %
          [g["id"] for g in errors])
    if errors:
        check(errors[0]["hosts"] == "node[017,230,411]" and errors[0]["count"] == 3,
              "acs.redirect on exactly node[017,230,411]: %s" % errors[0]["hosts"])
    check(not [g for g in rep["findings"] if g["severity"] == "warning"], "no warning finding")
    check(sorted(expand(rep["clean"]["hosts"])) == sorted(plan["clean"]) and
          rep["clean"]["count"] == len(plan["clean"]), "clean hosts exactly those planted clean (%d)" %
          len(plan["clean"]))
    check(len(rep["not_run"]) == 1 and rep["not_run"][0]["exit_status"] == 69 and
          rep["not_run"][0]["hosts"] == name(p["not_run"][0]), "doctor could not run on node099 (exit 69)")
    if not d:
        check(sorted(expand(rep["missing"]["hosts"])) == [name(i) for i in p["missing"]] and
              rep["missing"]["hosts"] == "node[200-207,450]", "missing: node[200-207,450]: %s" %
              rep["missing"]["hosts"])
        check(rep["unexpected"]["count"] == 0, "no host outside --expect")
        want = sorted((k, h) for k, h, g in plan["slow"])
        got = []
        for b in rep["bench"]:
            got += [(b["src"], b["dst"], x["host"]) for x in b["below"]]
        keys = {0: ("GPU0", "GPU1"), 1: ("GPU1", "GPU0"), 2: ("host", "GPU0")}
        check(sorted(got) == sorted(keys[k] + (h,) for k, h in want) and len(want) == 2,
              "below 0.9 x median: exactly node042 (GPU0->GPU1) and node333 (host->GPU0): %s" % got)
        for b in rep["bench"]:
            k = [i for i, v in keys.items() if v == (b["src"], b["dst"])][0]
            v = sorted(plan["bench"][k].values())
            m = len(v)
            med = v[m // 2] if m % 2 else (v[m // 2 - 1] + v[m // 2]) / 2
            check(abs(b["median_gbps"] - med) < 0.006 and b["count"] == m,
                  "%s->%s median %.2f over %d hosts (want %.3f over %d)" % (b["src"], b["dst"], b["median_gbps"],
                                                                           b["count"], med, m))
        first = plan["first_line"]
        want = sorted([h, kind] for h, kind in plan["malformed"])
        got = sorted([m["host"], "truncated" if "truncated" in m["why"] else "garbage"] for m in rep["malformed"])
        check(got == want, "malformed: exactly %s: %s" % (want, got))
        # garbage lines are the host's first line; a truncated document starts at the host's first line too
        check(all(m["line"] == first[m["host"]] and m["source"] == "stdin" for m in rep["malformed"]),
              "each malformed entry names its line of stdin: %s" % [(m["host"], m["line"]) for m in rep["malformed"]])
        check(rep["exit_status"] == 2 and rep["hosts"] == plan["nodes"] - len(p["missing"]),
              "exit 2, %d hosts answered" % rep["hosts"])
    else:
        check([m["host"] for m in rep["malformed"]] == ["node300"] and rep["malformed"][0]["line"] == 1,
              "the directory: node300's file truncated at line 1")
        check(rep["bench"] == [], "no bench figures in the directory")


if __name__ == "__main__":
    main()
