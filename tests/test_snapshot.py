"""--snapshot against the tracker: every lesson's PyTorch memory snapshot replays to the tracker's own record.

    python3 tests/test_snapshot.py [BIN_DIR]        (make test runs it through tests/python_checks.sh)

For each lesson it runs build/lessonN --size small with --timeline, --snapshot and --csv in one run, loads the
snapshot with Python's pickle, and checks:
  - it uses only the opcodes PyTorch's viewer (MemoryViz.js) unpickles, and has the keys the viewer reads;
  - replaying its trace (alloc adds size, free_completed removes the size of the block at that address; each
    free_completed right after a free_requested of the same block) gives the --timeline CSV's live bytes after
    every allocation and free, per implementation and domain (relabels move no bytes and are not in it);
  - the most bytes live at once in the replay is each implementation's peak in the --csv row;
  - every block allocated is freed, at a size equal to its allocation's;
  - each event's inner frame is its allocating call: a source file of this repository and a line that calls
    host_alloc / dev_alloc (or a wrapper), the outer frame the run (program and --impl).
Where torch.cuda._memory_viz has trace_plot (PyTorch >= 2.1) it also renders lesson 3's snapshot (the spike) to
HTML, the page PyTorch's viewer draws.
Exits 1 on the first disagreement.
"""
import csv
import os
import pickle
import pickletools
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
VIEWER_OPCODES = {"PROTO", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "APPENDS", "BINUNICODE", "BININT",
                  "BININT1", "BININT2", "LONG1", "NONE", "STOP", "FRAME", "MEMOIZE", "BINPUT", "BINGET",
                  "SHORT_BINUNICODE"}  # the ones MemoryViz.js's unpickle() handles (a subset of those listed)
DOMAINS = ("host", "device")


def fail(msg):
    sys.exit(f"test_snapshot: FAIL: {msg}")


def run_lesson(bin_dir, lesson, tmp):
    paths = {k: os.path.join(tmp, f"lesson{lesson}.{k}") for k in ("csv", "timeline", "pickle")}
    cmd = [os.path.join(bin_dir, f"lesson{lesson}"), "--size", "small", "--csv", paths["csv"],
           "--timeline", paths["timeline"], "--snapshot", paths["pickle"]]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"{' '.join(cmd)} exited {out.returncode}:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return paths


def check_format(raw, snap):
    used = {op.name for op, _, _ in pickletools.genops(raw)}
    if not used <= VIEWER_OPCODES:
        fail(f"opcodes the viewer cannot read: {sorted(used - VIEWER_OPCODES)}")
    if set(snap) != {"segments", "device_traces"} or len(snap["device_traces"]) != len(DOMAINS):
        fail(f"top level {sorted(snap)} with {len(snap.get('device_traces', []))} traces")
    for seg in snap["segments"]:
        if sum(b["size"] for b in seg["blocks"]) != seg["total_size"]:
            fail(f"segment {seg['address']:#x}: blocks do not add up to total_size")


SITES_SEEN = {}


def check_site(e):
    """The inner frame is the allocating call: a source file of this repository whose line (or one of the two
    before it, for a call written over several lines) calls a tracked allocator."""
    f = e["frames"][0]
    key = (f["filename"], f["line"])
    if key not in SITES_SEEN:
        path = os.path.join(ROOT, f["filename"])
        if not os.path.isfile(path) or f["line"] < 1:
            fail(f"{e['action']} of '{f['name']}': frame {f['filename']}:{f['line']} is no source line here")
        lines = open(path).read().split("\n")[max(0, f["line"] - 3):f["line"]]
        if not any("_alloc" in x for x in lines):
            fail(f"'{f['name']}': {f['filename']}:{f['line']} does not call an allocator: {lines}")
        SITES_SEEN[key] = f["name"]


def replay(trace):
    """{(impl, domain index): [live bytes after each alloc/free_completed, from that impl's first event]}."""
    sizes, live, out, start, prev = {}, 0, {}, {}, None
    for e in trace:
        check_site(e)
        impl = e["frames"][-1]["filename"].rsplit("--impl ", 1)[1]  # the outer frame: the run
        start.setdefault(impl, live)  # what earlier runs left live: this run counts from there
        if e["action"] == "alloc":
            if e["addr"] in sizes:
                fail(f"{impl}: address {e['addr']:#x} allocated twice without a free")
            sizes[e["addr"]] = e["size"]
            live += e["size"]
        elif e["action"] == "free_requested":
            prev = e
            continue
        elif e["action"] == "free_completed":
            if prev is None or prev["addr"] != e["addr"]:
                fail(f"{impl}: free_completed of {e['addr']:#x} without its free_requested just before")
            if sizes.pop(e["addr"], None) != e["size"]:
                fail(f"{impl}: free of {e['addr']:#x} ({e['size']} bytes) matches no allocation of that size")
            live -= e["size"]
        else:
            fail(f"unexpected action {e['action']}")
        prev = None
        out.setdefault(impl, []).append(live - start[impl])
    if sizes:
        fail(f"{len(sizes)} block(s) never freed")
    return out


def timeline_live(path):
    """{(impl, domain): [live_bytes after each alloc/free row]} from the --timeline CSV."""
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["event"] in ("alloc", "free"):
                out.setdefault((r["impl"], r["domain"]), []).append(int(r["live_bytes"]))
    return out


def check_lesson(bin_dir, lesson, tmp):
    paths = run_lesson(bin_dir, lesson, tmp)
    raw = open(paths["pickle"], "rb").read()
    snap = pickle.loads(raw)
    check_format(raw, snap)
    want = timeline_live(paths["timeline"])
    got = {}
    for d, trace in enumerate(snap["device_traces"]):
        for impl, lives in replay(trace).items():
            got[(impl, DOMAINS[d])] = lives
    if got.keys() != want.keys():
        fail(f"lesson {lesson}: runs {sorted(got)} in the snapshot, {sorted(want)} in the timeline")
    for key in want:
        if got[key] != want[key]:
            i = next(i for i, (a, b) in enumerate(zip(got[key], want[key])) if a != b) if len(got[key]) == len(
                want[key]) else min(len(got[key]), len(want[key]))
            fail(f"lesson {lesson} {key}: live bytes differ from the timeline at event {i} "
                 f"({got[key][i:i + 1]} vs {want[key][i:i + 1]}; {len(got[key])} vs {len(want[key])} events)")
    with open(paths["csv"], newline="") as f:
        for r in csv.DictReader(f):
            domain = "device" if (r["impl"], "device") in got else "host"
            peak = max(got[(r["impl"], domain)])
            if peak != int(r["peak_bytes"]):
                fail(f"lesson {lesson} {r['impl']}: the snapshot's peak {peak:,} is not the tracker's {r['peak_bytes']}")
            print(f"lesson {lesson} {r['impl']:8} {len(got[(r['impl'], domain)]):6} events, live bytes equal to the "
                  f"timeline at each, peak {peak:,} = the tracker's")
    return paths["pickle"]


def render(pickles, tmp):
    try:
        from torch.cuda import _memory_viz
    except ImportError:
        print("test_snapshot: torch is not importable here: not rendered")
        return
    if not hasattr(_memory_viz, "trace_plot"):
        print("test_snapshot: this torch's _memory_viz has no trace_plot (PyTorch < 2.1): not rendered")
        return
    for p in pickles:
        html = _memory_viz.trace_plot(pickle.load(open(p, "rb")))
        with open(os.path.join(tmp, os.path.basename(p) + ".html"), "w") as f:
            f.write(html)
    print(f"test_snapshot: rendered {', '.join(map(os.path.basename, pickles))} with "
          "torch.cuda._memory_viz.trace_plot")


def main():
    bin_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    with tempfile.TemporaryDirectory() as tmp:
        pickles = [check_lesson(bin_dir, lesson, tmp) for lesson in range(1, 6)]
        render(pickles[2:3], tmp)
    print("test_snapshot: every lesson's snapshot replays to the tracker's timeline and peak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
