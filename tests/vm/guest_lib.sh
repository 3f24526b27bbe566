# shellcheck shell=bash disable=SC2034
# Sourced by guest scripts (guest_kmod.sh, guest_nopat.sh): the check helpers and where things are.
VM=${GPUP2P_VM_DIR:-$PWD/build/vm}
B=$PWD/build/gpup2p
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; }
chk() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
# both RC WANT OUTPUT PATTERN: the exit code is WANT and the output matches PATTERN
both() { [ "$1" -eq "$2" ] && grep -q -- "$4" <<<"$3"; }
