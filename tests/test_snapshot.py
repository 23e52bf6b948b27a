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
    host_alloc / dev_alloc (or a wrapper), the outer frame the run: named "<program> --impl <impl>", at the source
    line that began it (a call of snapshot_begin), so the viewer's filename:line:name reads as a stack;
  - the addresses are laid out as PyTorch's CUDA caching allocator lays them (lessons/runner/snapshot_allocator.h), by a
    replay of its rules written here from the trace alone: every block lies inside a reserved segment and overlaps
    no other; a segment is reserved (segment_alloc) only when no free range of its pool fits the request, at the
    size the rules give (2 MiB small pool; 20 MiB, or the request rounded up to 2 MiB, large pool), and the
    request takes the segment's start; otherwise it takes the smallest free range that fits (lowest address among
    equals); before each implementation after the first every empty segment is released (segment_free);
  - the segments at the end are the replay's: the same addresses and sizes, the same allocated blocks with their
    requests, allocated_size / requested_size their sums, so the reader's `stats` reports the bytes still live;
  - at each implementation's peak the segments reserved hold it (and the report prints how much more they are).
Then, with the interpreter that has torch (this one, TORCH_PYTHON, or /usr/bin/python3): where it is PyTorch >= 2.1
its own reader checks the snapshots, torch.cuda._memory_viz's `stats` (segsum: total_reserved, total_allocated),
`trace` (every allocation named by its segment, none as MEM[addr]) and trace_plot (the viewer's page); PyTorch 1.13
cannot read the 2.x layout (its _memory_viz predates device_traces and block frames), so there it is skipped with a
message, as it is with no torch at all.
Exits 1 on the first disagreement.
"""
import csv
import json
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


RUNS_SEEN = set()


def check_run(e):
    """The outer frame is the run: its name the program and --impl, its filename:line the driver's source line that
    began it (snapshot_begin), not an event number."""
    f = e["frames"][-1]
    if " --impl " not in f["name"] or not f["name"].startswith("lesson"):
        fail(f"{e['action']}: the outer frame's name '{f['name']}' is not '<program> --impl <impl>'")
    key = (f["filename"], f["line"])
    if key not in RUNS_SEEN:
        path = os.path.join(ROOT, f["filename"])
        if not os.path.isfile(path) or f["line"] < 1:
            fail(f"{f['name']}: the run's frame {f['filename']}:{f['line']} is no source line here")
        if "snapshot_begin" not in open(path).read().split("\n")[f["line"] - 1]:
            fail(f"{f['name']}: {f['filename']}:{f['line']} does not begin a run (no snapshot_begin)")
        RUNS_SEEN.add(key)
    return f["name"].rsplit("--impl ", 1)[1]


# PyTorch's caching-allocator constants (c10/cuda/CUDACachingAllocator.cpp), as lessons/runner/snapshot_allocator.h states them
MIN_BLOCK, SMALL_SIZE, SMALL_BUFFER = 512, 1 << 20, 2 << 20
LARGE_BUFFER, MIN_LARGE_ALLOC, ROUND_LARGE = 20 << 20, 10 << 20, 2 << 20


def rounded(n):
    return max(MIN_BLOCK, -(-n // MIN_BLOCK) * MIN_BLOCK)


def segment_size(r):
    return SMALL_BUFFER if r <= SMALL_SIZE else LARGE_BUFFER if r < MIN_LARGE_ALLOC else -(-r // ROUND_LARGE) * ROUND_LARGE


class Layout:
    """One domain's segments, replayed from its trace: {segment address: [size, small pool?, {block address:
    [extent, requested bytes]}]}. Free blocks are the gaps between allocated ones (the allocator merges free
    neighbours at once)."""

    def __init__(self):
        self.segs = {}
        self.pending = None  # a segment_alloc waiting for the allocation it was reserved for

    def reserved(self):
        return sum(g[0] for g in self.segs.values())

    def gaps(self, small):
        """(size, address) of every free range of a pool."""
        for a, (size, is_small, blocks) in self.segs.items():
            if is_small != small:
                continue
            pos = a
            for b in sorted(blocks):
                if b > pos:
                    yield (b - pos, pos)
                pos = b + blocks[b][0]
            if pos < a + size:
                yield (a + size - pos, pos)

    def segment_of(self, addr):
        for a, g in self.segs.items():
            if a <= addr < a + g[0]:
                return a
        fail(f"address {addr:#x} lies in no reserved segment")

    def event(self, e, where):
        act, addr, size = e["action"], e["addr"], e["size"]
        if self.pending is not None and act != "alloc":
            fail(f"{where}: segment_alloc at {self.pending[0]:#x} not followed by the allocation it was for")
        if act == "segment_alloc":
            if any(a < addr + size and addr < a + g[0] for a, g in self.segs.items()):
                fail(f"{where}: segment {addr:#x} overlaps a reserved one")
            self.pending = (addr, size)
        elif act == "segment_free":
            if addr not in self.segs or self.segs[addr][2]:
                fail(f"{where}: segment_free of {addr:#x}, which is not an empty reserved segment")
            del self.segs[addr]
        elif act == "alloc":
            r = rounded(size)
            small = r <= SMALL_SIZE
            fits = sorted(g for g in self.gaps(small) if g[0] >= r)
            if self.pending is not None:
                seg_addr, seg_size = self.pending
                self.pending = None
                if fits:
                    fail(f"{where}: a new segment for {size:,} bytes although the free range at {fits[0][1]:#x} "
                         f"({fits[0][0]:,} bytes) fits")
                if seg_size != segment_size(r) or addr != seg_addr:
                    fail(f"{where}: {size:,} bytes reserved a {seg_size:,}-byte segment at {seg_addr:#x} and took "
                         f"{addr:#x}; the rules give {segment_size(r):,} bytes and its start")
                self.segs[seg_addr] = [seg_size, small, {}]
                gap = seg_size
            else:
                if not fits or fits[0][1] != addr:
                    fail(f"{where}: {size:,} bytes at {addr:#x}, not in the best-fitting free range "
                         f"{fits[0] if fits else None} of the {'small' if small else 'large'} pool")
                gap = fits[0][0]
            rest = gap - r
            split = rest >= MIN_BLOCK if small else rest > SMALL_SIZE
            self.segs[self.segment_of(addr)][2][addr] = [r if split else gap, size]
        elif act == "free_completed":
            blocks = self.segs[self.segment_of(addr)][2]
            if blocks.pop(addr, [0, None])[1] != size:
                fail(f"{where}: free of {addr:#x} ({size:,} bytes) is no allocated block of the layout")


def replay(trace):
    """{impl: [live bytes after each alloc/free_completed, from that impl's first event]}, the domain's Layout at
    the end, and {impl: (peak live, segments reserved then, largest segment)}."""
    sizes, live, out, start, prev = {}, 0, {}, {}, None
    layout, at_peak = Layout(), {}
    for e in trace:
        impl = check_run(e)  # the outer frame: the run
        layout.event(e, f"{impl} {e['action']}")
        if e["action"] in ("segment_alloc", "segment_free"):
            continue
        check_site(e)
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
        reserved = layout.reserved()
        if reserved < live:
            fail(f"{impl}: {live:,} bytes live in {reserved:,} bytes of segments")
        if live - start[impl] > at_peak.get(impl, (-1,))[0]:
            at_peak[impl] = (live - start[impl], reserved, max(g[0] for g in layout.segs.values()))
    if sizes:
        fail(f"{len(sizes)} block(s) never freed")
    return out, layout, at_peak


def check_segments(snap, layouts):
    """The snapshot's segments are the replay's at the end, block for block; returns (reserved, allocated) bytes as
    the reader's `stats` counts them (allocated: the requests of the active blocks)."""
    want = {(d, a): g for d, lay in enumerate(layouts) for a, g in lay.segs.items()}
    got = {(s["device"], s["address"]): s for s in snap["segments"]}
    if got.keys() != want.keys():
        fail(f"segments at the end {sorted(got)}, the replay holds {sorted(want)}")
    reserved = allocated = 0
    for key, seg in got.items():
        size, small, blocks = want[key]
        active = {b["address"]: [b["size"], b["requested_size"]] for b in seg["blocks"]
                  if b["state"] == "active_allocated"}
        if seg["total_size"] != size or seg["segment_type"] != ("small" if small else "large") or active != blocks:
            fail(f"segment {key[1]:#x}: {seg['total_size']:,} bytes, {seg['segment_type']}, active {active}; "
                 f"the replay: {size:,}, {'small' if small else 'large'}, {blocks}")
        if (seg["allocated_size"], seg["requested_size"]) != (sum(b[0] for b in blocks.values()),
                                                            sum(b[1] for b in blocks.values())):
            fail(f"segment {key[1]:#x}: allocated_size/requested_size are not its blocks' sums")
        reserved += size
        allocated += sum(b[1] for b in blocks.values())
    return reserved, allocated


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
    got, layouts, at_peak = {}, [], {}
    for d, trace in enumerate(snap["device_traces"]):
        lives_by_impl, layout, peaks = replay(trace)
        layouts.append(layout)
        for impl, lives in lives_by_impl.items():
            got[(impl, DOMAINS[d])] = lives
            at_peak[(impl, DOMAINS[d])] = peaks[impl]
    reserved, allocated = check_segments(snap, layouts)
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
            _, held, largest = at_peak[(r["impl"], domain)]
            print(f"lesson {lesson} {r['impl']:8} {len(got[(r['impl'], domain)]):6} events, live bytes equal to the "
                  f"timeline at each, peak {peak:,} = the tracker's, held in {held:,} bytes of segments "
                  f"({held / peak:.2f}x; largest {largest:,})")
    print(f"lesson {lesson}: laid out as the caching allocator would; at the end {len(snap['segments'])} segment(s), "
          f"{reserved:,} bytes reserved, {allocated:,} allocated")
    return paths["pickle"], reserved, allocated


# Run by the interpreter that has torch: PyTorch's own reader on each snapshot. argv[1]: JSON {path: [reserved,
# allocated]}. Prints one JSON line: {"skip": why} or {path: [what failed, ...]}.
READER = r"""
import json, os, pickle, sys
import torch
from torch.cuda import _memory_viz as mv
version = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
if version < (2, 1) or not hasattr(mv, "trace_plot"):
    print(json.dumps({"skip": f"PyTorch {torch.__version__} at {sys.executable}: its _memory_viz reads only the "
                              "layout of PyTorch < 2.1 (needs >= 2.1)"}))
    sys.exit(0)
result = {}
for path, (reserved, allocated) in json.loads(sys.argv[1]).items():
    snap = pickle.load(open(path, "rb"))
    bad, stats, trace = [], mv.segsum(snap), mv.trace(snap)
    for name, want in (("total_reserved", reserved), ("total_allocated", allocated)):
        if f"{name}: {mv.Bytes(want)}" not in stats:
            bad.append(f"stats has no '{name}: {mv.Bytes(want)}': {stats}")
    if "MEM[" in trace:
        bad.append("trace names a block MEM[addr] (outside every segment)")
    with open(path + ".html", "w") as f:
        f.write(mv.trace_plot(snap))
    result[path] = bad
print(json.dumps({"torch": f"PyTorch {torch.__version__} at {sys.executable}", "result": result}))
"""


def torch_python():
    """The interpreter that has torch: this one, TORCH_PYTHON, or Debian's /usr/bin/python3 (python3-torch)."""
    for c in (sys.executable, os.environ.get("TORCH_PYTHON"), "/usr/bin/python3"):
        if c and c != "none" and subprocess.run([c, "-c", "import torch"], capture_output=True).returncode == 0:
            return c
    return None


def check_with_pytorch(results):
    """PyTorch's own reader (torch.cuda._memory_viz, PyTorch >= 2.1): `stats` reports the bytes reserved and
    allocated the replay found, `trace` places every allocation in a segment, trace_plot renders the viewer's
    page. Skipped, with a message, where no interpreter has PyTorch >= 2.1."""
    py = torch_python()
    if py is None:
        print("test_snapshot: no interpreter here imports torch: PyTorch's own reader not run (skipped)")
        return
    out = subprocess.run([py, "-c", READER, json.dumps(results)], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"PyTorch's reader ({py}) failed on the snapshots:\n{out.stderr[-3000:]}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if "skip" in got:
        print(f"test_snapshot: {got['skip']}: PyTorch's own reader not run (skipped)")
        return
    for path, bad in got["result"].items():
        if bad:
            fail(f"{got['torch']} reads {os.path.basename(path)} differently: {'; '.join(bad)}")
    print(f"test_snapshot: {got['torch']}: _memory_viz stats, trace and trace_plot read every snapshot, "
          "reserved and allocated bytes as replayed")


def main():
    bin_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for lesson in range(1, 6):
            path, reserved, allocated = check_lesson(bin_dir, lesson, tmp)
            results[path] = [reserved, allocated]
        check_with_pytorch(results)
    print("test_snapshot: every lesson's snapshot replays to the tracker's timeline and peak, laid out as "
          "PyTorch's caching allocator would")
    return 0


if __name__ == "__main__":
    sys.exit(main())
