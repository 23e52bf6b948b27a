#!/usr/bin/env python3
"""Check the reading path at the top of each lesson doc: the lesson's files in reading order, with line counts.

    python3 docs/tools/check_reading_paths.py [--fix] [docs/lesson-1.md ...]

A reading path is the block between <!-- reading-path --> and <!-- /reading-path --> before a doc's first
section; each of its table rows names one file as a link and its line count:

    | 2 | [naive/maxsim_einsum.c](../naive/maxsim_einsum.c) | 99 | the forum's einsum, max and sum |

The check fails when a doc has no such block, a listed file is missing, the link and the name differ, a count is
not the file's `wc -l`, a file is listed twice, the path does not start at the naive version (only headers before
it), it lists more than five files plus one per CUDA version of the lesson (the LESSON_CUDA_VERSION rows of
lessons/lessonN.c), or does not end at a .cu file. The shared runtime (kernels/runtime/) is not
listed.

For the lessons in GENERATED the path is generated: it must list exactly the files a reader opens from main()
to the last kernel, found from the lesson's LESSON line in the Makefile (its C and CUDA sources and
lessons/lessonN.c) and every project header they include, leaving out what every lesson shares (kernels/runtime/,
lessons/runner/, lessons/host/, lessons/lesson_defs.h) and the float64 references (lessons/*_reference.*,
checked against, not read on the way to a kernel); the count limit above does not apply to them. Two limits
hold instead (issue 47): LIMIT[N], the files of lesson N's whole path, and VERSION_LIMIT[N], the files of one
CUDA version: its kernels/<op>_vN.cu and the project headers it includes, transitively, with the runtime every
lesson shares (kernels/runtime/, lessons/host/: the device side and the host side's tracker and workspace arena)
counted as one file (the version file, the problem/math header, the runtime; any other project file counts on
its own). A lesson in ENFORCED fails the check over a limit; another's excess is printed as a note. --fix
rewrites the counts (after a file changed length) and, for a generated path, the rows themselves: the files
in reading order (headers of the problem, or the lesson's one header kernels/<op>.h; the naive version, the CPU
fix, the shared math, the definition and its dispatch, the CUDA formulas, each CUDA version), a row's text
kept, a new row's taken from its file's first line. Every other failure is fixed by hand.
"""
import glob
import os
import re
import sys

BLOCK = re.compile(r"<!-- reading-path -->\n(.*?)<!-- /reading-path -->", re.S)
ROW = re.compile(r"^\| *(\d+) *\| *\[([^\]]+)\]\(([^)]+)\) *\| *(\d+) *\|", re.M)
# the lessons whose path is generated
GENERATED = {1, 2, 3, 4, 5}
# a generated path's limits: the files of the whole path, and of one CUDA version (kernels/runtime/ as one)
LIMIT = {3: 10, 5: 12}
VERSION_LIMIT = {3: 3, 5: 3}
# the lessons whose limits fail the check; the rest are printed as notes. Add 5 once lesson 5's merge is in.
ENFORCED = {3, 5}
SHARED = ("kernels/runtime/", "lessons/runner/", "lessons/host/", "lessons/lesson_defs.h")
INCLUDE_DIRS = ["lessons/runner", "lessons/host"]  # the Makefile's HOST_INC


def lesson_sources(lesson):
    """the C and CUDA sources of the lesson's LESSON line in the Makefile, and lessons/lessonN.c"""
    for line in open("Makefile"):
        m = re.match(r"\$\(eval \$\(call LESSON,(\d+),([^,]*),([^,]*),", line)
        if m and int(m.group(1)) == lesson:
            return [f"lessons/lesson{lesson}.c"] + m.group(2).split() + m.group(3).split()
    return []


def included(sources, stop=()):
    """the sources and every project file they include, transitively; files under a stop prefix are kept but
    not followed"""
    todo, seen = list(sources), set()
    while todo:
        f = os.path.normpath(todo.pop())
        if f in seen or not os.path.isfile(f):
            continue
        seen.add(f)
        if f.startswith(stop):
            continue
        for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(f, encoding="utf-8").read(), re.M):
            for base in [os.path.dirname(f)] + INCLUDE_DIRS:
                cand = os.path.normpath(os.path.join(base, inc))
                if os.path.isfile(cand):
                    todo.append(cand)
                    break
    return seen


def reading_files(lesson):
    """every file a reader opens: the sources and the project headers they include, shared code left out"""
    seen = included(lesson_sources(lesson))
    keep = [f for f in seen if not f.startswith(SHARED) and not re.match(r"lessons/.*reference\.", f)]
    return sorted(keep, key=reading_order)


def version_files(cu):
    """one CUDA version's files: the .cu and the project files it includes, the runtime every lesson shares
    (kernels/runtime/, lessons/host/) as one entry"""
    runtime = ("kernels/runtime/", "lessons/host/")
    files = {"the runtime" if f.startswith(runtime) else f for f in included([cu], stop=runtime)}
    return sorted(files)


def limit_errors(lesson, listed):
    """(errors, notes): the path's and each CUDA version's file counts against LIMIT and VERSION_LIMIT"""
    out = []
    if lesson in LIMIT and len(listed) > LIMIT[lesson]:
        out.append(f"{len(listed)} files on the path: lesson {lesson}'s limit is {LIMIT[lesson]}")
    if lesson in VERSION_LIMIT:
        for cu in [f for f in lesson_sources(lesson) if re.search(r"^kernels/.*_v\d+\.cu$", f)]:
            files = version_files(cu)
            if len(files) > VERSION_LIMIT[lesson]:
                out.append(f"{cu} reads {len(files)} files ({', '.join(files)}): one CUDA version's limit is "
                           f"{VERSION_LIMIT[lesson]} (the version, its problem/math header, the runtime)")
    return (out, []) if lesson in ENFORCED else ([], out)


def reading_order(f):
    """the order a reader takes: problem, naive, CPU fix, shared math, definition, CUDA formulas, versions"""
    m = re.search(r"_v(\d+)\.cu$", f)
    if m:
        return (9, int(m.group(1)), f)
    one = re.match(r"^kernels/([a-z_]+)\.h$", f)
    if one and os.path.isfile(f"kernels/{one.group(1)}_v1.cu"):
        return (0, 0, f)  # the lesson's one header (kernels/<op>.h): its problem, math and entry points
    ranks = [(r"^kernels/.*_problem\.h$", 0), (r"^lessons/lesson\d+\.h$", 1), (r"^naive/.*\.h$", 2),
             (r"^naive/", 3), (r"_cuda_memory\.c$", 8), (r"^optimized/.*\.h$", 4), (r"^optimized/", 5),
             (r"^kernels/.*\.h$", 6), (r"^lessons/lesson\d+\.c$", 7)]
    for pat, rank in ranks:
        if re.search(pat, f):
            return (rank, 0, f)
    return (8, 0, f)


def first_line(path):
    """a new row's text: the file's first comment line after its name"""
    line = open(path, encoding="utf-8").readline().strip().lstrip("/*").strip()
    line = re.sub(r"^[\w./]+ - ", "", line).rstrip("*/ ").rstrip(".:")
    return line.replace("|", "/")


def generate_rows(doc, lesson, block):
    """the block's table rows rebuilt from reading_files, each known row's text kept"""
    texts = {}
    for num, name, link, count in ROW.findall(block):
        row = re.search(r"^\| *" + num + r" *\|.*$", block, re.M).group(0)
        texts[os.path.normpath(os.path.join(os.path.dirname(doc), link))] = row.rsplit("|", 2)[-2].strip()
    rows = []
    for k, f in enumerate(reading_files(lesson), 1):
        rel = os.path.relpath(f, os.path.dirname(doc))
        rows.append(f"| {k} | [{f}]({rel}) | {lines_of(f)} | {texts.get(f) or first_line(f)} |")
    head = block[: ROW.search(block).start()] if ROW.search(block) else block
    return head + "\n".join(rows) + "\n"


def lines_of(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")  # what wc -l prints


def cuda_versions(lesson):
    src = f"lessons/lesson{lesson}.c"
    return len(set(re.findall(r"LESSON_CUDA_VERSION\((\d+)\)", open(src).read()))) if os.path.exists(src) else 0


def check(doc, text):
    """(errors, notes, text with the counts rewritten)"""
    m = BLOCK.search(text)
    if not m:
        return ["no <!-- reading-path --> ... <!-- /reading-path --> block"], [], text
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
    limit = 5 + versions
    listed = [os.path.normpath(os.path.join(os.path.dirname(doc), r[2])) for r in rows]
    notes = []
    if lesson in GENERATED:
        want = reading_files(lesson)
        over, notes = limit_errors(lesson, want)
        errors += over
        for f in want:
            if f not in listed:
                errors.append(f"{f} is read on the way to a kernel and not listed (--fix adds it)")
        for f in listed:
            if f not in want:
                errors.append(f"{f} is listed and not read on the way to a kernel (--fix drops it)")
        if listed != want and set(listed) == set(want):
            errors.append("the files are not in reading order (--fix orders them)")
        fixed = generate_rows(doc, lesson, fixed)
    elif len(rows) > limit:
        errors.append(f"{len(rows)} files: lesson {lesson} has {versions} CUDA versions, so at most {limit}")
    paths = [os.path.normpath(os.path.join(os.path.dirname(doc), r[2])) for r in rows]
    naive = [k for k, p in enumerate(paths) if p.startswith("naive/")]
    if rows and (not naive or any(not p.endswith(".h") for p in paths[:naive[0]])):
        errors.append("the path does not start at the naive version (naive/, after at most the problem's headers)")
    if rows and not paths[-1].endswith(".cu"):
        errors.append(f"the path ends at {paths[-1]}, not at the last CUDA version (a .cu file)")
    return errors, notes, text[:m.start(1)] + fixed + text[m.end(1):]


def main():
    args = sys.argv[1:]
    fix = "--fix" in args
    docs = [a for a in args if a != "--fix"] or sorted(glob.glob("docs/lesson-[0-9]*.md"))
    docs = [d for d in docs if not d.endswith(("-appendix.md", "-performance.md"))]
    failed = 0
    for doc in docs:
        text = open(doc).read()
        errors, notes, fixed = check(doc, text)
        if fix and fixed != text:
            open(doc, "w").write(fixed)
            print(f"fixed the line counts in {doc}")
            errors, notes, _ = check(doc, fixed)
        print(f"{'FAIL' if errors else 'ok  '} {doc} (reading path)")
        for e in errors:
            print("     " + e)
        for e in notes:
            print("     note (not in ENFORCED, so not failed): " + e)
        failed += bool(errors)
    print(f"reading paths: {len(docs) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
