# Sourced by the scripts run on the GPU machine: log to $OUT/LOG as well as the terminal, find the
# carried libraries (build/devlibs: libpci, libkmod, pci.ids), and count PASS/FAIL checks.
# device_setup LOG
device_setup() {
	OUT=${OUT:-/tmp/gpup2p-out}
	mkdir -p "$OUT"
	exec > >(tee "$OUT/$1") 2>&1
	[ -d build/devlibs ] && export LD_LIBRARY_PATH=$PWD/build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	[ -f /usr/share/misc/pci.ids ] || [ -f /usr/share/hwdata/pci.ids ] || export GPUP2P_PCI_IDS=$PWD/build/devlibs/pci.ids
	export NO_COLOR=1
	pass=0 fail=0
}

# check NAME SHELL-CONDITION: one PASS/FAIL line with the elapsed seconds
check() {
	if eval "$2"; then echo "PASS $1 [${SECONDS}s]"; pass=$((pass + 1)); else echo "FAIL $1 [${SECONDS}s]"; fail=$((fail + 1)); fi
}

# wall CMD...: the seconds CMD took (its output discarded)
wall() {
	python3 -c 'import subprocess, sys, time
s = time.perf_counter(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("%.3f" % (time.perf_counter() - s))' "$@"
}
