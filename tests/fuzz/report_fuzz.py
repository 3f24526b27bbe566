"""The `report` target of tests/fuzz/fuzz.py: what hundreds of other machines printed, mutated.

A case is plain JSON so that a finding replays exactly:
  {"target": "report", "argv": [...], "stdin": HEX, "files": [{"path": HEX, "hex": HEX} | {"path": HEX, "dir": 1}]}
argv holds "@rep" for the folder the files are written to. The input is built from doctor --json and bench
--json/--jsonl documents (compact or indented), mutated as values (huge and non-finite numbers, control
characters, \\u001f and \\u0000, bytes that are no UTF-8, long strings, deep nesting, odd types and hosts),
then as a stream (pdsh/clush "host: " labels, srun task labels, interleaved hosts, CRLF, lines over 1 KiB
and 64 KiB, NUL bytes, bit flips, cuts), fed on stdin, as files and as a clush --outdir directory, with
--expect host lists and --below values. Besides fuzz.py's checks: text, CSV and stderr carry no control
character, C1 control, bidi override or byte that is no UTF-8 ("inject"); --json output is strict JSON.
"""
import json
import os
import re
import shutil
import subprocess

IDS = ["acs.redirect", "bar.small", "kmod.loaded", "iommu.mode", "gpu.xid", "p2p.status", "numa.affinity"]
SEVS = ["error", "warning", "info", "ok", "unknown", "skipped"]


class Raw:
    """A JSON token written as is (numbers JSON's grammar allows but Python would not print, bad bytes)."""

    def __init__(self, b):
        self.b = b


NUMS = [b"1e300", b"-1e300", b"1e999", b"-1e999", b"1e30", b"18446744073709551616", b"18446744073709551615",
        b"9223372036854775808", b"-0", b"2.5", b"255", b"256", b"-1", b"0", b"4294967296", b"-2147483649",
        b"1e-400", b"0.0000001", b"123456789012345678901234567890", b"1" + b"0" * 62, b"1" + b"0" * 70]
STRS = [b"\\u001b[2J\\u001b[H", b"x\\r\\nclean: node[01-64] (64)", b"\\u001f", b"a\\u001fb\\u001fc", b"\\u0000",
        b"s\\u0000t", b"\xff\xfe", b"\xc2\x9b" b"31m", b"\x9b" b"2J", b"\xe2\x80\xae" b"gnp", b"\xed\xa0\x80", b"\xc0\xaf",
        b"\\ud800", b"\\udc00\\ud800", b"\\u009b", b"\\u007f", b"%s%n%x", b"node[01-64]", b"", b" ", b"\\\\", b"\\\"",
        b"n1: {", b"}", b"\xf4\x90\x80\x80", b"caf\xc3\xa9"]
HOSTS = ["node01", "node02", "node10", "gpu-7.rack_2", "n9", "n10", "a", "x" * 255, "x" * 256, "n1\x1b[2J", "",
         "n[1-2]", "n 1", "0", "12", "n1:", "-", ".", "_", "node001", "n\xff", "caf\xe9"]


def _host(rng):
    return rng.choice(HOSTS[:8]) if rng.random() < 0.85 else rng.choice(HOSTS)


def _finding(rng):
    f = {"id": rng.choice(IDS), "severity": rng.choice(SEVS), "subject": rng.choice(["0000:01:00.0", "GPU0", "nvidia"]),
         "message": rng.choice(["ACS redirect on", "BAR1 small", "m {x}"]), "fix": rng.choice(["setpci ...", None])}
    return f


def _bench_row(rng):
    return {"schema": 1, "mode": rng.choice(["p2p", "h2d", "d2h", "latency"]), "path": rng.choice(["p2p", "h2d", "sm"]),
            "src": rng.choice(["GPU0", "host"]), "dst": rng.choice(["GPU1", "GPU0"]), "memory": rng.choice([None, "pinned"]),
            "p2p": rng.choice([None, "on", "off"]), "op": rng.choice([None, "write", "read"]), "engine": "ce",
            "size": rng.choice([1024, 1 << 20, 268435456]), "gbps": round(rng.uniform(1, 60), 2), "us": 5.0,
            "skipped": rng.choice([None, None, None, "no P2P"])}


def _doc(rng, host):
    k = rng.random()
    if k < 0.5:
        fs = [_finding(rng) for _ in range(rng.choice([0, 1, 2, 5]))]
        st = rng.choice([0, 1, 2, 3, 69])
        return {"schema": 1, "command": "doctor", "host": host, "boot_id": "b", "time": "t",
                "gpup2p": {"version": "0.1.0", "argv": ["doctor", "--json"]}, "findings": fs, "exit_status": st,
                "error": rng.choice([None, None, "no GPU"])}
    if k < 0.75:
        return {"schema": 1, "command": "bench", "host": host, "results": [_bench_row(rng) for _ in range(rng.randint(1, 4))],
                "exit_status": 0}
    row = _bench_row(rng)
    row["host"] = host
    return row


def _nest(rng):
    d = rng.choice([3, 63, 64, 65, 200, 5000])
    return Raw(b"[" * d + b"1" + b"]" * d if rng.random() < 0.5 else b'{"a":' * d + b"1" + b"}" * d)


def _bad_value(rng):
    r = rng.random()
    if r < 0.3:
        return Raw(rng.choice(NUMS))
    if r < 0.65:
        return Raw(b'"' + b"".join(rng.choice(STRS) for _ in range(rng.randint(1, 3))) + b'"')
    if r < 0.75:
        return Raw(b'"' + rng.choice([b"A", b"\\u001b", b"\xc3\xa9"]) * rng.choice([300, 1100, 70000]) + b'"')
    if r < 0.85:
        return _nest(rng)
    return rng.choice([None, True, [], {}, [1, 2], {"id": 1}, 0, "", "x"])


def _mutate_value(rng, v):
    """Replace a random member or element inside v (a dict or list) by something odd."""
    for _ in range(rng.randint(1, 4)):
        node = v
        for _ in range(4):
            kids = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) if isinstance(node, list) else []
            if not kids:
                break
            k, kid = rng.choice(kids)
            if isinstance(kid, (dict, list)) and kid and rng.random() < 0.6:
                node = kid
                continue
            r = rng.random()
            if r < 0.1 and isinstance(node, dict):
                del node[k]
            else:
                node[k] = _bad_value(rng)
            break


def dump(v, indent=None, level=0):
    """JSON bytes of v, Raw tokens as they are; indent: doctor --json's pretty form."""
    nl = (b"\n" + b" " * (indent * (level + 1))) if indent else b""
    end = (b"\n" + b" " * (indent * level)) if indent else b""
    if isinstance(v, Raw):
        return v.b
    if isinstance(v, dict):
        if not v:
            return b"{}"
        items = [json.dumps(k).encode() + b": " + dump(x, indent, level + 1) for k, x in v.items()]
        return b"{" + b",".join(nl + i for i in items) + end + b"}"
    if isinstance(v, list):
        if not v:
            return b"[]"
        return b"[" + b",".join(nl + dump(x, indent, level + 1) for x in v) + end + b"]"
    return json.dumps(v).encode()


def _lines(rng, host):
    """One host's output: a few documents, each compact or indented, some values mutated."""
    out = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        d = _doc(rng, host if rng.random() < 0.8 else _host(rng))
        if rng.random() < 0.5:
            _mutate_value(rng, d)
        out += dump(d, 2 if rng.random() < 0.3 else None).split(b"\n")
    if rng.random() < 0.1:
        out.append(rng.choice([b"ssh: connect to host port 22: Connection refused", b"{", b"}", b"", b"\x1b[2J",
                               b"A" * 70000, b"\x00", b"{\"exit_status\": 0}"]))
    return out


def _stream(rng, hosts):
    """pdsh/clush/srun output: labelled lines of several hosts interleaved, or plain lines."""
    per = []
    for i, h in enumerate(hosts):
        style = rng.random()
        lab = (h.encode("utf-8", "surrogateescape") + b": ") if style < 0.6 else ("%d: " % i).encode() if style < 0.75 else b""
        if rng.random() < 0.05:
            lab = rng.choice([b"n1:", b"n1 : ", b": ", b"n\x1b: ", b"x" * 300 + b": "])
        per.append([lab + l for l in _lines(rng, h)])
    out = []
    if rng.random() < 0.5:  # interleaved, line by line, as pdsh prints them
        while any(per):
            p = rng.choice([p for p in per if p])
            out.append(p.pop(0))
    else:
        for p in per:
            out += p
    eol = b"\r\n" if rng.random() < 0.1 else b"\n"
    data = eol.join(out) + (eol if rng.random() < 0.9 else b"")
    return _bytes_mutate(rng, data)


def _bytes_mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.choice([0, 0, 0, 1, 2, 5])):
        r = rng.random()
        if not data:
            break
        i = rng.randrange(len(data))
        if r < 0.3:
            data[i] ^= 1 << rng.randrange(8)
        elif r < 0.45:
            del data[i:]
        elif r < 0.6:
            data[i:i] = rng.choice([b"\x00", b"\x1b", b"\xff", b"\n", b"\r", b"\\", b'"', b"{", b"}", b"[", b"\x1f"])
        elif r < 0.75:
            j = min(len(data), i + rng.randint(1, 200))
            data[i:i] = data[i:j] * rng.randint(1, 3)
        elif r < 0.85:
            data[i:i] = b"\n" + rng.choice([b"A", b"{", b" "]) * rng.choice([1100, 66000]) + b"\n"
        else:
            del data[i:i + rng.randint(1, 50)]
    return bytes(data)


def _expect(rng, hosts):
    r = rng.random()
    if r < 0.6:
        return ",".join(h for h in hosts if re.fullmatch(r"[A-Za-z0-9._-]{1,255}", h)) or "node01"
    return rng.choice(["node[01-10]", "n[1-100000]", "n[0-99999999]", "n[3-1]", "n[", "n]", "", "n[1-2,,3]",
                       "a[1-3]b[1-3]", "x" * 300, "n[18446744073709551615-18446744073709551616]", "n[01-1]",
                       "n\x1b", "n[1-2][3-4]", ",", "n[0001-0003],node01", "n[1-5,3-7]"])


def generate(rng):
    """A new report case."""
    hosts = [_host(rng) for _ in range(rng.choice([1, 2, 3, 8, 12]))]
    files, argv = [], ["report"]
    stdin = b""
    where = rng.random()
    if where < 0.45:
        stdin = _stream(rng, hosts)
        argv.append("-")
    elif where < 0.75:
        for i in range(rng.randint(1, 3)):
            files.append({"path": ("f%d" % i).encode().hex(), "hex": _stream(rng, hosts).hex()})
            argv.append("@rep/f%d" % i)
    else:  # clush --outdir: one file per host, named after it
        files.append({"path": b"out".hex(), "dir": 1})
        for h in set(hosts):
            name = h.encode("utf-8", "surrogateescape").replace(b"/", b"_") or b"empty"
            if name in (b".", b"..") or len(name) > 255:  # no file can be named so
                continue
            data = b"\n".join(_lines(rng, h)) + b"\n" if rng.random() < 0.9 else b""
            files.append({"path": (b"out/" + name).hex(), "hex": _bytes_mutate(rng, data).hex()})
        if rng.random() < 0.1:
            files.append({"path": b"out/sub".hex(), "dir": 1})
        argv.append("@rep/out")
        if rng.random() < 0.2:
            argv.append("@rep/nosuch")
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        o = rng.choice(["--json", "--csv", "-v", "-q", "--no-header", "--expect", "--below", "--jsonl", "--color=always"])
        if o == "--expect":
            argv += ["--expect", _expect(rng, hosts)]
        elif o == "--below":
            argv += ["--below", rng.choice(["0.9", "0.5", "1", "0", "1e-300", "nan", "inf", "0x1p-1", "-0", "2"])]
        else:
            argv.append(o)
    return {"target": "report", "argv": argv, "stdin": stdin.hex(), "files": files}


def materialise(work, case):
    """Write the case's files under work/rep (fresh); the folder's path."""
    rep = os.path.join(work, "rep")
    shutil.rmtree(rep, ignore_errors=True)
    os.makedirs(rep)
    for f in case["files"]:
        p = os.path.join(rep.encode(), bytes.fromhex(f["path"]))
        if f.get("dir"):
            os.makedirs(p, exist_ok=True)
        else:
            with open(p, "wb") as o:
                o.write(bytes.fromhex(f["hex"]))
    return rep


CTL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")
UNSAFE_CP = re.compile("[\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def unsafe(b):
    """Why bytes b are unsafe on a terminal, or None."""
    m = CTL.search(b)
    if m:
        return "control byte 0x%02x at %d: %r" % (b[m.start()], m.start(), b[max(0, m.start() - 40):m.start() + 20])
    try:
        t = b.decode("utf-8")
    except UnicodeDecodeError as e:
        return "not UTF-8: %s" % e
    m = UNSAFE_CP.search(t)
    return "C1/bidi U+%04X at %d" % (ord(m.group()), m.start()) if m else None


def check(runner, judge, case):
    """Run one case: None, or (class, signature, detail)."""
    rep = materialise(runner.work, case)
    argv = [a.replace("@rep", rep) for a in case["argv"]]
    rc, out, err = runner.run_input(argv, bytes.fromhex(case["stdin"]))
    found = judge(argv, rc, out, err)
    if found:
        return found
    fmts = [a for a in argv if a in ("--json", "--jsonl", "--csv")]
    if rc in (0, 1, 2) and fmts and fmts[-1] == "--json":
        try:
            json.loads(out.decode("utf-8"))
        except ValueError as e:
            return ("json", "invalid-json-report", str(e)[:300] + "\n" + out.decode("utf-8", "replace")[:300])
    if not (fmts and fmts[-1] == "--json"):
        why = unsafe(out)
        if why:
            return ("inject", "stdout", why)
    why = unsafe(err)
    if why:
        return ("inject", "stderr", why)
    return None


def minimise(runner, judge, case, found):
    """Drop options, files and lines, halve long lines, while the same finding persists."""
    def same(c):
        f = check(runner, judge, c)
        return f is not None and f[:2] == found[:2]

    def shrink_bytes(get, put):
        data = get()
        lines = data.split(b"\n")
        i = 0
        while i < len(lines) and runner.runs < budget:
            trial = lines[:i] + lines[i + 1:]
            put(b"\n".join(trial))
            if same(case):
                lines = trial
            else:
                i += 1
        for i in range(len(lines)):
            while len(lines[i]) > 64 and runner.runs < budget:
                trial = lines[:i] + [lines[i][:len(lines[i]) // 2]] + lines[i + 1:]
                put(b"\n".join(trial))
                if not same(case):
                    break
                lines = trial
        put(b"\n".join(lines))

    budget = runner.runs + 400
    i = 1
    while i < len(case["argv"]):
        for k in (2, 1):
            trial = dict(case, argv=case["argv"][:i] + case["argv"][i + k:])
            if i + k <= len(case["argv"]) and same(trial):
                case = trial
                break
        else:
            i += 1
    files = case["files"]
    i = 0
    while i < len(files):
        trial = dict(case, files=files[:i] + files[i + 1:])
        if not files[i].get("dir") and same(trial):
            case, files = trial, trial["files"]
        else:
            i += 1
    shrink_bytes(lambda: bytes.fromhex(case["stdin"]), lambda b: case.__setitem__("stdin", b.hex()))
    for f in case["files"]:
        if not f.get("dir"):
            shrink_bytes(lambda f=f: bytes.fromhex(f["hex"]), lambda b, f=f: f.__setitem__("hex", b.hex()))
    return case


def run_input(runner, argv, stdin):
    """gpup2p argv with stdin: (rc, out, err); rc None on a timeout."""
    args = [runner.bin] + argv
    runner.runs += 1
    try:
        p = subprocess.run([a.encode("utf-8", "surrogateescape") for a in args], input=stdin, capture_output=True,
                           env=runner.env, timeout=runner.timeout, cwd=runner.work)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or b"", e.stderr or b""
