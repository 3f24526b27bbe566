#!/usr/bin/env python3
"""A strict checker of the Prometheus text exposition format (version 0.0.4), as node_exporter's
textfile collector reads it: https://prometheus.io/docs/instrumenting/exposition_formats/

Usage: prom_check.py FILE [PREFIX]. Checks: UTF-8; every line a HELP, TYPE or sample line (no other
comments, no blank lines), ending in a newline; metric and label names by the format's grammar, every
name starting with PREFIX (default gpup2p_); label values with only the escapes \\\\, \\" and \\n;
values Go's ParseFloat reads (NaN, +Inf, -Inf); no timestamps (textfile collector refuses them); at
most one HELP and one TYPE per family, both before its samples; a family's samples together; no
sample repeated with the same labels; every sample's family typed gauge. Prints the first fault and
exits 1, else prints nothing and exits 0."""
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r"^(%s)(?:\{((?:%s=%s)(?:,%s=%s)*)?,?\})? (\S+)$" % (NAME, LABEL, VALUE, LABEL, VALUE))
PAIR = re.compile(r"(%s)=(%s)" % (LABEL, VALUE))
FLOAT = re.compile(r"^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|Inf|NaN)$")


def fail(n, msg, line=""):
    print("line %d: %s%s" % (n, msg, (": " + line[:120]) if line else ""))
    sys.exit(1)


def main():
    path = sys.argv[1]
    prefix = sys.argv[2] if len(sys.argv) > 2 else "gpup2p_"
    raw = open(path, "rb").read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(0, "not UTF-8: %s" % e)
    if not text:
        fail(0, "empty")
    if not text.endswith("\n"):
        fail(0, "no newline at the end")
    helps, types, done, seen = set(), {}, set(), set()
    current = None
    for n, line in enumerate(text[:-1].split("\n"), 1):
        if line.startswith("#"):
            m = re.match(r"^# (HELP|TYPE) (%s) (.*)$" % NAME, line)
            if not m:
                fail(n, "a comment that is neither HELP nor TYPE", line)
            kind, name, rest = m.groups()
            if name in done or name == current:
                fail(n, "%s of %s after its samples" % (kind, name), line)
            if kind == "HELP":
                if name in helps:
                    fail(n, "second HELP of " + name)
                if not re.fullmatch(r"(?:[^\\\n]|\\[\\n])*", rest):
                    fail(n, "HELP escapes only \\\\ and \\n", line)
                if not rest.strip():
                    fail(n, "empty HELP", line)
                helps.add(name)
            else:
                if name in types:
                    fail(n, "second TYPE of " + name)
                if rest not in ("counter", "gauge", "histogram", "summary", "untyped"):
                    fail(n, "unknown type " + rest, line)
                types[name] = rest
            continue
        if not line.strip():
            fail(n, "blank line")
        m = SAMPLE.match(line)
        if not m:
            fail(n, "not a sample line (name{labels} value, no timestamp)", line)
        name, labels, value = m.groups()
        if not name.startswith(prefix):
            fail(n, "name without the prefix " + prefix, line)
        if not FLOAT.match(value):
            fail(n, "value not a float: " + value, line)
        if name != current:
            if name in done:
                fail(n, "samples of %s not together" % name, line)
            if current:
                done.add(current)
            current = name
        if types.get(name) != "gauge":
            fail(n, "sample of %s without TYPE gauge before it" % name, line)
        if name not in helps:
            fail(n, "sample of %s without HELP" % name, line)
        pairs = PAIR.findall(labels or "")
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            fail(n, "a label twice", line)
        key = (name, tuple(sorted(pairs)))
        if key in seen:
            fail(n, "the same series twice", line)
        seen.add(key)
    for name in types:
        if name not in done and name != current:
            fail(0, "TYPE of %s without samples" % name)


main()
