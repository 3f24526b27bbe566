#!/bin/bash
# Scale: topo on a machine with 2000 GPU/NIC functions (8 GPUs, 8 ConnectX PFs and 1984 SR-IOV VFs,
# each VF an RDMA device: tests/perf/scale.sh) must not spend more than a fraction of a second of
# CPU. The matrix has 4 million cells; before the per-pair and per-lookup costs were cut, topo spent
# about 1 s of user CPU here (4.5 s at 4000 functions), now about 0.25 s. The bound is on user CPU
# time, which a loaded machine does not inflate the way it inflates wall-clock time; the time spent
# in the kernel reading sysfs grows linearly and is left to tests/perf/scale.sh to report.
# The fixture is generated once into $BUILD/perf (a minute on a slow disk) and kept.
set -u
BUILD=${BUILD:-build}
BIN=$BUILD/gpup2p
. tests/cli/lib.sh
export NO_COLOR=1
unset GPUP2P_ROOT
FX=$BUILD/perf/fx2000

if ! bash tests/perf/scale.sh --fixture 2000 "$FX" >/dev/null; then
	nok "scale: generating the 2000-function fixture"
	exit 0
fi
# the fixture is what the spec says: 8 GPUs and 1992 NICs (8 PFs + 1984 VFs)
"$BIN" --root "$FX" topo >"$FX.out" 2>/dev/null
gpus=$(head -1 "$FX.out" | tr '\t' '\n' | grep -c '^GPU[0-9]*$')
nics=$(grep -c '^  NIC[0-9]*: mlx5_[0-9]*$' "$FX.out")
rm -f "$FX.out"
if [ "$gpus" -eq 8 ] && [ "$nics" -eq 1992 ]; then
	ok "scale: 8 GPUs and 1992 NICs in the matrix"
else
	nok "scale: the fixture shows $gpus GPUs and $nics NICs, want 8 and 1992"
fi

read -r wall user sys < <(bash tests/perf/scale.sh --measure "$BIN" --root "$FX" topo)
if awk -v u="$user" 'BEGIN { exit !(u < 0.6) }'; then
	ok "scale: topo on 2000 functions: $user s user CPU (bound 0.6 s; wall $wall s, sys $sys s)"
else
	nok "scale: topo on 2000 functions took $user s user CPU, bound 0.6 s (wall $wall s, sys $sys s)"
fi
