#!/usr/bin/env python3
"""Abuse tierd's control socket; each mode exits 0 when tierd behaved.

  ctl-abuse.py privileges SOCK   (run as an unprivileged user)
      every op the server knows, with every argument shape: read-only ops
      answer OK, every mutating one DENIED, any other argument BAD_REQUEST.
  ctl-abuse.py paths SOCK FILE   (run as root)
      every op with FILE as its argument: BAD_REQUEST, and FILE not created.
  ctl-abuse.py hold SOCK N SECONDS
      open N connections, send nothing; print how many the server kept
      (not reset within 0.5 s), hold them SECONDS, close.
  ctl-abuse.py garbage SOCK N
      N connections, each sending random bytes (or nothing) and closing;
      every answer that comes must be a well-formed BAD_REQUEST.
"""
import os
import random
import socket
import struct
import sys
import time

MAGIC, VERSION = 0x43445254, 1
OK, FAILED, DENIED, BAD_REQUEST = 0, 1, 2, 3
# The policy under test: these (op, argument) pairs are open to everyone.
# Every other op the server knows must be refused to an unprivileged peer.
OPS = {1: "status", 2: "nodes", 3: "cgroups", 4: "metrics", 5: "reload", 6: "dry-run"}
READ_ONLY = {(1, ""), (2, ""), (3, ""), (4, ""), (6, "")}
ARGS_TAKEN = {6: {"", "on", "off"}}


def request(sock_path, op, arg=b"", flags=0):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sock_path)
    s.sendall(struct.pack("<IHHII", MAGIC, VERSION, op, flags, len(arg)) + arg)
    hdr = b""
    while len(hdr) < 16:
        b = s.recv(16 - len(hdr))
        if not b:
            raise EOFError("closed after %d header bytes" % len(hdr))
        hdr += b
    magic, ver, code, rflags, length = struct.unpack("<IHHII", hdr)
    assert magic == MAGIC and ver == VERSION, hdr
    body = b""
    while len(body) < length:
        b = s.recv(length - len(body))
        assert b, "short body"
        body += b
    s.close()
    return code, body.decode()


def privileges(sock_path):
    # Ops past the last known one are refused as unsupported: that is how
    # this test learns it covers every op the server has.
    code, body = request(sock_path, max(OPS) + 1)
    assert code == BAD_REQUEST and "not supported" in body, (code, body)
    bad = 0
    for op, name in OPS.items():
        for arg in ("", "on", "off"):
            for flags in (0, 1):
                code, body = request(sock_path, op, arg.encode(), flags)
                if arg not in ARGS_TAKEN.get(op, {""}):
                    want = BAD_REQUEST
                elif (op, arg) in READ_ONLY:
                    want = OK
                else:
                    want = DENIED
                ok = code == want
                if want == DENIED:
                    ok = ok and "permission denied: %s needs root" % name in body
                print("%s %s %r json=%d: %d%s" % ("ok  " if ok else "FAIL", name, arg,
                      flags, code, "" if ok else " (want %d) %r" % (want, body)))
                bad += not ok
    return bad == 0


def paths(sock_path, target):
    bad = 0
    for op, name in OPS.items():
        code, body = request(sock_path, op, target.encode())
        ok = code == BAD_REQUEST and "takes" in body
        print("%s %s %s: %d %r" % ("ok  " if ok else "FAIL", name, target, code, body))
        bad += not ok
    if os.path.lexists(target):
        print("FAIL: %s exists" % target)
        bad += 1
    return bad == 0


def hold(sock_path, n, secs):
    conns = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock_path)
        s.setblocking(False)
        conns.append(s)
    time.sleep(0.5)
    kept = 0
    for s in conns:
        try:
            kept += s.recv(1) != b""
        except BlockingIOError:
            kept += 1  # nothing to read: still open
        except ConnectionResetError:
            pass
    print(kept, flush=True)
    time.sleep(secs)
    for s in conns:
        s.close()
    return True


def garbage(sock_path, n):
    rnd = random.Random(1)
    bad = 0
    for i in range(n):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(sock_path)
        data = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(0, 100)))
        if i % 3 == 0:  # a valid magic and version, the rest random
            data = struct.pack("<IH", MAGIC, VERSION) + data
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            reply = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                reply += b
        except (ConnectionResetError, BrokenPipeError):
            reply = b""
        s.close()
        if reply:
            magic, ver, code, _, length = struct.unpack("<IHHII", reply[:16])
            if magic != MAGIC or len(reply) != 16 + length or code not in (OK, BAD_REQUEST, DENIED):
                print("FAIL: input %r got %r" % (data, reply))
                bad += 1
    print("%d garbage connections, %d bad answers" % (n, bad))
    return bad == 0


mode = sys.argv[1]
if mode == "privileges":
    ok = privileges(sys.argv[2])
elif mode == "paths":
    ok = paths(sys.argv[2], sys.argv[3])
elif mode == "hold":
    ok = hold(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
elif mode == "garbage":
    ok = garbage(sys.argv[2], int(sys.argv[3]))
else:
    sys.exit("unknown mode " + mode)
sys.exit(0 if ok else 1)
