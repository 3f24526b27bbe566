#!/usr/bin/env python3
"""One field list per record (issue 23): a record's field list (struct gp_field, read from the C source)
against what the binary printed from it. usage:
  record_fields.py SOURCE LIST                        the list alone: every JSON key has its CSV column
  record_fields.py SOURCE LIST CSV JSONL [TEXT VIEW]  and the outputs of one command run in each format
CSV: the --csv output (with its header); JSONL: the --jsonl output of the same run; TEXT: the text output
(-q) whose first line is the table's header, VIEW the view it shows (none: a list without views, k: the
list's GP_FIELD_VIEW(k)); VIEW block: TEXT (without -q) is a block per record, then after an empty line
what the command concludes: each record's first line unindented, the others "  LABEL..." with a label of
the list (or a list's table of its own, right after the first line). Checks: the CSV header is the list's CSV columns in column order; each JSON
lines record has only the list's keys (and the envelope's schema and command), its values the same as
its CSV row's; every field with a key has a CSV column; the text table's header is the list's headers
of that view in their order. RECORD_FIELDS_WALL: keys timed by the CPU's clock (space-separated), whose
values differ from run to run: only whether they are there is compared. Prints TAP lines, exits 1 on any
difference."""
import csv
import json
import os
import re
import sys

ENTRY = re.compile(r'^\s*\{ (NULL|"[^"]*"), (NULL|"[^"]*"), (\d+), (NULL|"[^"]*"), (GP_FIELD_\w+), ([^,]+), '
                   r'(\w+), (\w+), (\d+), (\w+) \},\s*$')


def string(tok):
    return None if tok == "NULL" else tok[1:-1]


def parse(source, name):
    """The list's fields: key, csv, col, header, type, views (a set; empty: every view), pos, order."""
    text = open(source).read()
    m = re.search(r"static const struct gp_field " + re.escape(name) + r"\[\] = \{\n(.*?)\n\};", text, re.S)
    if not m:
        sys.exit(f"record_fields.py: no list {name} in {source}")
    macros = dict(re.findall(r"^#define (\w+) \(((?:[^()]|\([^()]*\))*)\)", text, re.M))
    macros.update(re.findall(r"^#define (\w+) (GP_FIELD_\w+)$", text, re.M))
    fields = []
    for n, line in enumerate(m[1].splitlines()):
        e = ENTRY.match(line)
        if not e:
            sys.exit(f"record_fields.py: {source}: {name}: not a field entry: {line.strip()}")
        flags = " ".join(macros.get(w, w) for w in re.split(r"\s*\|\s*", e[6]))
        fields.append(dict(key=string(e[1]), csv=string(e[2]), col=int(e[3]), header=string(e[4]),
                           type=e[5], views={int(v) for v in re.findall(r"GP_FIELD_VIEW\((\d)\)", flags)},
                           pos=int(e[9]), order=n, nosep="GP_FIELD_NOSEP" in flags))
    return fields


def same(v, cell, f):
    """Whether a JSON value and the CSV cell of the same field say the same."""
    if f["type"] == "GP_FIELD_JSON" or v is None:
        return v is not None or cell == "" or not re.fullmatch(r"[-+0-9.e]+|true|false", cell)
    if isinstance(v, bool):
        return cell in (("true", "yes") if v else ("false", "no"))
    if isinstance(v, list):
        return cell == " ".join(v)
    if isinstance(v, (int, float)):
        if f["type"] == "GP_FIELD_HEX":
            return cell == "0x%04x" % v
        try:
            return float(cell) == v
        except ValueError:
            return False
    return cell == v


def main():
    source, name = sys.argv[1], sys.argv[2]
    fields = parse(source, name)
    bad = []
    what = f"{name} ({source})"
    nocsv = [f["key"] for f in fields if f["key"] and not f["csv"]]
    cols = sorted((f for f in fields if f["csv"]), key=lambda f: f["col"])
    bad += [f"JSON key {k} has no CSV column" for k in nocsv]
    bad += [f"CSV column {c} declared twice" for c in {f["col"] for f in cols}
            if sum(g["col"] == c for g in cols) > 1]
    if len(sys.argv) == 3:
        report(bad, f"{what}: every JSON key has its CSV column, each column once")
        return
    header, *rows = list(csv.reader(open(sys.argv[3]))) or [[]]
    recs = [json.loads(line) for line in open(sys.argv[4])]
    wall = os.environ.get("RECORD_FIELDS_WALL", "").split()
    if header != [f["csv"] for f in cols]:
        bad.append(f"CSV header {header} is not the list's columns {[f['csv'] for f in cols]}")
    if len(rows) != len(recs) or not rows:
        bad.append(f"{len(rows)} CSV rows, {len(recs)} JSON lines records")
    bykey = {f["key"]: f for f in fields if f["key"]}
    for i, (row, rec) in enumerate(zip(rows, recs)):
        for k, v in rec.items():
            if k in ("schema", "command"):
                continue
            f = bykey.get(k)
            if not f:
                bad.append(f"record {i + 1}: JSON key {k} is not in the list")
            elif f["csv"] and f["csv"] in header and not same(v, row[header.index(f["csv"])], f) and \
                    not (k in wall and (v is None) == (row[header.index(f["csv"])] == "")):
                bad.append(f"record {i + 1}: {k} is {v!r} in JSON, {row[header.index(f['csv'])]!r} in CSV")
    if len(sys.argv) > 5 and sys.argv[6] == "block":
        labels = [f["header"] + ("" if f["nosep"] else ": ") for f in fields if f["header"]]
        nested = sum(f["header"] == "" for f in fields) > 1  # a table of its own, right after the first line
        text = [line for line in open(sys.argv[5]).read().rsplit("\n\n", 1)[0].splitlines() if line]
        titles = [line for line in text if not line.startswith(" ")]
        if len(titles) != len(rows):
            bad.append(f"{len(titles)} text blocks, {len(rows)} CSV rows")
        table = False
        for line in text:
            labelled = any(line[2:].startswith(x) for x in labels)
            table = not line.startswith(" ") or (table and not labelled)
            if line.startswith("  ") and not labelled and not (nested and table):
                bad.append(f"text line {line!r} is no field's label")
    elif len(sys.argv) > 5:
        view = None if sys.argv[6] == "none" else int(sys.argv[6])
        shown = sorted((f for f in fields if f["header"] and (not f["views"] or view in f["views"])),
                       key=lambda f: (f["pos"], f["order"]))
        first = open(sys.argv[5]).readline().rstrip("\n")
        if not shown or re.split(r" {2,}", first.strip()) != [f["header"] for f in shown]:
            bad.append(f"text header {first!r} is not the list's {[f['header'] for f in shown]}")
    report(bad, f"{what}: CSV, JSON lines{' and text' if len(sys.argv) > 5 else ''} printed from the list")


def report(bad, title):
    if bad:
        print(f"not ok - {title}")
        for b in bad[:20]:
            print(f"#   {b}")
        sys.exit(1)
    print(f"ok - {title}")


if __name__ == "__main__":
    main()
