#!/usr/bin/env python3
"""The move-pages benchmark's report (tests/lab/bench.d/move-pages.py) and its
checker (move-pages-check.py) on made-up runs: every ratio and verdict from
known medians, P1 judged only with KVM, the handoff's per-call difference,
the profile's phase shares; then the checker must pass the report and must
fail it once a verdict or the wording is falsified.

  bench-move-pages.py BENCH_D
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPS = 5
THP, BASE, HANDOFF = [1, 64], [512, 4096], [128, 512]
DEFAULTS = {"migrate_batch_pages": 512, "migrate_copy_mt": 0,
            "migrate_copy_threads": 2, "migrate_copy_pull": 0,
            "migrate_copy_min_kb": 4096, "migrate_copy_reasons": 824}
# GB/s of every run, per configuration and cell (kb, folios).
VANILLA = 0.1
DEFAULT = {(4, 512): 0.095}            # else 0.098: P2 fails on 4 KB x 512
BOUND = {(4, 4096): 0.15}              # else 0.1: P3 1.5, bound 1.5 there
MT = {(2048, 64): 0.3}                 # else 0.1: threads 2.0 there (push)
FUNCS = {"migrate_pages_batch": 1000.0, "alloc_migration_target": 50.0,
         "try_to_migrate": 100.0, "try_to_unmap_flush": 10.0,
         "migrate_folio_move": 600.0, "folio_mc_copy": 500.0}


def move(mode, threads, pp, kb, folios, gbps, ns=None, vmstat=None):
    b = kb * 1024 * folios
    return {"type": "move", "mode": mode, "threads": threads,
            "push_pull": pp, "folio_kb": kb, "folios": folios, "bytes": b,
            "ns": ns or [b / gbps] * REPS, "gbps": [gbps] * REPS,
            "back_gbps": [gbps] * REPS, "vmstat": vmstat or {}}


def profile(kernel, config, untraceable):
    return [{"type": "profile", "kernel": kernel, "config": config,
             "folio_kb": kb, "folios": n, "lost_events": 0,
             "untraceable": untraceable,
             "functions": {f: {"calls": 4, "us": us}
                           for f, us in FUNCS.items()}}
            for kb, n in ((2048, 1), (4, 512))]


def write_raw(out):
    raw = os.path.join(out, "raw")
    os.makedirs(os.path.join(raw, "vanilla-1"))
    with open(os.path.join(raw, "vanilla-1", "accel"), "w") as f:
        f.write("tcg\n")
    cells = [(2048, n) for n in THP] + [(4, n) for n in BASE]
    copy = {"pgmigrate_copy_batched": 0, "pgmigrate_copy_mt": 0,
            "pgmigrate_copy_fallback": 0, "pgmigrate_copy_worker_ns": 0}
    v = [{"type": "lab", "kernel": "vanilla", "vcpus": 2, "release": "6.12",
          "nodes": "0-1"}]
    v += [move("serial", 1, "-", kb, n, VANILLA) for kb, n in cells]
    v += [{"type": "memcpy", "threads": t, "gbps": [1.0] * REPS}
          for t in (1, 2)]
    v += profile("vanilla", "vanilla", ["migrate_folios_batch_copy",
                                        "migrate_copy_folios_mt"])
    p = [{"type": "lab", "kernel": "patched", "vcpus": 2, "release": "6.12+",
          "nodes": "0-1"},
         {"type": "knobs", "kernel": "patched", "bound": 2048,
          "defaults": DEFAULTS}]
    for c in cells:
        p.append(move("default", 1, "-", *c, DEFAULT.get(c, 0.098), vmstat=copy))
        p.append(move("bound", 1, "-", *c, BOUND.get(c, 0.1), vmstat=copy))
        for pp in ("push", "pull"):
            p.append(move("mt", 2, pp, *c,
                          MT.get(c, 0.1) if pp == "push" else 0.1,
                          vmstat=dict(copy, pgmigrate_copy_batched=100,
                                      pgmigrate_copy_mt=50,
                                      pgmigrate_copy_worker_ns=10**6)))
    for n in HANDOFF:
        p.append(move("handoff", 1, "-", 4, n, 0.1, ns=[10**6] * REPS,
                      vmstat=copy))
        # Workers took half the pages; 3 ms of theirs over 10 calls.
        p.append(move("handoff", 2, "push", 4, n, 0.1, ns=[1.2e6] * REPS,
                      vmstat=dict(copy, pgmigrate_copy_batched=2 * n,
                                  pgmigrate_copy_mt=n,
                                  pgmigrate_copy_worker_ns=3 * 10**6)))
    p += profile("patched", "default", [])
    for name, recs in (("vanilla-1", v), ("patched-1", p)):
        with open(os.path.join(raw, name + ".jsonl"), "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in recs)


def check(what, got, want):
    if got != want:
        print(f"FAIL {what}: got {got!r}, want {want!r}")
        sys.exit(1)


def report(bench_d, out, accel):
    subprocess.run([os.path.join(bench_d, "move-pages.py"), "--out", out,
                    "--accel", accel, "--date", "2026-01-01 00:00 UTC",
                    "--command", "tests/lab/bench move-pages --test",
                    os.path.join(out, "raw", "vanilla-1.jsonl"),
                    os.path.join(out, "raw", "patched-1.jsonl")], check=True)
    with open(os.path.join(out, "move-pages.json")) as f:
        return json.load(f)


def checker(bench_d, out):
    return subprocess.run(
        [os.path.join(bench_d, "move-pages-check.py"), out, "--thp",
         ",".join(map(str, THP)), "--base", ",".join(map(str, BASE)),
         "--runs", str(REPS), "--patched", "yes", "--batch-pages", "2048",
         "--handoff", ",".join(map(str, HANDOFF)), "--profile", "yes"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


def ratios(rec):
    return {(c["folio_kb"], c["folios"], c.get("config")): c["ratio"]
            for c in rec["cells"]}


def main():
    bench_d = sys.argv[1]
    with tempfile.TemporaryDirectory() as out:
        write_raw(out)
        doc = report(bench_d, out, "tcg")
        t = doc["targets"]
        check("P1 under TCG", t["P1"]["result"], "not measured")
        check("P1 ratio reported", ratios(t["P1"]),
              {(2048, 64, "patched mt 2 thr push (bound 2048)"): 3.0})
        check("P2", t["P2"]["result"], "fail")
        dflt = "patched default (bound 512, mt off)"
        check("P2 cells", ratios(t["P2"]),
              {(2048, 1, dflt): 0.98, (2048, 64, dflt): 0.98,
               (4, 512, dflt): 0.95, (4, 4096, dflt): 0.98})
        check("P3", (t["P3"]["result"], ratios(t["P3"])),
              ("pass", {(4, 4096, "patched bound 2048 (mt off)"): 1.5}))
        check("bound effect", ratios(doc["bound_effect"]),
              {(2048, 1, None): 1.02, (2048, 64, None): 1.02,
               (4, 512, None): 1.053, (4, 4096, None): 1.531})
        th = doc["threads_effect"]
        check("threads note", th["note"],
              "not a copy speed-up measurement (TCG)")
        check("threads 64 x 2 MB push",
              ratios(th)[(2048, 64, "patched mt 2 thr push (bound 2048)")],
              3.0)
        h = doc["handoff"]["cells"]
        check("handoff", [(c["kb"], c["diff_us"], c["paired_diff_us"],
                           c["worker_us_per_call"]) for c in h],
              [(512, 200.0, 200.0, 300.0), (2048, 200.0, 200.0, 300.0)])
        check("handoff threshold", doc["handoff"]["threshold_kb"], 256)
        ph = {p["phase"]: p["share"] for p in doc["profile"][0]["phases"]}
        check("profile shares", (ph["unmap"], ph["per-folio move"],
                                 ph["of which: the folio's own copy"],
                                 ph["batch copy"],
                                 ph["rest of migrate_pages_batch"]),
              (0.1, 0.6, 0.5, None, 0.24))
        check("checker on the report", checker(bench_d, out), 0)

        # Falsified: a verdict under TCG, a ratio, the wording.
        for what, edit in (
                ("P1 passed under TCG", lambda d, md: (
                    d["targets"]["P1"].update(result="pass"), md)[1]),
                ("a P2 ratio", lambda d, md: (
                    d["targets"]["P2"]["cells"][0].update(ratio=1.5), md)[1]),
                ("a speed-up", lambda d, md: md.replace(
                    "## The copy threads' effect", "## The threads' 3x "
                    "speed-up\n\n## The copy threads' effect"))):
            bad = os.path.join(out, "bad")
            shutil.rmtree(bad, ignore_errors=True)
            shutil.copytree(out, bad, ignore=shutil.ignore_patterns("bad"))
            with open(os.path.join(bad, "move-pages.md")) as f:
                md = f.read()
            d = json.loads(json.dumps(doc))
            md = edit(d, md)
            with open(os.path.join(bad, "move-pages.json"), "w") as f:
                json.dump(d, f)
            with open(os.path.join(bad, "move-pages.md"), "w") as f:
                f.write(md)
            check(f"checker on {what}", checker(bench_d, bad), 1)

        # With KVM, P1 is a copy speed-up and judged: 3.0 >= 1.7.
        with open(os.path.join(out, "raw", "vanilla-1", "accel"), "w") as f:
            f.write("kvm\n")
        doc = report(bench_d, out, "kvm")
        check("P1 with KVM", doc["targets"]["P1"]["result"], "pass")
        check("threads note with KVM", doc["threads_effect"].get("note"),
              None)
    print("bench-move-pages: ok")


if __name__ == "__main__":
    main()
