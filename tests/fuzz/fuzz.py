#!/usr/bin/env python3
"""gpup2p's own fuzz driver: mutated sysfs roots and command-line values fed to topo, bar, acs,
snapshot and doctor, built with AddressSanitizer and UndefinedBehaviorSanitizer.

Each round copies a generated fixture tree (build/fixtures/NAME) to a scratch directory, applies a few
random mutations (config bytes, capability loops, truncated or grown config spaces, resource lines,
text files, symlinks and loops, removed files, directories where files belong, hundreds of cloned
functions, bridge chains deeper than any machine), runs a few commands on it and checks:
  sanitizer  an ASan/UBSan/LSan report          crash      killed by a signal
  hang       no exit within the time limit      exit       an exit code the man page does not list
  json       --json/--jsonl output that is not strict UTF-8 JSON (exit 0 or 1)
  escape     a write to, or a copy of, the decoy file outside the root (a symlink led there)
  roundtrip  `snapshot` succeeded but topo on the snapshot disagrees with topo on the source
A finding is minimised (mutations and options dropped while it persists) and written as a JSON case:
fixture + concrete mutations + argv. Cases under tests/fuzz/regress/ are replayed by `make check`.

The `report` target (--target report, tests/fuzz/report_fuzz.py) feeds `gpup2p report` mutated doctor and
bench documents, pdsh/clush/srun streams and host lists instead, and also checks its text for control
characters ("inject").

  fuzz.py --bin build/fuzz/gpup2p --fixtures build/fixtures --time 60 [--seed N] [--findings DIR] [--target report]
  fuzz.py --bin ... --fixtures ... --replay CASE.json...
Only --dry-run ACS changes are run, and as user nobody when started as root: nothing can be written
to a real device even through a mutated tree.
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutate  # noqa: E402  (the mutations, next to this file)
import report_fuzz  # noqa: E402

EXITS = {0, 1, 2, 3, 64, 69, 77}
DECOY = b"GPUP2P-FUZZ-DECOY\n" + bytes(range(256)) * 16
SAN = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer): ?([\w-]*)")
UB = re.compile(r"(\S+?):\d+:\d+: runtime error: ([^\n]*)")  # "1e+300 is outside the range of ..." too
FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ in (\S+) \S*?((?:libcore|cli)/[^ :]+):\d+")


def scratch():
    """/dev/shm when it has room for a few hundred MB of trees (a container's may have 64 MB), else TMPDIR."""
    try:
        st = os.statvfs("/dev/shm")
        return "/dev/shm" if st.f_bavail * st.f_frsize > 512 << 20 else None
    except OSError:
        return None


class Runner:
    def __init__(self, args):
        self.fixtures = os.path.abspath(args.fixtures)
        self.timeout = args.timeout
        self.work = tempfile.mkdtemp(prefix="gpup2p-fuzz.", dir=scratch())
        os.chmod(self.work, 0o755)  # acs commands run as nobody when we are root
        # ... and nobody cannot reach a checkout under a 0700 directory (/root, mktemp -d): run copies
        self.bin = os.path.join(self.work, "gpup2p")
        shutil.copy2(os.path.abspath(args.bin), self.bin)
        self.decoy = os.path.join(self.work, "outside", "decoy")
        os.makedirs(os.path.dirname(self.decoy))
        self.env = dict(os.environ, NO_COLOR="1", LC_ALL="C",
                        ASAN_OPTIONS="detect_leaks=%d:halt_on_error=1:abort_on_error=0:exitcode=99" % args.leaks,
                        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=99")
        self.env.pop("GPUP2P_ROOT", None)
        ids = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "pci.ids")
        self.env["GPUP2P_PCI_IDS"] = os.path.join(self.work, "pci.ids")
        shutil.copy2(os.path.abspath(ids), self.env["GPUP2P_PCI_IDS"])
        self.runs = 0

    def run_input(self, argv, stdin):
        return report_fuzz.run_input(self, argv, stdin)

    def close(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def tree(self, fixture, ops):
        """A fresh copy of the fixture with the ops applied; returns its path."""
        root = os.path.join(self.work, "root")
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(os.path.join(self.fixtures, fixture), root, symlinks=True)
        with open(self.decoy, "wb") as f:
            f.write(DECOY)
        for op in ops:
            mutate.apply(root, op, self.decoy)
        return root

    def run(self, argv):
        """Run gpup2p with argv (strings; "@root", "@work" and "@decoy" expanded). (rc, out, err)."""
        root = os.path.join(self.work, "root")
        args = [self.bin] + [a.replace("@root", root).replace("@work", self.work).replace("@decoy", self.decoy)
                             for a in argv]
        demote = None
        if "acs" in argv and os.geteuid() == 0:
            def demote():
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
        self.runs += 1
        try:
            p = subprocess.run([a.encode("utf-8", "surrogateescape") for a in args], capture_output=True,
                               env=self.env, timeout=self.timeout, preexec_fn=demote, cwd=self.work)
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            return None, e.stdout or b"", e.stderr or b""

    def check(self, argv):
        """Run one command and judge it. None, or (class, signature, detail)."""
        snap = os.path.join(self.work, "snap")
        if os.path.isdir(snap) and not os.path.islink(snap):
            shutil.rmtree(snap, ignore_errors=True)
        elif os.path.lexists(snap):
            os.unlink(snap)  # `snapshot @work/snap` without --dir writes an archive there
        rc, out, err = self.run(argv)
        found = judge(argv, rc, out, err)
        if not found:
            found = self.escaped(snap)
        if not found and "snapshot" in argv and rc == 0 and os.path.isdir(snap):
            a = self.run(["--root", "@root", "topo"])
            b = self.run(["--root", "@work/snap", "topo"])
            found = judge(["topo"], *b)
            if not found and (a[0], a[1]) != (b[0], b[1]):
                found = ("roundtrip", "topo-differs", "topo on the source: exit %s; on the snapshot: exit %s\n%s"
                         % (a[0], b[0], b[2].decode("utf-8", "replace")[-400:]))
        return found

    def escaped(self, snap):
        with open(self.decoy, "rb") as f:
            if f.read() != DECOY:
                return ("escape", "decoy-written", "the decoy outside the root was modified")
        for d, _, files in os.walk(snap):
            for n in files:
                p = os.path.join(d, n)
                if os.path.isfile(p) and not os.path.islink(p):  # a pipe there would block this check
                    with open(p, "rb") as f:
                        if b"GPUP2P-FUZZ-DECOY" in f.read():
                            return ("escape", "decoy-copied", "snapshot copied the decoy into " + os.path.relpath(p, snap))
        return None


def judge(argv, rc, out, err):
    text = err.decode("utf-8", "replace")
    m, u = SAN.search(text), UB.search(text)
    if m or u:
        frames = FRAME.findall(text)  # the first frame in gpup2p's own code names the place
        where = "%s@%s" % frames[0] if frames else (u.group(1) if u else "?")
        kind = "%s-%s" % (m.group(1), m.group(2)) if m else \
            "ubsan-" + "-".join(w for w in u.group(2).split() if w.isalpha())[:60]
        return ("sanitizer", "%s:%s" % (kind, where), text[-3000:])
    if rc is None:
        return ("hang", "timeout", text[-500:])
    if rc < 0:
        return ("crash", "signal-%d" % -rc, text[-1000:])
    if rc not in EXITS:
        return ("exit", "exit-%d" % rc, text[-1000:])
    fmts = [a for a in argv if a in ("--json", "--jsonl", "--csv")]
    cmd = next((a for a in argv if a in ("topo", "bar", "acs", "snapshot", "doctor")), None)
    if cmd and rc in (0, 1) and fmts and fmts[-1] != "--csv" and cmd != "snapshot":
        try:
            doc = out.decode("utf-8")
            if fmts[-1] == "--jsonl":
                for line in doc.splitlines():
                    json.loads(line)
            else:
                json.loads(doc)
        except ValueError as e:
            return ("json", "invalid-json-" + cmd, str(e)[:300] + "\n" + out.decode("utf-8", "replace")[:300])
    return None


BDF = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def doctor_commands(rng, root):
    """doctor --root, with and without --kmsg, in each output format."""
    cmds = [["doctor", "--kmsg"], ["doctor", "--kmsg", "--json"], ["doctor", "--kmsg", "-v"], ["doctor", "--json"],
            ["doctor", "--kmsg", "--only", "gpu.xid,nvlink.sxid", "--json"], ["doctor", "--kmsg", "--prometheus"],
            ["doctor", "--kmsg", "--nagios"], ["doctor", "--kmsg", "--strict", "-q"], ["doctor", "--only", "kmod,driver,rdma"]]
    return [["--root", "@root"] + list(rng.choice(cmds)) for _ in range(rng.randint(2, 4))]


def commands(rng, root):
    """A few commands for one tree: (argv list, ...). --root first; ACS changes always --dry-run first."""
    devs = sorted(n for n in os.listdir(os.path.join(root, "sys/bus/pci/devices"))
                  if BDF.match(n)) if os.path.isdir(os.path.join(root, "sys/bus/pci/devices")) else []
    fmts = [[], [], ["--json"], ["--csv"], ["--jsonl"]]
    cmds = [
        ["topo"], ["topo", "--tree"], ["topo", "--tree", "--all"],
        ["bar"], ["bar", "--all"], ["bar", "--all"],
        ["acs"],
        ["acs", "--dry-run", "--disable"], ["acs", "--dry-run", "--disable", "--all", "--mode", "zero"],
        ["acs", "--dry-run", "--restore", "--state", "@work/state"],
        ["snapshot", "--dir", "@work/snap"],
        ["doctor"], ["doctor", "-v"], ["doctor", "--json"], ["doctor", "--strict", "-q"],
    ]
    out = []
    for _ in range(rng.randint(3, 6)):
        c = list(rng.choice(cmds))
        if c[0] in ("topo", "bar", "acs") and "--tree" not in c:
            c += rng.choice(fmts)
        if c[0] in ("topo", "bar", "acs") and rng.random() < 0.3:
            c += ["--match", mutate.match_value(rng)]
        if c[0] == "acs" and "--disable" in c and devs and rng.random() < 0.4:
            c += ["--device", rng.choice(devs + [mutate.bdf_value(rng)])]
        if rng.random() < 0.2:
            c += [rng.choice(["-q", "-v", "--color=always", "--no-header"])]
        if rng.random() < 0.1 and "--dry-run" not in c:  # odd values where the command line takes one
            c += rng.choice([["--match"] * 2, ["--match", "10de:*"] * 17, ["--json", "--csv"], ["--root"],
                             ["--root", "@work/outside/decoy"], ["--root", "@work/nowhere"], ["--color=sometimes"],
                             ["--tree", "--all", "--all"], ["--" + "x" * 300], ["-"], [""], ["\udcff"]])
        root = "@root"
        if rng.random() < 0.05 and c[0] != "acs":
            root = rng.choice(["@work/nowhere", "@work/outside/decoy", "@root/sys", "@root/"])
        out.append(["--root", root] + c)
    return out


def minimise(r, case):
    """Drop mutations, then options, while the same finding persists."""
    def same(ops, argv):
        r.tree(case["fixture"], ops)
        if "--restore" in argv:
            mutate.write_state(r.work, case.get("state", ""))
        f = r.check(argv)
        return f is not None and f[:2] == (case["class"], case["signature"])
    ops, argv = list(case["ops"]), list(case["argv"])
    changed = True
    while changed:
        changed = False
        for i in range(len(ops)):
            if same(ops[:i] + ops[i + 1:], argv):
                ops = ops[:i] + ops[i + 1:]
                changed = True
                break
        for i in range(3, len(argv)):  # keep --root ROOT COMMAND and a --dry-run
            if argv[i] == "--dry-run":
                continue
            for k in (2, 1):
                if i + k <= len(argv) and same(ops, argv[:i] + argv[i + k:]):
                    argv = argv[:i] + argv[i + k:]
                    changed = True
                    break
            if changed:
                break
    case["ops"], case["argv"] = ops, argv
    return case


def replay(r, path):
    with open(path) as f:
        case = json.load(f)
    if case.get("target") == "report":
        return report_fuzz.check(r, judge, case)
    r.tree(case["fixture"], case["ops"])
    if "state" in case:
        mutate.write_state(r.work, case["state"])
    return r.check(case["argv"])


def fixtures(top):
    """Fixture trees under top (a folder holding sys/), one level of grouping allowed (doctor/NAME)."""
    out = []
    for n in sorted(os.listdir(top)):
        p = os.path.join(top, n)
        if os.path.isdir(os.path.join(p, "sys")):
            out.append(n)
        elif os.path.isdir(p):
            out += [n + "/" + m for m in sorted(os.listdir(p)) if os.path.isdir(os.path.join(p, m, "sys"))]
    return out


def record(args, seen, case, found):
    case["detail"] = found[2][-2000:]
    name = "%s-%s" % (found[0], re.sub(r"[^A-Za-z0-9_.-]+", "_", found[1]))[:80]
    os.makedirs(args.findings, exist_ok=True)
    path = os.path.join(args.findings, name + ".json")
    with open(path, "w") as f:
        json.dump(case, f, indent=1)
    seen[found[:2]] = path
    print("finding: %s %s -> %s" % (found[0], found[1], path), flush=True)


def fuzz_report(r, args):
    """The report target: one generated case per round."""
    rng = random.Random(args.seed)
    end = time.time() + args.time
    seen, rounds = {}, 0
    while time.time() < end and (not args.rounds or rounds < args.rounds):
        rounds += 1
        case = report_fuzz.generate(rng)
        found = report_fuzz.check(r, judge, case)
        if not found or found[:2] in seen:
            continue
        case = report_fuzz.minimise(r, judge, case, found)
        case.update({"class": found[0], "signature": found[1], "seed": args.seed, "round": rounds})
        record(args, seen, case, report_fuzz.check(r, judge, case) or found)
    return rounds, seen


def fuzz(r, args):
    if args.target == "report":
        return fuzz_report(r, args)
    rng = random.Random(args.seed)
    names = fixtures(r.fixtures)
    if args.target == "doctor":  # the trees with doctor's /proc, /sys and /dev files
        names = [n for n in names if n.startswith("doctor/")]
    end = time.time() + args.time
    seen, rounds = {}, 0
    pending = {}
    for path in sorted(glob.glob(os.path.join(args.pending, "*.json"))) if args.pending else []:
        with open(path) as f:
            c = json.load(f)
        pending[(c["class"], c["signature"])] = path
    while time.time() < end and (not args.rounds or rounds < args.rounds):
        rounds += 1
        fixture = rng.choice(names)
        root = r.tree(fixture, [])
        ops = mutate.generate_doctor(rng, root) if args.target == "doctor" else mutate.generate(rng, root)
        r.tree(fixture, ops)
        state = mutate.state_text(rng, root)
        for argv in (doctor_commands if args.target == "doctor" else commands)(rng, root):
            if time.time() >= end:
                break
            mutate.write_state(r.work, state)
            found = r.check(argv)
            if found and found[:2] in pending and found[:2] not in seen:
                print("# pending: %s %s again (%s)" % (found[0], found[1], pending[found[:2]]), flush=True)
                seen[found[:2]] = pending[found[:2]]
            if not found or found[:2] in seen:
                continue
            case = {"fixture": fixture, "ops": ops, "argv": argv, "state": state, "class": found[0],
                    "signature": found[1], "seed": args.seed, "round": rounds}
            case = minimise(r, case)
            record(args, seen, case, found)
            r.tree(fixture, ops)  # minimise() changed the tree
    return rounds, seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--time", type=float, default=60)
    ap.add_argument("--rounds", type=int, default=0, help="stop after this many trees (0: time only)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30, help="seconds one command may take")
    ap.add_argument("--findings", default="build/fuzz/findings")
    ap.add_argument("--leaks", type=int, default=0, help="1: LeakSanitizer too (a leak before exit is minor)")
    ap.add_argument("--pending", default="", help="folder of cases waiting for a fix elsewhere: the same finding "
                    "again is listed, not counted")
    ap.add_argument("--target", choices=("tree", "doctor", "report"), default="tree",
                    help="tree: mutated sysfs roots (topo, bar, acs, snapshot, doctor); doctor: doctor --root/--kmsg "
                    "on the doctor fixtures, their /proc, /sys, /dev files mutated; report: gpup2p report's input")
    ap.add_argument("--replay", nargs="*")
    args = ap.parse_args()
    r = Runner(args)
    try:
        if args.replay is not None:
            bad = 0
            for path in args.replay:
                found = replay(r, path)
                name = os.path.basename(path)
                if found:
                    bad += 1
                    print("not ok - fuzz case %s: %s %s\n%s" % (name, found[0], found[1], found[2][-1500:]))
                else:
                    print("ok - fuzz case %s: clean" % name)
            return 1 if bad else 0
        rounds, seen = fuzz(r, args)
        new = [k for k, v in seen.items() if not v.startswith(args.pending or "//")]
        unit = "cases" if args.target == "report" else "trees"
        print("fuzz: %s, seed %d, %d %s, %d runs, %d new finding(s), %d pending" % (
            args.target, args.seed, rounds, unit, r.runs, len(new), len(seen) - len(new)))
        return 1 if new else 0
    finally:
        r.close()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
