#!/bin/bash
# tierd as a service on this machine, as root, with a temporary runtime
# directory and --no-knobs: status, --json, metrics, sd_notify messages,
# reload good and bad (the old policy keeps running), SIGHUP, dry-run, a
# non-root client refused, a second instance refused, SIGTERM, and no
# kernel knob changed.  Also tierd on the DRAM+CXL fixture tree (--root),
# and --json with every byte in the config's path.
#   tierd-host.sh TIERD TIERCTL FIXTURES_DIR [TIERS]
# TIERS: how many tiers status must show (default 1, this single-node
# machine; the lab guest passes 2).
set -u
[ "$(id -u)" -eq 0 ] || { echo "needs root (starts tierd, checks SO_PEERCRED as another user)"; exit 77; }
tierd=$(realpath "$1") tierctl=$(realpath "$2") fixtures=$(realpath "$3") tiers=${4:-1}
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/tierd-host.XXXXXX)
chmod 755 "$T"
fail=0
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; fail=1; }
expect_rc() { # want got what
	if [ "$1" -eq "$2" ]; then ok "$3 (exit $2)"; else bad "$3: exit $2, expected $1"; fi
}
ctl() { "$tierctl" --runtime-dir "$T/run" "$@"; }
wait_for() { # command... : up to 10 s
	for _ in $(seq 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
knobs() { # every sysctl tierd might ever write, to see that none changed
	for f in /proc/sys/vm/* /proc/sys/kernel/numa_balancing; do
		[ -r "$f" ] && [ -f "$f" ] && printf '%s=%s\n' "$f" "$(cat "$f" 2>/dev/null)"
	done | grep -v -e drop_caches -e compact_memory -e stat_refresh
}
knobs >"$T/knobs.before"

cat >"$T/tierd.yaml" <<'YAML'
interval_ms: 200
copy_threads: {mode: off}
kernel: {numa_balancing: coexist}
YAML
cp "$T/tierd.yaml" "$T/good.yaml"

# 1. sd_notify through a stand-in notify socket.
python3 "$here/notify-listen.py" "$T/notify.sock" "$T/notify.log" &
pids+=($!)
wait_for grep -q listening "$T/notify.log" || bad "notify listener did not start"

NOTIFY_SOCKET=$T/notify.sock "$tierd" --config "$T/tierd.yaml" --runtime-dir "$T/run" \
	--no-knobs 2>"$T/tierd.log" &
tierd_pid=$!
pids+=($tierd_pid)
wait_for test -S "$T/run/control.sock" || { bad "no control socket"; cat "$T/tierd.log"; exit 1; }
wait_for grep -q READY=1 "$T/notify.log" && ok "READY=1 sent" || bad "no READY=1"
wait_for grep -q WATCHDOG=1 "$T/notify.log" && ok "WATCHDOG=1 sent" || bad "no WATCHDOG=1"
grep -Eq "STATUS=$tiers tiers?( \(kernel tiers flat\))?, promoting 0 B/s, demoting 0 B/s, copy threads 0" "$T/notify.log" &&
	ok "STATUS= line" || bad "STATUS= line: $(grep STATUS "$T/notify.log" | tail -1)"

# 2. status, human and JSON, against what sysfs says.
nodes=0
for n in /sys/devices/system/node/node[0-9]*; do
	[ "$(awk '/MemTotal/ {print $4}' "$n/meminfo")" -gt 0 ] && nodes=$((nodes + 1))
done
out=$(ctl status); rc=$?
expect_rc 0 $rc "tierctl status"
echo "$out" | grep -q "^config:   $T/tierd.yaml (0 reloads, 0 refused)$" && ok "status names the config" ||
	bad "status config line: $out"
echo "$out" | grep -q '^  tier0 ' && ok "status lists tier0" || bad "status: $out"
echo "$out" | grep -Eq "^tiers:    $tiers from (kernel|hmat)" && ok "status shows $tiers tier(s)" ||
	bad "status tiers: $out"
[ "$(echo "$out" | grep -c '^  tier[0-9]')" -eq "$tiers" ] || bad "status tier rows: $out"
echo "$out" | grep -q 'every 200 ms' || bad "status interval: $out"
json=$(ctl --json status); rc=$?
expect_rc 0 $rc "tierctl --json status"
got=$(echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(len(t["nodes"]) for t in d["tiers"]), len(d["tiers"]), d["knobs"], d["interval_ms"])')
[ "$got" = "$nodes $tiers False 200" ] && ok "JSON: $nodes memory nodes in tiers, knobs off" || bad "JSON status: $got"
ctl --json nodes | python3 -c 'import json,sys; json.load(sys.stdin)' && ok "nodes --json parses" || bad "nodes --json"
ctl --json cgroups | python3 -c 'import json,sys; assert json.load(sys.stdin) == {"cgroups": []}' &&
	ok "cgroups --json" || bad "cgroups --json"
ctl nodes | grep -q '^0 ' && ok "nodes lists node 0" || bad "nodes"

# 3. metrics: the exposition format, line by line.
ctl metrics >"$T/metrics"; rc=$?
expect_rc 0 $rc "tierctl metrics"
python3 - "$T/metrics" <<'PY' && ok "metrics parse as Prometheus text" || bad "metrics format"
import re, sys
sample = re.compile(r'^(tierd_[a-z_]+)(\{[a-z_]+="([^"\\]|\\.)*"(,[a-z_]+="([^"\\]|\\.)*")*\})? (-?[0-9.]+(e[+-][0-9]+)?)$')
types = {}
ticks = None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split(" ")
        assert kind in ("counter", "gauge"), line
        assert (kind == "counter") == name.endswith("_total"), line
        types[name] = kind
    elif line.startswith("# HELP "):
        continue
    else:
        m = sample.match(line)
        assert m, line
        assert m.group(1) in types, line
        if m.group(1) == "tierd_ticks_total":
            ticks = float(line.split()[-1])
assert ticks and ticks >= 1, ticks
assert "tierd_sampler_cpu_seconds_total" in types and "tierd_copy_threads" in types
PY

# 4. reload: good, then bad (refused, old policy still running), then SIGHUP.
sed -i 's/interval_ms: 200/interval_ms: 300/' "$T/tierd.yaml"
out=$(ctl reload 2>&1); rc=$?
expect_rc 0 $rc "reload of a good file"
[ "$out" = "reloaded $T/tierd.yaml" ] || bad "reload said: $out"
ctl status | grep -q 'every 300 ms' && ok "new interval in effect" || bad "interval not reloaded"
grep -q 'RELOADING=1 | STATUS=Reloading configuration | MONOTONIC_USEC=[0-9]' "$T/notify.log" &&
	ok "RELOADING=1 with MONOTONIC_USEC" || bad "no RELOADING=1/MONOTONIC_USEC"

printf 'interval_ms: 5\npromotion:\n  batch_page: 3\n' >"$T/tierd.yaml"
ticks1=$(ctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["ticks"])')
err=$(ctl reload 2>&1 >/dev/null); rc=$?
expect_rc 1 $rc "reload of a bad file"
want="$T/tierd.yaml:1:14: interval_ms: 5 is out of range 10..60000
$T/tierd.yaml:3:3: promotion.batch_page: unknown key
reload refused: tierd keeps running the previous policy"
[ "$err" = "$want" ] && ok "reload errors name file, line, column and key" || bad "reload errors: $err"
sleep 1.5
st=$(ctl --json status)
echo "$st" | python3 -c "
import json,sys; d=json.load(sys.stdin)
assert d['interval_ms'] == 300 and d['reloads'] == 1 and d['reloads_refused'] == 1, d
assert d['ticks'] >= $ticks1 + 2, (d['ticks'], $ticks1)" && ok "old policy still ticking" || bad "after bad reload: $st"
grep -q "tierd.yaml:1:14: interval_ms: 5 is out of range" "$T/tierd.log" && ok "refusal logged" ||
	bad "refusal not in the log"

kill -HUP $tierd_pid
refusals() { [ "$(grep -c 'interval_ms: 5 is out of range' "$T/tierd.log")" -eq 2 ]; }
wait_for refusals || bad "SIGHUP refusal not logged"
kill -0 $tierd_pid && ok "SIGHUP with a bad file: still running" || bad "tierd died on SIGHUP"
cp "$T/good.yaml" "$T/tierd.yaml"
kill -HUP $tierd_pid
wait_for sh -c "\"$tierctl\" --runtime-dir \"$T/run\" status | grep -q 'every 200 ms'" &&
	ok "SIGHUP with a good file reloads" || bad "SIGHUP reload"

# 5. Privileges: nobody reads but may not change.
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$tierctl" --runtime-dir "$T/run" "$@"; }
nobody status >/dev/null; expect_rc 0 $? "nobody: status"
err=$(nobody reload 2>&1); rc=$?
expect_rc 4 $rc "nobody: reload refused"
[ "$err" = "permission denied: reload needs root" ] || bad "nobody reload said: $err"
nobody dry-run on >/dev/null 2>&1; expect_rc 4 $? "nobody: dry-run on refused"
grep -q 'Refused reload from uid 65534' "$T/tierd.log" && ok "refusal logged with uid" || bad "no refusal log"

# control.group lets a group in: primary group, or supplementary (SO_PEERGROUPS).
grp=$(getent group 65534 | cut -d: -f1)
if [ -n "$grp" ]; then
	printf 'interval_ms: 200\ncontrol: {group: %s}\n' "$grp" >"$T/tierd.yaml"
	ctl reload >/dev/null; expect_rc 0 $? "root: reload with control.group $grp"
	nobody reload >/dev/null; expect_rc 0 $? "primary group $grp: reload allowed"
	setpriv --reuid=65534 --regid=1 --groups=65534 "$tierctl" --runtime-dir "$T/run" reload >/dev/null
	expect_rc 0 $? "supplementary group $grp: reload allowed"
	setpriv --reuid=65534 --regid=1 --clear-groups "$tierctl" --runtime-dir "$T/run" reload >/dev/null 2>&1
	expect_rc 4 $? "other group: reload refused"
	printf 'control: {group: no-such-group-tierd}\n' >"$T/tierd.yaml"
	err=$(ctl reload 2>&1); rc=$?
	expect_rc 1 $rc "reload naming a group that does not exist"
	echo "$err" | grep -qxF "$T/tierd.yaml:1:18: control.group: 'no-such-group-tierd': no such group" || bad "group error: $err"
	cp "$T/good.yaml" "$T/tierd.yaml"
	ctl reload >/dev/null || bad "reload back to the good file"
fi

# 6. dry-run toggled by root.
ctl dry-run on >/dev/null; expect_rc 0 $? "root: dry-run on"
[ "$(ctl dry-run)" = "dry run: on" ] && ok "dry run shown" || bad "dry-run query"
ctl status | grep -q '^mode:     dry run' || bad "status does not show dry run"
ctl dry-run maybe >/dev/null 2>&1; expect_rc 2 $? "dry-run with a bad argument"

# Garbage and a silent client: answered or dropped, never blocking others.
python3 - "$T/run/control.sock" <<'PY' && ok "garbage request answered with bad request" || bad "garbage request"
import socket, struct, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
hdr = s.recv(16)
magic, ver, code, flags, length = struct.unpack("<IHHII", hdr)
assert magic == 0x43445254 and ver == 1 and code == 3, (magic, ver, code)
body = b""
while len(body) < length:
    body += s.recv(length - len(body))
assert body == b"bad request: Bad message\n", body
PY
# The silent client waits for tierd to drop it (CONN_TIMEOUT_USEC, 5 s in
# daemon/ctl/ctl_server.c), 8 s at most.
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(8)
try: s.recv(1)
except (socket.timeout, OSError): pass' \
	"$T/run/control.sock" &
silent=$!
sleep 0.3
timeout 2 "$tierctl" --runtime-dir "$T/run" status >/dev/null && ok "a silent client does not block status" ||
	bad "status blocked by a silent client"
wait $silent

# 7. A second tierd on the same socket is refused.
"$tierd" --config "$T/good.yaml" --runtime-dir "$T/run" --no-knobs 2>"$T/second.log"
expect_rc 1 $? "second tierd refused"
grep -q 'another tierd is running' "$T/second.log" || bad "second tierd said: $(cat "$T/second.log")"
ctl status >/dev/null; expect_rc 0 $? "first tierd still serving"

# 8. SIGTERM: clean stop, socket gone, tierctl says not running.
kill -TERM $tierd_pid
wait $tierd_pid; rc=$?
expect_rc 0 $rc "tierd stopped on SIGTERM"
wait_for grep -q STOPPING=1 "$T/notify.log" && ok "STOPPING=1 sent" || bad "no STOPPING=1"
[ -e "$T/run/control.sock" ] && bad "socket left behind"
ctl status >/dev/null 2>&1; expect_rc 3 $? "tierctl when tierd is not running"

# 9. The DRAM+CXL fixture: the kernel lumps both nodes, HMAT separates them.
"$tierd" --root "$fixtures/topology/dram-cxl" --config "$T/good.yaml" --runtime-dir "$T/run2" \
	--no-knobs 2>"$T/fixture.log" &
fpid=$!
pids+=($fpid)
wait_for "$tierctl" --runtime-dir "$T/run2" status || bad "fixture tierd did not come up"
out=$("$tierctl" --runtime-dir "$T/run2" status)
echo "$out" | grep -q '^tiers:    2 from hmat; the kernel puts these nodes in one tier, tierd separates them$' &&
	ok "fixture: two tiers from HMAT, flat kernel tiers reported" || bad "fixture status: $out"
grep -q 'The kernel puts memory nodes in one tier that HMAT separates' "$T/fixture.log" ||
	bad "fixture: flat tiers not logged"
kill -TERM $fpid; wait $fpid

# 10. Any byte in a path: tierctl --json answers valid JSON, the path in it
# as a UTF-8 decoder that replaces reads its bytes (each byte that is not
# UTF-8 a U+FFFD).  The config's path holds every byte 0x01-0xff, '/' as
# the separator of a directory and a file below $T.
python3 - "$tierd" "$tierctl" "$T" <<'PY' && ok "--json status and reload valid JSON for a path with every byte" ||
import json, os, subprocess, sys, time
tierd, tierctl, t = sys.argv[1:4]
sub, name = bytes(range(0x01, 0x2f)), bytes(range(0x30, 0x100))
rel = sub + b"/" + name
os.mkdir(os.path.join(t.encode(), sub))
cfg = os.path.join(t.encode(), rel)
with open(cfg, "w") as f:
    f.write("interval_ms: 200\n")
run = os.path.join(t, "run-bytes")
log = open(os.path.join(t, "bytes.log"), "w")
p = subprocess.Popen([tierd, b"--config", rel, "--runtime-dir", run, "--no-knobs"], cwd=t, stderr=log)

def ctl(*args):
    return subprocess.run([tierctl, "--runtime-dir", run, "--json", *args], capture_output=True)

def escaped(b):
    """What an error message makes of the bytes of a path (conf_error)."""
    return b"".join(b"\\n" if c == 10 else b"\\t" if c == 9 else
                    b"\\x%02x" % c if c < 0x20 or c == 0x7f else bytes([c]) for c in b)

try:
    for _ in range(100):
        r = ctl("status")
        if r.returncode == 0:
            break
        time.sleep(0.1)
    # Strict: invalid UTF-8, or a raw control character in a string, fails.
    st = json.loads(r.stdout.decode("utf-8"))
    assert st["config"] == rel.decode("utf-8", "replace"), st["config"]
    with open(cfg, "w") as f:
        f.write("interval_ms: 5\n")
    r = ctl("reload")
    assert r.returncode == 1, r
    msg = json.loads(r.stderr.decode("utf-8"))
    want = escaped(rel).decode("utf-8", "replace") + ":1:14: interval_ms: 5 is out of range 10..60000\n"
    assert msg == {"ok": False, "message": want}, msg
finally:
    p.terminate()
    p.wait()
PY
	bad "--json with every byte in the config's path (log: $(cat "$T/bytes.log"))"

# 11. No kernel knob changed.
knobs >"$T/knobs.after"
diff "$T/knobs.before" "$T/knobs.after" && ok "no kernel knob changed" || bad "kernel knobs changed"
[ $fail -eq 0 ] || { echo "--- tierd.log"; cat "$T/tierd.log"; }
exit $fail
