#!/usr/bin/env python3
"""What a kernel's warps waited for on the GPU: ncu's warp-stall sampling, summed over its SASS instructions.

    python3 docs/tools/gpu_stalls.py FILE...     ncu's source page as CSV (--page source --print-source sass --csv),
                                                 plain or .gz (docs/results/<gpu>/*/sampling_*.txt.gz), or its
                                                 details page (docs/results/<gpu>/stalls/*.txt: the launch, the
                                                 warps per scheduler and the stall reasons ncu names)

Per kernel: the share of the samples by stall reason (ncu's names; the common ones: barrier, a warp waiting at a
block barrier, which a grid.sync also uses; long_sb, waiting for a load from L1TEX, L2 or DRAM; short_sb, for a
shared-memory or other MIO result; wait, a fixed-latency dependency; selected, issuing; not_selected, ready but
another warp issued; mio, the MIO queue full; math, a pipe busy), the warp instructions it executed by opcode
(IMAD, IADD3, LEA, VIADD, ISETP, SEL, LOP3, SHF, MOV are index and address arithmetic), and the instruction whose
samples are most.
"""
import collections
import csv
import gzip
import io
import os
import re
import sys

INDEXING = {"IMAD", "IADD3", "LEA", "VIADD", "ISETP", "SEL", "LOP3", "SHF", "MOV", "IABS", "ULDC", "S2R", "S2UR",
            "CS2R", "UIADD3", "UMOV", "ULEA", "UISETP", "USEL", "ULOP3", "USHF"}


def read_source_csv(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"Address"')), None)
    if start is None:
        sys.exit(f"gpu_stalls.py: {path}: no source page in it")
    rows = list(csv.reader(io.StringIO("\n".join(l for l in lines[start:] if l.startswith('"')))))
    return rows[0], rows[1:]


def number(s):
    try:
        return float(s.replace(",", "")) if s not in ("", "-") else 0.0
    except ValueError:
        return 0.0


def summary(path):
    head, rows = read_source_csv(path)
    col = {c: i for i, c in enumerate(head)}
    reasons = [c for c in head if c.startswith("stall_") and "Not Issued" not in c]
    by_reason, by_op, samples_op = collections.Counter(), collections.Counter(), collections.Counter()
    top = []
    for r in rows:
        words = r[col["Source"]].split()
        if not words:
            continue
        op = (words[1] if words[0].startswith("@") and len(words) > 1 else words[0]).split(".")[0]
        n = number(r[col["Instructions Executed"]])
        s = number(r[col["Warp Stall Sampling (All Samples)"]])
        by_op[op] += n
        samples_op[op] += s
        for c in reasons:
            by_reason[c[len("stall_"):]] += number(r[col[c]])
        top.append((s, " ".join(words)))
    samples, executed = sum(by_reason.values()), sum(by_op.values())
    name = os.path.basename(path).replace(".gz", "")
    print(f"{name}: {samples:,.0f} samples, {executed:,.0f} warp instructions executed")
    print("  stalls: " + ", ".join(f"{k} {v / samples:.0%}" for k, v in by_reason.most_common(6)))
    print("  executed: " + ", ".join(f"{k} {v / executed:.1%}" for k, v in by_op.most_common(8)))
    index = sum(v for k, v in by_op.items() if k in INDEXING)
    fma = sum(v for k, v in by_op.items() if k in ("FFMA", "HMMA", "HFMA2"))
    print(f"  index and address arithmetic {index / executed:.0%} of the instructions, "
          f"FFMA/HMMA {fma / executed:.0%}, shared loads (LDS/LDSM) "
          f"{(by_op['LDS'] + by_op['LDSM']) / executed:.0%}, global loads (LDG) {by_op['LDG'] / executed:.0%}")
    s, text = max(top)
    print(f"  most sampled: {text[:70]} ({s / samples:.0%} of the samples)")


DETAILS = ("Duration", "SM Frequency", "Grid Size", "Block Size", "Registers Per Thread", "Achieved Occupancy",
           "Active Warps Per Scheduler", "Eligible Warps Per Scheduler", "Issued Ipc Active",
           "Warp Cycles Per Issued Instruction")


def details(path):
    """The details page's launch and scheduler figures, and each stall ncu's rules name with its cycles."""
    with open(path, errors="replace") as f:
        text = f.read()
    lines = text.splitlines()
    kernel = next((l.strip().split("(")[0] for l in lines if ")x(" in l and "Context" in l), "?")
    got = {}
    for l in lines:
        words = l.split()
        for name in DETAILS:
            if l.strip().startswith(name + " ") and name not in got and words:
                got[name] = f"{words[-1]} {words[-2] if words[-2] not in name.split() else ''}".strip()
    print(f"{os.path.basename(path)}: {kernel}")
    print("  " + ", ".join(f"{k.lower()} {v}" for k, v in got.items()))
    joined = " ".join(text.split())
    for m in re.finditer(r"each warp of this workload spends ([0-9.]+) cycles being stalled (.*?)\. .*?"
                         r"represents about ([0-9.]+)% of the total average of ([0-9.]+) cycles", joined):
        print(f"  {m.group(3)}% of the {m.group(4)} cycles between two issues: {m.group(2)}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        if p.endswith(".txt") and "Section:" in open(p, errors="replace").read():
            details(p)
        else:
            summary(p)


if __name__ == "__main__":
    main()
