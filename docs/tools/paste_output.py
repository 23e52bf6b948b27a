#!/usr/bin/env python3
"""Paste a command's output, or a file, into a doc between markers, so the doc shows what the code prints today.

    python3 docs/tools/paste_output.py docs/lesson-1.md lesson1-forum -- ./build/lesson1 --size forum
    python3 docs/tools/paste_output.py docs/lesson-1.md gdb-walk --file docs/gdb/lesson-1.gdb
    python3 docs/tools/paste_output.py docs/lesson-2.md lesson2-forum --tensors none -- ./build/lesson2 --size forum
    python3 docs/tools/paste_output.py --table docs/generated.txt [--bin build] [--only DOC[:MARKER],...]

replaces everything between <!-- marker:begin --> and <!-- marker:end --> with the command line and its standard
output in a code block (or the file, as a gdb block). Standard error (e.g. "no CUDA device") is passed through.
--grep REGEX keeps only the lines matching REGEX (said on the block's first line), and, where those show times, the
times' lines (machine, median, spread). A command the table lists twice (a doc's excerpt, its appendix's whole output) runs once. --tensors IMPL,IMPL (or none) keeps only those implementations' "memory by tensor" lists, to keep a doc short; the
block's first line says which were left out (run the command for all of them). --table runs every line
"doc marker [--tensors ...] command..." of a table (the `make docs` list; $BIN is the build directory, $EMU the
CUDA emulator's, build/emu, where `make docs` builds what the table names). --only runs the table's lines for those
docs (or doc:marker pairs) alone: one block regenerated without re-running the others.
"""
import re
import shlex
import subprocess
import sys

import doc_markers as pc  # beside this file
from check_docs import TIMED_ROW  # a table row with its times, as check-docs finds them

EMU_BIN = "build/emu"   # where `make EMU=1` puts the lessons compiled against the CUDA emulator
# The times' own lines (lessons/runner/time_spread.h): "times ...", each row's "  impl  forward M [lo-hi] ..." and
# the load warning. --grep keeps them whenever the lines it keeps show times, so a pasted millisecond figure comes
# with its machine, its spread and, from a loaded machine, the program's own warning that it is unreliable.
TIME_LINES = re.compile(r"^(times\b|  \S+ +forward [0-9.]+ \[|warning: load average)")
RUNS = {}  # command -> its output: the table pastes one run's output into a doc and its appendix


def keep_tensor_lists(text, keep):
    """Drop each "<impl>: memory by tensor" list (up to its blank line) whose impl is not in keep."""
    out, skipping, dropped = [], False, []
    for line in text.split("\n"):
        head = line.split(": memory by tensor")[0] if ": memory by tensor" in line else None
        if head is not None and head not in keep:
            skipping = True
            dropped.append(head)
        if not skipping:
            out.append(line)
        if skipping and not line.strip():
            skipping = False
    return "\n".join(out), dropped


SPREAD = re.compile(r"\[(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)\]")
MAX_SPREAD, TRIES = 2.0, 3  # a median whose slowest run is over twice its fastest says little: run again


def spread(text):
    """The largest slowest/fastest ratio of the "[lo-hi]" spreads the times' lines show (1 where none)."""
    ratios = [float(hi) / float(lo) for line in text.split("\n") if TIME_LINES.match(line)
              for lo, hi in SPREAD.findall(line) if float(lo) > 0]
    return max(ratios, default=1.0)


def run_once(cmd):
    """The command's output, run once per table (a doc's excerpt and its appendix share it). A timed run whose
    spread is over MAX_SPREAD runs again, up to TRIES times; the tightest is kept, and said when still over."""
    key = tuple(cmd)
    if key not in RUNS:
        best = None
        for _ in range(TRIES):
            run = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
            if run.returncode != 0:
                sys.exit(f"paste_output: {' '.join(cmd)} exited {run.returncode}")
            out = run.stdout.rstrip("\n")
            if best is None or spread(out) < spread(best):
                best = out
            if spread(best) <= MAX_SPREAD:
                break
        if spread(best) > MAX_SPREAD:
            print(f"paste_output: {' '.join(cmd)}: the slowest run is {spread(best):.1f}x the fastest after {TRIES} "
                  "tries (a loaded machine): pasted as it is, with the program's load warning", file=sys.stderr)
        RUNS[key] = best
    return RUNS[key]


def paste_command(doc, marker, cmd, keep=None, grep=None):
    text, dropped = run_once(cmd), []
    if keep is not None:
        text, dropped = keep_tensor_lists(text, keep)
    note = f"(memory-by-tensor lists of {', '.join(dropped)} left out here)\n" if dropped else ""
    if grep:
        kept = [line for line in text.split("\n") if re.search(grep, line)]
        shows_times = any(re.search(r"\bms\b", line) or TIMED_ROW.match(line) for line in kept)
        text = "\n".join(line for line in text.split("\n")
                         if re.search(grep, line) or (shows_times and TIME_LINES.match(line)))
        note = "(an excerpt: the lines docs/generated.txt selects; run the command for all of them)\n"
    block = "```\n$ " + " ".join(cmd) + "\n" + note + text + "\n```"
    pc.update_doc(doc, marker, block, " ".join(cmd))


def split_opts(args):
    """[--tensors A,B] [--grep REGEX] command... -> (command, keep set or None, regex or None)"""
    keep = grep = None
    while args[:1] in (["--tensors"], ["--grep"]):
        if args[0] == "--tensors":
            keep = {x for x in args[1].split(",") if x != "none"}
        else:
            grep = args[1]
        args = args[2:]
    return args, keep, grep


def paste_file(doc, marker, path):
    block = "```gdb\n" + open(path).read().rstrip("\n") + "\n```"
    pc.update_doc(doc, marker, block, path)


def paste_table(table, bindir, only=None):
    for raw in open(table):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        doc, marker, *cmd = shlex.split(line.replace("$BIN", bindir).replace("$EMU", EMU_BIN))
        if only and doc not in only and f"{doc}:{marker}" not in only:
            continue
        if cmd[:1] == ["--file"]:
            paste_file(doc, marker, cmd[1])
        else:
            paste_command(doc, marker, *split_opts(cmd))


def main():
    a = sys.argv[1:]
    if a[:1] == ["--table"]:
        opts = dict(zip(a[2::2], a[3::2]))
        if len(a) % 2 or set(opts) - {"--bin", "--only"}:
            sys.exit(__doc__)
        only = set(opts["--only"].split(",")) if "--only" in opts else None
        return paste_table(a[1], opts.get("--bin", "build"), only)
    if len(a) == 4 and a[2] == "--file":
        return paste_file(a[0], a[1], a[3])
    rest, keep, grep = split_opts(a[2:])
    if len(a) < 4 or rest[:1] != ["--"]:
        sys.exit(__doc__)
    paste_command(a[0], a[1], rest[1:], keep, grep)


if __name__ == "__main__":
    main()
