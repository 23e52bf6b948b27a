#!/usr/bin/env python3
"""Paste a command's output, or a file, into a doc between markers, so the doc shows what the code prints today.

    python3 plots/paste_output.py docs/lesson-1.md lesson1-forum -- ./build/lesson1 --size forum
    python3 plots/paste_output.py docs/lesson-1.md gdb-walk --file docs/gdb/lesson-1.gdb
    python3 plots/paste_output.py --table docs/generated.txt [--bin build]

replaces everything between <!-- marker:begin --> and <!-- marker:end --> with the command line and its standard
output in a code block (or the file, as a gdb block). Standard error (e.g. "no CUDA device") is passed through.
--table runs every line "doc marker command..." of a table (the `make docs` list; $BIN is the build directory).
"""
import shlex
import subprocess
import sys

import plot_common as pc


def paste_command(doc, marker, cmd):
    run = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"paste_output: {' '.join(cmd)} exited {run.returncode}")
    block = "```\n$ " + " ".join(cmd) + "\n" + run.stdout.rstrip("\n") + "\n```"
    pc.update_doc(doc, marker, block, " ".join(cmd))


def paste_file(doc, marker, path):
    block = "```gdb\n" + open(path).read().rstrip("\n") + "\n```"
    pc.update_doc(doc, marker, block, path)


def paste_table(table, bindir):
    for raw in open(table):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        doc, marker, *cmd = shlex.split(line.replace("$BIN", bindir))
        if cmd[:1] == ["--file"]:
            paste_file(doc, marker, cmd[1])
        else:
            paste_command(doc, marker, cmd)


def main():
    a = sys.argv[1:]
    if a[:1] == ["--table"] and len(a) in (2, 4):
        return paste_table(a[1], a[3] if len(a) == 4 and a[2] == "--bin" else "build")
    if len(a) == 4 and a[2] == "--file":
        return paste_file(a[0], a[1], a[3])
    if len(a) < 4 or a[2] != "--":
        sys.exit(__doc__)
    paste_command(a[0], a[1], a[3:])


if __name__ == "__main__":
    main()
