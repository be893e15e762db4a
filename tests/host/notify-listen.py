#!/usr/bin/env python3
"""A stand-in for systemd's notify socket: bind a datagram socket at PATH and
append every message received to LOG, one message per line ('\\n' inside a
message becomes ' | '), until killed."""
import os
import socket
import sys

path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(log, "a", buffering=1) as f:
    f.write("listening\n")
    while True:
        msg = s.recv(65536).decode()
        f.write(msg.replace("\n", " | ") + "\n")
