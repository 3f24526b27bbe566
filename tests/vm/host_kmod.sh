#!/bin/bash
# After the "kmod" guest: the bytes the guest wrote through gpup2p mappings are in the ivshmem
# backing file at the BAR offsets the stub gave (expect.txt: BAR-OFFSET LENGTH SEED [PATTERN-OFFSET]).
set -u
BUILD=${BUILD:-build}
ws=$BUILD/${GPUP2P_VM:-vm}/ws-kmod
python3 - "$ws/ivs0" "$ws/expect.txt" <<'PY'
import sys
M = (1 << 64) - 1
def pat(seed, i):
    x = (((i + 1) * 0x9e3779b97f4a7c15) & M) ^ seed
    x ^= x >> 29
    return ((x * 0xbf58476d1ce4e5b9) & M) >> 56
try:
    mem = open(sys.argv[1], "rb").read()
    lines = [l.split() for l in open(sys.argv[2]) if l.strip()]
except OSError as e:
    print(f"not ok - host: cannot read the guest's results: {e}")
    sys.exit(0)
print(("ok" if lines else "not ok") + f" - host: {len(lines)} regions to check in the ivshmem backing file")
for f in lines:
    off, n, seed = int(f[0]), int(f[1]), int(f[2])
    po = int(f[3]) if len(f) > 3 else 0
    bad = next((j for j in range(n) if mem[off + j] != pat(seed, po + j)), None)
    print(("ok" if bad is None else "not ok") +
          f" - host sees the guest's {n} bytes at BAR offset {off:#x} (seed {seed})" +
          ("" if bad is None else f": first difference at +{bad}"))
PY
