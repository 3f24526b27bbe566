#!/bin/bash
# doctor --root --kmsg reads an untrusted tree (an unpacked archive): at every path it reads outside
# the PCI functions' folders (those are test_root.sh's), a pipe must not block it and a symlink out of
# the root must not be followed. The paths come from an strace of a clean run, so a file doctor starts
# to read later is covered too; whether a file outside was opened is read from strace -y, which names
# the file each descriptor really is.
set -u
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
FX=$PWD/$BUILD/fixtures/doctor
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1
unset GPUP2P_ROOT GPUP2P_TEST_NO_OPENAT2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/out"

if ! strace -f -o /dev/null true 2>/dev/null; then
	nok "strace is missing or cannot trace here (make deps installs it): the escapes cannot be seen"
	exit 0
fi
R=$T/root
fresh() { rm -rf "$R" && cp -a "$FX/kmod-loaded" "$R"; }
# run LOG: doctor --kmsg on $R under strace (the opens, with the file each descriptor really is)
run() { timeout 10 strace -f -y -e trace=open,openat,openat2 -o "$1" "$BIN" --root "$R" doctor --kmsg >"$1.out" 2>&1; }
# pipe: doctor --kmsg on $R, not traced (strace would not block where doctor blocks)
pipe() { timeout 10 "$BIN" --root "$R" doctor --kmsg >"$T/fifo.out" 2>&1; }

fresh
run "$T/clean"; rc=$?
[ $rc -eq 0 ] && ok "kmod-loaded, clean: doctor --kmsg exit 0" || nok "clean run: exit $rc $(tail -3 "$T/clean.out")"
# the regular files doctor opened beneath the root, outside the PCI functions' folders
mapfile -t paths < <(grep -o "<$R/[^>]*>" "$T/clean" | sed "s|^<$R/||; s|>$||" | sort -u |
	grep -v '^sys/devices/pci\|^sys/bus/pci' | while read -r p; do [ -f "$R/$p" ] && [ ! -L "$R/$p" ] && echo "$p"; done)
for want in proc/modules proc/kallsyms dev/kmsg dev/gpup2p proc/driver/nvidia/params gpup2p/gpu-facts; do
	printf '%s\n' "${paths[@]}" | grep -qx "$want" || nok "the clean run did not read $want: the list is incomplete"
done
[ "${#paths[@]}" -ge 20 ] && ok "${#paths[@]} files doctor reads outside the PCI folders" ||
	nok "only ${#paths[@]} files found in the trace"

pipes=0 links=0
for p in "${paths[@]}"; do
	cp "$R/$p" "$T/out/secret"
	mv "$R/$p" "$T/saved" && mkfifo "$R/$p"
	pipe; rc=$?
	if [ $rc -eq 124 ] || [ $rc -gt 3 ]; then
		nok "a pipe at $p: exit $rc (124: blocked) $(tail -2 "$T/fifo.out")"
	else
		pipes=$((pipes + 1))
	fi
	rm "$R/$p" && ln -s "$T/out/secret" "$R/$p"
	run "$T/link"; rc=$?
	if [ $rc -eq 124 ] || [ $rc -gt 3 ] || grep -q "<$T/out/" "$T/link"; then
		nok "a link out of the root at $p: exit $rc, or the file outside was opened: $(grep -m1 "<$T/out/" "$T/link")"
	else
		links=$((links + 1))
	fi
	rm "$R/$p" && mv "$T/saved" "$R/$p"
done
[ $pipes -eq ${#paths[@]} ] && ok "a pipe at each of the $pipes files: no block, exit 0-3"
[ $links -eq ${#paths[@]} ] && ok "a link out of the root at each of the $links files: never opened"

# a device node linked out of the root is not "present" (a stat through the link said so)
fresh
touch "$T/out/gpup2p"
rm "$R/dev/gpup2p" && ln -s "$T/out/gpup2p" "$R/dev/gpup2p"
out=$("$BIN" --root "$R" --json doctor --only kmod.node 2>&1)
python3 - "$out" <<'EOF' && ok "/dev/gpup2p linked out: unknown, naming the link" || nok "/dev/gpup2p linked out: $out"
import json, sys
f = [f for f in json.loads(sys.argv[1])["findings"] if f["id"] == "kmod.node"]
assert f and f[0]["severity"] == "unknown" and "outside the root" in json.dumps(f[0]), f
EOF
