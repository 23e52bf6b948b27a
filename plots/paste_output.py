#!/usr/bin/env python3
"""Paste a command's output into a doc between markers, so the doc shows what the code prints today.

    python3 plots/paste_output.py docs/lesson-1.md lesson1-forum -- ./build/lesson1 --size forum

replaces everything between <!-- lesson1-forum:begin --> and <!-- lesson1-forum:end --> with the command line and
its standard output in a code block. Standard error (e.g. "no CUDA device") is passed through to the terminal.
"""
import subprocess
import sys

import plot_common as pc


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    doc, marker, cmd = sys.argv[1], sys.argv[2], sys.argv[4:]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"paste_output: {' '.join(cmd)} exited {run.returncode}")
    block = "```\n$ " + " ".join(cmd) + "\n" + run.stdout.rstrip("\n") + "\n```"
    pc.update_doc(doc, marker, block, " ".join(cmd))


if __name__ == "__main__":
    main()
