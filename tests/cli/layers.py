#!/usr/bin/env python3
"""The may-use rules of HACKING.md against the includes of libcore/ and cli/.

layers.py [--top DIR]: prints one line per include that breaks a rule ("FILE:LINE: MODULE may not
use OWNER (#include ...)"), per circle in the table, per header nobody owns and per module the table
lacks; exit 1 if any, 0 when the tree keeps the rules."""
import os
import re
import sys

top = sys.argv[sys.argv.index("--top") + 1] if "--top" in sys.argv else "."
INC = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
bad = []


def table():
    rows, on = {}, False
    for line in open(os.path.join(top, "HACKING.md"), encoding="utf-8"):
        if line.startswith("| module | owns"):
            on = True
            continue
        if on and not line.startswith("|"):
            break
        if on and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = (cells[1].split(), set(cells[2].split()))
    return rows


rules = table()
owner = {h: m for m, (hs, _) in rules.items() for h in hs}
lib = os.path.join(top, "libcore")


def module_of(rel):
    """libcore/pci/sysfs.c -> pci; libcore/topo.c -> topo; include/gpup2p/x.h -> owner of x"""
    parts = rel.split("/")
    if parts[0] == "include":
        return owner.get(parts[-1][:-2])
    return parts[0] if len(parts) > 1 else parts[0].rsplit(".", 1)[0]


for d, _, files in os.walk(lib):
    for f in sorted(files):
        if not f.endswith((".c", ".h")):
            continue
        path = os.path.join(d, f)
        rel = os.path.relpath(path, lib)
        me = module_of(rel)
        if me is None:
            bad.append(f"libcore/{rel}: no module owns this header (add it to HACKING.md's table)")
            continue
        if me not in rules:
            bad.append(f"libcore/{rel}: module {me} is not in HACKING.md's table")
            continue
        for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
            m = INC.match(line)
            if not m or m.group(1).startswith("../"):
                continue
            inc = m.group(1)
            if inc.startswith("gpup2p/"):
                o = owner.get(inc[7:-2])
            elif "/" in inc:
                o = inc.split("/")[0]
            else:
                o = me
            if o != me and o not in rules[me][1]:
                bad.append(f"libcore/{rel}:{n}: {me} may not use {o} (#include \"{inc}\")")

for f in sorted(os.listdir(os.path.join(top, "cli"))):
    if not f.endswith((".c", ".h")):
        continue
    for n, line in enumerate(open(os.path.join(top, "cli", f), encoding="utf-8"), 1):
        m = INC.match(line)
        if m and not m.group(1).startswith("gpup2p/") and not os.path.exists(os.path.join(top, "cli", m.group(1))):
            bad.append(f"cli/{f}:{n}: cli/ includes gpup2p/*.h and its own headers only (#include \"{m.group(1)}\")")

# the table itself: no circle (depth-first search over "may use")
state = {}


def visit(m, path):
    if state.get(m) == 1:
        bad.append("circle in HACKING.md's table: " + " -> ".join(path[path.index(m):] + [m]))
        return
    if state.get(m) == 2:
        return
    state[m] = 1
    for u in sorted(rules.get(m, ((), set()))[1]):
        if u not in rules:
            bad.append(f"HACKING.md: {m} may use {u}, which is not a module of the table")
            continue
        visit(u, path + [m])
    state[m] = 2


for m in sorted(rules):
    visit(m, [])
print("\n".join(bad))
sys.exit(1 if bad else 0)
