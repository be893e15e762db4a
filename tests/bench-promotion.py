#!/usr/bin/env python3
"""The promotion benchmark's aggregation (tests/lab/bench.d/promotion.py)
on made-up runs: medians over repetitions, a run that never reached 90%,
the per-repetition ratios, migrate_vs_raw, and the three output files.

  bench-promotion.py PROMOTION_PY
"""
import json
import os
import subprocess
import sys
import tempfile


def run_dir(root, rep, name, hot_at, ops, summary, shift=None):
    """A run whose hot set reaches 100% at hot_at seconds after the
    system's start (never when None), at ops ops/s throughout.  With
    shift=(S, A), the hot set moves S seconds after the system's start
    (back to 0% on node 0) and is back at 100% A seconds later (never
    when A is None)."""
    d = os.path.join(root, "runs", "rep%d" % rep, name)
    os.makedirs(d)
    with open(os.path.join(d, "work.log"), "w") as f:
        f.write("# tierwork pid 1 footprint 0x0-0x40000000 hot 0x0-0x10000000 "
                "pages 65536 threads 3 uniform\nt_s ops_per_s hot_node0_pct\n")
        for i in range(0, 81):
            t = i * 0.25
            p = 0.0 if hot_at is None or t - 5 < hot_at else 100.0
            if shift and t - 5 >= shift[0]:
                if t - 5 - 0.25 < shift[0]:
                    f.write("# shift at %.3f hot 0x20000000-0x30000000\n" % (shift[0] + 5))
                p = 0.0 if shift[1] is None or t - 5 < shift[0] + shift[1] else 100.0
            f.write("%.2f %d %.1f\n" % (t, ops, p))
    with open(os.path.join(d, "summary"), "w") as f:
        f.write("system_start_s=5.000\nsettle_end_s=20.000\n")
        for k, v in summary.items():
            f.write("%s=%s\n" % (k, v))


def check(what, got, want):
    if got != want:
        print("FAIL %s: got %r, want %r" % (what, got, want))
        sys.exit(1)


def main():
    script = sys.argv[1]
    with tempfile.TemporaryDirectory() as out:
        # Three repetitions.  tierd-patched: 2, 3, never; NB: 4, 5, 6;
        # damos: 8, never, never; dram at 1000 ops/s, NB at 500.
        t_pat = [2.0, 3.0, None]
        t_nb = [4.0, 5.0, 6.0]
        t_damos = [8.0, None, None]
        mvr = [0.8, 1.0, 0.9]
        for rep in (1, 2, 3):
            i = rep - 1
            run_dir(out, rep, "dram-uniform", None, 1000, {})
            run_dir(out, rep, "numa_balancing-uniform", t_nb[i], 500, {"pages_migrated": 100 * rep})
            run_dir(out, rep, "damos-uniform", t_damos[i], 1000, {"kdamond_cpu_pct": 5 * rep})
            run_dir(out, rep, "tierd-patched-uniform", t_pat[i], 1000,
                    {"tierd_cpu_pct": rep * rep, "tierd_rss_mib": 30 + rep,
                     "migrate_vs_raw": mvr[i], "tick_nice": "?",
                     "raw_bytes_per_s": 2 ** 28 / rep,
                     "kdamond_cpu_pct": 8 + rep, "kdamond_steady_cpu_pct": 2,
                     "tierd_sampler_cpu_pct": 7.5 + rep})
        # shift: the hot set moves 10 s after the start; back on node 0
        # after 1, 2, never (patched) and 4, 4, 8 (NB).
        for rep in (1, 2, 3):
            i = rep - 1
            run_dir(out, rep, "numa_balancing-shift", 3.0, 500, {},
                    shift=(10.0, [4.0, 4.0, 8.0][i]))
            run_dir(out, rep, "tierd-patched-shift", 2.0, 1000,
                    {"raw_bytes_per_s": 2 ** 28},
                    shift=(10.0, [1.0, 2.0, None][i]))
        subprocess.run([sys.executable, script, out, "uniform,shift"], check=True,
                       stdout=subprocess.DEVNULL)
        for ext in ("json", "md", "png"):
            check("promotion.%s written" % ext,
                  os.path.getsize(os.path.join(out, "promotion." + ext)) > 0, True)
        res = json.load(open(os.path.join(out, "promotion.json")))
        rows = {r["system"]: r for r in res["rows"] if r["workload"] == "uniform"}
        shift = {r["system"]: r for r in res["rows"] if r["workload"] == "shift"}
        check("shift per rep", shift["tierd-patched"]["runs"]["after_shift_s"], [1.0, 2.0, None])
        check("shift median", shift["tierd-patched"]["after_shift_s"], 2.0)
        check("shift first hot set", shift["numa_balancing"]["time_to_90pct_s"], 3.0)
        check("shift nb median", shift["numa_balancing"]["after_shift_s"], 4.0)
        # 8 s after the shift is past the watch's end (settle_end_s 20).
        check("shift nb per rep", shift["numa_balancing"]["runs"]["after_shift_s"],
              [4.0, 4.0, None])
        check("no shift, no after", rows["numa_balancing"]["after_shift_s"], None)
        qs = res["ratios"][1]
        check("shift ratio of", (qs["workload"], qs["of"]), ("shift", "after_shift_s"))
        # 1/4, 2/4 (rep 3: patched never).
        check("shift ratio nb", qs["numa_balancing"], 0.38)
        # 0.9 s over 4, 4 (rep 3: NB never within the watch).
        check("shift raw / nb", qs["raw_call_vs_numa_balancing"], 0.23)
        check("reps", res["reps"], 3)
        check("systems", sorted(rows), ["damos", "numa_balancing", "tierd-patched"])
        pat, nb, damos = rows["tierd-patched"], rows["numa_balancing"], rows["damos"]
        # Each run's first sample at or past hot_at (0.25 s steps).
        check("tierd-patched per rep", pat["runs"]["time_to_90pct_s"], [2.0, 3.0, None])
        check("tierd-patched median (never = slowest)", pat["time_to_90pct_s"], 3.0)
        check("nb median", nb["time_to_90pct_s"], 5.0)
        check("damos median never", damos["time_to_90pct_s"], None)
        check("nb work lost", nb["work_lost_pct"], 50.0)
        check("pages median", nb["pages_migrated"], 200)
        check("cpu median", pat["cpu_pct"], 4.0)
        check("rss median", pat["rss_mib"], 32.0)
        check("kdamond median", damos["kdamond_cpu_pct"], 10.0)
        check("sampling median", pat["sampling_cpu_pct"], 9.5)
        check("no sampling count for damos", damos["sampling_cpu_pct"], None)
        check("row mvr", pat["migrate_vs_raw"], 0.9)
        check("top mvr", res["migrate_vs_raw"], 0.9)
        # Ratios within a repetition: 2/4, 3/5 (rep 3: patched never).
        q = res["ratios"][0]
        check("ratio nb", q["numa_balancing"], 0.55)
        check("ratio damos", q["damos"], 0.25)
        check("ratio vanilla absent", q["tierd-vanilla"], None)
        # 256 MiB at 256, 128, 85.3 MiB/s: 0.9, 1.8, 2.7 s to 90%.
        check("raw t90 median", pat["raw_time_to_90pct_s"], 1.8)
        check("raw call / nb", q["raw_call_vs_numa_balancing"], 0.36)
        md = open(os.path.join(out, "promotion.md")).read()
        check("md per-rep column", "| 2.0 3.0 - |" in md, True)
        check("md kdamond with tierd's count", "| 10.0 / 2.0; 9.5 |" in md, True)
        check("md shift columns", "| 2.0 | 1.0 2.0 - |" in md, True)
        check("md ratios", "| uniform | 0.55 | 0.25 | - | 0.36 |" in md, True)
        check("md text", "90%%" not in md and "uniform 1000, shift -." in md, True)
        check("dram ref", nb["dram_ops_per_s"], 1000)
        # No repetitions: a clear failure, not an empty table.
        empty = os.path.join(out, "empty")
        os.makedirs(os.path.join(empty, "runs"))
        r = subprocess.run([sys.executable, script, empty, "uniform"],
                           capture_output=True, text=True)
        check("no reps fails", r.returncode != 0 and "no " in r.stderr, True)
    print("ok: promotion.py aggregates medians, ratios and migrate_vs_raw")


if __name__ == "__main__":
    main()
