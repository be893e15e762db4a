#!/usr/bin/python3
"""Check the files a move-pages run wrote: exact JSON shape, every expected
cell present once, sane numbers, every verdict and ratio recomputed from the
rows, the .md's sections and wording, a real PNG.

  move-pages-check.py DIR --thp 1,2,4 --base 512,1024 --runs 5 \
      --patched yes|no [--batch-pages N] [--handoff LIST] [--profile yes|no]

--batch-pages and --handoff are what the run was given (a "bound"
configuration is expected when N is not the kernel's default; handoff rows
for every LIST entry).  Prints each problem and exits 1 if there is any.
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the checkout
import move_pages_analysis as an  # noqa: E402

ROW_KEYS = {"kernel", "mode", "threads", "push_pull", "folio_kb", "folios",
            "gbps_median", "gbps_min", "gbps_max", "runs"}
TOP_KEYS = {"lab", "rows", "memcpy", "targets", "bound_effect",
            "threads_effect", "handoff", "profile", "vmstat", "notes"}
VANILLA = ("vanilla", "serial", 1, "-")
DEFAULT = ("patched", "default", 1, "-")
BOUND = ("patched", "bound", 1, "-")


class Checker:
    def __init__(self):
        self.errs = []

    def err(self, msg):
        self.errs.append(msg)

    def ratio(self, what, got, want):
        if not isinstance(got, (int, float)) or abs(got - want) > 0.0015:
            self.err(f"{what}: ratio {got!r}, the rows give {want:.3f}")


def expected_configs(a, vcpus, knobs):
    configs = [VANILLA]
    if a.patched == "no":
        return configs
    configs.append(DEFAULT)
    dflt = knobs.get("defaults", {}).get("migrate_batch_pages")
    if a.batch_pages is not None and a.batch_pages != dflt:
        configs.append(BOUND)
    configs += [("patched", "mt", t, pp)
                for pp in ("push", "pull") for t in range(2, vcpus + 1)]
    return configs


def check_rows(c, a, doc, configs, cells, handoff_cells):
    want = {k + cell for k in configs for cell in cells}
    want |= {k + (4, n) for n in handoff_cells
             for k in (("patched", "handoff", 1, "-"),
                       ("patched", "handoff", 2, "push"))}
    seen = set()
    med = {}
    for i, r in enumerate(doc["rows"]):
        if set(r) != ROW_KEYS:
            c.err(f"row {i}: keys {sorted(r)}")
            continue
        key = (r["kernel"], r["mode"], r["threads"], r["push_pull"],
               r["folio_kb"], r["folios"])
        if key in seen:
            c.err(f"row {i}: {key} appears twice")
        seen.add(key)
        if key not in want:
            c.err(f"row {i}: unexpected {key}")
        v = (r["gbps_min"], r["gbps_median"], r["gbps_max"])
        if not all(isinstance(x, (int, float)) for x in v) or \
                not 0 < v[0] <= v[1] <= v[2]:
            c.err(f"row {i}: not 0 < min <= median <= max: {v}")
        if r["runs"] != a.runs:
            c.err(f"row {i}: runs {r['runs']} != {a.runs}")
        med[key] = r["gbps_median"]
    for key in sorted(want - seen, key=str):
        c.err(f"missing row {key}")
    return med


def check_targets(c, a, doc, med, cells, vcpus, accel):
    t = doc["targets"]
    if sorted(t) != ["P1", "P2", "P3"]:
        c.err(f"targets {sorted(t)} != P1..P3")
        return
    patched = a.patched == "yes" and a.runs >= an.MIN_RUNS
    measured = {
        "P1": patched and accel == "kvm" and
        any(k == 2048 and n >= 64 for k, n in cells),
        "P2": patched,
        "P3": patched and any(k == 4 and n >= 4096 for k, n in cells),
    }
    for name, rec in t.items():
        res = rec.get("result")
        if res not in ("pass", "fail", "not measured"):
            c.err(f"{name}: result {res!r}")
        if (res != "not measured") != measured[name]:
            c.err(f"{name}: result {res!r} but measured should be "
                  f"{measured[name]}")
        if res == "not measured" and not rec.get("why"):
            c.err(f"{name}: not measured without saying why")
        if res in ("pass", "fail"):
            ok = all(x["ratio"] >= rec["min_ratio"] for x in rec["cells"])
            if (res == "pass") != ok or not rec["cells"]:
                c.err(f"{name}: {res} does not follow from its cells")
    if accel != "kvm" and t["P1"].get("result") != "not measured":
        c.err("P1 judged under TCG: a copy speed-up is not measured there")
    # P2 from the rows: patched default over vanilla, every cell.
    if patched:
        got = {(x["folio_kb"], x["folios"]): x["ratio"]
               for x in t["P2"]["cells"]}
        for cell in cells:
            if cell not in got:
                c.err(f"P2 lacks cell {cell}")
                continue
            c.ratio(f"P2 {cell}", got[cell],
                    med[DEFAULT + cell] / med[VANILLA + cell])


def check_effects(c, a, doc, med, configs, cells, accel):
    b, t = doc["bound_effect"], doc["threads_effect"]
    if BOUND in configs:
        if b.get("result") != "reported" or len(b["cells"]) != len(cells):
            c.err(f"bound_effect: {b.get('result')!r} with "
                  f"{len(b.get('cells', []))} cells, want {len(cells)}")
        for x in b.get("cells", []):
            cell = (x["folio_kb"], x["folios"])
            c.ratio(f"bound effect {cell}", x["ratio"],
                    med[BOUND + cell] / med[DEFAULT + cell])
    elif b.get("result") != "not measured" or not b.get("why"):
        c.err(f"bound_effect: {b.get('result')!r} without a raised bound")
    mts = [k for k in configs if k[1] == "mt"]
    den = BOUND if BOUND in configs else DEFAULT
    if mts:
        if t.get("result") != "reported" or \
                len(t["cells"]) != len(cells) * len(mts):
            c.err(f"threads_effect: {t.get('result')!r} with "
                  f"{len(t.get('cells', []))} cells, want "
                  f"{len(cells) * len(mts)}")
        for x in t.get("cells", []):
            cell = (x["folio_kb"], x["folios"])
            k = ("patched", "mt", x["threads"], x["push_pull"])
            c.ratio(f"threads effect {k} {cell}", x["ratio"],
                    med[k + cell] / med[den + cell])
            for f in ("pages_copied_ahead", "pages_by_workers", "worker_ns"):
                if not isinstance(x.get(f), int):
                    c.err(f"threads effect {k} {cell}: {f} {x.get(f)!r}")
    elif t.get("result") != "not measured":
        c.err(f"threads_effect: {t.get('result')!r} without mt rows")
    if accel != "kvm" and mts and t.get("note") != an.TCG_NOTE:
        c.err(f"threads_effect under TCG lacks the note {an.TCG_NOTE!r}")


def check_handoff(c, doc, handoff_cells, accel):
    h = doc["handoff"]
    got = [x["folios"] for x in h.get("cells", [])]
    if got != sorted(handoff_cells):
        c.err(f"handoff cells {got} != {sorted(handoff_cells)}")
    if (h.get("result") == "reported") != bool(handoff_cells):
        c.err(f"handoff: {h.get('result')!r}")
    if h.get("timing") != f"{accel.upper()} timing":
        c.err(f"handoff timing label {h.get('timing')!r}")
    if handoff_cells and not isinstance(h.get("threshold_kb"), int):
        c.err(f"handoff threshold_kb {h.get('threshold_kb')!r}")
    for x in h.get("cells", []):
        if abs(x["mt2_us"] - x["mt_off_us"] - x["diff_us"]) > 0.15:
            c.err(f"handoff {x['folios']}: difference {x['diff_us']} != "
                  f"{x['mt2_us']} - {x['mt_off_us']}")
        if not isinstance(x.get("pages_by_workers"), int) or \
                not isinstance(x.get("worker_ns"), int):
            c.err(f"handoff {x['folios']}: no worker counters")


def check_vmstat(c, a, doc):
    for v in doc["vmstat"]:
        if v["kernel"] == "patched" and \
                "pgmigrate_copy_worker_ns" not in v["counters"]:
            c.err(f"vmstat of {v['config']} lacks pgmigrate_copy_worker_ns")
        if v["kernel"] == "vanilla" and \
                any(k.startswith("pgmigrate_copy") for k in v["counters"]):
            c.err(f"vanilla vmstat has copy counters: {v['counters']}")


def check_profile(c, a, doc):
    p = doc["profile"]
    if a.profile == "no":
        if p:
            c.err("profile entries without --profile")
        return
    kernels = {x["kernel"] for x in p}
    want = {"vanilla"} | ({"patched"} if a.patched == "yes" else set())
    if kernels != want:
        c.err(f"profiles of {sorted(kernels)}, want {sorted(want)}")
    for x in p:
        total = x["total_us"]
        if not total:
            c.err(f"profile {x['config']}: no migrate_pages_batch time")
            continue
        top = sum(ph["share"] or 0 for ph in x["phases"]
                  if not ph["phase"].startswith("of which"))
        if abs(top - 1) > 0.01:
            c.err(f"profile {x['config']}: phase shares add up to {top:.3f}")


def check_md(c, a, doc, accel):
    with open(os.path.join(a.dir, "move-pages.md")) as f:
        md = f.read()
    want = ["## 2 MB THP folios", "## 4 KB folios",
            "| folios | MiB | vanilla", "## memcpy reference", "**P1 ",
            "**P2 ", "**P3 ", "Date: ", "Command: `tests/lab/bench move-pages",
            "## The bound's own effect", "## The copy threads' effect",
            f"## Handoff cost: a chunk to a worker and back ({accel.upper()} "
            "timing"]
    if accel != "kvm":
        want.append("**P1 NOT MEASURED**")
        if a.patched == "yes":
            want.append(f"**{an.TCG_NOTE}**")
    if a.profile == "yes":
        want.append("relative shares")
    for s in want:
        if s not in md:
            c.err(f"move-pages.md lacks {s!r}")
    if accel != "kvm":
        # Under TCG, "speed-up" only ever with a "not" before it in the
        # same sentence and line.
        for m in re.finditer(r"speed-ups?", md):
            pre = re.split(r"[.\n]", md[max(0, m.start() - 40):m.start()])[-1]
            if not re.search(r"\bnot\b", pre):
                c.err(f"move-pages.md presents a speed-up: "
                      f"{pre + m.group(0)!r}")
    missing = doc.get("notes", {}).get("patched_missing")
    if missing and missing not in md:
        c.err("move-pages.md does not say why the patched rows are missing")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--thp", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--patched", choices=["yes", "no"], required=True)
    ap.add_argument("--batch-pages", type=int)
    ap.add_argument("--handoff", default="none")
    ap.add_argument("--profile", choices=["yes", "no"], default="no")
    a = ap.parse_args()
    c = Checker()

    with open(os.path.join(a.dir, "move-pages.json")) as f:
        doc = json.load(f)
    if set(doc) != TOP_KEYS:
        c.err(f"top level keys {sorted(doc)} != {sorted(TOP_KEYS)}")
        return report(c.errs)

    lab = doc["lab"]
    if set(lab) != {"accel", "vcpus"}:
        c.err(f"lab keys {sorted(lab)} != ['accel', 'vcpus']")
    with open(os.path.join(a.dir, "raw", "vanilla-1", "accel")) as f:
        accel = f.read().strip()
    if lab.get("accel") != accel:
        c.err(f"lab.accel {lab.get('accel')!r} != {accel!r} from tests/lab/vm")
    vcpus = lab.get("vcpus")
    if not isinstance(vcpus, int) or vcpus < 1:
        c.err(f"lab.vcpus {vcpus!r} is not a positive integer")
        return report(c.errs)

    knobs = doc["notes"].get("knobs", {})
    if (a.patched == "yes") != bool(knobs):
        c.err(f"notes.knobs {knobs!r} with --patched {a.patched}")
    configs = expected_configs(a, vcpus, knobs)
    cells = [(2048, int(n)) for n in a.thp.split(",")] + \
            [(4, int(n)) for n in a.base.split(",")]
    handoff_cells = [] if a.handoff == "none" or a.patched == "no" or \
        vcpus < 2 else [int(n) for n in a.handoff.split(",")]
    med = check_rows(c, a, doc, configs, cells, handoff_cells)
    if c.errs:
        return report(c.errs)

    mt = sorted(m.get("threads") for m in doc["memcpy"])
    if mt != list(range(1, vcpus + 1)):
        c.err(f"memcpy threads {mt} != 1..{vcpus}")
    for m in doc["memcpy"]:
        if set(m) != {"threads", "gbps_median"} or not m["gbps_median"] > 0:
            c.err(f"memcpy entry {m}")

    check_targets(c, a, doc, med, cells, vcpus, accel)
    check_effects(c, a, doc, med, configs, cells, accel)
    check_handoff(c, doc, handoff_cells, accel)
    check_vmstat(c, a, doc)
    check_profile(c, a, doc)
    missing = doc["notes"].get("patched_missing")
    if (missing is None) != (a.patched == "yes"):
        c.err(f"notes.patched_missing is {missing!r} with --patched "
              f"{a.patched}")
    check_md(c, a, doc, accel)
    with open(os.path.join(a.dir, "move-pages.png"), "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            c.err("move-pages.png is not a PNG")
    return report(c.errs)


def report(errs):
    for e in errs:
        print(f"move-pages-check: {e}", file=sys.stderr)
    if errs:
        return 1
    print("move-pages-check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
