#!/bin/bash
# `meson install --destdir` into a temporary directory, then check the tree:
# binaries, unit (with the installed paths), config, examples, man pages,
# tierctl's bash completion, and that the installed tierd accepts the
# installed config.
#   install-check.sh BUILD_DIR PREFIX SBINDIR BINDIR SYSCONFDIR MANDIR UNITDIR DATADIR
set -u
build=$1 prefix=$2
abs() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
sbindir=$(abs "$3") bindir=$(abs "$4") sysconfdir=$(abs "$5") mandir=$(abs "$6")
unitdir=$(abs "$7") datadir=$(abs "$8")
dest=$(mktemp -d /tmp/tierd-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
fail=0

meson install -C "$build" --no-rebuild --destdir "$dest" >"$dest.log" 2>&1 || {
	cat "$dest.log"; rm -f "$dest.log"; exit 1; }
rm -f "$dest.log"

check() {
	if [ "$1" "$dest$2" ]; then echo "ok   $2"; else echo "FAIL: $2 ($1)"; fail=1; fi
}
check -x "$sbindir/tierd"
check -x "$bindir/tierctl"
check -f "$sysconfdir/tierd/tierd.yaml"
check -f "$unitdir/tierd.service"
check -f "$mandir/man8/tierd.8"
check -f "$mandir/man8/tierctl.8"
check -f "$mandir/man5/tierd.yaml.5"
check -f "$datadir/bash-completion/completions/tierctl"
for ex in cxl-promotion gpu-coherent cgroup-budgets; do
	check -f "$datadir/doc/tierd/examples/$ex.yaml"
done

unit=$dest$unitdir/tierd.service
grep -qx "ExecStart=$sbindir/tierd" "$unit" || { echo "FAIL: ExecStart is not $sbindir/tierd"; fail=1; }
grep -qx "ExecReload=$bindir/tierctl reload" "$unit" || { echo "FAIL: ExecReload"; fail=1; }
grep -q '@[a-z]*dir@' "$unit" && { echo "FAIL: unsubstituted @...@ in the unit"; fail=1; }
grep -qx "# The policy is $sysconfdir/tierd/tierd.yaml;.*" "$unit" ||
	{ echo "FAIL: the unit's comment does not name the installed config path"; fail=1; }
grep -q '@[A-Z_]*@' "$dest$mandir"/man*/* && { echo "FAIL: unsubstituted @...@ in a man page"; fail=1; }
grep -q "$sysconfdir/tierd/tierd.yaml" "$dest$mandir/man8/tierd.8" ||
	{ echo "FAIL: tierd.8 does not name the installed config path"; fail=1; }

out=$("$dest$sbindir/tierd" --check-config "$dest$sysconfdir/tierd/tierd.yaml" 2>&1)
[ "$out" = "configuration OK" ] || { echo "FAIL: installed config: $out"; fail=1; }
exit $fail
