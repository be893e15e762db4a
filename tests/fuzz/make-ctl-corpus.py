#!/usr/bin/env python3
"""Write the control protocol's seed corpus into corpus/ctl/: every request,
valid and broken in each header field, and responses of each result code,
whole and truncated.  The layout is ctl_proto.h's: magic "TRDC", version,
code, flags, payload length, all little-endian."""
import os
import struct
import sys

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "ctl")
MAGIC, VERSION, JSON = 0x43445254, 1, 1
OPS = {"status": 1, "nodes": 2, "cgroups": 3, "metrics": 4, "reload": 5, "dry-run": 6}
RESULTS = {"ok": 0, "failed": 1, "denied": 2, "bad-request": 3}


def msg(code, payload=b"", flags=0, magic=MAGIC, version=VERSION, length=None):
    n = len(payload) if length is None else length
    return struct.pack("<IHHII", magic, version, code, flags, n) + payload


seeds = {}
for name, op in OPS.items():
    seeds["req-" + name] = msg(op)
    seeds["req-" + name + "-json"] = msg(op, flags=JSON)
for arg in (b"on", b"off", b"maybe", b"o\0n", b"x" * 64):
    seeds["req-dry-run-" + arg.replace(b"\0", b"NUL")[:8].decode()] = msg(OPS["dry-run"], arg)
seeds["req-too-long"] = msg(OPS["dry-run"], b"x" * 65)
seeds["req-truncated-header"] = msg(OPS["status"])[:9]
seeds["req-truncated-payload"] = msg(OPS["dry-run"], b"off")[:18]
seeds["req-trailing"] = msg(OPS["status"]) + b"extra"
seeds["req-bad-magic"] = msg(OPS["status"], magic=0x50545448)
seeds["req-bad-version"] = msg(OPS["status"], version=2)
seeds["req-bad-flags"] = msg(OPS["status"], flags=0x80)
seeds["req-bad-op"] = msg(0)
seeds["req-op-past-max"] = msg(7)
seeds["req-huge-length"] = msg(OPS["status"], length=0xFFFFFFFF)
seeds["req-http"] = b"GET / HTTP/1.0\r\n\r\n"
for name, code in RESULTS.items():
    body = ("%s: text\n" % name).encode()
    seeds["resp-" + name] = msg(code, body)
    seeds["resp-" + name + "-json"] = msg(code, b'{"ok":true}\n', flags=JSON)
seeds["resp-empty"] = msg(0)
seeds["resp-truncated"] = msg(0, b"status text\n")[:20]
seeds["resp-bad-code"] = msg(9, b"x")
seeds["resp-max-length-short"] = msg(0, b"abc", length=4 << 20)
seeds["resp-over-max"] = msg(0, b"abc", length=(4 << 20) + 1)

os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(seeds), out), file=sys.stderr)
