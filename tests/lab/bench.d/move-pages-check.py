#!/usr/bin/python3
"""Check the files a move-pages run wrote: exact JSON shape, every expected
cell present once, sane numbers, the .md table and targets, a real PNG.

  move-pages-check.py DIR --thp 1,2,4 --base 512,1024 --runs 5 \
      --patched yes|no

Prints each problem and exits 1 if there is any.
"""
import argparse
import json
import os
import sys

ROW_KEYS = {"kernel", "mode", "threads", "push_pull", "folio_kb", "folios",
            "gbps_median", "gbps_min", "gbps_max", "runs"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--thp", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--patched", choices=["yes", "no"], required=True)
    a = ap.parse_args()
    errs = []

    def err(msg):
        errs.append(msg)

    with open(os.path.join(a.dir, "move-pages.json")) as f:
        doc = json.load(f)
    for k in ("lab", "rows", "memcpy", "targets"):
        if k not in doc:
            err(f"top level lacks {k!r}")
    if errs:
        return report(errs)

    lab = doc["lab"]
    if set(lab) != {"accel", "vcpus"}:
        err(f"lab keys {sorted(lab)} != ['accel', 'vcpus']")
    with open(os.path.join(a.dir, "raw", "vanilla-1", "accel")) as f:
        accel = f.read().strip()
    if lab.get("accel") != accel:
        err(f"lab.accel {lab.get('accel')!r} != {accel!r} from tests/lab/vm")
    vcpus = lab.get("vcpus")
    if not isinstance(vcpus, int) or vcpus < 1:
        err(f"lab.vcpus {vcpus!r} is not a positive integer")
        return report(errs)

    configs = [("vanilla", "serial", 1, "-")]
    if a.patched == "yes":
        configs.append(("patched", "batched", 1, "-"))
        configs += [("patched", "mt", t, pp)
                    for pp in ("push", "pull") for t in range(1, vcpus + 1)]
    cells = [(2048, int(n)) for n in a.thp.split(",")] + \
            [(4, int(n)) for n in a.base.split(",")]
    want = {c + cell for c in configs for cell in cells}

    seen = set()
    for i, r in enumerate(doc["rows"]):
        if set(r) != ROW_KEYS:
            err(f"row {i}: keys {sorted(r)}")
            continue
        key = (r["kernel"], r["mode"], r["threads"], r["push_pull"],
               r["folio_kb"], r["folios"])
        if key in seen:
            err(f"row {i}: {key} appears twice")
        seen.add(key)
        if key not in want:
            err(f"row {i}: unexpected {key}")
        v = (r["gbps_min"], r["gbps_median"], r["gbps_max"])
        if not all(isinstance(x, (int, float)) for x in v) or \
                not 0 < v[0] <= v[1] <= v[2]:
            err(f"row {i}: not 0 < min <= median <= max: {v}")
        if r["runs"] != a.runs:
            err(f"row {i}: runs {r['runs']} != {a.runs}")
    for key in sorted(want - seen, key=str):
        err(f"missing row {key}")

    mt = sorted(m.get("threads") for m in doc["memcpy"])
    if mt != list(range(1, vcpus + 1)):
        err(f"memcpy threads {mt} != 1..{vcpus}")
    for m in doc["memcpy"]:
        if set(m) != {"threads", "gbps_median"} or not m["gbps_median"] > 0:
            err(f"memcpy entry {m}")

    t = doc["targets"]
    if sorted(t) != ["P1", "P2", "P3"]:
        err(f"targets {sorted(t)} != P1..P3")
    for name, rec in t.items():
        if rec.get("result") not in ("pass", "fail", "not measured"):
            err(f"{name}: result {rec.get('result')!r}")
        want_measured = a.patched == "yes" and (
            name == "P2" or
            (name == "P1" and any(k == 2048 and n >= 64 for k, n in cells)) or
            (name == "P3" and any(k == 4 and n >= 4096 for k, n in cells)))
        if (rec.get("result") != "not measured") != want_measured:
            err(f"{name}: result {rec.get('result')!r} but measured should "
                f"be {want_measured}")
    missing = doc.get("notes", {}).get("patched_missing")
    if (missing is None) != (a.patched == "yes"):
        err(f"notes.patched_missing is {missing!r} with --patched {a.patched}")

    with open(os.path.join(a.dir, "move-pages.md")) as f:
        md = f.read()
    for s in ("## 2 MB THP folios", "## 4 KB folios", "| folios | MiB | vanilla",
              "## memcpy reference", "**P1 ", "**P2 ", "**P3 "):
        if s not in md:
            err(f"move-pages.md lacks {s!r}")
    if missing and missing not in md:
        err("move-pages.md does not say why the patched rows are missing")
    with open(os.path.join(a.dir, "move-pages.png"), "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            err("move-pages.png is not a PNG")
    return report(errs)


def report(errs):
    for e in errs:
        print(f"move-pages-check: {e}", file=sys.stderr)
    if errs:
        return 1
    print("move-pages-check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
