#!/usr/bin/env python3
"""Every fact `gpup2p bar` shows in its text table is in its CSV and JSON lines record of the same device
(one field list prints them: issue 23). usage: bar_fields.py TEXT CSV JSONL; prints TAP lines, exits 1 on
any difference."""
import csv
import json
import re
import sys

UNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def same_size(human, n):
    """'16M' against a byte count: the table rounds to its unit."""
    m = re.fullmatch(r"(\d+)([KMGT]?)", human)
    return bool(m) and n is not None and int(n) // UNIT[m[2]] == int(m[1])


def blocks(text):
    """The device blocks of the text output and the closing IOMMU lines."""
    devs, tail = [], []
    for line in text.splitlines():
        if re.match(r"(GPU\d+  )?[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d \[", line):
            devs.append([line])
        elif line.startswith("  ") and devs:
            devs[-1].append(line)
        elif line:
            tail.append(line)
    return devs, tail


def check(block, tail, c, j):
    """The differences between one device's block and its CSV row c and JSON lines record j."""
    bad = []

    def want(what, ok):
        if not ok:
            bad.append(what)

    m = re.match(r"(?:(GPU\d+)  )?(\S+) \[([0-9a-f]{4}):([0-9a-f]{4})\] ?(.*)", block[0])
    for k, v in (("name", m[1] or ""), ("bdf", m[2]), ("vendor_id", m[3]), ("device_id", m[4]),
                 ("device_name", m[5])):
        want(k, c[k] == v and (j[k] or "") == v)
    bars = [re.match(r"  (\d+) +(\d+[KMGT]?)  (.+?) {2,}(assigned|UNASSIGNED)", l) for l in block[2:]]
    bars = [b for b in bars if b]
    cb = [x.split(":") for x in c["bars"].split(";")] if c["bars"] else []
    want("bars", len(cb) == len(bars) == len(j["bars"]) and all(
        b[1] == x[0] and same_size(b[2], x[1]) and b[3] == x[2] and b[4] == x[3] and int(x[0]) == y["index"]
        and int(x[1]) == y["size"] and y["assigned"] == (b[4] == "assigned") for b, x, y in zip(bars, cb, j["bars"])))
    for l in block:
        if (m := re.match(r"  VRAM (\S+), aperture (\S+)(?: \(BAR (\d+)\))?: (.+?)"
                          r"(?: \(VRAM size unknown: (.*)\))?$", l)):
            want("vram", (m[1] == "unknown") == (c["vram"] == "") and (m[1] == "unknown" or same_size(m[1], c["vram"])))
            want("aperture", m[2] == "none" or same_size(m[2], c["aperture_size"]))
            want("aperture_bar", (m[3] or "") == c["aperture_bar"])
            want("verdict", m[4] == c["verdict"] == j["verdict"])
            want("verdict_why", (m[5] or "") == c["verdict_why"] == (j["verdict_why"] or ""))
        elif (m := re.match(r"  driver BAR1 (\S+)$", l)):
            want("driver_bar1", same_size(m[1], c["driver_bar1"]) and same_size(m[1], j["driver_bar1"]))
        elif (m := re.match(r"  Resizable BAR: (.*)", l)):
            ent = re.findall(r"BAR (\d+) current (\S+), supported ([^;]+)", m[1])
            state = "absent" if m[1] == "not supported" else "unknown" if m[1].startswith("unknown") else "present"
            ce = [x.split(":") for x in c["rebar_entries"].split(";")] if c["rebar_entries"] else []
            want("rebar", c["rebar"] == state == j["rebar"]["state"] and len(ce) == len(ent) and all(
                e[0] == x[0] and same_size(e[1], x[1]) and len(e[2].split(",")) == len(x[2].split())
                and all(same_size(h, b) for h, b in zip(e[2].split(","), x[2].split())) for e, x in zip(ent, ce)))
        elif (m := re.match(r"  IOMMU group(?:: none| (\d+), type (.*))$", l)):
            want("iommu_group", (m[1] or "") == c["iommu_group"] and (m[2] or "") == c["iommu_type"]
                 and j["iommu_group"] == (int(m[1]) if m[1] else None))
        elif (m := re.match(r"  advice: (.*)", l)):
            want("advice", m[1] == c["advice"] == j["advice"])
    want("advice (none)", any(l.startswith("  advice: ") for l in block) or c["advice"] == "" and j["advice"] is None)
    m = re.match(r"IOMMU: (\S+) \((?:units (\S+)|no units in /sys/class/iommu), (\d+) groups\); kernel command "
                 r"line: (.*)", tail[0])
    note = tail[1][len("Note: "):] if len(tail) > 1 and tail[1].startswith("Note: ") else ""
    want("iommu", m and c["iommu_mode"] == m[1] == j["iommu_mode"] and c["iommu_units"] == (m[2] or "")
         and c["iommu_groups"] == m[3] == str(j["iommu_groups"]) and c["iommu_note"] == note
         and (c["iommu_cmdline"] or "no IOMMU options") == m[4])
    return bad


def main():
    devs, tail = blocks(open(sys.argv[1]).read())
    rows = list(csv.DictReader(open(sys.argv[2])))
    recs = [json.loads(l) for l in open(sys.argv[3])]
    fail = len(devs) != len(rows) or len(rows) != len(recs)
    print(("not ok" if fail else "ok") +
          f" - {len(devs)} devices in the table, {len(rows)} CSV rows, {len(recs)} JSON lines")
    for block, c, j in zip(devs, rows, recs):
        try:
            bad = check(block, tail, c, j)
        except (KeyError, TypeError, IndexError) as e:
            bad = [f"missing {e}"]
        fail |= bool(bad)
        print(f"not ok - {c.get('bdf')}: the table's {', '.join(bad)} not in CSV/JSONL as shown" if bad else
              f"ok - {c['bdf']}: every fact of the table in CSV and JSON lines")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
