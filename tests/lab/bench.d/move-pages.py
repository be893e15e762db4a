#!/usr/bin/python3
"""Aggregate the move-pages guests' JSON lines into move-pages.{json,md,png}.

Input: raw/KERNEL-PAIR.jsonl files written by move-pages.guest: "lab",
"config", "move" and "memcpy" lines.  Every timed run of a cell, across all
boots of its kernel, goes into one row: median, min and max of GB/s.  The
benchmark's targets are computed from those medians.  A configuration that
was not measured has no row; a target that needs it says "not measured".

Standard library only (runs on the host).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

P1_MIN, P2_MIN, P3_MIN = 1.7, 0.97, 1.3


def die(msg):
    print(f"move-pages.py: {msg}", file=sys.stderr)
    sys.exit(1)


def config_name(kernel, mode, threads, push_pull):
    if kernel == "vanilla":
        return "vanilla"
    if mode == "batched":
        return "patched batched (mt off)"
    return f"patched mt {threads} thr {push_pull}"


def load(paths):
    runs = {}      # (kernel, mode, threads, pp, kb, folios) -> [gbps]
    vmstat = {}    # (kernel, mode, threads, pp, kb) -> {counter: sum}
    memcpy = {}    # threads -> [gbps]
    vcpus = set()
    releases = {}
    knobs = {}
    profiles = []
    for path in paths:
        kernel = None
        with open(path) as f:
            for n, line in enumerate(f, 1):
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    die(f"{path}:{n}: {e}")
                t = rec.get("type")
                if t == "lab":
                    vcpus.add(rec["vcpus"])
                    kernel = rec["kernel"]
                    releases[kernel] = rec["release"]
                elif t == "config":
                    pass    # the spec, for people reading raw/
                elif t == "knobs":
                    knobs[rec["kernel"]] = rec["knobs"]
                elif t == "move":
                    if kernel is None:
                        die(f"{path}:{n}: move line before the lab line")
                    cfg = (kernel, rec["mode"], rec["threads"],
                           rec["push_pull"])
                    key = cfg + (rec["folio_kb"], rec["folios"])
                    runs.setdefault(key, []).extend(rec["gbps"])
                    vs = vmstat.setdefault(cfg + (rec["folio_kb"],), {})
                    for k, v in rec.get("vmstat", {}).items():
                        vs[k] = vs.get(k, 0) + v
                elif t == "profile":
                    profiles.append(rec)
                elif t == "memcpy":
                    memcpy.setdefault(rec["threads"], []).extend(rec["gbps"])
                else:
                    die(f"{path}:{n}: unknown record type {t!r}")
    if len(vcpus) != 1:
        die(f"boots disagree on (or lack) the vCPU count: {sorted(vcpus)}")
    return runs, vmstat, memcpy, vcpus.pop(), releases, knobs, profiles


def make_rows(runs):
    order = {"serial": 0, "batched": 1, "mt": 2}
    pp_order = {"-": 0, "push": 1, "pull": 2}
    rows = []
    for key in sorted(runs, key=lambda k: (k[0] != "vanilla", order[k[1]],
                                           pp_order[k[3]], k[2], -k[4],
                                           k[5])):
        kernel, mode, threads, pp, kb, folios = key
        v = runs[key]
        rows.append({
            "kernel": kernel, "mode": mode, "threads": threads,
            "push_pull": pp, "folio_kb": kb, "folios": folios,
            "gbps_median": round(statistics.median(v), 4),
            "gbps_min": round(min(v), 4), "gbps_max": round(max(v), 4),
            "runs": len(v),
        })
    return rows


def targets(rows, vcpus):
    cell = {}
    for r in rows:
        cell.setdefault((r["folio_kb"], r["folios"]), {})[
            config_name(r["kernel"], r["mode"], r["threads"], r["push_pull"])
        ] = r["gbps_median"]

    def check(name, what, minimum, cells, pick):
        """pick(configs) -> {config: median} of the patched side."""
        out = {"target": what, "min_ratio": minimum, "cells": [],
               "result": "not measured"}
        ok = True
        for kb, folios in sorted(cells, key=lambda c: (-c[0], c[1])):
            c = cell[(kb, folios)]
            if "vanilla" not in c:
                continue
            for cfg, v in pick(c).items():
                ratio = v / c["vanilla"]
                out["cells"].append({"folio_kb": kb, "folios": folios,
                                     "config": cfg,
                                     "ratio": round(ratio, 3)})
                ok = ok and ratio >= minimum
        if out["cells"]:
            out["result"] = "pass" if ok else "fail"
        return name, out

    def best(c, names):
        have = {k: v for k, v in c.items() if k in names}
        if not have:
            return {}
        k = max(have, key=have.get)
        return {k: have[k]}

    allv = [config_name("patched", "mt", vcpus, p) for p in ("push", "pull")]
    one = [config_name("patched", "batched", 1, "-")] + \
          [config_name("patched", "mt", 1, p) for p in ("push", "pull")]
    res = dict([
        check("P1", f"2 MB x >=64 folios: patched with all {vcpus} vCPUs "
              f"(better of push/pull) / vanilla >= {P1_MIN}", P1_MIN,
              [k for k in cell if k[0] == 2048 and k[1] >= 64],
              lambda c: best(c, allv)),
        check("P2", "patched with 1 thread (batched, mt push, mt pull) / "
              f"vanilla >= {P2_MIN} in every cell", P2_MIN, list(cell),
              lambda c: {k: v for k, v in c.items() if k in one}),
        check("P3", f"4 KB x >=4096 folios: best patched / vanilla >= {P3_MIN}",
              P3_MIN, [k for k in cell if k[0] == 4 and k[1] >= 4096],
              lambda c: best(c, [k for k in c if k != "vanilla"])),
    ])
    return res


def profile_md(profiles):
    L = ["## Where the time goes (function_graph, one run, first boot)", "",
         "Inclusive time of the traced migration functions over one run "
         "(there and back: two migrate_pages() calls), as a share of "
         "migrate_pages(); copy workers (migrate_copy_work_fn) run on other "
         "CPUs in parallel, so shares can add up to more than 100 %.  "
         "Tracing adds its own cost per call (copy_mc_to_kernel is traced "
         "once per 4 KB page); no perf in a PMU-less TCG guest.",
         ""]
    for p in sorted(profiles, key=lambda p: (p["kernel"] != "vanilla",
                                             -p["folio_kb"])):
        fn = p["functions"]
        base = fn.get("migrate_pages", {}).get("us")
        L += [f"{p['kernel']}, {p['folios']} x "
              f"{'2 MB' if p['folio_kb'] == 2048 else '4 KB'} "
              f"(trace events lost: {p.get('lost_events', '?')}):", "",
              "| function | calls | ms | % of migrate_pages |",
              "|---|---:|---:|---:|"]
        for name, v in sorted(fn.items(), key=lambda i: -i[1]["us"]):
            share = f"{100 * v['us'] / base:.1f}" if base else "-"
            L.append(f"| {name} | {v['calls']} | {v['us'] / 1000:.1f} | "
                     f"{share} |")
        L.append("")
    return L


def write_md(path, doc, cmd, elapsed, releases, missing, vmstat, knobs,
             profiles):
    rows, lab = doc["rows"], doc["lab"]
    cfgs = []
    for r in rows:
        n = config_name(r["kernel"], r["mode"], r["threads"], r["push_pull"])
        if n not in cfgs:
            cfgs.append(n)
    L = ["# move-pages: move_pages(2) throughput, node 0 -> node 1", ""]
    L.append(f"Command: `{cmd}`  ")
    L.append(f"Lab: {lab['accel']}, {lab['vcpus']} vCPUs; kernels: " +
             ", ".join(f"{k} {v}" for k, v in sorted(releases.items())) +
             f"; guests ran {elapsed} s.  ")
    L.append(f"Patched kernel: {doc['notes']['patched_kernel']}.  ")
    L.append("GB/s = 1e9 bytes/s of one move_pages() call over all folios, "
             "median (min-max) over all runs of all boots of that kernel.")
    L.append("")
    if missing:
        L += [f"**{missing.strip()}** The patched columns and targets that "
              "need them are absent, not estimated.", ""]
    for kb in (2048, 4):
        sub = [r for r in rows if r["folio_kb"] == kb]
        if not sub:
            continue
        L.append(f"## {'2 MB THP' if kb == 2048 else '4 KB'} folios")
        L.append("")
        L.append("| folios | MiB | " + " | ".join(cfgs) + " |")
        L.append("|---:|---:|" + "---:|" * len(cfgs))
        for folios in sorted({r["folios"] for r in sub}):
            cells = []
            for c in cfgs:
                m = [r for r in sub if r["folios"] == folios and
                     config_name(r["kernel"], r["mode"], r["threads"],
                                 r["push_pull"]) == c]
                cells.append(f"{m[0]['gbps_median']:.3f} "
                             f"({m[0]['gbps_min']:.3f}-{m[0]['gbps_max']:.3f})"
                             if m else "-")
            L.append(f"| {folios} | {folios * kb / 1024:g} | " +
                     " | ".join(cells) + " |")
        runs = sorted({r["runs"] for r in sub})
        L += ["", f"Runs per cell: {', '.join(map(str, runs))}.", ""]
    if doc["memcpy"]:
        L += ["## memcpy reference (user space, node 0 -> node 1)", "",
              "| threads | GB/s (median) |", "|---:|---:|"]
        L += [f"| {m['threads']} | {m['gbps_median']:.3f} |"
              for m in doc["memcpy"]]
        L.append("")
    L += ["## Targets (lab medians, this run)", ""]
    for name, t in doc["targets"].items():
        L.append(f"- **{name} {t['result'].upper()}**: {t['target']}.")
        for c in t["cells"]:
            mark = "ok" if c["ratio"] >= t["min_ratio"] else "FAIL"
            L.append(f"  - {c['folio_kb']} KB x {c['folios']}, {c['config']}: "
                     f"{c['ratio']:.3f} ({mark})")
    L.append("")
    if vmstat:
        keys = sorted({k for v in vmstat.values() for k in v})
        L += ["## Which path ran (/proc/vmstat deltas over the timed calls, "
              "all boots)", "",
              "| configuration | folio | " + " | ".join(keys) + " |",
              "|---|---:|" + "---:|" * len(keys)]
        for (kernel, mode, thr, pp, kb), v in sorted(
                vmstat.items(), key=lambda i: (cfgs.index(config_name(*i[0][:4]))
                                               if config_name(*i[0][:4]) in cfgs
                                               else 99, -i[0][4])):
            L.append(f"| {config_name(kernel, mode, thr, pp)} | {kb} KB | " +
                     " | ".join(str(v.get(k, "-")) for k in keys) + " |")
        L.append("")
    if profiles:
        L += profile_md(profiles)
    if any(knobs.values()):
        L += ["Knobs at the start of the " + "; ".join(
            f"{c} boots: " + ", ".join(f"vm.{k}={v}" for k, v in kv.items())
            for c, kv in knobs.items() if kv) +
            " (each configuration then sets migrate_copy_mt, _threads and "
            "_pull).", ""]
    with open(path, "w") as f:
        f.write("\n".join(L))


def write_png(out, doc):
    rows = doc["rows"]
    pdir = os.path.join(out, "plot")
    os.makedirs(pdir, exist_ok=True)
    plots = {2048: [], 4: []}
    for r in rows:
        n = config_name(r["kernel"], r["mode"], r["threads"], r["push_pull"])
        fn = os.path.join(pdir, f"{r['folio_kb']}kb-" +
                          n.replace(" ", "_").replace("(", "").replace(")", "")
                          + ".dat")
        if (fn, n) not in plots[r["folio_kb"]]:
            plots[r["folio_kb"]].append((fn, n))
            open(fn, "w").close()
        with open(fn, "a") as f:
            f.write(f"{r['folios']} {r['gbps_median']} {r['gbps_min']} "
                    f"{r['gbps_max']}\n")
    mc = max((m["gbps_median"] for m in doc["memcpy"]), default=None)
    g = ["set terminal pngcairo size 1400,560 font ',10'",
         f"set output '{os.path.join(out, 'move-pages.png')}'",
         "set multiplot layout 1,2 title 'move\\_pages() node 0 -> 1, "
         f"{doc['lab']['accel']}, {doc['lab']['vcpus']} vCPUs (median, "
         "bars: min-max)'",
         "set logscale x 2", "set xlabel 'folios per call'",
         "set ylabel 'GB/s'", "set yrange [0:*]", "set key top left font ',9'",
         "set offsets graph 0.03, graph 0.03, graph 0.08, 0",
         "set grid"]
    for kb, title in ((2048, "2 MB THP"), (4, "4 KB")):
        if not plots[kb]:
            continue
        g.append(f"set title '{title} folios'")
        parts = [f"'{fn}' using 1:2:3:4 with yerrorlines title '{n}'"
                 for fn, n in plots[kb]]
        if mc is not None:
            parts.append(f"{mc} with lines dashtype 2 lc 'gray' "
                         f"title 'memcpy, best threads'")
        g.append("plot " + ", \\\n     ".join(parts))
    g.append("unset multiplot")
    script = os.path.join(pdir, "move-pages.gp")
    with open(script, "w") as f:
        f.write("\n".join(g) + "\n")
    subprocess.run(["gnuplot", script], check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--accel", required=True, choices=["tcg", "kvm"])
    ap.add_argument("--elapsed", type=int, default=0)
    ap.add_argument("--patched-source", default="none")
    ap.add_argument("--command", default="tests/lab/bench move-pages")
    ap.add_argument("raw", nargs="+")
    a = ap.parse_args()

    runs, vmstat, memcpy, vcpus, releases, knobs, profiles = load(a.raw)
    rows = make_rows(runs)
    missing = None
    mpath = os.path.join(a.out, "missing")
    if os.path.exists(mpath):
        with open(mpath) as f:
            missing = f.read().strip()
    doc = {
        "lab": {"accel": a.accel, "vcpus": vcpus},
        "rows": rows,
        "memcpy": [{"threads": t,
                    "gbps_median": round(statistics.median(v), 4)}
                   for t, v in sorted(memcpy.items())],
    }
    doc["targets"] = targets(rows, vcpus)
    doc["notes"] = {"command": a.command, "guest_seconds": a.elapsed,
                    "kernels": releases, "patched_missing": missing,
                    "patched_kernel": a.patched_source}
    with open(os.path.join(a.out, "move-pages.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    write_md(os.path.join(a.out, "move-pages.md"), doc, a.command, a.elapsed,
             releases, missing, vmstat, knobs, profiles)
    write_png(a.out, doc)


if __name__ == "__main__":
    main()
