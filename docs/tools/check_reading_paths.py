#!/usr/bin/env python3
"""Check the reading path at the top of each lesson doc: the lesson's files in reading order, with line counts.

    python3 docs/tools/check_reading_paths.py [--fix] [docs/lesson-1.md ...]

A reading path is the block between <!-- reading-path --> and <!-- /reading-path --> before a doc's first
section; each of its table rows names one file as a link and its line count:

    | 2 | [naive/maxsim_einsum.c](../naive/maxsim_einsum.c) | 99 | the forum's einsum, max and sum |

The check fails when a doc has no such block, a listed file is missing, the link and the name differ, a count is
not the file's `wc -l`, a file is listed twice, the path does not start at the naive version (only headers before
it), it lists more than five files plus one per CUDA version of the lesson (the LESSON_CUDA_VERSION rows of lessons/lessonN.c; lesson 5
two more, for its CPU bf16 GEMM and its CPU row pass), or does not end at a .cu file. The shared runtime (kernels/runtime/) is not
listed. --fix rewrites the counts (after a file changed length); every other failure is fixed by hand.
"""
import glob
import os
import re
import sys

BLOCK = re.compile(r"<!-- reading-path -->\n(.*?)<!-- /reading-path -->", re.S)
ROW = re.compile(r"^\| *(\d+) *\| *\[([^\]]+)\]\(([^)]+)\) *\| *(\d+) *\|", re.M)
# files shared by versions, beyond the five a lesson has (naive, cpu, the math, the host side of CUDA, one more):
#   lesson 5: the CPU bf16 GEMM (optimized/linear_ce_gemm.c), shared by the naive and the cpu versions, and cpu's
#             row pass on each instruction set (optimized/linear_ce_rows.c)
EXTRA = {5: 2}


def lines_of(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")  # what wc -l prints


def cuda_versions(lesson):
    src = f"lessons/lesson{lesson}.c"
    return len(set(re.findall(r"LESSON_CUDA_VERSION\((\d+)\)", open(src).read()))) if os.path.exists(src) else 0


def check(doc, text):
    """(errors, text with the counts rewritten)"""
    m = BLOCK.search(text)
    if not m:
        return ["no <!-- reading-path --> ... <!-- /reading-path --> block"], text
    errors = []
    first = re.search(r"^## ", text, re.M)
    if first and first.start() < m.start():
        errors.append("the reading path stands after the first section: it belongs at the top")
    rows = ROW.findall(m.group(1))
    if not rows:
        errors.append("the reading path lists no file")
    seen, fixed = set(), m.group(1)
    for k, (num, name, link, count) in enumerate(rows, 1):
        path = os.path.normpath(os.path.join(os.path.dirname(doc), link))
        if name.strip("`") != path:
            errors.append(f"row {num}: [{name}] links to {link}, which is {path}")
        if int(num) != k:
            errors.append(f"row {num} is the path's file {k}")
        if path in seen:
            errors.append(f"{path} is listed twice")
        seen.add(path)
        if path.startswith("kernels/runtime/"):
            errors.append(f"{path}: the shared runtime is not part of a lesson's path")
        if not os.path.isfile(path):
            errors.append(f"{path} does not exist")
            continue
        n = lines_of(path)
        if n != int(count):
            errors.append(f"{path} has {n} lines, the path says {count}")
            fixed = re.sub(r"(\]\(" + re.escape(link) + r"\) *\| *)" + count + r"( *\|)", rf"\g<1>{n}\g<2>", fixed)
    lesson = int(re.search(r"lesson-(\d+)\.md$", doc).group(1))
    versions = cuda_versions(lesson)
    limit = 5 + versions + EXTRA.get(lesson, 0)
    if len(rows) > limit:
        errors.append(f"{len(rows)} files: lesson {lesson} has {versions} CUDA versions, so at most {limit}")
    paths = [os.path.normpath(os.path.join(os.path.dirname(doc), r[2])) for r in rows]
    naive = [k for k, p in enumerate(paths) if p.startswith("naive/")]
    if rows and (not naive or any(not p.endswith(".h") for p in paths[:naive[0]])):
        errors.append("the path does not start at the naive version (naive/, after at most the problem's headers)")
    if rows and not paths[-1].endswith(".cu"):
        errors.append(f"the path ends at {paths[-1]}, not at the last CUDA version (a .cu file)")
    return errors, text[:m.start(1)] + fixed + text[m.end(1):]


def main():
    args = sys.argv[1:]
    fix = "--fix" in args
    docs = [a for a in args if a != "--fix"] or sorted(glob.glob("docs/lesson-[0-9]*.md"))
    docs = [d for d in docs if not d.endswith("-appendix.md")]
    failed = 0
    for doc in docs:
        text = open(doc).read()
        errors, fixed = check(doc, text)
        if fix and fixed != text:
            open(doc, "w").write(fixed)
            print(f"fixed the line counts in {doc}")
            errors, _ = check(doc, fixed)
        print(f"{'FAIL' if errors else 'ok  '} {doc} (reading path)")
        for e in errors:
            print("     " + e)
        failed += bool(errors)
    print(f"reading paths: {len(docs) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
