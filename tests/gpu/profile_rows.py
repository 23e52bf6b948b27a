#!/usr/bin/env python3
"""profile_rows.py - the GPU report's profile.csv: each kernel's emulated profile (docs/results/emu, make
emu-profile) beside its measured one, in the emulated profiles' columns and kernel names.

Measured files are either Nsight Compute's raw CSV (ncu --csv --page raw --print-kernel-base function, the
metrics of tests/gpu/gpu_report.sh) or, in the rehearsal, the emulator's own profile CSV. Columns: the emulated
profiles' twelve, then source (emulated | ncu | emulator-rehearsal), duration_ns and dram_bytes (mean per launch),
l2_sectors_per_request, achieved_occupancy (% of the warps an SM holds), registers (per thread); ncu's rows are
one per kernel and access kind at location "(kernel)": global load and store (requests, sectors, efficiency =
bytes used per sector fetched) and shared (wavefronts per request: 1 is conflict-free). Exit 1 when a kernel of
the emulated profiles has no measured row: every kernel is to be measured.
"""
import argparse
import csv
import sys
from collections import defaultdict

EMU_COLUMNS = ["kernel", "location", "space", "access", "requests", "requested_bytes", "sectors", "efficiency",
               "wavefronts", "wavefronts_per_request", "launches", "fiber_switches"]
EXTRA = ["source", "duration_ns", "dram_bytes", "l2_sectors_per_request", "achieved_occupancy", "registers"]


def number(text):
    text = (text or "").replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def read_emu(path, source):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and list(rows[0].keys())[:len(EMU_COLUMNS)] != EMU_COLUMNS:
        raise SystemExit(f"{path}: not an emulated profile (columns {list(rows[0].keys())})")
    return [dict(r, source=source) for r in rows]


def read_ncu(path):
    """Nsight Compute's raw page: a header line starting "ID", a units line, one line per profiled launch."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return None
    launches = defaultdict(list)
    for r in csv.DictReader(lines[start:]):
        if not (r.get("ID") or "").strip().isdigit():
            continue  # the units line
        launches[r["Kernel Name"].split("(")[0]].append(r)
    rows = []
    for kernel, runs in sorted(launches.items()):
        def total(metric):
            return sum(number(r.get(metric)) or 0.0 for r in runs)

        def mean(metric):
            values = [number(r.get(metric)) for r in runs if number(r.get(metric)) is not None]
            return sum(values) / len(values) if values else None

        n = len(runs)
        l2_req = total("lts__t_requests_srcunit_tex.sum")
        extra = {
            "source": "ncu",
            "duration_ns": f"{mean('gpu__time_duration.sum'):.0f}" if mean("gpu__time_duration.sum") else "",
            "dram_bytes": f"{(total('dram__bytes_read.sum') + total('dram__bytes_write.sum')) / n:.0f}",
            "l2_sectors_per_request": f"{total('lts__t_sectors_srcunit_tex.sum') / l2_req:.3f}" if l2_req else "",
            "achieved_occupancy": f"{mean('sm__warps_active.avg.pct_of_peak_sustained_active') or 0:.1f}",
            "registers": f"{max(number(r.get('launch__registers_per_thread')) or 0 for r in runs):.0f}",
        }
        for access, op in (("load", "ld"), ("store", "st")):
            req = total(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum")
            sect = total(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum")
            eff = mean(f"smsp__sass_average_data_bytes_per_sector_mem_global_op_{op}.pct")
            rows.append(dict(extra, kernel=kernel, location="(kernel)", space="global", access=access,
                             requests=f"{req:.0f}", sectors=f"{sect:.0f}",
                             efficiency=f"{eff / 100:.4f}" if eff is not None else "", launches=str(n)))
        wave = total("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
        inst = total("smsp__inst_executed_op_shared_ld.sum") + total("smsp__inst_executed_op_shared_st.sum")
        rows.append(dict(extra, kernel=kernel, location="(kernel)", space="shared", access="any",
                         wavefronts=f"{wave:.0f}", requests=f"{inst:.0f}",
                         wavefronts_per_request=f"{wave / inst:.3f}" if inst else "-1.000", launches=str(n)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--reference", nargs="+", required=True, help="docs/results/emu/lesson*_profile.csv")
    ap.add_argument("--measured", nargs="*", default=[])
    ap.add_argument("--source", required=True, help="ncu, or emulator-rehearsal")
    ap.add_argument("--partial", action="store_true",
                    help="the run measured some versions only: keep the measured kernels, none is missing")
    a = ap.parse_args()
    reference = [r for p in a.reference for r in read_emu(p, "emulated")]
    measured = []
    for p in a.measured:
        try:
            rows = read_emu(p, a.source) if a.source != "ncu" else read_ncu(p)
        except (OSError, SystemExit) as e:
            print(f"profile_rows: {p}: {e}", file=sys.stderr)
            rows = None
        if rows is None:
            print(f"profile_rows: {p}: no profile in it", file=sys.stderr)
            continue
        measured += rows
    if a.partial:
        ran = {r["kernel"] for r in measured}
        reference = [r for r in reference if r["kernel"] in ran]
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=EMU_COLUMNS + EXTRA, extrasaction="ignore")
        w.writeheader()
        order = {"emulated": 0}
        for r in sorted(reference + measured, key=lambda r: (r["kernel"], order.get(r["source"], 1))):
            w.writerow(r)
    kernels = {r["kernel"] for r in reference if r["location"] == "(kernel)"}
    seen = {r["kernel"] for r in measured}
    missing = sorted(kernels - seen)
    if missing:
        print(f"profile_rows: {len(missing)} kernels of the emulated profiles not measured: {' '.join(missing)}")
        return 1
    print(f"{len(seen & kernels)} kernels measured ({a.source}) beside their emulated rows, "
          f"{len(measured)} measured rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
