"""Mutations of a fixture tree for tests/fuzz/fuzz.py.

generate() looks at a tree and draws a few concrete operations; apply() carries one out. Operations
are plain JSON (paths relative to the root, bytes as hex) so that a finding replays exactly:
  poke      PATH OFF HEX          overwrite bytes of a file at an offset (config bytes, capability loops)
  truncate  PATH SIZE             cut or grow a file
  write     PATH HEX [REPEAT]     replace a file's content
  symlink   PATH TARGET           replace PATH by a link (TARGET relative, or @decoy / @outside)
  remove    PATH                  delete a file or a directory
  mkdir     PATH                  replace a file by an empty directory
  clone     PATH COUNT            COUNT copies of a leaf function beside it (new device numbers)
  deep      BRIDGE LEAF DEPTH     a chain of DEPTH bridges below BRIDGE ending in a copy of LEAF
  junk      NAMEHEX KIND          an odd entry in sys/bus/pci/devices (dir, file or dangling link)
  fifo      PATH                  replace PATH by a named pipe (nobody writes it: an open that waits hangs)
Nothing is ever written outside the root: a path that resolves elsewhere is left alone.
"""
import os
import re
import shutil
import struct

BDF = re.compile(r"^([0-9a-f]{4,8}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")
DEVFILES = ["vendor", "device", "class", "subsystem_vendor", "subsystem_device", "revision", "numa_node",
            "local_cpulist", "local_cpus", "current_link_speed", "current_link_width", "max_link_speed",
            "max_link_width", "enable", "irq"]
NASTY = [b"", b"\n", b"0", b"-1", b"0x", b"0xffff\n", b"0x10000", b"99999999999999999999999", b"4294967296",
         b"-2147483648", b" 1", b"1 2", b"\xff\xfe\n", b"1\x002", b"%s%n%x", b"16.0 GT/s PCIe\n", b"2.5 GT/s",
         b"Unknown\n", b"0-3,,5", b"1-0", b"0-99999999", b"0-4095", b"8.0 GT/s", b"32", b"0x030200\n",
         b"0xffffffff", b"nan", b"1e9999", b"\n\n\n", b"0x10de\n", b"caf\xc3\xa9\xed\xa0\x80"]
TEXTS = ("proc/", "gpup2p/", "sys/module/", "sys/kernel/", "sys/devices/system/", "sys/class/", "dev/")  # read by doctor & co
DOCTOR = ["proc/modules", "proc/kallsyms", "proc/cmdline", "proc/driver/nvidia/version", "proc/driver/nvidia/params",
          "proc/sys/kernel/hostname", "proc/sys/kernel/random/boot_id", "proc/sys/kernel/numa_balancing",
          "proc/sys/kernel/modules_disabled", "sys/module/module/parameters/sig_enforce", "dev", "dev/kmsg",
          "dev/gpup2p", "dev/nvidiactl", "dev/nvidia0", "dev/nvidia-uvm", "dev/infiniband", "dev/infiniband/uverbs0",
          "gpup2p/gpu-facts", "proc/driver/nvidia/gpus", "sys/devices/system/node"]


def _kmsg(rng):
    """A kernel log: kmsg records and dmesg lines, Xid lines of GPUs on the bus or not, damaged ones."""
    lines = []
    for i in range(rng.choice([1, 5, 40, 300])):
        dom = rng.choice(["0000", "0000", "0001", "ffff", "zz", "00000000", ""])
        bus = rng.choice(["13", "14", "33", "93", "e1", "%02x" % rng.randint(0, 255), "1ff", ""])
        code = rng.choice(["79", "13", "48", "63", "94", "0", "99999", "-1", "abc", "4294967296", "119"])
        pre = rng.choice(["PCI:", "PCI:", "", "PCI:PCI:"])
        body = "NVRM: Xid (%s%s:%s:00): %s, pid=1, name=x" % (pre, dom, bus, code)
        r = rng.random()
        if r < 0.1:
            body = body[:rng.randint(0, len(body))]
        elif r < 0.15:
            body += "A" * rng.choice([8000, 20000])
        elif r < 0.2:
            body = rng.choice(["NVRM: Xid (", "NVRM: Xid ()", "NVRM: Xid (PCI:0000:13:00.9): 79", "\xff\xfe", ""])
        elif r < 0.35:  # NVSwitch SXids (nvlink.sxid) and Xid 154's recovery action
            body = rng.choice(["nvidia-nvswitch%d: SXid (%s%s:%s:00.0): %s, %s, Link %s LTSSM Fault Up" % (
                rng.randint(0, 99), pre, dom, bus, rng.choice(["20034", "19084", "0", "999999", "x"]),
                rng.choice(["Fatal", "Non-fatal", "Severity 5", ""]), rng.choice(["28", "-1", "64", "99999999999"])),
                "nvidia-nvswitch: SXid (", "nvidia-nvswitch" + "9" * 40 + ": SXid (PCI:0000:c2:00.0): 1, Fatal",
                body + ", GPU recovery action changed from 0x0 (None) to 0x" + rng.choice(["3", "ffffffffff", "", "-2"])])
        head = rng.choice(["4,%d,%d,-;" % (i, i * 1000), "[ %d.000000] " % i, "", "4,x,y;"])
        lines.append(head + body)
        if rng.random() < 0.1:
            lines.append(" SUBSYSTEM=pci")
    return "\n".join(lines).encode("utf-8", "surrogateescape") + rng.choice([b"\n", b"", b"\0\n"])


def generate_doctor(rng, root):
    """Mutations of what doctor reads beside the PCI functions: its /proc, /sys and /dev files (text,
    long values, pipes, links out of the root, missing, folders) and ROOT/dev/kmsg."""
    files, _, devs = inventory(root)
    cands = [f for f in files if f.startswith(TEXTS)]
    ops = []
    for _ in range(rng.randint(1, 5)):
        r = rng.random()
        path = rng.choice(DOCTOR + cands) if cands and rng.random() < 0.5 else rng.choice(DOCTOR)
        if r < 0.2:
            ops.append({"op": "write", "path": "dev/kmsg", "hex": _kmsg(rng).hex()})
        elif r < 0.35:
            ops.append({"op": "fifo", "path": path})
        elif r < 0.5:
            ops.append({"op": "symlink", "path": path, "target": rng.choice(["@decoy", "@outside", "nowhere",
                                                                             os.path.basename(path)])})
        elif r < 0.6:
            ops.append({"op": "remove", "path": path})
        elif r < 0.65:
            ops.append({"op": "mkdir", "path": path})
        else:
            op = _text_op(rng, root, [p for p in cands if os.path.isfile(os.path.join(root, p))] or files, [])
            ops.append(op)
    if devs and rng.random() < 0.2:
        ops.append(_config_op(rng, root, _pick_dev(rng, root, devs)))
    return ops


def _rel(root, p):
    return os.path.relpath(p, root)


def inventory(root):
    files, links, devdirs = [], [], []
    for d, dirs, names in os.walk(root):
        for n in dirs + names:
            p = os.path.join(d, n)
            if os.path.islink(p):
                links.append(_rel(root, p))
        for n in names:
            p = os.path.join(d, n)
            if not os.path.islink(p):
                files.append(_rel(root, p))
        if BDF.match(os.path.basename(d)) and "config" in names and not os.path.islink(d):
            devdirs.append(_rel(root, d))
    return sorted(files), sorted(links), sorted(devdirs)


def _children(root, dev):
    p = os.path.join(root, dev)
    return [n for n in os.listdir(p) if BDF.match(n) and not os.path.islink(os.path.join(p, n))]


def _read(root, rel):
    if not os.path.isfile(os.path.join(root, rel)):  # a pipe (fifo op) would block the open
        return b""
    try:
        with open(os.path.join(root, rel), "rb") as f:
            return f.read()
    except OSError:
        return b""


def _caps(cfg):
    """Offsets of the standard and the extended capabilities (as a correct walker sees them), and
    {capability: offset} for the ones gpup2p decodes (PCIe 0x10; ext: ACS 0x0D, ReBAR 0x15, ATS 0x0F)."""
    std, ext, known = [], [], {}
    if len(cfg) > 0x34:
        off = cfg[0x34] & 0xFC
        while off >= 0x40 and off + 1 < len(cfg) and off not in std and len(std) < 48:
            std.append(off)
            if cfg[off] == 0x10:
                known["pcie"] = off
            off = cfg[off + 1] & 0xFC
    off = 0x100
    while off >= 0x100 and off + 4 <= len(cfg) and off not in ext and len(ext) < 96:
        hdr = struct.unpack_from("<I", cfg, off)[0]
        if hdr in (0, 0xFFFFFFFF):
            break
        ext.append(off)
        known.setdefault({0x0D: "acs", 0x15: "rebar", 0x0F: "ats"}.get(hdr & 0xFFFF, "other"), off)
        off = (hdr >> 20) & 0xFFC
    return std, ext, known


# Fields gpup2p decodes, as offsets in their capability: what a mutation most likely reaches.
FIELDS = {"pcie": [2, 3, 0x0C, 0x0D, 0x0E, 0x12, 0x13, 0x2C, 0x2D],   # flags (port type), link cap/status
          "acs": [4, 5, 6, 7],                                        # ACS capability, control
          "rebar": [4, 5, 6, 7, 8, 8, 9, 9, 9, 10, 11, 0x11, 0x11],  # sizes; BAR index, entry count, size code
          "ats": [4, 5, 6, 7]}


def _config_op(rng, root, dev):
    path = dev + "/config"
    cfg = _read(root, path)
    std, ext, known = _caps(cfg)
    known.pop("other", None)
    r = rng.random()
    if r < 0.6 and known:  # a field gpup2p decodes: any byte value
        cap = rng.choice(sorted(known))
        return {"op": "poke", "path": path, "off": known[cap] + rng.choice(FIELDS[cap]),
                "hex": "%02x" % rng.choice([0, 0xFF, rng.randint(0, 255), rng.randint(0, 255)])}
    r = rng.random()
    if r < 0.25 and (std or ext):  # a capability list that loops (onto itself or an earlier entry)
        if ext and (not std or rng.random() < 0.5):
            at = rng.choice(ext)
            to = rng.choice(ext[:ext.index(at) + 1])
            hdr = (struct.unpack_from("<I", cfg, at)[0] & 0x000FFFFF) | (to << 20)
            return {"op": "poke", "path": path, "off": at, "hex": struct.pack("<I", hdr).hex()}
        at = rng.choice(std)
        to = rng.choice(std[:std.index(at) + 1] + [0x34, 0x01, 0xFF, 0x3C])
        return {"op": "poke", "path": path, "off": at + 1, "hex": "%02x" % to}
    if r < 0.4:
        return {"op": "truncate", "path": path, "size": rng.choice([0, 1, 2, 63, 64, 65, 255, 256, 257, 1024,
                                                                  4095, 4097, 65536])}
    caps = std + ext
    if r < 0.7 and caps:  # a byte inside a capability (ACS, ReBAR, PCIe: the bodies decoded)
        off = rng.choice(caps) + rng.randint(0, 15)
    else:  # the header: ids, command, header type, BARs, bus numbers, capability pointer
        off = rng.choice([0, 1, 2, 3, 6, 8, 9, 0x0A, 0x0B, 0x0E, 0x10, 0x14, 0x18, 0x19, 0x1A, 0x24, 0x34,
                          0x34, rng.randint(0, 0xFF)])
    n = rng.choice([1, 1, 2, 4])
    val = bytes(rng.choice([0, 0xFF, 0x40, 0x10, 0x0D, 0x15, rng.randint(0, 255)]) for _ in range(n))
    return {"op": "poke", "path": path, "off": off, "hex": val.hex()}


def _resource_op(rng, root, dev):
    path = dev + "/resource"
    lines = _read(root, path).split(b"\n")
    r = rng.random()
    if r < 0.2:
        lines = lines[:rng.randint(0, max(len(lines) - 1, 0))]
    elif r < 0.35:
        lines += [b"0x0000000000001000 0x0000000000001fff 0x0000000000040200"] * rng.randint(1, 20)
    elif lines:
        i = rng.randrange(len(lines))
        f = lines[i].split(b" ")
        j = rng.randrange(max(len(f), 1))
        tok = rng.choice([b"0xffffffffffffffff", b"0x", b"zz", b"", b"-1", b"0x10000000000000000",
                          b"0x00000000000000ff", b"0xfffffffffffff000", b"1" * 40])
        if f:
            f[j] = tok
        if rng.random() < 0.3 and len(f) >= 2:  # start above end
            f[0], f[1] = b"0x0000000000002000", b"0x0000000000001000"
        lines[i] = b" ".join(f)
    return {"op": "write", "path": path, "hex": b"\n".join(lines).hex()}


def _long_value(rng, text):
    """One "Key: value" or "key=value" line of text with its value made long: (new text) or None."""
    lines = text.split(b"\n")
    keyed = [i for i, l in enumerate(lines) if re.match(rb"^[\w.-]+(: |=)", l)]
    if not keyed:
        return None
    i = rng.choice(keyed)
    key, sep, _ = re.split(rb"(: |=)", lines[i], maxsplit=1)
    unit = rng.choice([b"RmEnableFoo=1;", b"A", b"0,", b"x "])
    lines[i] = key + sep + b'"' + unit * rng.choice([40, 300, 3000]) + b'"'
    return b"\n".join(lines)


def _text_op(rng, root, files, devs):
    cands = [f for f in files if f.startswith(TEXTS) and "/config" not in f]
    if devs and (not cands or rng.random() < 0.6):
        path = rng.choice(devs) + "/" + rng.choice(DEVFILES)
    else:
        path = rng.choice(cands)
        if rng.random() < 0.4:
            data = _long_value(rng, _read(root, path))
            if data is not None:
                return {"op": "write", "path": path, "hex": data.hex()}
    if rng.random() < 0.15:  # far longer than any buffer
        unit = rng.choice([b"A", b"0,", b"\xff", b"1-2,", b"gpu 0000:01:00.0 vram=1 bar1=1 name=x\n",
                           b"nvlink 0000:01:00.0 0000:02:00.0 4\n"])
        return {"op": "write", "path": path, "hex": unit.hex(), "repeat": rng.choice([300, 5000, 100000])}
    data = rng.choice(NASTY)
    if path.endswith("gpu-facts") and rng.random() < 0.7:
        old = _read(root, path).split(b"\n")
        if old:
            i = rng.randrange(len(old))
            w = old[i].split(b" ")
            w[rng.randrange(len(w))] = rng.choice(NASTY).strip(b"\n")
            old[i] = b" ".join(w)
        data = b"\n".join(old)
    return {"op": "write", "path": path, "hex": data.hex()}


def _clone_op(rng, root, devs):
    leaves = [d for d in devs if not _children(root, d)]
    return {"op": "clone", "path": rng.choice(leaves), "count": rng.choice([3, 40, 300])} if leaves else None


def _deep_op(rng, root, devs):
    bridges = [d for d in devs if _children(root, d)]
    leaves = [d for d in devs if not _children(root, d)]
    if not bridges or not leaves:
        return None
    return {"op": "deep", "bridge": rng.choice(bridges), "leaf": rng.choice(leaves),
            "depth": rng.choice([3, 15, 17, 40])}


def _pick_dev(rng, root, devs):
    """A function, GPUs, NICs and bridges (what the commands look at) more often than others."""
    hot = [d for d in devs if _read(root, d + "/class")[:4] in (b"0x03", b"0x02", b"0x06")]
    return rng.choice(hot if hot and rng.random() < 0.8 else devs)


TOP = ["sys", "sys/bus/pci/devices", "sys/bus/pci", "sys/devices", "sys/class/infiniband", "sys/class/net",
       "sys/kernel/iommu_groups", "sys/class/iommu", "sys/devices/system/node", "proc", "proc/cmdline", "gpup2p",
       "gpup2p/gpu-facts"]
DEVHOT = ["", "/config", "/resource", "/driver", "/iommu_group", "/infiniband", "/net", "/class", "/vendor"]


def _hot(rng, root, everything, devs):
    """A path whose loss or replacement matters: the directories the scan lists, a function's own
    directory, config or links, its entry in sys/bus/pci/devices; now and then anything."""
    if rng.random() < 0.3 or not devs:
        return rng.choice(everything)
    if rng.random() < 0.4:
        top = [t for t in TOP if os.path.lexists(os.path.join(root, t))]
        if top:
            return rng.choice(top)
    d = _pick_dev(rng, root, devs)
    if rng.random() < 0.2:
        return "sys/bus/pci/devices/" + os.path.basename(d)
    return d + rng.choice(DEVHOT)


def generate(rng, root):
    files, links, devs = inventory(root)
    ops = []
    if rng.random() < 0.4 and devs:  # config space only: several fields of the functions the commands show
        return [_config_op(rng, root, _pick_dev(rng, root, devs)) for _ in range(rng.randint(1, 6))]
    for _ in range(rng.randint(1, 5)):
        r = rng.random()
        op = None
        if r < 0.35 and devs:
            op = _config_op(rng, root, _pick_dev(rng, root, devs))
        elif r < 0.45 and devs:
            op = _resource_op(rng, root, rng.choice(devs))
        elif r < 0.65:
            op = _text_op(rng, root, files, devs)
        elif r < 0.75:
            path = _hot(rng, root, files + links + devs, devs)
            tgt = rng.choice(["@decoy", "@outside", "loop", "nowhere", "other", "other"])
            if tgt == "loop":
                tgt = os.path.basename(path)
            elif tgt == "other":
                tgt = os.path.relpath(_hot(rng, root, files + devs, devs), os.path.dirname(path))
            op = {"op": "symlink", "path": path, "target": tgt}
        elif r < 0.8:
            op = {"op": "remove", "path": _hot(rng, root, files + devs, devs)}
        elif r < 0.83:
            op = {"op": "mkdir", "path": _hot(rng, root, files, devs)}
        elif r < 0.89 and devs:
            op = _clone_op(rng, root, devs)
        elif r < 0.93 and devs:
            op = _deep_op(rng, root, devs)
        else:
            name = rng.choice([b"zzzz", b"0000:00:00.0x", b"0000:zz:00.0", b"A" * 255, b"\xff\xfe", b"0000:00:1f.7",
                               b"ffffffff:ff:1f.7", b"10000:00:00.0", b".hidden", b"0000:00:00.0 "])
            op = {"op": "junk", "name": name.hex(), "kind": rng.choice(["dir", "file", "link"])}
        if op:
            ops.append(op)
    return ops


def _inside(root, p):
    real = os.path.realpath(p)
    base = os.path.realpath(root)
    return real == base or real.startswith(base + os.sep)


def _fresh(root, p):
    """Remove whatever is at p (a link itself, not its target); False when p is not inside the root."""
    if not _inside(root, os.path.dirname(p)):
        return False
    if os.path.islink(p) or os.path.isfile(p):
        os.unlink(p)
    elif os.path.isdir(p):
        shutil.rmtree(p)
    return True


def _new_bdfs(root, parent, bdf, count):
    m = BDF.match(bdf)
    used = set(os.listdir(os.path.join(root, "sys/bus/pci/devices")))
    out = []
    for dev in range(32):
        for fn in range(8):
            name = "%s:%s:%02x.%d" % (m.group(1), m.group(2), dev, fn)
            if name not in used and not os.path.lexists(os.path.join(parent, name)):
                out.append(name)
                if len(out) == count:
                    return out
    return out


def _link_bus(root, devpath):
    link = os.path.join(root, "sys/bus/pci/devices", os.path.basename(devpath))
    if os.path.isdir(os.path.dirname(link)) and not os.path.lexists(link) and _inside(root, os.path.dirname(link)):
        os.symlink(os.path.relpath(devpath, os.path.dirname(link)), link)


def _copy_files(src, dst):
    """The function's own files and links (not the functions below it)."""
    os.makedirs(dst)
    for n in os.listdir(src):
        s = os.path.join(src, n)
        if os.path.islink(s):
            os.symlink(os.readlink(s), os.path.join(dst, n))
        elif os.path.isfile(s):
            shutil.copyfile(s, os.path.join(dst, n))


def apply(root, op, decoy):
    try:
        _apply(root, op, decoy)
    except (OSError, ValueError, IndexError, AttributeError):
        pass  # a mutation that no longer fits the tree (an earlier one removed its target)


def _apply(root, op, decoy):
    kind = op["op"]
    if kind == "junk":
        d = os.path.join(root, "sys/bus/pci/devices")
        p = os.path.join(d, bytes.fromhex(op["name"]).decode("utf-8", "surrogateescape"))
        if not os.path.isdir(d) or os.path.islink(d) or not _fresh(root, p):
            return
        if op["kind"] == "dir":
            os.mkdir(p)
        elif op["kind"] == "file":
            open(p, "wb").close()
        else:
            os.symlink("../../../devices/nowhere", p)
        return
    if kind == "deep":
        b, leaf = os.path.join(root, op["bridge"]), os.path.join(root, op["leaf"])
        if not (_inside(root, b) and _inside(root, leaf)):
            return
        m = BDF.match(os.path.basename(b))
        used = set(os.listdir(os.path.join(root, "sys/bus/pci/devices")))
        cur, bus = b, 0xFF
        for i in range(op["depth"] + 1):
            while bus > 0 and any(u.startswith("%s:%02x:" % (m.group(1), bus)) for u in used):
                bus -= 1
            name = "%s:%02x:00.0" % (m.group(1), bus)
            bus -= 1
            nxt = os.path.join(cur, name)
            _copy_files(leaf if i == op["depth"] else b, nxt)
            _link_bus(root, nxt)
            cur = nxt
        return
    p = os.path.join(root, op["path"])
    if not _inside(root, os.path.dirname(p)) or os.path.realpath(p) == os.path.realpath(decoy):
        return
    if kind == "clone":
        if not _inside(root, p) or not os.path.isdir(p):
            return
        parent = os.path.dirname(p)
        for name in _new_bdfs(root, parent, os.path.basename(p), op["count"]):
            _copy_files(p, os.path.join(parent, name))
            _link_bus(root, os.path.join(parent, name))
        return
    if kind in ("poke", "truncate", "write") and (not _inside(root, p) or os.path.isdir(p) or
                                                  (os.path.lexists(p) and not os.path.isfile(p))):
        return  # a folder, or a pipe an earlier op made (opening it to write would wait for a reader)
    if kind == "poke":
        with open(p, "r+b" if os.path.exists(p) else "wb") as f:
            f.seek(op["off"])
            f.write(bytes.fromhex(op["hex"]))
    elif kind == "truncate":
        with open(p, "ab") as f:
            f.truncate(op["size"])
    elif kind == "write":
        with open(p, "wb") as f:
            f.write(bytes.fromhex(op["hex"]) * op.get("repeat", 1))
    elif kind == "symlink":
        tgt = op["target"].replace("@decoy", decoy).replace("@outside", os.path.dirname(decoy))
        if _fresh(root, p):
            os.symlink(tgt, p)
    elif kind == "remove":
        _fresh(root, p)
    elif kind == "mkdir":
        if _fresh(root, p):
            os.mkdir(p)
    elif kind == "fifo":
        if _fresh(root, p):
            os.mkfifo(p)


def match_value(rng):
    return rng.choice(["10de:*", "15b3:1017", "", ":", "10de:", ":1234", "zzzz:1", "1ffff:0", "10de:*:x", "*:*",
                       "10de:2330", "0x10de:0x2330", "-1:-1", "10de:" + "f" * 100, "\u00e9:\u00e9", "%s%n",
                       "10de:2330,15b3:1017", "FFFF:FFFF", " 10de:2330", "10de:\udcff"])


def bdf_value(rng):
    return rng.choice(["0000:00:00.0", "00:00.0", "ffff:ff:1f.7", "10000:00:00.0", "0000:00:00.8", "zz:zz.z", "",
                       "0000:00:01.0;x", "0000:00:01.0\n", "1:2:3.4", "0000:0:0.0", "0" * 300])


def state_text(rng, root):
    """An ACS state file for `acs --restore --dry-run`: plausible entries for real bridges, then damaged."""
    _, _, devs = inventory(root)
    lines = ["gpup2p-acs-state 1"]
    for d in devs[:rng.randint(0, 6)]:
        v, dv = _read(root, d + "/vendor").strip()[2:6], _read(root, d + "/device").strip()[2:6]
        lines.append("%s %s:%s 0x%03x 0x%04x 0x%04x" % (os.path.basename(d), v.decode("ascii", "replace"),
                                                        dv.decode("ascii", "replace"), rng.choice([0x148, 0x1a0, 0x2a6]),
                                                        rng.randint(0, 0xFFFF), 0))
    r = rng.random()
    if r < 0.2 and len(lines) > 1:
        lines[1] = lines[1].replace(" ", "  ", 1) + " extra"
    elif r < 0.3:
        lines[0] = "gpup2p-acs-state 2"
    elif r < 0.4:
        lines.append("X" * rng.choice([255, 256, 5000]))
    elif r < 0.5 and len(lines) > 1:
        lines.append(lines[1])
    elif r < 0.6:
        lines.append("0000:00:00.0 ffff:ffff 0xffe 0xffff 0x10000")
    return "\n".join(lines) + "\n"


def write_state(work, text):
    with open(os.path.join(work, "state"), "w") as f:
        f.write(text)
    os.chmod(os.path.join(work, "state"), 0o644)
