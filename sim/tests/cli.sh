#!/bin/sh
# tierd-sim's command line: --help, a run twice with the same seed
# (byte-identical JSON, Markdown and PNG; another seed, another PNG),
# convert text -> binary -> text, --start touch, and
# the errors of a bad trace, of a trace of another base page, and of a bad
# option.
set -eu
sim=$1 machines=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$sim" --help | grep -q '^Usage: tierd-sim run' || fail "--help"
for i in 1 2; do
	"$sim" run --machine "$machines/dram+cxl.yaml" --gen zipf:footprint=8G,seconds=30 \
		--system none,oracle --sampler damon --seed 3 \
		--json "$d/$i.json" --md "$d/$i.md" --png "$d/$i.png"
done
cmp "$d/1.json" "$d/2.json" || fail "JSON differs between two runs"
cmp "$d/1.md" "$d/2.md" || fail "Markdown differs between two runs"
cmp "$d/1.png" "$d/2.png" || fail "PNG differs between two runs"
# The chart is a PNG: signature, a 1120 x 640 8-bit palette IHDR, every
# chunk's CRC, IDAT inflating to a filter byte and a palette index a pixel.
python3 - "$d/1.png" <<'PY' || fail "PNG structure"
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "signature"
pos, chunks, idat = 8, [], b""
while pos < len(b):
    n, = struct.unpack(">I", b[pos:pos + 4])
    kind, data = b[pos + 4:pos + 8], b[pos + 8:pos + 8 + n]
    crc, = struct.unpack(">I", b[pos + 8 + n:pos + 12 + n])
    assert crc == zlib.crc32(kind + data), "CRC of %s" % kind
    chunks.append(kind)
    idat += data if kind == b"IDAT" else b""
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", data)
    pos += 12 + n
assert chunks == [b"IHDR", b"PLTE", b"IDAT", b"IEND"], chunks
assert ihdr == (1120, 640, 8, 3, 0, 0, 0), ihdr
assert len(zlib.decompress(idat)) == 640 * (1120 + 1), "IDAT size"
PY
# The lines are the runs': another seed, another curve of NUMA balancing.
for i in 3 4; do
	"$sim" run --machine "$machines/dram+cxl.yaml" --gen zipf:footprint=8G,seconds=30 \
		--system none,numa_balancing --seed $i --png "$d/seed$i.png" >/dev/null
done
cmp -s "$d/seed3.png" "$d/seed4.png" && fail "PNG the same for another seed"
grep -q '"label": "model' "$d/1.json" || fail "JSON not labelled as a model"
grep -q '^Model (tierd-sim)' "$d/1.md" || fail "Markdown not labelled as a model"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"]; assert [x["system"] for x in r]==["none","oracle"]; assert all(k in r[0] for k in ("trace","machine","system","footprint_bytes","time_to_90pct_s","est_runtime_over_dram","bytes_migrated","bytes_pingpong"))' "$d/1.json" ||
	fail "JSON rows"

# Each system's own clock where it has one: NUMA balancing's passes,
# tierd's ticks, counted to 90% when it gets there, and none for the rest.
"$sim" run --machine "$machines/lab.yaml" --gen uniform:footprint=64M,seconds=20,hot=0.25 \
	--system none,numa_balancing,tierd-patched --json "$d/units.json" >/dev/null
python3 - "$d/units.json" <<'PY' || fail "units to 90%"
import json, sys
rows = {r["system"]: r for r in json.load(open(sys.argv[1]))["rows"]}
assert rows["none"]["unit"] is None and rows["none"]["units_to_90pct"] is None, rows["none"]
for name, unit in (("numa_balancing", "scan passes"), ("tierd-patched", "ticks")):
    r = rows[name]
    assert r["unit"] == unit, r
    assert r["time_to_90pct_s"] is not None, r
    assert isinstance(r["units_to_90pct"], int) and r["units_to_90pct"] >= 1, r
    assert r["units_to_50pct"] <= r["units_to_90pct"], r
PY

# --placement: a line per interval and system, the nodes after the
# interval's moves and the system's own count: none leaves every range on the slow node, the oracle
# has the hot set (8 of 32 ranges) on node 0 by the end of the first.
"$sim" run --machine "$machines/lab.yaml" --gen uniform:footprint=64M,seconds=4,hot=0.25 \
	--system none,oracle --placement "$d/place" >"$d/out"
python3 - "$d/place" <<'PY' || fail "--placement"
import sys
rows = [l.split() for l in open(sys.argv[1])]
assert [(r[0], r[1]) for r in rows] == [(s, "%d.000000" % t) for s in ("none", "oracle")
                                        for t in range(1, 5)], rows
for sysname, _, nodes, hot, units in rows:
    assert len(nodes) == len(hot) == 32 and hot.count("1") == 8, (nodes, hot)
    assert units == "-", units	# neither has a clock of its own
    if sysname == "none":
        assert nodes == "1" * 32, nodes
    else:
        assert all(n == "0" for n, h in zip(nodes, hot) if h == "1"), (nodes, hot)
PY

# --start touch: the rows name it; the lab's node 0 (512 ranges, less its
# low watermark, 0.2%: 510) holds the first of them, in address order.
"$sim" run --machine "$machines/lab.yaml" --gen uniform:footprint=2G,seconds=1 \
	--system none --start touch --md "$d/touch.md" --placement "$d/touch" >/dev/null
grep -q '| uniform:footprint=2G,seconds=1 start=touch | lab | none |' "$d/touch.md" ||
	fail "--start touch: the row does not say so"
[ "$(cut -d' ' -f3 "$d/touch" | cut -c1-520)" = "$(printf '%0510d' 0)$(printf '1%.0s' $(seq 10))" ] ||
	fail "--start touch: placement $(cut -d' ' -f3 "$d/touch" | cut -c1-520)"
out=$("$sim" run --machine "$machines/lab.yaml" --gen zipf --system none --start fast 2>&1) &&
	fail "--start fast accepted"
[ "$out" = "tierd-sim run: --start fast: bad value" ] || fail "--start fast: $out"

printf '# a trace\n0,/a,0,5\n1000000,/a,600,7\n2000000,/b,3,1\n' >"$d/t.csv"
"$sim" convert "$d/t.csv" "$d/t.bin"
"$sim" convert "$d/t.bin" "$d/back.csv"
grep -v '^#' "$d/t.csv" >"$d/want"
grep -v '^#' "$d/back.csv" >"$d/got"
cmp "$d/want" "$d/got" || fail "convert round trip"
"$sim" run --machine "$machines/lab.yaml" --trace "$d/t.bin" --system oracle >"$d/out" ||
	fail "run over a binary trace"
# A 2 s trace looped for 10 s: ten 1 s intervals, where once it has three.
"$sim" run --machine "$machines/lab.yaml" --trace "$d/t.bin" --system none --loop 10 \
	--placement "$d/loop" >/dev/null || fail "--loop run"
[ "$(wc -l <"$d/loop")" = 10 ] || fail "--loop: $(wc -l <"$d/loop") intervals"
out=$("$sim" run --machine "$machines/lab.yaml" --gen zipf --system none --loop 10 2>&1) &&
	fail "--loop with a generator accepted"
[ "$out" = "tierd-sim run: --loop replays a --trace; a generator runs its seconds=" ] ||
	fail "--loop with a generator: $out"

printf '0,/a,0,5\n0,/a,zero,1\n' >"$d/bad.csv"
out=$("$sim" run --machine "$machines/lab.yaml" --trace "$d/bad.csv" --system none 2>&1) && fail "bad trace accepted"
[ "$out" = "$d/bad.csv:2: page: not an unsigned decimal integer" ] || fail "bad trace: $out"
# tierd --record says its pages: 64 KiB ones replay on a 64 KiB model only.
printf '# page_bytes: 65536, pmd_bytes: 536870912\n0,/a,0,5\n1000000,/a,600,7\n' >"$d/k64.csv"
out=$("$sim" run --machine "$machines/lab.yaml" --trace "$d/k64.csv" --system none 2>&1) &&
	fail "a 64 KiB trace replayed on 4 KiB pages"
[ "$out" = "$d/k64.csv: recorded with 64 KiB base pages, but machine lab has 4 KiB ones: replay it on a machine model with the same base page (base_page_kib: 64)" ] ||
	fail "64 KiB trace: $out"
"$sim" run --machine "$machines/grace-hopper.yaml" --trace "$d/k64.csv" --system oracle >"$d/out" ||
	fail "a 64 KiB trace on the 64 KiB model"
out=$("$sim" run --machine "$machines/lab.yaml" --gen zipf --system best 2>&1) && fail "bad system accepted"
[ "$out" = "tierd-sim run: --system best: unknown system" ] || fail "bad system: $out"
# tierd sees the model's 2 MiB ranges as the THPs the engine bills them
# as: its first tick (-v, SIMDBG) counts each candidate one slot.
SIMDBG=1 "$sim" run --machine "$machines/lab.yaml" --gen zipf:footprint=1G,seconds=2 \
	--system tierd-patched --sampler exact 2>"$d/log" >/dev/null || fail "tierd-patched run"
line=$(grep -m1 '^decide at' "$d/log") || fail "no decide line"
echo "$line" | grep -Eq ': ([0-9]+) candidates \(\1 pages queried or THPs\)' ||
	fail "candidates not THPs: $line"
echo ok
