#!/bin/bash
# bench's data check never touches the timed copies (issue 24 item 5): the pattern is written and the
# destination checked by kernels where the data is (gp_fill, gp_check; the CPU for pageable host
# memory), once per path, outside the timed batches. The test double (tests/fakecuda) counts the work
# queued between timed windows on its own clock (FAKECUDA_WINDOWS) and runs the kernels in C.
set -u
# shellcheck disable=SC2086 # the paths' options are meant to split
BUILD=${BUILD:-build}
BIN=$PWD/$BUILD/gpup2p
. tests/cli/lib.sh
FAKE=$PWD/$BUILD/tests/fakecuda/libcuda.so.1
export GPUP2P_PCI_IDS=$PWD/tests/fixtures/pci.ids NO_COLOR=1 GPUP2P_LIBCUDA=$FAKE
unset GPUP2P_ROOT FAKECUDA_GPUS FAKECUDA_NOPEER FAKECUDA_CORRUPT FAKECUDA_CORRUPT_NTH FAKECUDA_FAIL FAKECUDA_PEER_GBPS \
	FAKECUDA_HOST_GBPS FAKECUDA_MARKER FAKECUDA_WINDOWS FAKECUDA_BADPTX
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -f "$FAKE" ] || { nok "test double $FAKE not built"; exit 0; }

# windows FILE ITERS: the timed windows (ITERS copies on their stream) after the first of their path
# that had work queued before them ("gap" > 0: verification between timed batches); prints them
between() {
	awk -v it="copies=$2" '$2 == it && prev == it && $3 != "gap=0" { print } { prev = $2 }' "$1"
}
# the timed windows' milliseconds, in order
timed_ms() {
	awk -v it="copies=$2" '$2 == it { print $1 }' "$1"
}

# every path kind, gated and not (pageable host memory, peer copies without peer access), one lane or
# two (bidir), concurrent copies (a pattern), copy engines and SMs: verified, the timed batches run back
# to back with no work between them, and each takes exactly what the --no-verify run's takes
for p in "d2d --gpu 0" "h2d --gpu 0 --pinned" "h2d --gpu 0 --pageable" "d2h --gpu 1 --pageable" "p2p --p2p on" \
	"p2p --p2p off" "bidir --p2p on" "all2host" "host2all" "d2d --gpu 0 --sm" "p2p --sm"; do
	rm -f "$T/v" "$T/n"
	out=$(FAKECUDA_WINDOWS=$T/v "$BIN" bench $p --size 1M --iters 3 --reps 4 --csv --no-header 2>&1); rc=$?
	FAKECUDA_WINDOWS=$T/n "$BIN" bench $p --size 1M --iters 3 --reps 4 --no-verify -q >/dev/null 2>&1
	bad=$(between "$T/v" 3)
	if [ $rc -eq 0 ] && grep -q ',true,' <<<"$out" && [ -z "$bad" ] &&
		[ "$(timed_ms "$T/v" 3)" = "$(timed_ms "$T/n" 3)" ] && [ -n "$(timed_ms "$T/v" 3)" ] &&
		[ -z "$(between "$T/n" 3)" ]; then
		ok "bench $p: verified, nothing queued between its timed batches, each timed as with --no-verify"
	else
		nok "bench $p: rc=$rc between=[$bad] $(paste "$T/v" "$T/n" | head -12) $out"
	fi
done
# the timed window holds the copies' modelled time only: d2d in the double is 2 us + bytes at 1000 GB/s
# a copy, 3 copies a batch
FAKECUDA_WINDOWS=$T/d "$BIN" bench d2d --gpu 0 --size 1M --iters 3 --reps 2 -q >/dev/null 2>&1
want=$(awk 'BEGIN { printf "ms=%.6f", 3 * (2e-6 + 1048576 / 1e12) * 1e3 }')
[ "$(timed_ms "$T/d" 3 | sort -u)" = "$want" ] && ok "d2d: each timed batch is 3 modelled copies ($want), nothing else" ||
	nok "d2d windows: $(cat "$T/d") want $want"

# once per path: one check kernel per lane, none with --no-verify; the pattern written by kernels
M=$T/marker
launches() { grep -c "^$1\$" "$M"; }
rm -f "$M"
FAKECUDA_MARKER=$M "$BIN" bench p2p bidir --p2p on --size 64K --iters 4 --reps 5 -q >/dev/null; rc=$?
# p2p: 4 rows (2 ordered pairs, write and read), one lane each; bidir: 1 row, 2 lanes
[ $rc -eq 0 ] && [ "$(launches gp_check)" = 6 ] && [ "$(launches gp_fill)" = 12 ] &&
	ok "p2p and bidir: one check per lane and path (6), source and destination patterns by kernels (12)" ||
	nok "checks: rc=$rc check=$(launches gp_check) fill=$(launches gp_fill)"
rm -f "$M"
FAKECUDA_MARKER=$M "$BIN" bench p2p bidir --p2p on --size 64K --iters 4 --reps 5 --no-verify -q >/dev/null; rc=$?
[ $rc -eq 0 ] && [ "$(launches gp_check)" = 0 ] && [ "$(launches gp_fill)" = 0 ] &&
	ok "--no-verify: no pattern kernel at all" || nok "no-verify: rc=$rc check=$(launches gp_check) fill=$(launches gp_fill)"

# a corrupted copy is still caught, exit 2 (bench --help: 2 wrong data), the first wrong byte named:
# GPU memory by the check kernel, pinned host memory by the kernel through its mapping, pageable host
# memory by the CPU; 4099 bytes: byte 4097 is in the tail after the last whole 8-byte word
for c in "d2d d2d --gpu 0" "peer p2p --p2p on" "d2h d2h --gpu 0 --pinned" "d2h d2h --gpu 0 --pageable" \
	"h2d h2d --gpu 1 --pinned" "sm d2d --sm --gpu 0"; do
	err=$(FAKECUDA_CORRUPT=${c%% *} "$BIN" bench ${c#* } --size 4099 --iters 2 --reps 3 2>&1 >"$T/o"); rc=$?
	[ $rc -eq 2 ] && grep -q "data wrong at byte 4097 after the timed copies: expected 0x74, got 0x8b" <<<"$err" &&
		grep -q "WRONG DATA" "$T/o" && ok "bench ${c#* }, every copy corrupted: exit 2, byte 4097 named" ||
		nok "corrupt ${c#* }: rc=$rc $err"
done
# a whole 8-byte word wrong in the middle of the buffer: the first wrong byte, not the word's start
err=$(FAKECUDA_CORRUPT=d2d "$BIN" bench d2d --gpu 0 --size 1M --iters 2 --reps 2 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "data wrong at byte 4097 after the timed copies" <<<"$err" &&
	ok "1 MiB, byte 4097 (inside word 512) wrong: named to the byte" || nok "1M corrupt: rc=$rc $err"
# the verification module refused by the driver: a named CUDA error, exit 2 (--no-verify still runs)
FAKECUDA_BADPTX=1 expect 2 "cuModuleLoadData failed: CUDA_ERROR_INVALID_VALUE" bench d2d --gpu 0 --size 64K
FAKECUDA_BADPTX=1 "$BIN" bench d2d --gpu 0 --size 64K --no-verify -q >/dev/null 2>&1 &&
	ok "kernels refused, --no-verify: measured, exit 0" || nok "badptx no-verify"

# defaults as nvbandwidth's: 512 MiB (the size -v announces; the allocation made to fail, so nothing is
# copied), 16 copies a batch, 3 batches; latency keeps 5 repetitions
err=$(FAKECUDA_FAIL=cuMemAlloc_v2 "$BIN" bench d2d --gpu 0 -v 2>&1 >/dev/null)
grep -q "d2d d2d GPU0.* 536870912 bytes" <<<"$err" && ok "default size 512 MiB" || nok "default size: $err"
out=$("$BIN" bench d2d latency --gpu 0 --size 4K --csv --no-header); rc=$?
[ $rc -eq 0 ] && grep -q '^d2d,d2d,GPU0,GPU0,,,,4096,16,3,' <<<"$out" && grep -q '^latency,h2d,host,GPU0,.*,4,1000,5,' <<<"$out" &&
	ok "default 16 copies a batch, 3 batches; latency 1000 copies, 5 repetitions" || nok "defaults: rc=$rc $out"

# tests/device/pattern_kernels.c (the kernels against the CPU's pattern on a real GPU) builds and, on
# the test double, passes with a 1 MiB buffer
CC=${CC:-cc}
# shellcheck disable=SC2046
if $CC -std=c11 -D_GNU_SOURCE -Ilibcore/include -o "$T/pk" tests/device/pattern_kernels.c "$BUILD/libgpup2p.a" \
	$(pkg-config --libs libpci libkmod 2>/dev/null || echo -lpci -lkmod) -ldl -lpthread -lm 2>"$T/cc"; then
	out=$("$T/pk" 1); rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c '^ok - ' <<<"$out")" = 11 ] && ok "device/pattern_kernels on the double: 11 checks pass" ||
		nok "pattern_kernels: rc=$rc $out"
else
	nok "pattern_kernels does not build: $(head -3 "$T/cc")"
fi
