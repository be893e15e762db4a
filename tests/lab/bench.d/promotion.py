#!/usr/bin/env python3
"""Aggregate the promotion benchmark's runs (bench.d/promotion) into
promotion.json, promotion.md and promotion.png.

  promotion.py OUT WORKLOADS

Runs are OUT/runs/repN/SYSTEM-WORKLOAD/, one repN per repetition (a
vanilla boot and a patched boot), each with work.log (tierwork: t_s
ops_per_s hot_node0_pct ...) and summary (promote-run's key=value lines).
Per run:
  time_to_90pct_s   first sample with >= 90% of H on node 0, from the
                    system's start; null when never
  after_shift_s     shift only: from the moment the hot set moved (the
                    "# shift at" line) to the first later sample with >= 90%
                    of the new hot set on node 0 before the watch ended
                    (what follows is the raw reference); null when never.  Every
                    system is running by then, so this is time from a hot
                    set's arrival, not from a daemon's start
  ops_per_s_after   mean ops/s after that until the watch ended (the last
                    10 s when never); not the raw reference that follows
  work_lost_pct     100 * (1 - mean ops/s from start to 90% / dram's mean),
                    dram being the same repetition's all-DRAM run
  pages_migrated    pgmigrate_success during the run (the kernel's count)
  cpu_pct, rss_mib  tierd's CPU share over the run and peak RSS (tierd only)
  steady_cpu_pct    tierd's CPU share over the second half of the settle
                    time, after the hot set reached 90% (tierd only; not
                    for shift, whose second hot set arrives then)
  kdamond_cpu_pct, kdamond_steady_cpu_pct
                    the same for the kdamond the system runs (tierd's own,
                    damos's): part of its cost
  sampling_cpu_pct  what tierd itself counted its sampling as costing over
                    the run (tierd_sampler_cpu_seconds_total: its kdamond's
                    CPU time), beside kdamond_cpu_pct, read from outside
                    (tierd only)
  migrate_vs_raw    tierd's migration throughput over one raw
                    move_pages(2) call's on the same hot set, in alternating
                    rounds after the watch (promote-run --rawmove)
  raw_time_to_90pct_s
                    90% of H over that raw call's throughput (tierd only): an
                    oracle that knew H at the start and moved it with one
                    raw call would take this long, a floor under what any
                    system that copies from one thread can reach here
A row is the median of its runs over the repetitions (a run that never
reached 90% counts as slower than any that did); "runs" lists the
per-repetition values of the headline numbers.  The top-level
migrate_vs_raw is the median over tierd-patched's runs, all workloads
(else tierd-vanilla's).  "ratios" holds, per workload, the median over the
repetitions of tierd-patched's time to 90% over each other system's in
the same repetition: target P5 is <= 0.5 against numa_balancing and damos;
and the raw call's time to 90% over numa_balancing's, the floor under the
first of those ratios.  For shift the ratios are of after_shift_s.
"""
import json
import math
import os
import re
import subprocess
import sys

SYSTEMS = ["none", "numa_balancing", "damos", "tierd-vanilla", "tierd-patched"]
# Summary keys copied per run, as JSON key: summary key.
SUMMARY_KEYS = {
    "cpu_pct": "tierd_cpu_pct",
    "rss_mib": "tierd_rss_mib",
    "steady_cpu_pct": "tierd_steady_cpu_pct",
    "kdamond_cpu_pct": "kdamond_cpu_pct",
    "kdamond_steady_cpu_pct": "kdamond_steady_cpu_pct",
    "sampling_cpu_pct": "tierd_sampler_cpu_pct",
    "migrate_vs_raw": "migrate_vs_raw",
}
HOT_RE = re.compile(r" hot (0x[0-9a-f]+)-(0x[0-9a-f]+) ")
SHIFT_RE = re.compile(r"^# shift at ([0-9.]+) ")
MEDIAN_KEYS = (["ops_per_s_after", "work_lost_pct", "pages_migrated"] + list(SUMMARY_KEYS) +
               ["raw_time_to_90pct_s"])


def load(d):
    summ = {}
    with open(os.path.join(d, "summary")) as f:
        for line in f:
            if "=" in line:
                k, v = line.strip().split("=", 1)
                summ[k] = v
    off = float(summ.get("system_start_s", 0) or 0)
    pts = []
    with open(os.path.join(d, "work.log")) as f:
        for line in f:
            m = HOT_RE.search(line) if line.startswith("#") else None
            if m:
                summ["hot_bytes"] = str(int(m.group(2), 16) - int(m.group(1), 16))
            m = SHIFT_RE.match(line)
            if m:
                summ["shift_at_s"] = str(float(m.group(1)) - off)
            if line[:1].isdigit():
                t, ops, p0 = line.split()[:3]
                pts.append((float(t) - off, float(ops), float(p0)))
    return summ, pts


def num(summ, key):
    v = summ.get(key)
    try:
        return float(v) if v not in (None, "", "?") else None
    except ValueError:
        return None


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def run_row(d, ref):
    """One run's numbers; ref is the all-DRAM mean ops/s of its repetition."""
    summ, pts = load(d)
    t90 = next((t for t, _, p in pts if t >= 0 and p >= 90.0), None)
    end = num(summ, "settle_end_s")
    end = end - float(summ.get("system_start_s", 0) or 0) if end else None
    if t90 is not None:
        after = [o for t, o, _ in pts if t > t90 and (end is None or t <= end)]
        during = [o for t, o, _ in pts if 0 <= t <= t90]
    else:
        end = end or (pts[-1][0] if pts else 0)
        after = [o for t, o, _ in pts if end - 10 < t <= end]
        during = [o for t, o, _ in pts if t >= 0]
    shift = num(summ, "shift_at_s")
    t90_shift = None
    if shift is not None:
        t90_shift = next((t - shift for t, _, p in pts
                          if t > shift and p >= 90.0 and (end is None or t <= end)), None)
    row = {
        "time_to_90pct_s": t90,
        "after_shift_s": t90_shift,
        "ops_per_s_after": mean(after),
        "work_lost_pct": 100.0 * (1 - mean(during) / ref) if ref and during else None,
        "pages_migrated": num(summ, "pages_migrated"),
    }
    for key, skey in SUMMARY_KEYS.items():
        row[key] = num(summ, skey)
    raw, hot = num(summ, "raw_bytes_per_s"), num(summ, "hot_bytes")
    row["raw_time_to_90pct_s"] = 0.9 * hot / raw if raw and hot else None
    return row, pts


def median_t90(ts):
    """Median time to 90%, a run that never got there counting as slowest;
    None when the median run never got there."""
    if not ts:
        return None
    m = median([math.inf if t is None else t for t in ts])
    return None if m is None or math.isinf(m) else m


def rnd(v, nd):
    return None if v is None else round(v, nd)


def reps_of(runs):
    got = []
    for name in os.listdir(runs):
        m = re.fullmatch(r"rep([0-9]+)", name)
        if m and os.path.isdir(os.path.join(runs, name)):
            got.append((int(m.group(1)), os.path.join(runs, name)))
    return [d for _, d in sorted(got)]


def aggregate(out, workloads):
    reps = reps_of(os.path.join(out, "runs"))
    if not reps:
        sys.exit("promotion.py: no %s/runs/repN directories" % out)
    rows, ratios, series = [], [], {}
    for wl in workloads:
        per = {s: [] for s in SYSTEMS}	# system -> [run row per repetition]
        refs = []
        for i, rep in enumerate(reps):
            ref = None
            dram = os.path.join(rep, "dram-" + wl)
            if os.path.isdir(dram):
                _, pts = load(dram)
                ref = mean([o for t, o, _ in pts if t >= 0])
            refs.append(ref)
            for sysname in SYSTEMS:
                d = os.path.join(rep, "%s-%s" % (sysname, wl))
                if not os.path.isdir(d):
                    continue
                r, pts = run_row(d, ref)
                r["rep"] = i + 1
                per[sysname].append(r)
                if i == 0:
                    series["%s-%s" % (sysname, wl)] = pts
        for sysname in SYSTEMS:
            runs = per[sysname]
            if not runs:
                continue
            row = {"system": sysname, "workload": wl, "reps": len(runs),
                   "time_to_90pct_s": rnd(median_t90([r["time_to_90pct_s"] for r in runs]), 2),
                   "after_shift_s": rnd(median_t90([r["after_shift_s"] for r in runs]), 2)
                   if wl == "shift" else None}
            for key in MEDIAN_KEYS:
                row[key] = median([r[key] for r in runs])
            for key, nd in (("ops_per_s_after", 0), ("work_lost_pct", 1),
                            ("pages_migrated", 0), ("cpu_pct", 2), ("rss_mib", 1),
                            ("steady_cpu_pct", 2), ("kdamond_cpu_pct", 2),
                            ("kdamond_steady_cpu_pct", 2), ("sampling_cpu_pct", 2),
                            ("migrate_vs_raw", 3),
                            ("raw_time_to_90pct_s", 2)):
                row[key] = rnd(row[key], nd)
            for key in ("ops_per_s_after", "pages_migrated"):
                if row[key] is not None:
                    row[key] = int(row[key])
            ref = median(refs)
            row["dram_ops_per_s"] = int(round(ref)) if ref is not None else None
            row["runs"] = {
                "time_to_90pct_s": [rnd(r["time_to_90pct_s"], 2) for r in runs],
                "after_shift_s": [rnd(r["after_shift_s"], 2) for r in runs],
                "work_lost_pct": [rnd(r["work_lost_pct"], 1) for r in runs],
                "migrate_vs_raw": [rnd(r["migrate_vs_raw"], 3) for r in runs],
            }
            rows.append(row)
        # tierd-patched against each system, within a repetition; for
        # shift, from the hot set's move.
        key = "after_shift_s" if wl == "shift" else "time_to_90pct_s"
        mine = {r["rep"]: r[key] for r in per["tierd-patched"]}
        ratio = {"workload": wl, "of": key}
        for sysname in ("numa_balancing", "damos", "tierd-vanilla"):
            rs = [mine[r["rep"]] / r[key] for r in per[sysname]
                  if r[key] and mine.get(r["rep"]) is not None]
            ratio[sysname] = rnd(median(rs), 2)
        raw = {r["rep"]: r["raw_time_to_90pct_s"] for r in per["tierd-patched"]}
        rs = [raw[r["rep"]] / r[key] for r in per["numa_balancing"]
              if r[key] and raw.get(r["rep"]) is not None]
        ratio["raw_call_vs_numa_balancing"] = rnd(median(rs), 2)
        ratios.append(ratio)
    mvr = None
    for sysname in ("tierd-patched", "tierd-vanilla"):
        got = [v for r in rows if r["system"] == sysname
               for v in r["runs"]["migrate_vs_raw"] if v is not None]
        if got:
            mvr = rnd(median(got), 3)
            break
    return {"reps": len(reps), "rows": rows, "migrate_vs_raw": mvr,
            "ratios": ratios}, series


def fmt(v):
    return "-" if v is None else str(v)


def write_md(path, res):
    with open(path, "w") as f:
        f.write("Medians over %d repetition(s) (a vanilla and a patched boot each); "
                "time to 90%% also per repetition.\n\n" % res["reps"])
        f.write("| system | workload | time to 90% (s) | per repetition "
                "| after the shift (s) | per repetition | ops/s after "
                "| work lost % | pages migrated | tierd CPU % (run / steady) "
                "| kdamond CPU % (run / steady; tierd's count) | tierd RSS MiB "
                "| migrate_vs_raw |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        pair = lambda a, b: "-" if a is None else "%s / %s" % (fmt(a), fmt(b))
        for r in res["rows"]:
            shifted = r["workload"] == "shift"
            f.write("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                r["system"], r["workload"], fmt(r["time_to_90pct_s"]),
                " ".join(fmt(t) for t in r["runs"]["time_to_90pct_s"]),
                fmt(r["after_shift_s"]),
                " ".join(fmt(t) for t in r["runs"]["after_shift_s"]) if shifted else "-",
                fmt(r["ops_per_s_after"]), fmt(r["work_lost_pct"]),
                fmt(r["pages_migrated"]),
                pair(r["cpu_pct"], r["steady_cpu_pct"]),
                pair(r["kdamond_cpu_pct"], r["kdamond_steady_cpu_pct"]) +
                ("" if r["sampling_cpu_pct"] is None else "; %s" % fmt(r["sampling_cpu_pct"])),
                fmt(r["rss_mib"]), fmt(r["migrate_vs_raw"])))
        f.write("\nTime to 90%, tierd-patched over each system (median of the "
                "per-repetition ratios; P5 wants <= 0.5 against numa_balancing "
                "and damos), and one raw move_pages(2) call's time to move 90% of "
                "the hot set over numa_balancing's time (the floor under the "
                "first ratio for a copy from one thread).  For shift, the times "
                "are from the moment the hot set moved:\n\n"
                "| workload | / numa_balancing | / damos | / tierd-vanilla "
                "| raw call / numa_balancing |\n|---|---|---|---|---|\n")
        for q in res["ratios"]:
            f.write("| %s | %s | %s | %s | %s |\n" % (
                q["workload"], fmt(q["numa_balancing"]), fmt(q["damos"]),
                fmt(q["tierd-vanilla"]), fmt(q["raw_call_vs_numa_balancing"])))
        f.write("\nmigrate_vs_raw (P4, median of tierd-patched's runs): %s.\n"
                % fmt(res["migrate_vs_raw"]))
        f.write("\nAll-DRAM reference ops/s: %s.  Lab under TCG: node 1 is only "
                "described as slower (HMAT), so ops/s differences come from the "
                "systems' own overhead (hint faults, copies), not from DRAM.\n" %
                ", ".join("%s %s" % (wl, fmt(ref)) for wl, ref in
                          {r["workload"]: r["dram_ops_per_s"] for r in res["rows"]}.items()))


def write_png(out, series, reps):
    plots = []
    for name, pts in series.items():
        dat = os.path.join(out, "runs", name + ".dat")
        with open(dat, "w") as f:
            for t, _, p in pts:
                f.write("%.3f %.1f\n" % (t, p))
        plots.append("'%s' using 1:2 with lines lw 2 title '%s' noenhanced" % (dat, name))
    gp = """set terminal pngcairo size 1000,550
set output '%s'
set title 'Hot set on node 0 (DRAM) over time, repetition 1 of %d'
set xlabel 'seconds since the system started'
set ylabel 'hot set on node 0 (%%)'
set yrange [0:105]
set key bottom right
plot %s
""" % (os.path.join(out, "promotion.png"), reps, ", ".join(plots) or "0 notitle")
    subprocess.run(["gnuplot"], input=gp.encode(), check=True)


def main():
    out, workloads = sys.argv[1], sys.argv[2].split(",")
    res, series = aggregate(out, workloads)
    with open(os.path.join(out, "promotion.json"), "w") as f:
        json.dump(res, f, indent=1)
    write_md(os.path.join(out, "promotion.md"), res)
    write_png(out, series, res["reps"])
    print(open(os.path.join(out, "promotion.md")).read())


if __name__ == "__main__":
    main()
