#!/bin/bash
# Snapshot cost per PCI function, counted in system calls (strace -c), not in seconds (a loaded CI
# machine inflates time, not counts). Fixture: tests/perf/scale.sh with 150 functions (8 GPUs,
# 8 ConnectX PFs, 134 VFs, each VF an RDMA device), kept in $BUILD/perf.
#
# What one VF costs, counted by hand. The scan (topo's, which snapshot runs first) opens and lists its
# folder once (openat2, fstat, 2 getdents, close: the names it lacks are not tried) and reads each file
# once: vendor, device, class, subsystem_vendor and subsystem_device with one openat, read and close
# each, resource 4, config 5 (256 bytes and the 4 that tell the extended space), the driver link 2
# (where the folder lies, the link; its place from the cache), its NUMA node and CPU list 3 each, the
# physfn link 1, its RDMA device 6 (net/ is not asked: the listing has none): 44. Before (main 252ccc2) libpci's own pass read
# vendor, device, class, the subsystem ids and resource again by absolute path, and the folder was
# opened 3 times and listed twice: 77 per function on this fixture, the archive 144 in all.
# The capture: its folder listed 5, the 13 files the listing shows 3 each (config 4: a whole page
# needs a second read to see its end), the driver and physfn links 1 each (their targets from
# the cache), infiniband/ listed 5, its RDMA device about 17 (the class link resolved 3, its folder
# listed 6, the uverbs link 3 and ibdev 5): about 70. The folder (--dir) adds a mkdirat, symlinkat or
# openat+write+close per member.
# Before the folders were listed (main 15b1099), every one of the 27 names was tried, each file read
# with openat, fstat, 2 preads and close, each link's target resolved from the root (10 calls), and
# every resolution opened and closed the root. Per function here (182: the 150 and 32 bridges):
# topo 123 -> 77, the archive 285 -> 144 in all (162 -> 67 beyond topo's), the folder 201 -> 121
# beyond topo's; at 1000 functions the archive 297,000 calls -> 156,000 (lspci -tv 54,000).
# Then (main ce475e1) the capture read again what the scan had read: each function's folder opened and
# listed a second time, its identity, resource, config space, NUMA node, CPU list and links read twice.
# Now the scan hands each function to the capture while its folder is open (gp_pci_scan_each), with the
# bytes it read whole; a folder's listing ends at a read that left room for more where the file system
# fills each (ext4, xfs, btrfs, tmpfs, overlayfs: one getdents64, not two). Per function here: topo
# 47 -> 43, the archive 115 -> 66 in all (67 -> 23 beyond topo's), the folder 121 -> 76 beyond topo's.
# Bounds, about 5% above today's and above what a file system that needs the second getdents64 gives
# (topo 44, the archive 70 in all and 25 beyond topo's, the folder 80): topo 45, the archive 72 in all
# and 27 beyond topo's, the folder 82 beyond topo's. Then (main 4e31b24) the scan still resolved each
# RDMA device's class link to name the NICs, which the snapshot does not use and its capture resolves
# again: 4 calls a device. The scan a snapshot runs no longer does: the archive 23 -> 20 beyond topo's
# (22 where the second getdents64 is needed): bound 22. Folders: each made once, so the mkdir/mkdirat
# calls are at most the folders the snapshot holds. The archive (no --dir) is compressed as it is
# captured: no file, folder or link is created but the temporary folder beside it and the archive
# itself.
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
per=$(((st + fns - 1) / fns))
[ "$per" -le 45 ] && ok "snapshot cost: topo's scan $per system calls per function (bound 45; $st in all)" ||
	nok "snapshot cost: topo's scan $per system calls per function, bound 45 ($st in all)"
per=$(((ss - st) / fns))
[ "$per" -le 82 ] && ok "snapshot cost: $per system calls per function beyond topo's (bound 82; $ss in all)" ||
	nok "snapshot cost: $per system calls per function beyond topo's, bound 82 ($ss in all, topo $st)"
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
[ "$per" -le 22 ] && ok "snapshot cost: archive $per system calls per function beyond topo's (bound 22; $sa in all)" ||
	nok "snapshot cost: archive $per system calls per function beyond topo's, bound 22 ($sa in all, topo $st)"
per=$(((sa + fns - 1) / fns))
[ "$per" -le 72 ] && ok "snapshot cost: archive $per system calls per function in all (bound 72)" ||
	nok "snapshot cost: archive $per system calls per function in all, bound 72 ($sa calls)"
[ "$made" -le 4 ] && ok "snapshot cost: the archive creates $made files and folders (its own and its temporary folder)" ||
	nok "snapshot cost: the archive creates $made files, folders and links (bound 4: nothing staged)"
# what the scan read is not read again: each function's vendor (read by the scan's precheck) opened once
vendor=$(grep -c '"vendor"' "$T/created")
[ "$vendor" -le "$fns" ] && ok "snapshot cost: each function's vendor opened once ($vendor for $fns functions)" ||
	nok "snapshot cost: $vendor opens of vendor for $fns functions (the capture read again what the scan read)"
# names past tar's 100 bytes go in ustar's prefix field: no GNU long-name member (two blocks more to
# compress each) for a name that fits there (main ce475e1: most of the members here)
long=$(gzip -dc "$T/b.tar.gz" | python3 -c '
import sys
d, n, i = sys.stdin.buffer.read(), 0, 0
while i + 512 <= len(d) and d[i:i + 512].strip(b"\0"):
	size = int(d[i + 124:i + 136].strip(b"\0 ") or b"0", 8)
	n += d[i:i + 13] == b"././@LongLink" and d[i + 156:i + 157] == b"L"
	i += 512 * (1 + (size + 511) // 512)
print(n)')
[ "$long" = 0 ] && ok "snapshot cost: no long-name member where ustar's prefix holds the name" ||
	nok "snapshot cost: $long GNU long-name members for names ustar's prefix holds"

# A full healthy host (SCALE_HOST=full: every RDMA device's port 1 with state, rate, link layer, GID
# types, counters/ and hw_counters/, about 25 files), same 150 functions. Each device's folder is
# opened beneath the root once, its ports/, each port's folder and their counters/, hw_counters/,
# gid_attrs/types opened through it by one name each and listed once, each file read with openat,
# read and close. Before (main 9d3d766) every port file was opened by its full path from the root
# (openat2, fstat, 2 preads, close) and each folder listed as a DIR stream: the archive 224 system
# calls per function in all (40,760), then 193 (35,078, main ce475e1), now 132 (23,861: the capture in
# the scan, one getdents64 per folder, no fstat after an open of a folder, device nodes read through
# their listed folder). Bound about 5% above, and above the 141 of a file system that needs a second
# getdents64 per folder: 145.
FXF=$BUILD/perf/fxfull$N
if ! SCALE_HOST=full bash tests/perf/scale.sh --fixture $N "$FXF" >/dev/null; then
	nok "snapshot cost: generating the full $N-function fixture"
	exit 0
fi
strace -f -c -o "$T/full" "$BIN" --root "$FXF" -q snapshot "$T/f.tar.gz"; rc=$?
sf=$(calls full)
fns=$(find "$FXF/sys/bus/pci/devices" -mindepth 1 -maxdepth 1 | wc -l)
ports=$(tar -tzf "$T/f.tar.gz" 2>/dev/null | grep -c '/ports/1/hw_counters/$')
if [ $rc -ne 0 ] || [ -z "$sf" ] || [ "$ports" -lt $((N - 16)) ]; then
	nok "snapshot cost: full host exit $rc, count '$sf', $ports ports with hw_counters"
	exit 0
fi
per=$(((sf + fns - 1) / fns))
[ "$per" -le 137 ] && ok "snapshot cost: full host, archive $per system calls per function in all (bound 137; $sf calls)" ||
	nok "snapshot cost: full host, archive $per system calls per function in all, bound 137 ($sf calls)"

# Where a folder lies is known from the link that leads to it (its text names a place reached through
# no link: gp_root_link_open), not read back from /proc/self/fd, and each RDMA device's class entry is
# resolved by the capture alone. Before (main 4e31b24), per function here: its folder read back once,
# each RDMA device's twice (the scan's resolution to name the NICs, then the capture's) and each uverbs
# folder's once: 620 read-backs; the class entries opened through their links 426 times (284 for
# /sys/class/infiniband); each port's gid_attrs/ opened and listed to reach types/ (142). Now: 15
# read-backs in all, whatever N (the link cache's places), none of the entries opened through its link,
# types/ opened from the port's folder in one openat2. Bounds: a tenth of a read-back per function, at
# most one open through its link per RDMA device, no gid_attrs/ opened.
strace -f -o "$T/links" -e trace=openat,openat2,readlink "$BIN" --root "$FXF" -q snapshot "$T/g.tar.gz"
back=$(grep -c 'readlink("/proc/self/fd/' "$T/links")
cls=$(grep -cE 'openat2\(.*"sys/class/infiniband/[^"/]+"' "$T/links")
ga=$(grep -c '"gid_attrs",' "$T/links")
dev=$(find "$FXF/sys/class/infiniband" -mindepth 1 -maxdepth 1 | wc -l)
[ "$back" -le $((fns / 10)) ] && ok "snapshot cost: full host, $back places read back from /proc for $fns functions (bound $((fns / 10)))" ||
	nok "snapshot cost: full host, $back places read back from /proc/self/fd for $fns functions, bound $((fns / 10))"
[ "$cls" -le "$dev" ] && ok "snapshot cost: $cls opens through /sys/class/infiniband's links for $dev devices (each resolved once)" ||
	nok "snapshot cost: $cls opens through /sys/class/infiniband's links for $dev devices (resolved twice)"
[ "$ga" = 0 ] && ok "snapshot cost: no port's gid_attrs/ opened to reach types/" ||
	nok "snapshot cost: $ga opens of gid_attrs/ (types/ is one openat2 from the port's folder)"
