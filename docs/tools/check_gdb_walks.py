#!/usr/bin/env python3
"""Run each doc's gdb walk (docs/gdb/lesson-N.gdb) in gdb -batch against a debug build and check every stop.

    python3 docs/tools/check_gdb_walks.py [--bin build/debug] [docs/gdb/lesson-1.gdb ...]

A walk file is what a learner types, plus expectations the learner can read too:

    # program: lesson1                       the binary under --bin
    # args: --dims B=1000,G=8,K=64,N=48 ...  its arguments
    break naive_bmm_forward
    run
    #=> stop naive_bmm_forward               the command above must leave gdb in this function
    print *d
    #=> print {B = 1000, G = 8, K = 64, N = 48}   ... and print this (a substring, or /regex/)

A walk fails when a command errs (gdb -batch stops a command file at the first error, so every later step is
then missing), when a breakpoint is not hit or the stop is in another function than the file says, when a printed
symbol is missing ("No symbol") or optimized out, or when an expected text is not printed. The runner interleaves
marker lines and, after each command that has a `stop` expectation, asks gdb's Python for the selected frame's
function; the learner's file itself stays plain gdb.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

BAD = ("Error in sourced command file", "No symbol", "<optimized out>", "not defined", "Cannot access memory", "No frame selected",
       "The program is not being run", "Make breakpoint pending")


def parse(path):
    """(program, args, steps): steps are [command, [(kind, text)]] in file order."""
    program, args, steps = None, "", []
    for raw in open(path):
        line = raw.rstrip("\n")
        if line.startswith("# program:"):
            program = line.split(":", 1)[1].strip()
        elif line.startswith("# args:"):
            args = line.split(":", 1)[1].strip()
        elif line.startswith("#=>"):
            kind, _, text = line[3:].strip().partition(" ")
            if not steps or kind not in ("stop", "print"):
                sys.exit(f"{path}: '{line}' must follow a command and be '#=> stop F' or '#=> print TEXT'")
            steps[-1][1].append((kind, text.strip()))
        elif line.strip() and not line.lstrip().startswith("#"):
            steps.append([line.strip(), []])
    if not program:
        sys.exit(f"{path}: no '# program:' line")
    return program, args, steps


def script_for(steps):
    """The walk with a marker before each command and a frame query after each expected stop."""
    out = ["set pagination off", "set confirm off", "set width 0"]
    for k, (cmd, expects) in enumerate(steps):
        out.append(f"echo @@STEP {k}\\n")
        out.append(cmd)
        if any(kind == "stop" for kind, _ in expects):
            out.append('python print("@@FUNC " + (gdb.selected_frame().name() or "?"))')
    out.append("echo @@END\\n")
    return "\n".join(out) + "\n"


def matches(expect, text):
    if len(expect) > 1 and expect.startswith("/") and expect.endswith("/"):
        return re.search(expect[1:-1], text) is not None
    return expect in text


def check(path, bindir):
    program, args, steps = parse(path)
    exe = os.path.join(bindir, program)
    if not os.access(exe, os.X_OK):
        return [f"{exe} is not built (make DEBUG=1 BIN={bindir} {exe})"]
    with tempfile.NamedTemporaryFile("w", suffix=".gdb", delete=False) as f:
        f.write(script_for(steps))
    cmd = ["gdb", "-nx", "-batch", "-x", f.name, "--args", exe] + args.split()
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    os.unlink(f.name)
    chunks = re.split(r"^@@STEP (\d+)$", run.stdout, flags=re.M)
    seen = {int(chunks[i]): chunks[i + 1] for i in range(1, len(chunks) - 1, 2)}
    errors = []
    for k, (cmdline, expects) in enumerate(steps):
        if k not in seen:
            errors.append(f"step {k + 1} `{cmdline}` never ran (an earlier command failed)")
            break
        text = seen[k]
        for bad in BAD:
            if bad in text:
                errors.append(f"step {k + 1} `{cmdline}`: gdb said '{bad}':\n    " + text.strip()[-400:])
        for kind, want in expects:
            if kind == "stop":
                m = re.search(r"^@@FUNC (\S+)", text, flags=re.M)
                got = m.group(1) if m else "(no frame)"
                if got != want:
                    errors.append(f"step {k + 1} `{cmdline}`: stopped in {got}, the doc says {want}")
            elif not matches(want, text):
                errors.append(f"step {k + 1} `{cmdline}`: expected '{want}' in:\n    " + text.strip()[-400:])
    if "@@END" not in run.stdout and not errors:
        errors.append("the walk did not reach its end:\n    " + run.stdout.strip()[-400:])
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/debug", help="directory of the debug build (default build/debug)")
    ap.add_argument("walks", nargs="*", help="walk files (default docs/gdb/*.gdb)")
    a = ap.parse_args()
    walks = a.walks or sorted(glob.glob("docs/gdb/*.gdb"))
    if not walks:
        sys.exit("no walk files")
    failed = 0
    for w in walks:
        errors = check(w, a.bin)
        print(f"{'FAIL' if errors else 'ok  '} {w}" + (f" ({len(parse(w)[2])} steps)" if not errors else ""))
        for e in errors:
            print("     " + e)
        failed += bool(errors)
    print(f"{len(walks) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
