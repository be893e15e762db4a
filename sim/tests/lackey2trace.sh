#!/bin/sh
# lackey2trace over a hand-checked lackey fixture (fixtures/lackey.out),
# at 1e6 instructions a second and 2 us intervals: two instructions an
# interval.
#
# Interval 0 (instructions 1-2, time 2 us): the stack page 0x1ffefff
# twice (L, S), page 0x804a twice (M, and the L that straddles into
# 0x804b), page 0x804b once.  Interval 1 (instructions 3-4, time 4 us):
# 0x804b once.  Instruction fetches count nothing.  Touched 2 MiB chunks:
# 0x40 (pages 0x804a, 0x804b) and 0xffff (0x1ffefff), numbered 0 and 1,
# so the pages are 74, 75 and 512 + 511 = 1023.
#
# With a 1 KiB cache (one set of 16 lines) the store hits the load's
# line, and interval 1's load hits the line the straddling load brought.
set -eu
tool=$1 fixture=$2
fail() { echo "FAIL: $*"; exit 1; }

want='2,/fix,74,2
2,/fix,75,1
2,/fix,1023,2
4,/fix,75,1'
got=$("$tool" --tenant /fix --ips 1e6 --interval-us 2 <"$fixture" | grep -v '^#')
[ "$got" = "$want" ] || fail "no cache: got
$got"

want='2,/fix,74,2
2,/fix,75,1
2,/fix,1023,1'
got=$("$tool" --tenant /fix --ips 1e6 --interval-us 2 --cache 1K <"$fixture" | grep -v '^#')
[ "$got" = "$want" ] || fail "1 KiB cache: got
$got"

"$tool" --tenant /fix --ips 1e6 --interval-us 2 <"$fixture" |
	grep -q '^# instructions 4, data accesses 5, counted 6, chunks 2, records 4$' ||
	fail "summary line"

out=$("$tool" --tenant fix <"$fixture" 2>&1) && fail "a tenant without / accepted"
[ "$out" = "lackey2trace: --tenant /NAME (no blanks or commas) is required" ] ||
	fail "bad tenant: $out"
echo ok
