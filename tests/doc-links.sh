#!/bin/bash
# Every relative link in the documentation resolves: README.md, docs/*.md and
# the README.md of each top-level directory.  A link to a file or directory
# must name one that exists; a #fragment must name a heading of the target
# Markdown file (GitHub's anchors: lower case, punctuation dropped, spaces
# as hyphens).  Links inside code are not links.  Prints each broken link as
# FILE:LINE: TARGET: reason and exits 1 if there is one.
#   doc-links.sh SOURCE_DIR
set -u
src=${1:?usage: doc-links.sh SOURCE_DIR}
cd "$src" || exit 1
shopt -s nullglob
files=(README.md docs/*.md */README.md)
[ ${#files[@]} -gt 0 ] || { echo "doc-links: no Markdown files in $src"; exit 1; }
exec python3 - "${files[@]}" <<'PY'
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def strip_code(line):
    return re.sub(r"`[^`]*`", "", line)


def lines_outside_fences(path):
    fence = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            if not fence:
                yield n, line.rstrip("\n")


def anchors(path):
    out = set()
    for _, line in lines_outside_fences(path):
        m = HEADING.match(line)
        if not m:
            continue
        # GitHub keeps the text of code spans and drops other punctuation.
        s = m.group(1).strip().lower().replace("`", "")
        s = re.sub(r"[^\w\- ]", "", s)
        base = s.replace(" ", "-")
        a, k = base, 1
        while a in out:
            a = "%s-%d" % (base, k)
            k += 1
        out.add(a)
    return out


bad = 0
for doc in sys.argv[1:]:
    for n, line in lines_outside_fences(doc):
        for target in LINK.findall(strip_code(line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:, man: ...
            path, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            why = None
            if not os.path.exists(dest):
                why = "no such file"
            elif frag:
                if not dest.endswith(".md") or os.path.isdir(dest):
                    why = "fragment on a file that is not Markdown"
                elif frag not in anchors(dest):
                    why = "no heading with anchor #%s in %s" % (frag, dest)
            if why:
                print("%s:%d: %s: %s" % (doc, n, target, why))
                bad += 1
print("doc-links: %d file(s), %s" % (len(sys.argv) - 1,
      "%d broken link(s)" % bad if bad else "every relative link resolves"))
sys.exit(1 if bad else 0)
PY
