#!/usr/bin/env python3
"""The sim-validate benchmark's comparison (tests/lab/bench.d/sim_validate.py)
on made-up lab runs: the lab's times to 50% and 90% and shares after k
units from hotmap.log, NUMA balancing's scan passes, tierd's ticks placed
on the system's clock, the model's own counts from its --placement lines,
the machine files derived for the model, the rank correlation, and the
three output files.

  bench-sim-validate.py SIM_VALIDATE_PY TIERD_SIM MACHINE_YAML
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

RANGES = 8		# a 16 MiB hot set in a 64 MiB footprint
START = 1.0		# the system's start on the workload's clock


def check(what, got, want):
    if got != want:
        print("FAIL %s: got %r, want %r" % (what, got, want))
        sys.exit(1)


def run_dir(runs, name, order, seq_at, summary, ticks=None, step=0.5):
    """Range order[i] reaches node 0 at step (i + 1) s after the system's
    start; the scan pass count steps up at each time of seq_at; tierd
    ticks at the given times of its own clock, which starts 0.5 s after
    the system."""
    d = os.path.join(runs, name)
    os.makedirs(d)
    with open(os.path.join(d, "work.log"), "w") as f:
        f.write("# tierwork pid 7 footprint 0x0-0x4000000 hot 0x0-0x1000000 "
                "pages 4096 threads 3 uniform\nt_s ops_per_s hot_node0_pct\n")
        for i in range(41):
            f.write("%.2f 1000 0.0\n" % (i * 0.25))
    with open(os.path.join(d, "hotmap.log"), "w") as f:
        f.write("# hotmap pid 7 window 0 0x0-0x1000000 ranges %d\n" % RANGES)
        # Samples to 12 s; the watch ends at 10 s (settle_end_s): what
        # comes after is the system being stopped.
        for k in range(25):
            t = k * 0.5
            moved = [order.index(r) for r in range(RANGES)]
            n0 = [512 if t - START >= step * (moved[r] + 1) - 1e-9 else 0 for r in range(RANGES)]
            # Passes before the system's start do not count.
            seq = 1 + sum(1 for s in seq_at if t - START >= s)
            f.write("%.3f %d %s\n" % (t, seq, " ".join(map(str, n0))))
    with open(os.path.join(d, "summary"), "w") as f:
        f.write("system_start_s=%.3f\nsettle_end_s=10.000\n" % START)
        for k, v in summary.items():
            f.write("%s=%s\n" % (k, v))
    if ticks is not None:
        with open(os.path.join(d, "tierd.log"), "w") as f:
            f.write("tierd: started\n")
            for t in ticks:
                f.write("tick at %.3f s: sample 0.001 s\n" % t)
        with open(os.path.join(d, "status.jsonl"), "w") as f:
            # The second answer came 0.7 s late: the first is the offset.
            f.write('3.500 {"uptime_seconds":2.000,"ticks":3}\n')
            f.write('6.200 {"uptime_seconds":4.000,"ticks":7}\n')


def main():
    script, sim, machine = sys.argv[1:4]
    spec = importlib.util.spec_from_file_location("sim_validate", script)
    sv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sv)
    rho = lambda a, b: round(sv.spearman(a, b), 6)
    check("spearman, same order", rho([1, 2, 3, 4], [10, 20, 30, 40]), 1.0)
    check("spearman, reversed", rho([1, 2, 3, 4], [4, 3, 2, 1]), -1.0)
    check("spearman, ties", rho([1, 1, 2, 3], [5, 5, 6, 7]), 1.0)
    check("spearman, a range never moved", rho([1, 2, 3, None], [1, 2, 3, 9]), 1.0)
    check("spearman, too few", sv.spearman([1, None], [1, 2]), None)
    with tempfile.NamedTemporaryFile("w", suffix=".place") as f:
        # tierd-sim --placement lines: SYSTEM END_S NODES HOT UNITS
        f.write("tierd-vanilla 0.200000 11 00 1\nnumab 0.200000 11 00 -\n"
                "tierd-vanilla 0.400000 01 10 3\n")
        f.flush()
        check("model units parsed", sv.sim_units(f.name, "tierd-vanilla"), [(0.2, 1), (0.4, 3)])
        check("no model units", sv.sim_units(f.name, "numab"), [])
    u = [(0.2, 1), (0.4, 3), (0.6, 5)]
    check("model units by 0.4 s", sv.units_by(u, 0.0, 0.4), 3)
    check("model units from 0.2 s to 0.6 s", sv.units_by(u, 0.2, 0.6), 4)
    check("model units, none", (sv.units_by([], 0.0, 0.4), sv.units_by(u, 0.0, None)),
          (None, None))

    with tempfile.TemporaryDirectory() as out:
        runs = os.path.join(out, "runs")
        os.makedirs(runs)
        with open(os.path.join(runs, "numab-params"), "w") as f:
            f.write("scan_period_min_ms=1000\nscan_size_mb=256\nnode0_mib=512\nnode1_mib=1024\n")
        with open(os.path.join(runs, "tierd.yaml"), "w") as f:
            f.write("interval_ms: 500\n")
        run_dir(runs, "numa_balancing-uniform", list(range(RANGES)), [1.2, 3.2],
                {"pages_migrated": 4096})
        # 4096 B a millisecond: folio_ns = 1e6 - 4096 / 0.097 = 957773.
        run_dir(runs, "tierd-uniform", list(reversed(range(RANGES))), [],
                {"pages_migrated": 4096, "tierd_run_bytes_per_s": 4096000},
                ticks=[0.5 * i for i in range(1, 11)])
        # Zipf's ranges reach node 0 every 1.2 s, the last at 9.6 s, after
        # the watch (samples every 0.5 s).
        run_dir(runs, "numa_balancing-zipf", list(range(RANGES)), [],
                {"pages_migrated": 4096}, step=1.2)
        subprocess.run([sys.executable, script, out, "uniform,zipf", sim, machine,
                        "--command", "made up"], check=True, stdout=subprocess.DEVNULL)
        res = json.load(open(os.path.join(out, "sim-validate.json")))
        rows = {(r["system"], r["source"]): r for r in res["rows"] if r["workload"] == "uniform"}
        check("rows", sorted(rows), sorted((s, src) for s in ("numa_balancing", "tierd")
                                           for src in ("lab", "gen", "trace", "cal")))
        zipf = [r for r in res["rows"] if r["workload"] == "zipf" and r["source"] == "lab"]
        check("zipf rows", [r["system"] for r in zipf], ["numa_balancing"])
        check("zipf, past the watch", (zipf[0]["first_move_s"], zipf[0]["time_to_50pct_s"],
                                       zipf[0]["time_to_90pct_s"]), (1.5, 5.0, None))
        nb, td = rows[("numa_balancing", "lab")], rows[("tierd", "lab")]
        check("NB 50%", nb["time_to_50pct_s"], 2.0)
        check("NB 90%", nb["time_to_90pct_s"], 4.0)
        check("NB 90% in scan periods", nb["time_to_90pct_units"], 4.0)
        check("NB first move", (nb["first_move_s"], nb["first_move_to_90pct_s"]), (0.5, 3.5))
        check("NB shares", nb["share_after_k_units"], {"1": 0.25, "2": 0.5, "4": 1.0, "8": 1.0})
        check("NB scan passes", nb["scan_passes_by_90pct"], 2)
        check("NB bytes", nb["bytes_migrated"], 4096 * 4096)
        check("tierd 90% in ticks", td["time_to_90pct_units"], 8.0)
        # Ticks at 0.5 .. 5 s of tierd's clock, 0.5 s after the system's
        # start (3.5 - 2.0 - START): 1.0, 1.5, .. 4.0 by 90%.
        check("tierd ticks", td["ticks_by_90pct"], 7)
        check("calibrated", res["calibrated_bytes_per_s"],
              {"uniform": 4096000.0, "zipf": 4096000.0})
        cal = open(os.path.join(out, "lab-cal-uniform.yaml")).read()
        check("cal folio_ns", "folio_ns: 957773" in cal, True)
        lab = open(os.path.join(out, "lab-machine.yaml")).read()
        check("guest node sizes", ("capacity_mib: 512" in lab, "capacity_mib: 1024" in lab),
              (True, True))
        check("THP off", "thp_kib: 0" in lab, True)
        for r in res["rows"]:
            if r["source"] in ("trace", "cal"):
                check("order of %s %s" % (r["system"], r["source"]),
                      isinstance(r["order_vs_lab"], float) or r["order_vs_lab"] is None, True)
        md = open(os.path.join(out, "sim-validate.md")).read()
        check("md rows", sum(1 for l in md.splitlines() if l.startswith("| uniform |")), 8)
        check("md zipf rows", sum(1 for l in md.splitlines() if l.startswith("| zipf |")), 4)
        check("png", os.path.getsize(os.path.join(out, "sim-validate.png")) > 0, True)
    print("ok")


if __name__ == "__main__":
    main()
