#!/usr/bin/env python3
"""Run the commands a lesson doc tells the reader to type, as written, and hold each to its exit status.

    python3 docs/tools/check_doc_commands.py [docs/lesson-1.md ...]   (default: the lessons check_docs.py holds
                                                                       to rules 10-12; after make, make test-build)

The lines of a doc's shell blocks (``` blocks that are not python, gdb or pasted output) that start with
./build/... or with VAR=value ./build/... (or "make X && ./build/..."), and the prose's inline `./build/...`
commands (e.g. lesson 3's `./build/lesson3 --size forum`): every lesson run, suite case and example the doc shows. A trailing "# comment" is dropped, a here-document's body skipped. Each runs in a scratch directory whose build/ and plots/ are the repository's (what it
writes, /tmp aside, lands there), and must exit 0, or 4 for a lesson run (--help: "nothing ran", every
implementation skipped, as at a size over this machine); a line with --break must fail (a planted bug). Lines
starting with make or gdb are not run (builds and interactive sessions); the python blocks are
docs/tools/check_doc_snippets.py's.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

from check_docs import FENCE, GENERATED, NOT_YET, lesson_of  # beside this file

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
COMMAND = re.compile(r"^((?:[A-Z_]+=\S+ +)*)(\./build/\S+.*)$")
TIMEOUT_S = 900  # a --repeat 5 run at medium (lesson 5: about 6 x 15 s) on a machine loaded 3x over its cores
INLINE = re.compile(r"`((?:[A-Z_]+=\S+ +)*\./build/[^`]+)`")  # a command in the prose, as the reader copies it


def commands(text):
    """The runnable lines of the doc's shell blocks, comments dropped."""
    out = []
    for block in FENCE.findall(GENERATED.sub("", text)):
        head = block.split("\n", 1)[0]
        if head.strip("`").strip() in ("python", "gdb"):
            continue
        heredoc = None  # a here-document's body (python fed to an interpreter) is not a command
        for line in block.split("\n")[1:]:
            if heredoc is not None:
                heredoc = None if line.strip() == heredoc else heredoc
                continue
            m = re.search(r"<<-?\s*'?(\w+)'?", line)
            if m:
                heredoc = m.group(1)
                continue
            line = re.sub(r"\s+#.*$", "", line).strip()
            line = re.sub(r"^make \S+ && ", "", line)  # "make X && ./build/X": the run (its build is make's)
            if COMMAND.match(line):
                out.append(line)
    prose = FENCE.sub("", GENERATED.sub("", text))
    for span in INLINE.findall(prose):
        if span not in out:
            out.append(span)
    return out


def run(line, scratch):
    env_part, cmd = COMMAND.match(line).groups()
    env = dict(os.environ, **dict(kv.split("=", 1) for kv in env_part.split()))
    try:
        return subprocess.run(shlex.split(cmd), cwd=scratch, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None


def main():
    docs = sys.argv[1:] or [f"docs/lesson-{n}.md" for n in range(1, 6) if n not in NOT_YET]
    failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        for d in ("build", "plots"):
            os.symlink(os.path.join(ROOT, d), os.path.join(scratch, d))
        for doc in docs:
            for line in commands(open(os.path.join(ROOT, doc)).read()):
                r = run(line, scratch)
                lesson_run = re.match(r"\./build/lesson\d+ ", COMMAND.match(line).group(2) + " ")
                ok = r is not None and ((r.returncode != 0) if "--break" in line
                                        else r.returncode == 0 or (lesson_run and r.returncode == 4))
                status = "timed out" if r is None else f"exit {r.returncode}"
                print(f"{'ok  ' if ok else 'FAIL'} {doc}: {line} ({status})")
                if not ok:
                    failed += 1
                    if r is not None and r.stderr.strip():
                        print("     " + r.stderr.strip().split("\n")[-1][:200])
    print(f"check_doc_commands: {'every command ran as its doc says' if not failed else f'{failed} failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
