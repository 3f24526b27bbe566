#!/usr/bin/env python3
"""doctor_same.py LABEL ROOT ROOT_JSON SNAPSHOT SNAPSHOT_JSON [...]

For each group of five: the outputs of gpup2p --root ROOT doctor --json and of the same on
SNAPSHOT hold the same findings (each root's path written as ROOT), summary, host and exit status.
Prints one TAP line per group (test_snapshot_doctor.sh)."""
import json
import os
import sys


def load(root, path):
    with open(path) as f:
        d = json.load(f)
    return d, json.loads(json.dumps(d["findings"]).replace(os.path.realpath(root), "ROOT"))


def main(args):
    for i in range(0, len(args) - 4, 5):
        label, root, rjson, snap, sjson = args[i:i + 5]
        try:
            (a, fa), (b, fb) = load(root, rjson), load(snap, sjson)
        except (OSError, ValueError, KeyError) as e:
            print("not ok - %s: no doctor output (%s)" % (label, e))
            continue
        bad = [(x, y) for x, y in zip(fa, fb) if x != y]
        same = not bad and len(fa) == len(fb) > 0 and a["summary"] == b["summary"] and \
            a["host"] == b["host"] and a["exit_status"] == b["exit_status"]
        print("%s - %s: doctor on the snapshot %s doctor on the root" %
              ("ok" if same else "not ok", label, "=" if same else "differs from"))
        for x, y in bad[:3]:
            print("  root:     %s\n  snapshot: %s" % (x, y))
        if not same and not bad:
            print("  %d and %d findings, summaries %s and %s" % (len(fa), len(fb), a["summary"], b["summary"]))


if __name__ == "__main__":
    main(sys.argv[1:])
