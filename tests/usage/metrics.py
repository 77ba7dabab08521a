#!/usr/bin/env python3
"""metrics.py - a small, strict reader of the Prometheus text format 0.0.4.

    metrics.py FILE            check FILE; exit 1 with the reason if broken
    metrics.py FILE SELECTOR   print the value of one sample, or "none"

Checks: every line is a comment, blank, or `name{labels} value`; names and
label names match the format's patterns, label values are quoted with only
\\\\, \\" and \\n escapes; a family's # TYPE comes before its samples and
its samples are contiguous; values are floats; histograms have cumulative
buckets ending in le="+Inf", whose count equals _count, and a _sum.
SELECTOR is a sample as printed: name{k="v",...} with the labels in the
order the daemon prints them.
"""
import re
import sys

NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def fail(msg, n=None):
    sys.stderr.write("metrics.py: %s%s\n" % ("line %d: " % n if n else "", msg))
    sys.exit(1)


def parse_labels(s, n):
    labels, pos = [], 0
    while pos < len(s):
        m = LABEL.match(s, pos)
        if not m:
            fail("bad label at %r" % s[pos:], n)
        labels.append((m.group(1), m.group(2)))
        pos = m.end()
        if pos < len(s):
            if s[pos] != ",":
                fail("labels must be separated by commas: %r" % s, n)
            pos += 1
    return labels


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)] if name.endswith(suffix) else None
        if base and types.get(base) in ("histogram", "summary"):
            return base
    return name


def parse(text):
    types, samples, seen_done, current = {}, [], set(), None
    for n, line in enumerate(text.split("\n"), 1):
        if line == "":
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                if not NAME.fullmatch(parts[2]):
                    fail("bad metric name %r" % parts[2], n)
                if parts[1] == "TYPE":
                    if len(parts) != 4 or parts[3] not in TYPES:
                        fail("bad TYPE line", n)
                    if parts[2] in types:
                        fail("second TYPE for %s" % parts[2], n)
                    types[parts[2]] = parts[3]
            continue
        m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?', line)
        if not m:
            fail("not a sample: %r" % line, n)
        name, labels = m.group(1), parse_labels(m.group(3) or "", n)
        try:
            value = float(m.group(4))
        except ValueError:
            fail("bad value %r" % m.group(4), n)
        fam = family_of(name, types)
        if fam not in types:
            fail("sample %s before its # TYPE" % name, n)
        if fam != current:
            if fam in seen_done:
                fail("family %s is not contiguous" % fam, n)
            if current:
                seen_done.add(current)
            current = fam
        samples.append((name, labels, value, fam))
    return types, samples


def check_histograms(types, samples):
    series = {}
    for name, labels, value, fam in samples:
        if types[fam] != "histogram":
            continue
        key = (fam, tuple(l for l in labels if l[0] != "le"))
        h = series.setdefault(key, {"buckets": [], "sum": None, "count": None})
        if name.endswith("_bucket"):
            le = dict(labels).get("le")
            if le is None:
                fail("%s without le" % name)
            h["buckets"].append((float(le), value))
        elif name.endswith("_sum"):
            h["sum"] = value
        elif name.endswith("_count"):
            h["count"] = value
    for key, h in series.items():
        b = h["buckets"]
        if not b or b[-1][0] != float("inf"):
            fail("%s: buckets must end with le=\"+Inf\"" % (key,))
        if any(b[i][0] >= b[i + 1][0] or b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
            fail("%s: buckets are not increasing and cumulative" % (key,))
        if h["count"] != b[-1][1] or h["sum"] is None:
            fail("%s: _count %s != +Inf bucket %s, or no _sum" % (key, h["count"], b[-1][1]))


def main():
    if len(sys.argv) < 2:
        fail("usage: metrics.py FILE [SELECTOR]")
    with open(sys.argv[1], encoding="utf-8") as f:
        types, samples = parse(f.read())
    check_histograms(types, samples)
    if len(sys.argv) == 2:
        return
    for name, labels, value, _ in samples:
        sel = name + ("{" + ",".join('%s="%s"' % l for l in labels) + "}" if labels else "")
        if sel == sys.argv[2]:
            print(int(value) if value == int(value) else value)
            return
    print("none")


main()
