#!/bin/bash
# snapshot -> unpack -> replay prints exactly what the source printed, on every fixture.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
FX=$PWD/$BUILD/fixtures
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh

for fx in h200x2 dgx-h100 seed4x2 workstation nonroot; do
	if ! "$BIN" --root "$FX/$fx" -q snapshot "$tmp/$fx-snap.tar.gz" 2>"$tmp/err"; then
		echo "not ok - snapshot of $fx: $(cat "$tmp/err")"; continue
	fi
	mkdir -p "$tmp/unpack-$fx"
	tar -C "$tmp/unpack-$fx" -xzf "$tmp/$fx-snap.tar.gz" || { echo "not ok - unpack $fx"; continue; }
	replay=$tmp/unpack-$fx/$fx-snap
	[ -f "$replay/gpup2p/gpu-facts" ] && echo "ok - $fx: gpu-facts recorded" || echo "not ok - $fx: no gpu-facts"
	for args in "topo" "topo --tree --all" "topo --json" "topo --csv" "topo --jsonl" "bar" "bar --all --json" "bar --csv" "acs" "acs --json"; do
		# shellcheck disable=SC2086
		"$BIN" --root "$FX/$fx" $args 2>&1 | sans_root >"$tmp/a"
		# shellcheck disable=SC2086
		"$BIN" --root "$replay" $args 2>&1 | sans_root >"$tmp/b"
		if cmp -s "$tmp/a" "$tmp/b"; then
			echo "ok - $fx: $args identical on replay"
		else
			echo "not ok - $fx: $args differs on replay"; diff "$tmp/a" "$tmp/b" | head -10
		fi
	done
done

# the config space is captured byte for byte, at the length the reader saw
cmp -s "$FX/h200x2/sys/bus/pci/devices/0000:00:06.0/config" \
	"$tmp/unpack-h200x2/h200x2-snap/sys/bus/pci/devices/0000:00:06.0/config" &&
	echo "ok - config space captured byte for byte" || echo "not ok - config space differs"
[ "$(stat -c %s "$tmp/unpack-nonroot/nonroot-snap/sys/bus/pci/devices/0000:03:00.0/config")" -eq 64 ] &&
	echo "ok - a 64-byte (non-root) config space stays 64 bytes" || echo "not ok - non-root config length"
# an existing file is not replaced without --force; --dir writes a folder
"$BIN" --root "$FX/h200x2" -q snapshot "$tmp/h200x2-snap.tar.gz" 2>/dev/null
[ $? -eq 64 ] && echo "ok - refuses to overwrite" || echo "not ok - overwrote without --force"
"$BIN" --root "$FX/h200x2" -q snapshot --force "$tmp/h200x2-snap.tar.gz" && echo "ok - --force replaces" ||
	echo "not ok - --force"
"$BIN" --root "$FX/seed4x2" -q snapshot --dir "$tmp/dir-snap" &&
	cmp -s <("$BIN" --root "$FX/seed4x2" topo) <("$BIN" --root "$tmp/dir-snap" topo) &&
	echo "ok - --dir snapshot replays" || echo "not ok - --dir snapshot"
# the archive, streamed as it is captured, holds what the folder does: each member's type, mode, link
# target and bytes; names past tar's 100-byte field (GNU long names) read back whole
mkdir "$tmp/sriov-dir" && "$BIN" --root "$FX/sriov" -q snapshot --dir "$tmp/sriov-dir/sr" &&
	"$BIN" --root "$FX/sriov" -q snapshot "$tmp/sr.tar.gz" &&
python3 - "$tmp/sriov-dir" "$tmp/sr.tar.gz" <<'EOF' && ok "archive members match the --dir snapshot (sriov)" ||
import os, stat, sys, tarfile
top, want = sys.argv[1], {}
for d, ds, fs in os.walk(top):
	for n in ds + fs:
		p = os.path.join(d, n)
		st = os.lstat(p)
		want[os.path.relpath(p, top)] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode),
			os.readlink(p) if stat.S_ISLNK(st.st_mode) else open(p, "rb").read() if stat.S_ISREG(st.st_mode) else None)
t, got = tarfile.open(sys.argv[2]), {}
kind = {tarfile.DIRTYPE: stat.S_IFDIR, tarfile.SYMTYPE: stat.S_IFLNK, tarfile.REGTYPE: stat.S_IFREG}
for m in t.getmembers():
	got[m.name] = (kind.get(m.type), m.mode, m.linkname if m.issym() else t.extractfile(m).read() if m.isfile() else None)
want["sr"] = got.get("sr") if got.get("sr", (0,))[0] == stat.S_IFDIR else None # the top folder
info = "sr/gpup2p/snapshot-info"
bad = sorted(k for k in set(want) | set(got) if k != info and want.get(k) != got.get(k))
print("\n".join(bad[:5]), file=sys.stderr)
sys.exit(bool(bad) or info not in got or max(len(k) for k in got) <= 100)
EOF
	nok "archive members differ from the --dir snapshot (sriov)"
# the archive is compressed in the process (zlib): no gzip on PATH is no matter; a write that fails
# (the file size limit: EFBIG, with SIGXFSZ ignored as a full disk would answer ENOSPC) exits 2 and
# leaves nothing behind, at the first member or only at the end (a small archive leaves zlib at close)
mkdir "$tmp/gz"
out=$(PATH=/nonexistent "$BIN" --root "$FX/sriov" -q snapshot "$tmp/gz/x.tar.gz" 2>&1); rc=$?
[ $rc -eq 0 ] && python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).getmembers()' "$tmp/gz/x.tar.gz" &&
	ok "no gzip on PATH: the archive is written and reads back" || nok "no gzip on PATH: exit $rc, '$out'"
rm -f "$tmp/gz/x.tar.gz"
for lim in 1 16; do
	out=$(trap '' XFSZ; ulimit -f $lim; "$BIN" --root "$FX/dgx-h100" snapshot "$tmp/gz/x.tar.gz" 2>&1); rc=$?
	[ $rc -eq 2 ] && [[ $out == *"cannot write $tmp/gz/x.tar.gz"*"File too large"* ]] && [ -z "$(ls -A "$tmp/gz")" ] &&
		ok "a write refused past ${lim} KiB: exit 2, nothing left" ||
		nok "a write refused past ${lim} KiB: exit $rc, '$out', left: $(ls -A "$tmp/gz")"
done
# a snapshot of a root without NVML facts records that they were unavailable
grep -q '^unavailable ' "$tmp/dir-snap/gpup2p/gpu-facts" && echo "ok - unavailable facts recorded as such" ||
	echo "not ok - unavailable facts"
# unwritable destination: exit 2, no partial archive
"$BIN" --root "$FX/h200x2" -q snapshot /nonexistent-dir/x.tar.gz 2>/dev/null
rc=$?
[ $rc -eq 2 ] && [ ! -e /nonexistent-dir/x.tar.gz ] && echo "ok - unwritable destination exits 2" ||
	echo "not ok - unwritable destination exit $rc"

. tests/cli/lib.sh
# the replay of each snapshot prints what its root printed: same output, same exit
same_replay() { # LABEL ROOT SNAPSHOT
	local args
	for args in "topo" "topo --json" "bar --json" "acs"; do
		# shellcheck disable=SC2086
		cmp -s <({ "$BIN" --root "$2" $args 2>&1; echo "rc=$?"; } | sans_root) \
			<({ "$BIN" --root "$3" $args 2>&1; echo "rc=$?"; } | sans_root) &&
			ok "$1: $args same on replay" || nok "$1: $args differs on replay"
	done
}
# same_error LABEL ROOT: snapshot exits with topo's code and message, and writes nothing
same_error() {
	local label=$1 root=$2 want got rc1 rc2
	want=$("$BIN" --root "$root" topo 2>&1 >/dev/null); rc1=$?
	got=$("$BIN" --root "$root" snapshot --dir "$tmp/err-snap" 2>&1); rc2=$?
	[ $rc1 -ne 0 ] && [ $rc1 -eq $rc2 ] && [ "$want" = "$got" ] && [ ! -e "$tmp/err-snap" ] &&
		ok "$label: snapshot fails as topo does (exit $rc1), writes nothing" ||
		nok "$label: topo exit $rc1 '$want', snapshot exit $rc2 '$got'"
	rm -rf "$tmp/err-snap"
}

# snapshots round-trip: what the commands cannot read, snapshot refuses the same way
cp -a "$FX/h200x2" "$tmp/nodev" && rm -rf "$tmp/nodev/sys/bus/pci/devices"
same_error "no sys/bus/pci/devices" "$tmp/nodev"
touch "$tmp/nodev/sys/bus/pci/devices"
same_error "sys/bus/pci/devices a file" "$tmp/nodev"
cp -a "$FX/h200x2" "$tmp/nv80"
printf 'nvlink 0000:00:07.0 0000:00:06.0 18\n' >>"$tmp/nv80/gpup2p/gpu-facts"
same_error "the NVLink pair listed twice" "$tmp/nv80"
cp -a "$FX/h200x2" "$tmp/badvendor" && echo zz >"$(readlink -f "$tmp/badvendor/sys/bus/pci/devices/0000:00:06.0")/vendor"
same_error "a malformed vendor file" "$tmp/badvendor"
# ... and what they read as unknown, it leaves out or mirrors: no "could not write" for an input
cp -a "$FX/workstation" "$tmp/cfgdir"
d=$(readlink -f "$tmp/cfgdir/sys/bus/pci/devices/0000:03:00.0")
rm "$d/config" && mkdir "$d/config" && rm "$d/numa_node" && mkdir "$d/numa_node"
out=$("$BIN" --root "$tmp/cfgdir" -q snapshot --dir "$tmp/cfgdir-snap" 2>&1); rc=$?
[ $rc -eq 0 ] && ok "a folder where config and numa_node belong: snapshot exits 0" || nok "config folder: exit $rc: $out"
same_replay "config and numa_node folders" "$tmp/cfgdir" "$tmp/cfgdir-snap"
# a snapshot of a snapshot (the one taken live on the H200 machine) replays the same
mkdir "$tmp/live" && tar -C "$tmp/live" -xzf tests/fixtures/h200x2-live/h200-live.tar.gz &&
	"$BIN" --root "$tmp/live/h200-live" -q snapshot --dir "$tmp/live-snap" &&
	same_replay "live H200 snapshot, snapshotted again" "$tmp/live/h200-live" "$tmp/live-snap" || nok "snapshot of the live snapshot"

# --force replaces only a snapshot; a refusal deletes nothing (exit 64, one line)
S=$tmp/force
mkdir -p "$S/work/sub" "$S/plain" && echo keep >"$S/plain/file" && echo keep >"$S/work/file" && echo keep >"$S/not-gz"
"$BIN" --root "$FX/seed4x2" -q snapshot --dir "$S/snap" && "$BIN" --root "$FX/seed4x2" -q snapshot --dir "$S/home" &&
	"$BIN" --root "$FX/seed4x2" -q snapshot --dir "$S/work/sub/snapcwd" && ln -s snap "$S/link" &&
	cp -a "$S/snap" "$S/fake" && rm -rf "$S/fake/gpup2p" && ln -s ../snap/gpup2p "$S/fake/gpup2p" &&
	"$BIN" --root "$FX/seed4x2" -q snapshot "$S/a.tar.gz" || nok "--force setup"
listing() { (cd "$S" && find . -path ./snap -prune -o -print | sort && cat plain/file work/file not-gz && find snap | sort); }
before=$(listing)
h0=$HOME
export HOME=$S/home
(cd "$S/work" && expect 64 "refusing to replace \.: it is the current directory" --root "$FX/h200x2" snapshot --dir --force .)
(cd "$S/snap/gpup2p" && expect 64 "refusing to replace \.\.: it holds the current directory" --root "$FX/h200x2" snapshot --dir --force ..)
(cd "$S/snap/gpup2p" && expect 64 "refusing to replace .*/snap: it holds the current directory" --root "$FX/h200x2" snapshot --dir --force "$S/snap")
(cd "$S/work/sub/snapcwd" && expect 64 "refusing to replace \.: it is the current directory" --root "$FX/h200x2" snapshot --dir --force .)
expect 64 "refusing to replace /: it is the root directory" --root "$FX/h200x2" snapshot --dir --force /
expect 64 "refusing to replace .*/home: it is your home directory" --root "$FX/h200x2" snapshot --dir --force "$S/home"
expect 64 "refusing to replace .*/force: it holds your home directory" --root "$FX/h200x2" snapshot --dir --force "$S"
expect 64 "refusing to replace .*/plain: not a gpup2p snapshot" --root "$FX/h200x2" snapshot --dir --force "$S/plain"
expect 64 "refusing to replace .*/fake: not a gpup2p snapshot" --root "$FX/h200x2" snapshot --dir --force "$S/fake"
expect 64 "refusing to replace .*/link: it is a symbolic link" --root "$FX/h200x2" snapshot --dir --force "$S/link"
expect 64 "refusing to replace .*/plain: it is a directory" --root "$FX/h200x2" snapshot --force "$S/plain"
expect 64 "refusing to replace .*/not-gz with a directory" --root "$FX/h200x2" snapshot --dir --force "$S/not-gz"
expect 64 "refusing to replace .*/not-gz: not a gzip'ed snapshot archive" --root "$FX/h200x2" snapshot --force "$S/not-gz"
expect 64 "/snap exists; use --force" --root "$FX/h200x2" snapshot --dir "$S/snap"
export HOME=$h0
[ "$(listing)" = "$before" ] && ok "the refusals deleted and changed nothing" || nok "a refusal changed files"
# a failed capture leaves the old snapshot in place
rm -f "$tmp/nodev/sys/bus/pci/devices"
expect 69 "no PCI bus visible" --root "$tmp/nodev" snapshot --dir --force "$S/snap"
[ "$(listing)" = "$before" ] && ok "a failed capture keeps the old snapshot" || nok "a failed capture changed the old snapshot"
"$BIN" --root "$FX/h200x2" -q snapshot --dir --force "$S/snap"; rc=$?
[ $rc -eq 0 ] && [ -f "$S/snap/gpup2p/snapshot-info" ] &&
	cmp -s <("$BIN" --root "$FX/h200x2" topo) <("$BIN" --root "$S/snap" topo) &&
	! cmp -s <("$BIN" --root "$FX/seed4x2" topo) <("$BIN" --root "$S/snap" topo) &&
	ok "--dir --force replaces a snapshot with the new one" || nok "--dir --force replace: exit $rc"
"$BIN" --root "$FX/h200x2" -q snapshot --force "$S/a.tar.gz"; rc=$?
[ $rc -eq 0 ] && tar -C "$S" -xzf "$S/a.tar.gz" && cmp -s <("$BIN" --root "$FX/h200x2" topo) <("$BIN" --root "$S/a" topo) &&
	ok "--force replaces an archive with the new one" || nok "--force archive replace: exit $rc"
[ -z "$(find "$S" -maxdepth 1 -name '.*gpup2p-*')" ] && ok "no temporary sibling left behind" ||
	nok "temporary siblings left: $(find "$S" -maxdepth 1 -name '.*gpup2p-*')"
