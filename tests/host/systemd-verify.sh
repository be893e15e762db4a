#!/bin/bash
# systemd-analyze verify on the installed unit, with the man pages it names
# findable, and the systemd-analyze security exposure score (printed, and
# held to at most MAX_EXPOSURE so that a loosened sandbox fails the test).
#   systemd-verify.sh BUILD_DIR
set -u
build=$1
MAX_EXPOSURE=2.0
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not installed"; exit 77; }
dest=$(mktemp -d /tmp/tierd-verify.XXXXXX)
trap 'rm -rf "$dest"' EXIT

meson install -C "$build" --no-rebuild --destdir "$dest" >/dev/null || exit 1
unit=$(find "$dest" -name tierd.service)
sbin=$(dirname "$(find "$dest" -name tierd -type f)")
# The binary, not the bash completion of the same name.
bin=$(dirname "$(find "$dest" -path '*/bin/tierctl' -type f)")
mkdir -p "$dest/units"
# The unit names the final paths; point them into the temporary tree.
sed -e "s|^ExecStart=.*/tierd|ExecStart=$sbin/tierd|" \
    -e "s|^ExecReload=.*/tierctl|ExecReload=$bin/tierctl|" "$unit" >"$dest/units/tierd.service"
export MANPATH=$(dirname "$(dirname "$(find "$dest" -name tierd.8)")")
out=$(systemd-analyze verify "$dest/units/tierd.service" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] && [ -z "$out" ] || { echo "FAIL: systemd-analyze verify (exit $rc)"; exit 1; }
echo "ok   systemd-analyze verify"

sec=$(systemd-analyze security --offline=yes "$dest/units/tierd.service" 2>&1)
score=$(echo "$sec" | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
echo "$sec" | tail -1
[ -n "$score" ] || { echo "FAIL: no exposure score"; echo "$sec"; exit 1; }
awk -v s="$score" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(s <= m) }' ||
	{ echo "FAIL: exposure $score above $MAX_EXPOSURE"; echo "$sec" | grep '✗'; exit 1; }
echo "ok   exposure $score (at most $MAX_EXPOSURE)"
