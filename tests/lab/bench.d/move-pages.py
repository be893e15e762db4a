#!/usr/bin/python3
"""Aggregate the move-pages guests' JSON lines into move-pages.{json,md,png}.

Input: raw/KERNEL-PAIR.jsonl files written by move-pages.guest: "lab",
"config", "knobs", "move", "memcpy" and "profile" lines.  Every timed run of
a cell, across all boots of its kernel, goes into one row: median, min and
max of GB/s.  The targets and the same-boot comparisons are computed from
those medians (move_pages_analysis.py says which ratio compares what).  A
configuration that was not measured has no row; a target or comparison that
needs it says "not measured".

Standard library only (runs on the host).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the checkout
import move_pages_analysis as an  # noqa: E402


def die(msg):
    print(f"move-pages.py: {msg}", file=sys.stderr)
    sys.exit(1)


def load(paths):
    runs = {}      # (kernel, mode, threads, pp, kb, folios) -> [gbps]
    ns = {}        # the same key -> [ns per call]
    vmstat = {}    # the same key -> {counter: sum}
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
                    k = {"bound": rec["bound"], "defaults": rec["defaults"]}
                    if knobs.setdefault(rec["kernel"], k) != k:
                        die(f"{path}:{n}: boots disagree on the knobs")
                elif t == "move":
                    if kernel is None:
                        die(f"{path}:{n}: move line before the lab line")
                    key = (kernel, rec["mode"], rec["threads"],
                           rec["push_pull"], rec["folio_kb"], rec["folios"])
                    runs.setdefault(key, []).extend(rec["gbps"])
                    ns.setdefault(key, []).extend(rec["ns"])
                    vs = vmstat.setdefault(key, {})
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
    return (runs, ns, vmstat, memcpy, vcpus.pop(), releases,
            knobs.get("patched", {}), profiles)


MODE_ORDER = {"serial": 0, "default": 1, "bound": 2, "mt": 3, "handoff": 4}
PP_ORDER = {"-": 0, "push": 1, "pull": 2}


def cfg_sort(key):
    kernel, mode, threads, pp = key[:4]
    return (kernel != "vanilla", MODE_ORDER.get(mode, 9), PP_ORDER[pp],
            threads)


def make_rows(runs):
    rows = []
    for key in sorted(runs, key=lambda k: cfg_sort(k) + (-k[4], k[5])):
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


def handoff_ns(ns):
    """{folios: {threads: [ns]}} of the handoff sweep."""
    out = {}
    for (kernel, mode, threads, pp, kb, folios), v in ns.items():
        if mode == "handoff":
            out.setdefault(folios, {})[threads] = v
    return out


def vmstat_rows(vmstat, knobs):
    return [{"config": an.config_name(k[:4], knobs), "kernel": k[0],
             "mode": k[1], "threads": k[2], "push_pull": k[3],
             "folio_kb": k[4], "folios": k[5], "counters": v}
            for k, v in sorted(vmstat.items(),
                               key=lambda i: cfg_sort(i[0]) +
                               (-i[0][4], i[0][5]))]


def profile_md(doc, profiles):
    L = ["## Where the time goes: relative shares (function_graph, one run, "
         "first boot)", "",
         "Inclusive time of each phase of `migrate_pages_batch()` (the "
         "unmap, then the window in which the batch's folios are unmapped) "
         "over one run (there and back: two `move_pages()` calls), as a "
         "share of `migrate_pages_batch()`'s own time.  These are relative "
         "shares under tracing, whose cost per traced call weighs more on "
         "phases with many short calls; not absolute times.  Copy workers "
         "(`migrate_copy_work_fn`) run on other CPUs in parallel, outside "
         "the total.  \"-\": no call of that phase's function was traced: it "
         "did not run, or the compiler inlined it there (the wanted "
         "functions a kernel cannot trace at all are listed below the "
         "table).  No perf: a TCG guest has no PMU.", ""]
    ph = doc["profile"]
    heads = [f"{p['config']}, {p['folios']} x "
             f"{'2 MB' if p['folio_kb'] == 2048 else '4 KB'}" for p in ph]
    L += ["| phase (function) | " + " | ".join(heads) + " |",
          "|---|" + "---:|" * len(ph)]
    names = [x["phase"] for x in ph[0]["phases"]] if ph else []
    for i, name in enumerate(names):
        funcs = sorted({p["phases"][i]["function"] for p in ph
                        if p["phases"][i]["function"]})
        cells = []
        for p in ph:
            s = p["phases"][i]["share"]
            cells.append("-" if s is None else f"{100 * s:.1f} %")
        label = f"{name} ({', '.join(funcs)})" if funcs else name
        L.append(f"| {label} | " + " | ".join(cells) + " |")
    L.append("| total: `migrate_pages_batch()` ms | " + " | ".join(
        "-" if p["total_us"] is None else f"{p['total_us'] / 1000:.1f}"
        for p in ph) + " |")
    L.append("| copy workers ms (other CPUs) | " + " | ".join(
        "-" if p["workers_us"] is None else f"{p['workers_us'] / 1000:.1f}"
        for p in ph) + " |")
    L.append("| trace events lost | " + " | ".join(
        str(p["lost_events"]) for p in ph) + " |")
    L.append("")
    for p in ph:
        L.append(f"Not traceable in {p['config']} ({p['folio_kb']} KB): " +
                 (", ".join(p["untraceable"]) or "none") + ".  ")
    L += ["", "Every traced function, inclusive:", ""]
    for p in sorted(profiles, key=lambda p: (p["kernel"] != "vanilla",
                                             p.get("config", ""),
                                             -p["folio_kb"])):
        fn = p["functions"]
        base = fn.get(an.TOTAL, {}).get("us")
        L += [f"{p.get('config', p['kernel'])}, {p['folios']} x "
              f"{'2 MB' if p['folio_kb'] == 2048 else '4 KB'}:", "",
              f"| function | calls | ms | % of {an.TOTAL} |",
              "|---|---:|---:|---:|"]
        for name, v in sorted(fn.items(), key=lambda i: -i[1]["us"]):
            share = f"{100 * v['us'] / base:.1f}" if base else "-"
            L.append(f"| {name} | {v['calls']} | {v['us'] / 1000:.1f} | "
                     f"{share} |")
        L.append("")
    return L


def fmt_pages(v):
    return "-" if v is None else str(v)


def comparisons_md(doc):
    L = []
    b, t, h = doc["bound_effect"], doc["threads_effect"], doc["handoff"]
    L += ["## The bound's own effect (same boot, no target)", "",
          f"{b['numerator']} / {b['denominator']}, ratio of the GB/s "
          "medians.", ""]
    if b["cells"]:
        L += ["| folio | folios | ratio |", "|---|---:|---:|"]
        L += [f"| {c['folio_kb']} KB | {c['folios']} | {c['ratio']:.3f} |"
              for c in b["cells"]]
    else:
        L.append(f"Not measured: {b['why']}.")
    L += ["", "## The copy threads' effect (same boot, no target)", ""]
    note = f"**{t['note']}**: " if t.get("note") else ""
    L += [f"{note}patched mt on / {t['denominator']}, ratio of the GB/s "
          "medians; pages copied ahead and by the workers, and the workers' "
          "copy time, are the `/proc/vmstat` deltas of the mt configuration "
          "in that cell (a batch under `vm.migrate_copy_min_kb`, or too "
          "small for two 256 KB chunks, copies as with mt off).", ""]
    if t["cells"]:
        L += ["| folio | folios | configuration | ratio | pages copied "
              "ahead (all calls) | by workers | workers' ms (all calls) |",
              "|---|---:|---|---:|---:|---:|---:|"]
        for c in t["cells"]:
            w = c["worker_ns"]
            L.append(f"| {c['folio_kb']} KB | {c['folios']} | {c['config']} "
                     f"| {c['ratio']:.3f} | "
                     f"{fmt_pages(c['pages_copied_ahead'])} | "
                     f"{fmt_pages(c['pages_by_workers'])} | "
                     f"{'-' if w is None else f'{w / 1e6:.1f}'} |")
    else:
        L.append(f"Not measured: {t['why']}.")
    thr = h["threshold_kb"]
    L += ["", f"## Handoff cost: a chunk to a worker and back ({h['timing']}, "
          "same boot, no target)", "",
          "4 KB folios in one batch per call, `vm.migrate_copy_min_kb=0`: mt "
          "on with 2 threads against mt off, median time per call; "
          "\"paired\" is the median of the differences within each "
          "interleaved repetition.  The difference is what handing half the "
          "batch to a worker and waiting for it costs (or gains) here.  "
          "The kernel's floor per thread: "
          f"{'unknown' if thr is None else f'{thr} KB'} "
          "(`MIGRATE_COPY_MIN_CHUNK`, mm/migrate_copy.c); \"mt off per "
          "chunk\" is the mt-off call's time per that much of the batch.  "
          "The workers' share of the pages copied ahead and their copy time "
          "per call come from `pgmigrate_copy_mt`, `_batched` and "
          "`_worker_ns` (a worker that has not started when the caller runs "
          "out of work leaves its chunk to the caller).", ""]
    if h["cells"]:
        L += ["| KB per call | folios | mt off us | mt 2 thr us | difference "
              "us | paired us | mt off per chunk us | workers' share of "
              "pages | workers' us per call | runs |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for c in h["cells"]:
            by, ahead = c["pages_by_workers"], c["pages_copied_ahead"]
            share = f"{100 * by / ahead:.0f} %" if by is not None and \
                ahead else "-"
            w = c["worker_us_per_call"]
            L.append(f"| {c['kb']} | {c['folios']} | {c['mt_off_us']} | "
                     f"{c['mt2_us']} | {c['diff_us']:+} | "
                     f"{c['paired_diff_us']:+} | {c['mt_off_us_per_chunk']} "
                     f"| {share} | {'-' if w is None else w} | "
                     f"{c['runs']} |")
    else:
        L.append(f"Not measured: {h['why']}.")
    L.append("")
    return L


def write_md(path, doc, missing, profiles):
    rows, lab, notes = doc["rows"], doc["lab"], doc["notes"]
    knobs = notes["knobs"]
    main = [r for r in rows if r["mode"] != "handoff"]
    cfgs = []
    for r in main:
        n = an.config_name((r["kernel"], r["mode"], r["threads"],
                            r["push_pull"]), knobs)
        if n not in cfgs:
            cfgs.append(n)
    L = ["# move-pages: move_pages(2) throughput, node 0 -> node 1", ""]
    L.append(f"Date: {notes['date']}.  Command: `{notes['command']}`  ")
    L.append(f"Lab: {lab['accel']}, {lab['vcpus']} vCPUs; kernels: " +
             ", ".join(f"{k} {v}" for k, v in sorted(notes["kernels"].items()))
             + f"; guests ran {notes['guest_seconds']} s.  ")
    L.append(f"Patched kernel: {notes['patched_kernel']}.  ")
    if knobs:
        L.append("Patched boots' defaults: " + ", ".join(
            f"vm.{k}={v}" for k, v in knobs["defaults"].items()) +
            f"; raised bound: {knobs['bound']}.  ")
    L.append("GB/s = 1e9 bytes/s of one move_pages() call over all folios, "
             "median (min-max) over all runs of all boots of that kernel.")
    L += ["", "What is compared: P2 and P3 divide patched by vanilla, two "
          "kernels, so two boots (alternating pairs); the bound's and the "
          "threads' effects and the handoff cost compare configurations "
          "interleaved within the same patched boot.  Under TCG the copy is "
          "emulated and the vCPUs share the host's cores: copy timings here "
          "are not copy speed-ups.", ""]
    if missing:
        L += [f"**{missing.strip()}** The patched columns and targets that "
              "need them are absent, not estimated.", ""]
    for kb in (2048, 4):
        sub = [r for r in main if r["folio_kb"] == kb]
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
                     an.config_name((r["kernel"], r["mode"], r["threads"],
                                     r["push_pull"]), knobs) == c]
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
        why = f" ({t['why']})" if t.get("why") else ""
        L.append(f"- **{name} {t['result'].upper()}**{why}: {t['target']}.")
        for c in t["cells"]:
            mark = "reported" if t["result"] == "not measured" else \
                "ok" if c["ratio"] >= t["min_ratio"] else "FAIL"
            L.append(f"  - {c['folio_kb']} KB x {c['folios']}, {c['config']}: "
                     f"{c['ratio']:.3f} ({mark})")
    L.append("")
    L += comparisons_md(doc)
    if doc["vmstat"]:
        keys = sorted({k for v in doc["vmstat"] for k in v["counters"]})
        L += ["## Which path ran (/proc/vmstat deltas over the timed calls, "
              "both directions, all boots)", "",
              "| configuration | folio | folios | " + " | ".join(keys) + " |",
              "|---|---:|---:|" + "---:|" * len(keys)]
        for v in doc["vmstat"]:
            L.append(f"| {v['config']} | {v['folio_kb']} KB | {v['folios']} "
                     "| " + " | ".join(str(v["counters"].get(k, "-"))
                                       for k in keys) + " |")
        L.append("")
    if profiles:
        L += profile_md(doc, profiles)
    with open(path, "w") as f:
        f.write("\n".join(L))


def write_png(out, doc):
    rows = [r for r in doc["rows"] if r["mode"] != "handoff"]
    pdir = os.path.join(out, "plot")
    os.makedirs(pdir, exist_ok=True)
    plots = {2048: [], 4: []}
    for r in rows:
        n = an.config_name((r["kernel"], r["mode"], r["threads"],
                            r["push_pull"]), doc["notes"]["knobs"])
        fn = os.path.join(pdir, f"{r['folio_kb']}kb-" +
                          n.replace(" ", "_").replace("(", "").replace(")", "")
                          .replace(",", "") + ".dat")
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
    ap.add_argument("--date", default="unknown")
    ap.add_argument("--patched-source", default="none")
    ap.add_argument("--command", default="tests/lab/bench move-pages")
    ap.add_argument("raw", nargs="+")
    a = ap.parse_args()

    (runs, ns, vmstat, memcpy, vcpus, releases, knobs,
     profiles) = load(a.raw)
    rows = make_rows(runs)
    missing = None
    mpath = os.path.join(a.out, "missing")
    if os.path.exists(mpath):
        with open(mpath) as f:
            missing = f.read().strip()
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "..", "..")
    doc = {
        "lab": {"accel": a.accel, "vcpus": vcpus},
        "rows": rows,
        "memcpy": [{"threads": t,
                    "gbps_median": round(statistics.median(v), 4)}
                   for t, v in sorted(memcpy.items())],
    }
    doc["targets"] = an.targets(rows, vcpus, a.accel, knobs)
    doc["bound_effect"], doc["threads_effect"] = an.effects(
        rows, a.accel, knobs, vmstat)
    doc["handoff"] = an.handoff(handoff_ns(ns), vmstat, a.accel,
                                an.min_chunk_kb(top))
    doc["profile"] = an.phases(profiles)
    doc["vmstat"] = vmstat_rows(vmstat, knobs)
    doc["notes"] = {"command": a.command, "date": a.date,
                    "guest_seconds": a.elapsed, "kernels": releases,
                    "patched_missing": missing,
                    "patched_kernel": a.patched_source, "knobs": knobs}
    with open(os.path.join(a.out, "move-pages.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    write_md(os.path.join(a.out, "move-pages.md"), doc, missing, profiles)
    write_png(a.out, doc)


if __name__ == "__main__":
    main()
