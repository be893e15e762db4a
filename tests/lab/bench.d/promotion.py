#!/usr/bin/env python3
"""Aggregate the promotion benchmark's runs (bench.d/promotion) into
promotion.json, promotion.md and promotion.png.

  promotion.py OUT WORKLOADS

Per run (OUT/runs/SYSTEM-WORKLOAD/): work.log (tierwork: t_s ops_per_s
hot_node0_pct ...), summary (promote-run's key=value lines).
  time_to_90pct_s   first sample with >= 90% of H on node 0, from the
                    system's start; null when never
  ops_per_s_after   mean ops/s after that until the watch ended (the last
                    10 s when never); not the raw reference that follows
  work_lost_pct     100 * (1 - mean ops/s from start to 90% / dram's mean)
  pages_migrated    pgmigrate_success during the run (the kernel's count)
  cpu_pct, rss_mib  tierd's CPU share over the run and peak RSS (tierd only)
  steady_cpu_pct    tierd's CPU share over the second half of the settle
                    time, after the hot set reached 90% (tierd only)
  kdamond_cpu_pct, kdamond_steady_cpu_pct
                    the same for the kdamond the system runs (tierd's own,
                    damos's): part of its cost
  migrate_vs_raw    tierd's migration throughput (bytes moved over time in
                    move_pages) over one raw move_pages(2) call's moving the
                    same hot set after tierd stopped (promote-run --rawmove);
                    the top-level value is tierd-patched's (else
                    tierd-vanilla's) on the first workload
"""
import json
import os
import subprocess
import sys

SYSTEMS = ["none", "numa_balancing", "damos", "tierd-vanilla", "tierd-patched"]


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
            if line[:1].isdigit():
                t, ops, p0 = line.split()[:3]
                pts.append((float(t) - off, float(ops), float(p0)))
    return summ, pts


def num(summ, key):
    v = summ.get(key)
    return float(v) if v not in (None, "") else None


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def main():
    out, workloads = sys.argv[1], sys.argv[2].split(",")
    runs = os.path.join(out, "runs")
    rows = []
    series = {}
    for wl in workloads:
        ref = None
        dram = os.path.join(runs, "dram-" + wl)
        if os.path.isdir(dram):
            _, pts = load(dram)
            ref = mean([o for t, o, _ in pts if t >= 0])
        for sysname in SYSTEMS:
            d = os.path.join(runs, "%s-%s" % (sysname, wl))
            if not os.path.isdir(d):
                continue
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
            lost = None
            if ref and during:
                lost = round(100.0 * (1 - mean(during) / ref), 1)
            row = {
                "system": sysname,
                "workload": wl,
                "time_to_90pct_s": round(t90, 2) if t90 is not None else None,
                "ops_per_s_after": round(mean(after)) if after else None,
                "work_lost_pct": lost,
                "pages_migrated": int(float(summ.get("pages_migrated", 0) or 0)),
                "cpu_pct": float(summ["tierd_cpu_pct"]) if "tierd_cpu_pct" in summ else None,
                "rss_mib": float(summ["tierd_rss_mib"]) if "tierd_rss_mib" in summ else None,
                "steady_cpu_pct": num(summ, "tierd_steady_cpu_pct"),
                "kdamond_cpu_pct": num(summ, "kdamond_cpu_pct"),
                "kdamond_steady_cpu_pct": num(summ, "kdamond_steady_cpu_pct"),
                "migrate_vs_raw": num(summ, "migrate_vs_raw"),
                "dram_ops_per_s": round(ref) if ref else None,
            }
            rows.append(row)
            series["%s-%s" % (sysname, wl)] = pts
    mvr = None
    for sysname in ("tierd-patched", "tierd-vanilla"):
        got = [r["migrate_vs_raw"] for r in rows
               if r["system"] == sysname and r["migrate_vs_raw"] is not None]
        if got:
            mvr = got[0]
            break
    with open(os.path.join(out, "promotion.json"), "w") as f:
        json.dump({"rows": rows, "migrate_vs_raw": mvr}, f, indent=1)
    fmt = lambda v: "-" if v is None else str(v)
    with open(os.path.join(out, "promotion.md"), "w") as f:
        f.write("| system | workload | time to 90% (s) | ops/s after | work lost % "
                "| pages migrated | tierd CPU % (run / steady) "
                "| kdamond CPU % (run / steady) | tierd RSS MiB "
                "| migrate_vs_raw |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|\n")
        pair = lambda a, b: "-" if a is None else "%s / %s" % (fmt(a), fmt(b))
        for r in rows:
            f.write("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                r["system"], r["workload"], fmt(r["time_to_90pct_s"]),
                fmt(r["ops_per_s_after"]), fmt(r["work_lost_pct"]),
                fmt(r["pages_migrated"]),
                pair(r["cpu_pct"], r["steady_cpu_pct"]),
                pair(r["kdamond_cpu_pct"], r["kdamond_steady_cpu_pct"]),
                fmt(r["rss_mib"]), fmt(r["migrate_vs_raw"])))
        f.write("\nmigrate_vs_raw (P4): %s.\n" % fmt(mvr))
        f.write("\nAll-DRAM reference ops/s: %s.  Lab under TCG: node 1 is only "
                "described as slower (HMAT), so ops/s differences come from the "
                "systems' own overhead (hint faults, copies), not from DRAM.\n" %
                ", ".join("%s %s" % (r["workload"], fmt(r["dram_ops_per_s"]))
                          for r in rows if r["system"] == "none"))
    plots = []
    for name, pts in series.items():
        dat = os.path.join(out, "runs", name + ".dat")
        with open(dat, "w") as f:
            for t, _, p in pts:
                f.write("%.3f %.1f\n" % (t, p))
        plots.append("'%s' using 1:2 with lines lw 2 title '%s' noenhanced" % (dat, name))
    gp = """set terminal pngcairo size 1000,550
set output '%s'
set title 'Hot set on node 0 (DRAM) over time'
set xlabel 'seconds since the system started'
set ylabel 'hot set on node 0 (%%)'
set yrange [0:105]
set key bottom right
plot %s
""" % (os.path.join(out, "promotion.png"), ", ".join(plots) or "0 notitle")
    subprocess.run(["gnuplot"], input=gp.encode(), check=True)
    print(open(os.path.join(out, "promotion.md")).read())


if __name__ == "__main__":
    main()
