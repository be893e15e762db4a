#!/usr/bin/env python3
"""Resource bounds of the config parser, through `tierd --check-config`:
files of about 1 MB that are valid, too large, or built to be expensive
(thousands of list entries, deep nesting, many anchors, one large mapping
aliased from every list entry).  Each must end within MAX_S seconds and
MAX_RSS_MB of memory with exactly the expected first and last lines.

  conf-bounds.py TIERD
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

MAX_S = 10.0  # generous: the suite also runs under ASan on a loaded machine
MAX_RSS_MB = 256
LIMIT = 1 << 20  # conf_file.c: CONF_MAX_FILE

tierd = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="tierd-bounds.")
failed = 0


def case(name, text, rc, first, last=None):
    global failed
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    t0 = time.monotonic()
    p = subprocess.run([tierd, "--check-config", path], capture_output=True, text=True)
    secs = time.monotonic() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    out = (p.stdout + p.stderr).replace(tmp + "/", "").splitlines()
    problems = []
    if p.returncode != rc:
        problems.append("exit %d, want %d" % (p.returncode, rc))
    if not out or out[0] != first:
        problems.append("first line %r, want %r" % (out[:1], first))
    if callable(last):
        if not out or not last(out[-1]):
            problems.append("last line %r" % out[-1:])
    elif last is not None and out[-1:] != [last]:
        problems.append("last line %r, want %r" % (out[-1:], last))
    if secs > MAX_S:
        problems.append("%.1f s" % secs)
    if rss_mb > MAX_RSS_MB:
        problems.append("%.0f MB" % rss_mb)
    print("%s %s: %d bytes, %.2f s, max RSS so far %.0f MB%s" % (
        "FAIL" if problems else "ok  ", name, len(text), secs, rss_mb,
        ": " + "; ".join(problems) if problems else ""))
    failed += bool(problems)
    os.unlink(path)


def pad(text, size):
    """text, then comment lines up to exactly size bytes."""
    line = "# " + "x" * 77 + "\n"
    body = text
    while len(body) + len(line) <= size:
        body += line
    rest = size - len(body)
    return body + ("#" + "x" * (rest - 2) + "\n" if rest >= 2 else "\n" * rest)


good = "interval_ms: 500\npromotion: {batch_pages: 1024}\n"
case("big-ok.yaml", pad(good, LIMIT - 1), 0, "configuration OK")
case("too-big.yaml", pad(good, LIMIT), 1, "too-big.yaml: File too large")

n = 20000
cg = "cgroups:\n" + "".join("  - {path: /s%d.slice, fast_tier_max_bytes: 1G}\n" % i for i in range(n))
case("cgroups.yaml", cg, 1, "cgroups.yaml:130:5: cgroups: more than 128 entries")

comms = "sampling:\n  targets:\n    comms:\n" + "".join("      - proc%d\n" % i for i in range(LIMIT // 16))
case("comms.yaml", comms[:LIMIT - 1], 1,
     "comms.yaml:%d:9: sampling.targets.comms: more than 16 entries" % (3 + 17))

case("deep.yaml", "a: " + "[" * (LIMIT - 10) + "\n", 1,
     "deep.yaml:1:35: yaml: nested deeper than 32 levels")

anchors = "x:\n" + "".join("  - &a%d 1\n" % i for i in range(LIMIT // 14))
case("anchors.yaml", anchors, 1, "anchors.yaml:%d:5: yaml: more than 256 anchors" % (1 + 257))

keys = 20000
big = "cgroups:\n  - &m {path: /a.slice, " + ", ".join("k%d: 1" % i for i in range(keys)) + "}\n"
big += "".join("  - *m\n" for _ in range(200))

def many_more(line):
    # Every key of each of the 128 entries walked is reported (and counted).
    w = line.split()
    return line.endswith(" more errors not shown") and int(w[1]) >= keys * 128 - 50


case("aliases.yaml", big, 1, "aliases.yaml:2:%d: cgroups[0].k0: unknown key" % (big.index("k0") - big.index("  - &m") + 1),
     many_more)

os.rmdir(tmp)
sys.exit(1 if failed else 0)
