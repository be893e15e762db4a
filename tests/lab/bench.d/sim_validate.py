#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The sim-validate benchmark's model side and comparison
(tests/lab/bench.d/sim-validate): tierd-sim on the lab's machine and
workload, set against what the lab recorded.

  sim_validate.py OUT WORKLOADS TIERD_SIM MACHINE_YAML [--interval 0.2] [--command TEXT]

OUT/runs/ holds the lab's runs (tests/lab/sim-validate-guest):
SYSTEM-WORKLOAD/ with work.log, hotmap.log, summary, status.jsonl and
tierd.log (tierd's -v tick lines), and numab-params (the guest kernel's NUMA
balancing tunables and node sizes).  Per workload it runs tierd-sim twice,
numa_balancing and tierd-vanilla under the DAMON sampler, with
--placement:

  gen    the simulator's own generator with the lab's parameters
         (footprint, hot fraction, cold 0, the lab's measured access
         rate, the shift at the lab's moment); its hot ranges are
         shuffled over the footprint;
  trace  a trace written here with the lab's layout: the hot set the
         first ranges of the footprint, as tierwork places it, and for zipf
         each range's share of tierwork's per-page Zipf ranks (tierwork
         spreads the ranks over H, so its 2 MiB ranges are nearly equally
         hot; the generator ranks whole ranges);
  cal    the same trace on the machine calibrated to the run: every
         4 KiB folio's migration costing what tierd's move_pages(2) calls
         took on that workload in this boot (its tierd_run_bytes_per_s;
         the median of the boot's tierd runs where it has none), the
         host's load included.

The machine is MACHINE_YAML (sim/machines/lab.yaml) with the node sizes
the guest reported and THP off, as tierwork maps its footprint
(OUT/lab-machine.yaml); cal's are OUT/lab-cal-WORKLOAD.yaml.  Times run from the system's
start (the lab's promote-run system_start_s; the simulator's t = 0).

Per workload, system and source it reports: the hot set's share on node 0
after k scan periods (NUMA balancing: sysctl scan_period_min_ms; tierd:
the config's interval_ms, a tick), the time to 50% and 90% in seconds and
in those units, the count of tierd ticks and NUMA balancing scan passes
by then (the lab's: its tick lines, mm->numa_scan_seq; the model's: the
units its --placement lines carry), the bytes migrated, and the order
of the moves: the Spearman rank correlation, over the hot set's ranges,
of the lab's and the trace model's move times (a range's move time: the
first sample with half its pages on node 0).  For shift, the same from
the moment the hot set moved, over the new hot set.

Writes OUT/sim-validate.json, OUT/sim-validate.md, OUT/sim-validate.png
and OUT/sim/ (the simulator's inputs and outputs).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

SYSTEMS = [("numa_balancing", "numa_balancing"), ("tierd", "tierd-vanilla")]
SOURCES = ["lab", "gen", "trace", "cal"]
KS = [1, 2, 4, 8]
# cal's interval: the engine refuses a move that costs more than an
# interval's copy time, and a 2 MiB range of 4 KiB folios at this lab's
# throughput takes about 0.2 s.
CAL_INTERVAL = 1.0
RANGE = 2 << 20
PG = 4096
TIERWORK_ZIPF_S = 0.99		# tierwork's --zipf-s default
TIERWORK_SPREAD = 2654435761	# tierwork's pick(): rank r -> page r * a mod n


def kv_file(path):
    got = {}
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                k, v = line.strip().split("=", 1)
                got[k] = v
    return got


def fnum(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


class LabRun:
    """One lab run: the hot set's ranges over time, on the system's clock."""

    def __init__(self, d):
        self.summary = kv_file(os.path.join(d, "summary"))
        self.start = fnum(self.summary.get("system_start_s")) or 0.0
        self.end = (fnum(self.summary.get("settle_end_s")) or 0.0) - self.start
        self.shift = None
        ops = []
        for line in open(os.path.join(d, "work.log")):
            m = re.match(r"# shift at ([0-9.]+)", line)
            if m:
                self.shift = float(m.group(1)) - self.start
            if line[:1].isdigit():
                f = line.split()
                if float(f[0]) >= self.start:
                    ops.append(float(f[1]))
        self.rate = sum(ops) / len(ops) if ops else 0.0
        self.windows, self.samples = [], []	# [(t, seq, [n0 per range])]
        for line in open(os.path.join(d, "hotmap.log")):
            m = re.match(r"# hotmap pid \d+ window (\d+) (0x[0-9a-f]+)-(0x[0-9a-f]+) ranges (\d+)", line)
            if m:
                self.windows.append(int(m.group(4)))
            elif line[:1].isdigit():
                f = line.split()
                t = float(f[0]) - self.start
                # After the watch promote-run stops the system: a tierd
                # finishing its last calls is not the system at work.
                if self.end <= 0 or t <= self.end:
                    self.samples.append((t, int(f[1]), [int(x) for x in f[2:]]))
        self.ticks = self._ticks(d)
        self.pages_migrated = fnum(self.summary.get("pages_migrated"))

    def _ticks(self, d):
        """tierd's tick times on the system's clock: tierd.log's -v lines
        are on tierd's clock, status.jsonl gives both clocks."""
        log, st = os.path.join(d, "tierd.log"), os.path.join(d, "status.jsonl")
        if not os.path.exists(log) or not os.path.exists(st):
            return None
        offs = []
        for line in open(st):
            t, js = line.split(" ", 1)
            try:
                up = json.loads(js)["uptime_seconds"]
            except (ValueError, KeyError):
                continue
            offs.append(float(t) - up)
        if not offs:
            return None
        # tierctl answers after the sample of its clock: the smallest
        # offset is the closest.
        off = min(offs) - self.start
        return [off + float(m.group(1)) for m in
                (re.search(r"tick at ([0-9.]+) s:", l) for l in open(log)) if m]

    def series(self, window):
        """[(t, share of window's pages on node 0)]."""
        lo = sum(self.windows[:window])
        n = self.windows[window]
        return [(t, sum(v[lo:lo + n]) / (n * RANGE / PG)) for t, _, v in self.samples]

    def move_times(self, window, t0):
        """Per range of the window: the first sample at or after t0 with
        half its pages on node 0, or None."""
        lo = sum(self.windows[:window])
        got = []
        for r in range(lo, lo + self.windows[window]):
            got.append(next((t for t, _, v in self.samples
                             if t >= t0 and v[r] * PG * 2 >= RANGE), None))
        return got

    def seq_at(self, t):
        """NUMA balancing's scan passes by t (since the system started)."""
        if t is None or not self.samples:
            return None
        base = next((s for tt, s, _ in self.samples if tt >= 0), self.samples[0][1])
        seq = [s for tt, s, _ in self.samples if tt <= t]
        return seq[-1] - base if seq and base >= 0 else None

    def ticks_by(self, t0, t):
        if self.ticks is None or t is None:
            return None
        return sum(1 for x in self.ticks if t0 <= x <= t)


def sim_placement(path, system):
    """[(end_s, nodes, hot, count)] of one system's --placement lines, count
    its own units so far (ticks, scan passes) or None."""
    rows = []
    for line in open(path):
        f = line.split()
        if f[0] == system:
            n = int(f[4]) if len(f) > 4 and f[4] != "-" else None
            rows.append((float(f[1]), f[2], f[3], n))
    return rows


def units_of(rows):
    """[(end_s, count)] of sim_placement() rows; [] when it has no units."""
    return [(t, n) for t, _, _, n in rows if n is not None]


def sim_units(path, system):
    """units_of() one system's --placement lines."""
    return units_of(sim_placement(path, system))


def units_by(units, t0, t):
    """The model's units counted in (t0, t]: at the interval that ends at t,
    less those by t0 (both interval ends); None without units."""
    if not units or t is None:
        return None
    at = [n for tt, n in units if tt <= t + 1e-6]
    before = [n for tt, n in units if tt <= t0 + 1e-6]
    return (at[-1] if at else 0) - (before[-1] if before else 0)


def write_trace(path, lab, wl, footprint, hot, interval, seconds):
    """The lab's workload at 2 MiB: hot set first, tierwork's Zipf spread."""
    nr, nh = footprint // RANGE, hot // RANGE
    hp = hot // PG
    if wl == "zipf":
        share = [0.0] * nh
        h = sum((k + 1) ** -TIERWORK_ZIPF_S for k in range(hp))
        for k in range(hp):
            share[(k * TIERWORK_SPREAD) % hp // (RANGE // PG)] += (k + 1) ** -TIERWORK_ZIPF_S / h
    else:
        share = [1.0 / nh] * nh
    per_iv = lab.rate * interval
    iv_us = int(round(interval * 1e6))
    with open(path, "w") as f:
        f.write("# the lab's %s workload at 2 MiB ranges (tests/lab/bench.d/sim_validate.py)\n" % wl)
        f.write("# time_us,tenant,page,accesses\n")
        f.write("%d,/lab,%d,0\n" % (iv_us - 1, nr * (RANGE // PG) - 1))
        for i in range(int(round(seconds / interval))):
            first = 0
            if wl == "shift" and lab.shift is not None and i * interval >= lab.shift:
                first = (footprint // 2) // RANGE
            for r in range(nh):
                a = int(round(per_iv * share[r]))
                if a:
                    f.write("%d,/lab,%d,%d\n" % (i * iv_us + iv_us - 1,
                                                (first + r) * (RANGE // PG), a))


def calibrated(yml, bps):
    """The machine @yml with a 4 KiB folio's migration at @bps bytes a
    second, the per-byte copy cost as it has it."""
    for kernel in ("vanilla", "patched"):
        mm = re.search(r"(  %s:\n(?:(?:    #.*|    [a-z_]+: .*)\n)+)" % kernel, yml)
        blk = mm.group(1)
        gbps = float(re.search(r"copy_gbps: ([0-9.]+)", blk).group(1))
        folio = max(0, int(PG * 1e9 / bps - PG / gbps))
        yml = yml.replace(blk, re.sub(r"folio_ns: \d+", "folio_ns: %d" % folio, blk))
    return yml


def run_sim(args, out, wl, source, spec, machine, interval):
    place = os.path.join(out, "%s-%s.placement" % (wl, source))
    js = os.path.join(out, "%s-%s.json" % (wl, source))
    cmd = [args.tierd_sim, "run", "--machine", machine, spec[0], spec[1],
           "--system", ",".join(s for _, s in SYSTEMS), "--sampler", "damon",
           "--interval", str(interval), "--placement", place, "--json", js]
    with open(os.path.join(out, "%s-%s.log" % (wl, source)), "w") as log:
        subprocess.run(cmd, check=True, stdout=log, stderr=log)
    rows = {r["system"]: r for r in json.load(open(js))["rows"]}
    return place, rows, cmd


def sim_series(rows, interval, lo, hi, ranges=None):
    """[(t, share of the hot set on node 0)] of a placement, of the
    intervals that lie within [lo, hi] (t is an interval's end).  The hot
    set is @ranges, or else each interval's own (the one the model
    scores)."""
    out = []
    for t, nodes, hot, _ in rows:
        h = list(ranges) if ranges is not None else [i for i, c in enumerate(hot) if c == "1"]
        if h and t - interval >= lo - 1e-6 and t <= hi + 1e-6:
            out.append((t, sum(nodes[i] == "0" for i in h) / len(h)))
    return out


def sim_move_times(rows, ranges, t0):
    return [next((t for t, nodes, _, _ in rows if t >= t0 and nodes[r] == "0"), None)
            for r in ranges]


def first_at(series, pct, t0=0.0):
    return next((t - t0 for t, p in series if t >= t0 and p * 100 >= pct), None)


def share_at(series, t):
    """The last sample at or before t; 0 before the first."""
    got = [p for tt, p in series if tt <= t + 1e-9]
    return got[-1] if got else 0.0


def spearman(a, b):
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if len(pairs) < 3:
        return None

    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r

    ra, rb = ranks([p[0] for p in pairs]), ranks([p[1] for p in pairs])
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra))
    vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return None if not va or not vb else cov / (va * vb)


def rnd(v, nd=2):
    return None if v is None else round(v, nd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("workloads")
    ap.add_argument("tierd_sim")
    ap.add_argument("machine")
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--command", default="")
    args = ap.parse_args()
    out = args.out
    runs = os.path.join(out, "runs")
    simdir = os.path.join(out, "sim")
    os.makedirs(simdir, exist_ok=True)
    params = kv_file(os.path.join(runs, "numab-params"))
    period_s = (fnum(params.get("scan_period_min_ms")) or 1000) / 1000
    tick_s = 0.5
    m = re.search(r"^interval_ms:\s*(\d+)", open(os.path.join(runs, "tierd.yaml")).read(), re.M) \
        if os.path.exists(os.path.join(runs, "tierd.yaml")) else None
    if m:
        tick_s = int(m.group(1)) / 1000
    unit = {"numa_balancing": period_s, "tierd": tick_s}
    # The model's machine: lab.yaml with the guest's node sizes.
    yml = open(args.machine).read()
    caps = iter([params.get("node0_mib"), params.get("node1_mib")])
    yml = re.sub(r"capacity_mib: \d+", lambda mm: "capacity_mib: %s" % (next(caps, None) or mm.group(0).split()[1]), yml)
    # tierwork maps its footprint MADV_NOHUGEPAGE: 4 KiB folios, 512 a range.
    yml = re.sub(r"^thp_kib: \d+", "thp_kib: 0", yml, flags=re.M)
    machine = os.path.join(out, "lab-machine.yaml")
    open(machine, "w").write(yml)
    bps = {d[len("tierd-"):]: fnum(kv_file(os.path.join(runs, d, "summary")).get(
        "tierd_run_bytes_per_s")) for d in os.listdir(runs) if d.startswith("tierd-")}
    got = sorted(v for v in bps.values() if v)
    boot_bps = got[len(got) // 2] if got else None

    rows, curves, commands, cal_bps = [], {}, [], {}
    for wl in args.workloads.split(","):
        cal_bps[wl] = bps.get(wl) or boot_bps
        machine_cal = None
        if cal_bps[wl]:
            machine_cal = os.path.join(out, "lab-cal-%s.yaml" % wl)
            open(machine_cal, "w").write(calibrated(yml, cal_bps[wl]))
        labs = {}
        for name, _ in SYSTEMS:
            d = os.path.join(runs, "%s-%s" % (name, wl))
            if os.path.exists(os.path.join(d, "hotmap.log")):
                labs[name] = LabRun(d)
        if not labs:
            print("sim_validate.py: no lab runs of %s in %s" % (wl, runs), file=sys.stderr)
            continue
        ref = labs.get("numa_balancing") or next(iter(labs.values()))
        hdr = open(os.path.join(runs, "%s-%s" % (next(iter(labs)), wl), "work.log")).readline()
        mm = re.search(r"footprint (0x[0-9a-f]+)-(0x[0-9a-f]+) hot (0x[0-9a-f]+)-(0x[0-9a-f]+)", hdr)
        footprint = int(mm.group(2), 16) - int(mm.group(1), 16)
        hot = int(mm.group(4), 16) - int(mm.group(3), 16)
        seconds = max(l.end for l in labs.values())
        seconds = math.ceil(seconds / args.interval) * args.interval
        gen_seconds = seconds
        if wl == "shift" and ref.shift:
            # The generator moves the hot set every `shift` seconds; the
            # lab, once.
            gen_seconds = min(seconds, 2 * ref.shift - args.interval)
        rate = sum(l.rate for l in labs.values()) / len(labs)
        gen = "%s:footprint=%dM,hot=%g,cold=0,rate=%.0f,seconds=%g" % (
            wl, footprint >> 20, hot / footprint, rate, gen_seconds)
        if wl == "shift":
            # Both systems' runs start the same baseline before the shift.
            gen += ",shift=%g" % ref.shift
        if wl == "zipf":
            gen += ",alpha=%g" % TIERWORK_ZIPF_S
        trace = os.path.join(simdir, "%s.trace" % wl)
        write_trace(trace, ref, wl, footprint, hot, args.interval, seconds)
        sims = {}
        for source, spec, mach, iv in (("gen", ("--gen", gen), machine, args.interval),
                                       ("trace", ("--trace", trace), machine, args.interval),
                                       ("cal", ("--trace", trace), machine_cal, CAL_INTERVAL)):
            if not mach:
                continue
            place, srows, cmd = run_sim(args, simdir, wl, source, spec, mach, iv)
            sims[source] = (place, srows, iv)
            commands.append(" ".join(cmd))
        nh = hot // RANGE
        for name, simname in SYSTEMS:
            lab = labs.get(name)
            if not lab:
                continue
            phases = [("first", 0, 0.0)]
            if wl == "shift" and lab.shift is not None:
                phases.append(("after shift", 1, lab.shift))
            for phase, window, t0 in phases:
                series = {"lab": lab.series(window)}
                place_rows = {}
                model_units = {}
                # The trace's hot set is the lab's, range for range.
                trace_ranges = range((footprint // 2) // RANGE if window else 0,
                                     ((footprint // 2) // RANGE if window else 0) + nh)
                for source in [x for x in SOURCES[1:] if x in sims]:
                    pr = sim_placement(sims[source][0], simname)
                    place_rows[source] = pr
                    model_units[source] = units_of(pr)
                    hi = lab.shift if phase == "first" and lab.shift is not None else math.inf
                    lo = t0 if phase != "first" else -math.inf
                    series[source] = sim_series(pr, sims[source][2], lo, hi,
                                                None if source == "gen" else trace_ranges)
                if phase == "first" and lab.shift is not None:
                    series["lab"] = [(t, p) for t, p in series["lab"] if t <= lab.shift]
                curves["%s %s %s" % (wl, name, phase)] = series
                lab_moves = lab.move_times(window, t0)
                for source in [x for x in SOURCES if x in series]:
                    s = series[source]
                    t50, t90 = first_at(s, 50, t0), first_at(s, 90, t0)
                    t1 = next((t - t0 for t, p in s if t >= t0 and p > 0), None)
                    u = unit[name]
                    row = {"workload": wl, "system": name, "phase": phase, "source": source,
                           "unit": "scan period" if name == "numa_balancing" else "tick",
                           "unit_s": u,
                           "time_to_50pct_s": rnd(t50), "time_to_90pct_s": rnd(t90),
                           "first_move_s": rnd(t1),
                           "first_move_to_90pct_s": rnd(t90 - t1 if t90 is not None
                                                        and t1 is not None else None),
                           "time_to_90pct_units": rnd(t90 / u if t90 is not None else None, 1),
                           "share_after_k_units": {str(k): rnd(share_at(s, t0 + k * u), 3) for k in KS}}
                    if source == "lab":
                        row["scan_passes_by_90pct"] = (lab.seq_at(t0 + t90) if name == "numa_balancing"
                                                       and t90 is not None else None)
                        row["ticks_by_90pct"] = (lab.ticks_by(t0, t0 + t90) if name == "tierd"
                                                 and t90 is not None else None)
                        row["bytes_migrated"] = (int(lab.pages_migrated * PG)
                                                 if lab.pages_migrated is not None and phase == "first" else None)
                        row["access_rate_per_s"] = round(lab.rate)
                        row["order_vs_lab"] = None
                    else:
                        sr = sims[source][1].get(simname, {})
                        row["bytes_migrated"] = sr.get("bytes_migrated") if phase == "first" else None
                        n = units_by(model_units[source], t0, t0 + t90 if t90 is not None else None)
                        row["scan_passes_by_90pct"] = n if name == "numa_balancing" else None
                        row["ticks_by_90pct"] = n if name == "tierd" else None
                        row["order_vs_lab"] = (rnd(spearman(lab_moves, sim_move_times(
                            place_rows[source], trace_ranges, t0)), 2)
                            if source != "gen" else None)
                    rows.append(row)
    res = {"label": "lab measurements under TCG beside tierd-sim model estimates",
           "command": args.command, "sim_commands": commands,
           "calibrated_bytes_per_s": cal_bps,
           "numab_params": params, "tick_s": tick_s, "interval_s": args.interval,
           "cal_interval_s": CAL_INTERVAL,
           "rows": rows}
    json.dump(res, open(os.path.join(out, "sim-validate.json"), "w"), indent=1)
    write_md(os.path.join(out, "sim-validate.md"), res)
    write_png(out, curves)
    print(open(os.path.join(out, "sim-validate.md")).read())


def fmt(v):
    return "-" if v is None else str(v)


def write_md(path, res):
    with open(path, "w") as f:
        f.write("Lab (QEMU TCG, measured) beside tierd-sim (model) on the same workload; "
                "times from the system's start (after the shift: from the hot set's "
                "move).  Units: NUMA balancing's scan_period_min (%s ms), tierd's "
                "tick interval (%d ms).  Sources: lab; gen, the simulator's generator; "
                "trace, the lab's layout replayed; cal, that trace on the machine "
                "calibrated to the run's move_pages(2) throughput (MB/s: %s).\n\n" %
                (res["numab_params"].get("scan_period_min_ms", "?"), res["tick_s"] * 1000,
                 ", ".join("%s %s" % (wl, fmt(None if v is None else round(v / 1e6, 1)))
                           for wl, v in res["calibrated_bytes_per_s"].items())))
        f.write("| workload | system | phase | source | first move (s) | 50% (s) | 90% (s) "
                "| first move to 90% (s) | 90% (units) "
                "| share after 1 / 2 / 4 / 8 units | scan passes / ticks by 90% "
                "| MiB migrated | order vs lab (Spearman) |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in res["rows"]:
            sh = r["share_after_k_units"]
            lab = fmt(r["scan_passes_by_90pct"] if r["system"] == "numa_balancing"
                      else r["ticks_by_90pct"])
            mib = None if r["bytes_migrated"] is None else round(r["bytes_migrated"] / 2**20)
            f.write("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                r["workload"], r["system"], r["phase"], r["source"], fmt(r["first_move_s"]),
                fmt(r["time_to_50pct_s"]), fmt(r["time_to_90pct_s"]),
                fmt(r["first_move_to_90pct_s"]),
                fmt(r["time_to_90pct_units"]),
                " / ".join(fmt(sh[str(k)]) for k in KS), lab, fmt(mib),
                fmt(r["order_vs_lab"])))


def write_png(out, curves):
    for name, series in curves.items():
        for source, pts in series.items():
            dat = os.path.join(out, "sim", "%s-%s.dat" % (name.replace(" ", "_"), source))
            with open(dat, "w") as f:
                for t, p in pts:
                    f.write("%.3f %.1f\n" % (t, 100 * p))
    names = list(curves)
    cols = 2
    rows = (len(names) + cols - 1) // cols
    gp = ["set terminal pngcairo size 1200,%d" % (300 * max(rows, 1)),
          "set output '%s'" % os.path.join(out, "sim-validate.png"),
          "set multiplot layout %d,%d" % (max(rows, 1), cols),
          "set yrange [0:105]", "set key bottom right", "set xlabel 's since the system started'",
          "set ylabel 'hot set on node 0 (%)'"]
    for name in names:
        gp.append("set title '%s' noenhanced" % name)
        gp.append("plot " + ", ".join(
            "'%s' using 1:2 with steps lw 2 title '%s'" % (
                os.path.join(out, "sim", "%s-%s.dat" % (name.replace(" ", "_"), s)), s)
            for s in SOURCES if s in curves[name]))
    gp.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(gp).encode(), check=True)


if __name__ == "__main__":
    main()
