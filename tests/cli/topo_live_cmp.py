#!/usr/bin/env python3
"""topo --json of the replayed h200x2-live snapshot against the output recorded live there.

numa_affinity and gpu_numa_id came after the live output was recorded (nvidia-smi topo -m's NUMA
columns, compared cell for cell in test_topo_oracle.sh), and so did the envelope (gpup2p(1), JSON
OUTPUT): the rest must equal it. Used by tests/cli/test_live.sh and tests/pkg/test_deb.sh.
usage: topo_live_cmp.py NEW.json LIVE.json (exit 1, with why, when they differ)"""
import json
import sys

new, old = (json.load(open(f)) for f in sys.argv[1:3])
assert new.pop("command") == "topo" and new.pop("exit_status") == 0 and new.pop("messages") == []
assert new.pop("gpup2p")["argv"] == ["topo", "--json"]
for d in new["devices"]:
    del d["numa_affinity"], d["gpu_numa_id"]
assert new == old, "the replay differs from the live output"
