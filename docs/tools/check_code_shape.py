#!/usr/bin/env python3
"""The product code's shape (issue 47), counted: make check-docs runs it.

    python3 docs/tools/check_code_shape.py [--list]

In lessons/, kernels/, optimized/ and naive/ (the product folders):
  emulator   no CUDA_EMU, emu_ or EMU_: the emulator hooks in through the headers it shadows (tests/cuda_emu/)
  header     a CUDA version file (kernels/<op>_vN.cu) opens with a header of at most 6 lines
             ("vN: the idea. Changed from vN-1: ...")
  width      no line over 110 columns
  figures    no measured figure, GPU name or date in a code comment (the docs and docs/results/ hold them)
and .ci/run's header (the comment lines after #!) at most 12 lines; its history is git log.

Files not converted yet are listed in docs/tools/code_shape_allow.txt, one `<check> <path>` a line: their failures
are counted and printed as allowed, not failed; an allowed file that passes is an error, so the list only shrinks.
--list prints every failure, allowed or not.
"""
import glob
import os
import re
import sys

FOLDERS = ["lessons", "kernels", "optimized", "naive"]
ALLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "code_shape_allow.txt")
EMU = re.compile(r"CUDA_EMU|emu_|EMU_")
VERSION_FILE = re.compile(r"^kernels/[a-z_]+_v\d+\.cu$")
HEADER_MAX, WIDTH_MAX, CI_HEADER_MAX = 6, 110, 12
GPU = re.compile(r"\b(H100|H200|A100|A6000|A10G?|V100|T4|L4|L40S?|RTX ?\d{4}|GH200|B200)\b")
FIGURE = re.compile(r"\b\d+(\.\d+)? ?(ms|us|µs|ns|GB/s|TB/s|[GT]FLOP/s|GiB/s)\b|\b\d+(\.\d+)?x (faster|slower|behind|ahead)\b"
                    r"|\b\d+(\.\d+)?% of (the )?(roofline|peak)\b|\b20\d\d-\d\d-\d\d\b")


def product_files():
    out = []
    for d in FOLDERS:
        for p in glob.glob(os.path.join(d, "**", "*"), recursive=True):
            if os.path.isfile(p) and p.endswith((".c", ".h", ".cu", ".cuh")):
                out.append(p)
    return sorted(out)


def comments(text):
    """(line number, comment text) for every line that holds part of a /* */ or // comment."""
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif c == '"' or c == "'":  # a string or character literal: skip it
            q, i = c, i + 1
            while i < n and text[i] != q and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i:j]))
            i = j
            continue
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k, part in enumerate(text[i:j].split("\n")):
                out.append((line + k, part))
            line += text[i:j].count("\n")
            i = j
            continue
        i += 1
    return out


def header_lines(text):
    """lines of the comment block a file opens with (0 if it opens with code)"""
    t = text.lstrip("\n")
    if not t.startswith("/*"):
        return 0
    return t[: t.find("*/") + 2].count("\n") + 1


def failures():
    """[(check, path, why)]"""
    out = []
    for p in product_files():
        text = open(p, encoding="utf-8").read()
        for k, l in enumerate(text.split("\n"), 1):
            if EMU.search(l):
                out.append(("emulator", p, f"{p}:{k}: {l.strip()[:80]}"))
            if len(l) > WIDTH_MAX:
                out.append(("width", p, f"{p}:{k}: {len(l)} columns"))
        if VERSION_FILE.match(p) and header_lines(text) > HEADER_MAX:
            out.append(("header", p, f"{p}: its header is {header_lines(text)} lines (at most {HEADER_MAX})"))
        for k, c in comments(text):
            m = GPU.search(c) or FIGURE.search(c)
            if m:
                out.append(("figures", p, f"{p}:{k}: '{m.group(0)}' in a comment"))
    ci = open(".ci/run", encoding="utf-8").read().split("\n")
    n = 0
    for l in ci[1:]:
        if not l.startswith("#"):
            break
        n += 1
    if n > CI_HEADER_MAX:
        out.append(("ci-header", ".ci/run", f".ci/run: its header is {n} comment lines (at most {CI_HEADER_MAX})"))
    return out


def main():
    allowed = set()
    if os.path.exists(ALLOW):
        for l in open(ALLOW):
            l = l.split("#")[0].split()
            if len(l) == 2:
                allowed.add((l[0], l[1]))
    fails = failures()
    bad = [f for f in fails if (f[0], f[1]) not in allowed]
    seen = {(f[0], f[1]) for f in fails}
    stale = sorted(a for a in allowed if a not in seen)
    show_all = "--list" in sys.argv
    for f in fails if show_all else bad:
        print(("allowed " if (f[0], f[1]) in allowed else "FAIL    ") + f[2])
    for a in stale:
        print(f"FAIL    {a[0]} {a[1]}: passes now: delete its line from {os.path.relpath(ALLOW)}")
    counts = {}
    for f in fails:
        key = "allowed" if (f[0], f[1]) in allowed else "failed"
        counts.setdefault(f[0], {"failed": 0, "allowed": 0})[key] += 1
    summary = ", ".join(f"{c}: {v['failed']} failed, {v['allowed']} allowed" for c, v in sorted(counts.items()))
    print(f"code shape: {summary or 'every check passes'}; {len(allowed)} allow-list entries")
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
