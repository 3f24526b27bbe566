#!/bin/bash
# Snapshot cost per PCI function, counted in system calls (strace -c), not in seconds (a loaded CI
# machine inflates time, not counts). Fixture: tests/perf/scale.sh with 150 functions (8 GPUs,
# 8 ConnectX PFs, 134 VFs, each VF an RDMA device), kept in $BUILD/perf.
#
# What one VF needs, counted by hand (the capture, beyond what topo's scan reads):
#   its folder 1 mkdirat, its /sys/bus/pci/devices link 1 symlinkat, the folder opened beneath
#   the root 3 (open root, openat2, close) + 1 close; 13 files present of the 27 names, each
#   8 (openat, fstat, 2 pread, close; openat, write, close) = 104; 14 absent names 1 openat each
#   = 14; the driver link: readlinkat through its folder 5 and realpath about 20 readlinks, its
#   link 1; iommu_group absent 4; net/ absent 3, infiniband/ listed 8 + 1 mkdirat; its RDMA
#   device: 2 realpaths about 40, 2 links, parent and ports absent 6. About 220.
# Before the folders were made once and the files opened through their folder's fd, the capture
# took about 440 per function (a mkdir -p per file: 200 mkdir calls per function, and 3 calls
# to resolve each file from the root). Bound: 300 per function. Folders: each made once, so the
# mkdir/mkdirat calls are at most the folders the snapshot holds (the old code: 40 times that).
# The archive (no --dir) is streamed into gzip as it is captured: no file, folder or link is created
# but the temporary folder beside it and the archive itself, whatever the number of functions. Staged
# in a folder and packed by tar, it created 4,375 here (429 calls per function beyond topo's; streamed:
# 162). Bound: 250 per function, 4 creations.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
export NO_COLOR=1
unset GPUP2P_ROOT
N=150
FX=$BUILD/perf/fx$N
if ! strace -f -o /dev/null true 2>/dev/null; then
	nok "snapshot cost: strace is missing or cannot trace here (make deps installs it)"
	exit 0
fi
if ! bash tests/perf/scale.sh --fixture $N "$FX" >/dev/null; then
	nok "snapshot cost: generating the $N-function fixture"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# calls NAME: the total of strace -c's summary; mkdirs NAME: the mkdir and mkdirat calls
calls() { awk '$NF == "total" { print $(NF - 2) }' "$T/$1"; }
mkdirs() { awk '$NF == "mkdir" || $NF == "mkdirat" { n += $4 } END { print n + 0 }' "$T/$1"; }
strace -f -c -o "$T/topo" "$BIN" --root "$FX" topo >/dev/null 2>&1
strace -f -c -o "$T/snap" "$BIN" --root "$FX" -q snapshot --dir "$T/s"; rc=$?
fns=$(find "$T/s/sys/bus/pci/devices" -mindepth 1 -maxdepth 1 | wc -l)
dirs=$(find "$T/s" -type d | wc -l)
st=$(calls topo); ss=$(calls snap); md=$(mkdirs snap)
if [ $rc -ne 0 ] || [ "$fns" -lt $N ] || [ -z "$st" ] || [ -z "$ss" ]; then
	nok "snapshot cost: snapshot exit $rc, $fns functions, counts '$st' '$ss'"
	exit 0
fi
per=$(((ss - st) / fns))
[ "$per" -le 300 ] && ok "snapshot cost: $per system calls per function beyond topo's (bound 300; $ss in all)" ||
	nok "snapshot cost: $per system calls per function beyond topo's, bound 300 ($ss in all, topo $st)"
[ "$md" -le $((dirs + 8)) ] && ok "snapshot cost: $md mkdir calls for $dirs folders (each made once)" ||
	nok "snapshot cost: $md mkdir calls for $dirs folders (bound: one per folder)"

# the archive: nothing staged (4 creations at most), fewer calls per function than the folder
strace -f -c -o "$T/arch" "$BIN" --root "$FX" -q snapshot "$T/a.tar.gz"; rc=$?
sa=$(calls arch)
strace -f -o "$T/created" -e trace=mkdir,mkdirat,symlink,symlinkat,creat,open,openat "$BIN" --root "$FX" -q snapshot "$T/b.tar.gz"
made=$(grep -cE 'mkdir|symlink|creat\(|O_CREAT' "$T/created")
if [ $rc -ne 0 ] || [ -z "$sa" ] || [ ! -s "$T/b.tar.gz" ]; then
	nok "snapshot cost: archive exit $rc, count '$sa'"
	exit 0
fi
per=$(((sa - st) / fns))
[ "$per" -le 250 ] && ok "snapshot cost: archive $per system calls per function beyond topo's (bound 250; $sa in all)" ||
	nok "snapshot cost: archive $per system calls per function beyond topo's, bound 250 ($sa in all, topo $st)"
[ "$made" -le 4 ] && ok "snapshot cost: the archive creates $made files and folders (its own and its temporary folder)" ||
	nok "snapshot cost: the archive creates $made files, folders and links (bound 4: nothing staged)"
