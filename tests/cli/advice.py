#!/usr/bin/env python3
"""Every `gpup2p CMD --opt` named in the given files is an option of CMD's table.

Usage: advice.py GPUP2P FILE...  Prints one line per spelling CMD does not take ("FILE: gpup2p CMD
--opt") and exits 1 when there is one. The options come from `gpup2p __complete CMD --` (the table
itself, global options included), so advice in libcore's strings, the man pages and README cannot
drift from the parser. With --rules GPUP2P cli/cmd_*.c: every term of every rule of the option tables
(struct opt_rule: options, --opt=VALUE, positional words) names what the command has, so that a
misspelt rule cannot silently never fire. With --bare GPUP2P FILE.c...: every option spelling of any
gpup2p command in a C string literal is part of a `gpup2p CMD --opt` phrase (so the first mode checks
it), unless BARE_ALLOWED names it with a reason; other programs' options (systemctl --now) pass. C sources: adjacent string literals are joined first ("... gpup2p doctor "
"--active"); man pages: roff's \\- and font escapes removed."""
import re
import subprocess
import sys

COMMANDS = {"doctor", "topo", "bar", "acs", "enable", "pin", "map", "copy", "bench", "report", "snapshot"}
GLOBAL_WITH_VALUE = {"--root", "--color"}
cache = {}
# (file, the literal's text around the spelling): why it cannot name its command
BARE_ALLOWED = {
    ("libcore/acs/boot.c", "--disable"): "matches an installed unit's ExecStart line: data, not advice",
    ("libcore/doctor/rdma.c", "(--device=/dev/infiniband)"): "docker's --device, not acs's",
}


def options(binary, cmd):
    if cmd not in cache:
        out = subprocess.run([binary, "__complete"] + cmd.split() + ["--"], capture_output=True, text=True).stdout
        cache[cmd] = {line.split("\t")[0].rstrip("=") for line in out.splitlines() if line.startswith("-")}
    return cache[cmd]


def text_of(path):
    s = open(path, encoding="utf-8", errors="replace").read()
    if path.endswith((".c", ".h")):
        s = re.sub(r'"\s*\n\s*"', "", s)
    if re.search(r"\.[1-8]$", path):
        s = re.sub(r"\\f[BIRP]|\\f\(..", "", s).replace("\\-", "-").replace("\\(em", " ")
    return s


def named(s):
    """(cmd, option) for each gpup2p CMD ... --opt in s, and each `CMD ... --opt` code span"""
    for m in re.finditer(r"(?<![\w./-])gpup2p[ \t]+([^\n\"'`(),;|]*)", s):
        words = m.group(1).split()
        i = 0
        while i < len(words) and words[i].startswith("-"):
            i += 1 + (words[i] in GLOBAL_WITH_VALUE)
        if i >= len(words) or words[i] not in COMMANDS:
            continue
        cmd = words[i]
        if cmd == "bench" and i + 1 < len(words) and words[i + 1] == "rdma":
            cmd, i = "bench rdma", i + 1
        for w in words[i + 1:]:
            o = re.match(r"--[a-z][a-z0-9-]*", w)
            if o:
                yield cmd, o.group(0)
    # Markdown and code spans without the program's name: `bench rdma --lat`, `doctor --active`
    commands = "|".join(sorted(COMMANDS))
    for m in re.finditer(r"`(%s)( rdma)?( -[^`]*)`" % commands, s):
        for o in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", m.group(3)):
            yield m.group(1) + (m.group(2) or ""), o


def candidates(binary, words):
    out = subprocess.run([binary, "__complete"] + words, capture_output=True, text=True).stdout
    return {line.split("\t")[0] for line in out.splitlines()}


def rule_terms(body):
    """each term of each rule in a rule array's text (the reason after .why left out)"""
    for m in re.finditer(r"\{ OPT_(?:EXCLUDES|NEEDS|ONE_OF|REFUSES|NOT_ABOVE|NOT_EQUAL), ([^}]*)\}", body):
        fields = m.group(1).split(".why")[0]
        for term in " ".join(re.findall(r'"([^"]*)"', fields)).split():
            for t in term.split("|"):
                yield t.lstrip("!")


def rules(binary, files):
    bad = n = 0
    for f in files:
        s = open(f, encoding="utf-8").read()
        owner = {r: name for name, r in re.findall(r'\.name = "([a-z ]+)"[^;]*?\.rules = (\w+)', s)}
        for arr, body in re.findall(r"static const struct opt_rule (\w+)\[\] = \{(.*?)\n\};", s, re.S):
            cmd = owner[arr].split()
            for t in rule_terms(body):
                opt, _, val = t.partition("=")
                n += 1
                if t.startswith("-"):
                    ok = opt in options(binary, " ".join(cmd)) and (not val or val in candidates(binary, cmd + [opt, ""]))
                else:
                    ok = t in candidates(binary, cmd + [""])
                if not ok:
                    print(f"{f}: rule term {t}: {' '.join(cmd)} has no such option, value or word")
                    bad += 1
    print(f"# {n} rule terms read, {bad} unknown")
    return 1 if bad or not n else 0


def literals(s):
    """the string literals of C source s, comments dropped and adjacent literals joined"""
    s = re.sub(r"/\*.*?\*/", "", s, flags=re.S)
    s = re.sub(r'"\s*\n\s*"', "", s)
    return re.findall(r'"((?:[^"\\\n]|\\.)*)"', s)


def bare(binary, files):
    ours = set()
    for cmd in COMMANDS | {"bench rdma"}:
        ours |= options(binary, cmd)
    bad = n = 0
    for f in files:
        for lit in literals(open(f, encoding="utf-8").read()):
            rest = re.sub(r"(?<![\w./-])gpup2p[ \t]+[^\n\"'`(),;|]*", "", lit)
            for m in re.finditer(r"(?<![\w-])--[a-z][a-z0-9-]*", rest):
                n += 1
                if m.group(0) not in ours or any(f.endswith(af) and at in lit for af, at in BARE_ALLOWED):
                    continue
                print(f"{f}: bare {m.group(0)} (name the command: gpup2p CMD {m.group(0)}) in \"{lit[:60]}\"")
                bad += 1
    print(f"# {n} bare spellings read, {bad} of gpup2p's own")
    return 1 if bad or not n else 0


def main():
    if sys.argv[1] == "--bare":
        return bare(sys.argv[2], sys.argv[3:])
    if sys.argv[1] == "--rules":
        return rules(sys.argv[2], sys.argv[3:])
    binary, files = sys.argv[1], sys.argv[2:]
    bad = n = 0
    for f in files:
        for cmd, opt in named(text_of(f)):
            n += 1
            if opt not in options(binary, cmd):
                print(f"{f}: gpup2p {cmd} {opt}: {cmd} has no {opt}")
                bad += 1
    print(f"# {n} spellings read, {bad} unknown")
    return 1 if bad or not n else 0


sys.exit(main())
