"""The move-pages benchmark's comparisons, from the aggregated rows.

Which ratio compares what, and where it may be judged:

  P2      patched with its default knobs / vanilla, every cell: the series'
          cost when it is not used.  Across boots (two kernels); judged on
          medians of at least MIN_RUNS runs per cell, like P3.
  P3      4 KB x >= 4096: the better of the patched mt-off configurations
          (default bound, raised bound) / vanilla.  Across boots; judged.
  bound   patched mt off at the raised bound / patched mt off at the default
          bound, every cell.  Same boot; reported, no target.
  threads patched mt on with k threads / patched mt off, both at the raised
          bound (or both at the default), every cell.  Same boot; reported.
          P1 (all vCPUs, 2 MB x >= 64, better of push/pull, >= 1.7) is this
          ratio: a copy speed-up, judged only with KVM.  Under TCG the copy
          is emulated and the vCPUs share the host's cores: "not measured".
  handoff 4 KB folios, mt on with 2 threads and no size floor against mt off
          at the same batch, same boot: the per-call time difference, what
          handing a chunk to a worker and waiting for it costs here.
  profile function_graph inclusive times per phase of migrate_pages_batch()
          (the unmapped window), as shares of it: relative, tracing included.

Every analysis returns plain JSON-able dicts; a configuration that was not
measured gives "not measured" and says why, never a number.
"""
import os
import re
import statistics

P1_MIN, P2_MIN, P3_MIN = 1.7, 0.97, 1.3
# A target is judged on medians of at least this many runs per cell.
MIN_RUNS = 5
TCG_NOTE = "not a copy speed-up measurement (TCG)"


def config_name(key, knobs):
    """Display name of (kernel, mode, threads, push_pull)."""
    kernel, mode, threads, pp = key
    bound = knobs.get("bound", "N")
    dflt = knobs.get("defaults", {}).get("migrate_batch_pages", "default")
    if kernel == "vanilla":
        return "vanilla"
    if mode == "default":
        return f"patched default (bound {dflt}, mt off)"
    if mode == "bound":
        return f"patched bound {bound} (mt off)"
    if mode == "mt":
        return f"patched mt {threads} thr {pp} (bound {bound})"
    if mode == "handoff":
        return "handoff mt off" if threads == 1 else \
            f"handoff mt {threads} thr {pp}"
    return f"patched {mode} {threads} {pp}"


def cell_medians(rows):
    """{(kb, folios): {(kernel, mode, threads, pp): median GB/s}}"""
    cell = {}
    for r in rows:
        cell.setdefault((r["folio_kb"], r["folios"]), {})[
            (r["kernel"], r["mode"], r["threads"], r["push_pull"])
        ] = r["gbps_median"]
    return cell


def _order(cells):
    return sorted(cells, key=lambda c: (-c[0], c[1]))


def targets(rows, vcpus, accel, knobs):
    cell = cell_medians(rows)
    few = min((r["runs"] for r in rows), default=0) < MIN_RUNS
    default = ("patched", "default", 1, "-")
    mt_off = [default, ("patched", "bound", 1, "-")]

    def check(what, minimum, cells, num, den, judged=True, why=None):
        """num(c) -> {config: median}; den(c) -> the denominator key."""
        out = {"target": what, "min_ratio": minimum, "cells": [],
               "result": "not measured"}
        ok = True
        for kb, folios in _order(cells):
            c = cell[(kb, folios)]
            d = den(c)
            if d not in c:
                continue
            for k, v in num(c).items():
                ratio = v / c[d]
                out["cells"].append({"folio_kb": kb, "folios": folios,
                                     "config": config_name(k, knobs),
                                     "ratio": round(ratio, 3)})
                ok = ok and ratio >= minimum
        if not judged:
            out["why"] = why
        elif few:
            out["why"] = f"fewer than {MIN_RUNS} runs in a cell"
        elif out["cells"]:
            out["result"] = "pass" if ok else "fail"
        else:
            out["why"] = "a configuration it needs was not measured"
        return out

    def best(c, keys):
        have = {k: c[k] for k in keys if k in c}
        if not have:
            return {}
        k = max(have, key=have.get)
        return {k: have[k]}

    mt_den = _mt_denominator(cell)
    allv = [("patched", "mt", vcpus, p) for p in ("push", "pull")]
    kvm = accel == "kvm"
    return {
        "P1": check(f"2 MB x >=64 folios: patched mt with all {vcpus} vCPUs "
                    "(better of push/pull) / patched mt off at the same "
                    f"bound >= {P1_MIN}, same boot", P1_MIN,
                    [k for k in cell if k[0] == 2048 and k[1] >= 64],
                    lambda c: best(c, allv), lambda c: mt_den,
                    judged=kvm, why=None if kvm else
                    f"{TCG_NOTE}: needs KVM or real cores"),
        "P2": check(f"{config_name(default, knobs)} / vanilla >= {P2_MIN} "
                    "in every cell, across boots", P2_MIN, list(cell),
                    lambda c: {default: c[default]} if default in c else {},
                    lambda c: ("vanilla", "serial", 1, "-")),
        "P3": check("4 KB x >=4096 folios: better patched mt-off "
                    f"configuration / vanilla >= {P3_MIN}, across boots",
                    P3_MIN, [k for k in cell if k[0] == 4 and k[1] >= 4096],
                    lambda c: best(c, mt_off),
                    lambda c: ("vanilla", "serial", 1, "-")),
    }


def _mt_denominator(cell):
    """The mt configurations run at the raised bound, or the default one."""
    if any(("patched", "bound", 1, "-") in c for c in cell.values()):
        return ("patched", "bound", 1, "-")
    return ("patched", "default", 1, "-")


def effects(rows, accel, knobs, vmstat):
    """The bound's and the threads' effect, same boot, no targets."""
    cell = cell_medians(rows)
    bound = ("patched", "bound", 1, "-")
    default = ("patched", "default", 1, "-")
    b = {"numerator": config_name(bound, knobs),
         "denominator": config_name(default, knobs), "basis": "same boot",
         "cells": [], "result": "not measured"}
    for kb, folios in _order(cell):
        c = cell[(kb, folios)]
        if bound in c and default in c:
            b["cells"].append({"folio_kb": kb, "folios": folios,
                               "ratio": round(c[bound] / c[default], 3)})
    if b["cells"]:
        b["result"] = "reported"
    else:
        b["why"] = "no raised bound (--batch-pages) or no patched boot"

    den = _mt_denominator(cell)
    t = {"denominator": config_name(den, knobs), "basis": "same boot",
         "cells": [], "result": "not measured"}
    if accel != "kvm":
        t["note"] = TCG_NOTE
    for kb, folios in _order(cell):
        c = cell[(kb, folios)]
        for k in sorted(k for k in c if k[1] == "mt"):
            if den not in c:
                continue
            vs = vmstat.get(k + (kb, folios), {})
            t["cells"].append({
                "folio_kb": kb, "folios": folios,
                "config": config_name(k, knobs), "threads": k[2],
                "push_pull": k[3], "ratio": round(c[k] / c[den], 3),
                "pages_copied_ahead": vs.get("pgmigrate_copy_batched"),
                "pages_by_workers": vs.get("pgmigrate_copy_mt"),
                "worker_ns": vs.get("pgmigrate_copy_worker_ns")})
    if t["cells"]:
        t["result"] = "reported"
    else:
        t["why"] = "no patched boot, or one vCPU"
    return b, t


def min_chunk_kb(top):
    """MIGRATE_COPY_MIN_CHUNK of this tree's kernel-patches/, in KB."""
    pdir = os.path.join(top, "kernel-patches")
    try:
        names = sorted(os.listdir(pdir))
    except OSError:
        return None
    for n in names:
        if not n.endswith(".patch"):
            continue
        with open(os.path.join(pdir, n)) as f:
            m = re.search(r"^\+#define MIGRATE_COPY_MIN_CHUNK\s+SZ_(\d+)K$",
                          f.read(), re.M)
        if m:
            return int(m.group(1))
    return None


def handoff(ns_runs, vmstat, accel, threshold_kb):
    """ns_runs: {(folios): {threads: [ns per call, by repetition]}}."""
    h = {"threshold_kb": threshold_kb, "timing": accel.upper() + " timing",
         "basis": "same boot", "cells": [], "result": "not measured"}
    for folios in sorted(ns_runs):
        r = ns_runs[folios]
        if 1 not in r or 2 not in r:
            continue
        off, on = r[1], r[2]
        pairs = list(zip(off, on))
        kb = folios * 4
        vs = vmstat.get(("patched", "handoff", 2, "push", 4, folios), {})
        m_off = statistics.median(off)
        # The counters cover every timed call, there and back.
        calls = 2 * len(pairs)
        wns = vs.get("pgmigrate_copy_worker_ns")
        h["cells"].append({
            "folio_kb": 4, "folios": folios, "kb": kb,
            "mt_off_us": round(m_off / 1000, 1),
            "mt2_us": round(statistics.median(on) / 1000, 1),
            "diff_us": round((statistics.median(on) - m_off) / 1000, 1),
            "paired_diff_us": round(statistics.median(
                b - a for a, b in pairs) / 1000, 1),
            "mt_off_us_per_chunk": round(
                m_off / 1000 * (threshold_kb or 256) / kb, 1),
            "pages_by_workers": vs.get("pgmigrate_copy_mt"),
            "pages_copied_ahead": vs.get("pgmigrate_copy_batched"),
            "worker_ns": wns,
            "worker_us_per_call": None if wns is None else
            round(wns / calls / 1000, 1),
            "runs": len(pairs)})
    if h["cells"]:
        h["result"] = "reported"
    else:
        h["why"] = ("no handoff sweep (--handoff none, one vCPU, or vanilla "
                    "only)")
    return h


# Phases of migrate_pages_batch(), the unmap and then the window in which the
# batch's folios are unmapped: (phase, functions that time it (the first
# traceable one counts), part of the phase above rather than one of its own).
# In 6.12 the compiler inlines move_to_new_folio() and remove_migration_ptes()
# into migrate_folio_move() (the latter stays traceable for other callers),
# so the per-folio move is migrate_folio_move() and its parts show only what
# the trace sees.
PHASES = [
    ("allocate destinations", ["alloc_migration_target"], False),
    ("unmap", ["try_to_migrate"], False),
    ("TLB flush", ["try_to_unmap_flush"], False),
    ("batch copy", ["migrate_folios_batch_copy", "migrate_copy_folios_mt"],
     False),
    ("per-folio move", ["migrate_folio_move", "move_to_new_folio"], False),
    ("of which: the folio's own copy", ["folio_mc_copy"], True),
    ("of which: restore the page tables", ["remove_migration_ptes"], True),
    ("undo", ["migrate_folios_undo"], False),
]
TOTAL = "migrate_pages_batch"
WORKERS = "migrate_copy_work_fn"


def phases(profiles):
    """Shares of migrate_pages_batch() per phase, for every profile."""
    out = []
    for p in sorted(profiles, key=lambda p: (p["kernel"] != "vanilla",
                                             p.get("config", ""),
                                             -p["folio_kb"])):
        fn = p["functions"]
        untraceable = set(p.get("untraceable", []))
        total = fn.get(TOTAL, {}).get("us")
        rec = {"kernel": p["kernel"], "config": p.get("config", p["kernel"]),
               "folio_kb": p["folio_kb"], "folios": p["folios"],
               "lost_events": p.get("lost_events"),
               "total_function": TOTAL,
               "total_us": total, "untraceable": sorted(untraceable),
               "phases": []}
        top = 0.0
        for name, funcs, part in PHASES:
            # The first traceable function; no calls traced: not seen (not
            # run, or inlined where it ran), no share.
            f = next((f for f in funcs if f not in untraceable), None)
            v = fn.get(f)
            share = round(v["us"] / total, 4) if v and total else None
            rec["phases"].append({"phase": name, "function": f,
                                  "us": v["us"] if v else None,
                                  "calls": v["calls"] if v else 0,
                                  "share": share})
            if v and not part:
                top += v["us"]
        rec["phases"].append({
            "phase": "rest of migrate_pages_batch", "function": None,
            "us": round(total - top, 1) if total else None, "calls": None,
            "share": round((total - top) / total, 4) if total else None})
        w = fn.get(WORKERS)
        rec["workers_us"] = w["us"] if w else None
        out.append(rec)
    return out
