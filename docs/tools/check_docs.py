#!/usr/bin/env python3
"""Check the lesson docs: one shape for all five, every gdb walk pasted as it is run, no figure typed by hand.

    python3 docs/tools/check_docs.py [docs/lesson-1.md docs/lesson-1-appendix.md ...]

1. Shape: the ten sections below, as `## k. Name` headings, in this order (a subtitle may follow " — ").
2. The gdb walk: the block between <!-- gdb-walk:begin/end --> is docs/gdb/lesson-N.gdb, byte for byte
   (`make docs` pastes it; docs/tools/check_gdb_walks.py runs it).
3. Figures: every number written with thousands separators (1,073,741,824) in the prose, outside code blocks,
   must appear in a generated block of the same doc (between <!-- name:begin --> and <!-- name:end -->, pasted by
   `make docs` or `make plots` from what the code printed), or be derived somewhere in the doc, on one line, by
   arithmetic the reader can redo: `a · b + c = N` (· × * + − ^ and parentheses).
4. Appendices (docs/lesson-N-appendix.md: the long outputs a lesson links to instead of pasting): no section
   shape, the figure rule of 3, every block listed in docs/generated.txt (so `make docs` regenerates it), and the
   lesson links to its appendix.
5. Pasted commands: a block listed in docs/generated.txt shows that line's command (else run `make docs`).
6. Links: every relative link in the docs, README.md and docs/README.md names a file that exists and, after `#`,
   a heading of that file (GitHub's anchors: `## 5. Measured` is `#5-measured`).
7. Times: a millisecond figure in the prose (outside code blocks) has its spread on the same line ("[lo-hi]",
   "(lo-hi)" or "±"); a generated block whose table shows timed rows shows the program's "times on <machine>: the
   median of N runs [fastest-slowest]" line with N >= 3 (its docs/generated.txt line runs with --repeat 5).
   A section whose heading says it is "estimated" holds a model's times, not measurements: no spread to give.
   Nor has a paragraph (or table row) that names docs/results/ (the GPU report's files: each version run once, on
   a GPU the reader may not have; the file is the evidence) or a model ("model", "predict"): its times are not
   this machine's runs.
8. Figures shown: every docs/img/*.png is shown (![...](...)) by some doc: README.md or docs/*.md.
9. Performance pages (docs/lesson-N-performance.md: the measurement and model notebook a lesson links to): checked
   as an appendix is (rule 4).
10. Length: a lesson doc is at most 26 KiB (26,624 bytes, not 26,000): the teaching; measurements go to its performance page.
11. Seed: a lesson doc names its seed thread's file, `../shared/seeds/NNN_<hash>.txt`, and where
    ../shared/seeds/README.md is present, the file its table maps to that lesson.
12. Which version `cuda` runs: a hand-written sentence (outside code and generated blocks) of a lesson's docs that
    names the version `cuda` runs or tries first ("`cuda` runs cuda-v3", "cuda-v3 (`cuda`)", "`cuda` tries v3
    first", "`cuda` tries v3 v1 v2") must agree with lessons/lessonN.c's .cuda_order, which `--help` prints.
13. Current: a block pasted from one of the tools that read only committed files and `--help` (FRESH: which
    version `cuda` runs, the versions' measured times, which ran where, the sweeps' growth) shows what the tool
    prints today; run docs/tools/paste_output.py --table docs/generated.txt --only DOC:MARKER otherwise.
14. The model's word: a hand-written sentence (outside code and generated blocks) of a lesson's docs that says a
    target is met on the model's word ("met by the model", "by the model ... is met", "within ... by the model",
    "on the model's word") needs that lesson's cross-validated error within 1.3x: the median factor of its
    held-out forum and medium rows in docs/results/emu/model_cv.csv (make model-cv).
15. Which versions ran: a hand-written range of versions said to have been measured ("v1 to v3 are measured",
    "cuda-v1 to cuda-v3 were measured") must hold only versions a GPU report timed at the lesson's forum size, and
    one said to have run ("v1 to v3 ran", "ran cuda-v1 to cuda-v3") only versions timed or killed at their time
    limit there (docs/tools/versions_table.py's reading of docs/results/).
Rules 10 to 12, 14 and 15 skip the lessons of NOT_YET (being rewritten on other branches; the integrator empties it).
"""
import glob
import os
import re
import shlex
import sys

SECTIONS = [
    "The forum problem",
    "What autograd keeps",
    "The fix and its memory formula",
    "The versions",
    "Measured",
    "The fix in PyTorch",
    "Check your own gradient",
    "Step through it in gdb",
    "Tests",
    "Take-aways",
]
NUM = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\d,]*\d)")
GENERATED = re.compile(r"<!-- ([\w.-]+):begin -->(.*?)<!-- \1:end -->", re.S)
FENCE = re.compile(r"```.*?```", re.S)
APPENDIX = re.compile(r"lesson-(\d+)-(?:appendix|performance)\.md$")
LESSON_DOC = re.compile(r"lesson-(\d+)\.md$")
MAX_BYTES = 26 * 1024
NOT_YET = set()  # lessons whose docs other branches are cutting: rules 10-12 skip them until the merge
SEEDS = os.path.join("..", "shared", "seeds")
SEED_NAME = re.compile(r"shared/seeds/(\d{3}_[0-9a-f]+\.txt)")
TABLE = "docs/generated.txt"
LINK = re.compile(r"\]\(([^)\s]+)\)")
MS = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?ms\b")
SPREAD = re.compile(r"\[\d[\d.,]*\s?[-–]\s?\d|\(\d[\d.,]*\s?[-–]\s?\d|±")
TIMED_ROW = re.compile(r"^\S+ +[\d,]+ \([^)]*\) +[\d,]+ \([^)]*\) +\d+ +\d[\d.]* +\d[\d.]*.*$", re.M)
ONE_RUN = re.compile(r"^times on .+: one run each", re.M)
MEDIAN = re.compile(r"^times on .+: the median of (\d+) runs \[fastest-slowest\]", re.M)
HEADING = re.compile(r"^(#+) (.*)$")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.png)\)")


def check_shape(text):
    heads = re.findall(r"^## (\d+)\. (.+)$", text, flags=re.M)
    errors = []
    for k, name in enumerate(SECTIONS, 1):
        if k > len(heads):
            errors.append(f"section {k} '{name}' missing")
            continue
        num, title = heads[k - 1]
        if int(num) != k or not (title == name or title.startswith(name + " — ") or title.startswith(name + ":")
                                 or title.startswith(name + ",")):
            errors.append(f"section {k} is '## {num}. {title}', expected '## {k}. {name}'")
    if len(heads) > len(SECTIONS):
        errors.append(f"{len(heads)} numbered sections; the shape has {len(SECTIONS)}")
    return errors


def check_walk(doc, text):
    m = re.search(r"<!-- gdb-walk:begin -->(.*?)<!-- gdb-walk:end -->", text, re.S)
    n = re.search(r"lesson-(\d+)\.md$", doc)
    walk = f"docs/gdb/lesson-{n.group(1)}.gdb" if n else None
    if not m:
        return ["no <!-- gdb-walk:begin --> ... <!-- gdb-walk:end --> block"]
    if not walk or not os.path.exists(walk):
        return [f"{walk} does not exist"]
    if open(walk).read().strip() not in m.group(1):
        return [f"the gdb-walk block differs from {walk}: run `make docs`"]
    return []


def digits(s):
    return s.replace(",", "")


def value(expr):
    """Evaluate `a · b + c − d × e` with integers; None if it is not such an expression."""
    e = expr.replace("·", "*").replace("×", "*").replace("−", "-").replace(",", "").replace("^", "**").strip()
    if not re.fullmatch(r"[\d\s*+\-()]+", e) or not re.search(r"\d", e):
        return None
    try:
        return eval(e, {"__builtins__": {}})  # digits, + - * and parentheses only (checked above)
    except SyntaxError:
        return None


def derived(line, number):
    """True when the line states `<expression> = number` (any tail of the text before `=` that evaluates)."""
    for m in re.finditer(r"([\d\s,·×*^+\-−()]+)=\s*\**" + re.escape(number), line):
        expr = m.group(1)
        for k in range(len(expr)):
            if (expr[k].isdigit() or expr[k] == "(") and (k == 0 or not expr[k - 1].isdigit()):
                v = value(expr[k:])
                if v is not None and v == int(digits(number)):
                    return True
    return False


def check_figures(text):
    generated = " ".join(body for _, body in GENERATED.findall(text))
    known = {digits(x) for x in re.findall(r"\d[\d,]*\d|\d", generated)}
    lines = FENCE.sub("", GENERATED.sub("", text)).split("\n")
    known |= {digits(n) for line in lines for n in NUM.findall(line) if derived(line, n)}
    errors = []
    for line in lines:
        for number in NUM.findall(line):
            if digits(number) not in known:
                errors.append(f"'{number}' is in no generated block and derived by no formula: {line.strip()[:120]}")
    return errors


def table_commands(table=TABLE):
    """{(doc, marker): the command line as `make docs` pastes it (BIN=build, EMU=build/emu)} from docs/generated.txt."""
    rows = {}
    for raw in open(table):
        line = raw.split("#", 1)[0].strip()
        if line:
            doc, marker, *cmd = shlex.split(line.replace("$BIN", "build").replace("$EMU", "build/emu"))
            while cmd[:1] in (["--tensors"], ["--grep"]):
                cmd = cmd[2:]
            rows[(os.path.normpath(doc), marker)] = cmd[1] if cmd[:1] == ["--file"] else " ".join(cmd)
    return rows


def check_pasted(doc, text, appendix):
    """Each block listed in the table shows the table's command; in an appendix every block must be listed."""
    rows, errors, doc = table_commands(), [], os.path.normpath(doc)
    for marker, body in GENERATED.findall(text):
        if (doc, marker) not in rows:
            if appendix:
                errors.append(f"block '{marker}' is not in {TABLE}: `make docs` would not regenerate it")
            continue
        source = re.match(r"\s*_Generated by docs/tools/paste_output\.py from `(.*?)`\._", body)
        if not source or source.group(1) != rows[(doc, marker)]:
            errors.append(f"block '{marker}' was not pasted from {TABLE}'s command `{rows[(doc, marker)]}`: "
                          "run `make docs`")
    return errors


def check_linked(doc):
    lesson = APPENDIX.sub(lambda m: f"lesson-{m.group(1)}.md", doc)  # an appendix's or a performance page's lesson
    name = os.path.basename(doc)
    if not os.path.exists(lesson):
        return [f"{lesson} (its lesson) does not exist"]
    if f"]({name}" not in open(lesson).read():
        return [f"{lesson} does not link to {name}"]
    return []


def anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped (word characters, - and spaces kept)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def check_links(doc, text):
    errors = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, frag = target.partition("#")
        path = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
        if not os.path.exists(path):
            errors.append(f"link ({target}): {path} does not exist")
        elif frag and path.endswith(".md"):
            heads = re.findall(r"^#+ (.+)$", FENCE.sub("", open(path).read()), flags=re.M)
            if frag not in {anchor(h) for h in heads}:
                errors.append(f"link ({target}): {path} has no heading with anchor #{frag}")
    return errors


def measured_prose(prose):
    """The prose's lines but those of a section whose heading says "estimated" (a model's times, not a run's)."""
    skip_below = None  # the heading level of the estimated section being skipped
    for line in prose.split("\n"):
        heading = HEADING.match(line)
        if heading and (skip_below is None or len(heading.group(1)) <= skip_below):
            skip_below = len(heading.group(1)) if re.search(r"\bestimated\b", heading.group(2)) else None
        if skip_below is None:
            yield line


# a paragraph whose times are not this machine's runs: the GPU report's files, or a model's predictions
NOT_A_RUN = re.compile(r"docs/results/|\(results/|\bmodel(?:'s|s|led)?\b|\bpredict", re.I)


def paragraphs(lines):
    """Runs of non-blank lines; each table row ('|' first) a paragraph of its own."""
    para = []
    for line in lines:
        if not line.strip() or line.lstrip().startswith("|"):
            if para:
                yield para
            para = [line] if line.strip() else []
            if para:
                yield para
                para = []
        else:
            para.append(line)
    if para:
        yield para


def check_times(text):
    """Rule 7: a time in the prose carries its spread; a pasted table of timed rows is the median of >= 3 runs."""
    errors = []
    for para in paragraphs(measured_prose(FENCE.sub("", GENERATED.sub("", text)))):
        if NOT_A_RUN.search(" ".join(para)):
            continue
        for line in para:
            if MS.search(line) and not SPREAD.search(line):
                errors.append(f"a time without its spread (median [fastest-slowest], from a --repeat run): "
                              f"{line.strip()[:120]}")
    for marker, body in GENERATED.findall(text):
        # timed rows in the table, or the program's own word that each was timed once
        timed = [r for r in TIMED_ROW.findall(body) if "emulated" not in r] or ONE_RUN.search(body)
        median = MEDIAN.search(body)
        if timed and (not median or int(median.group(1)) < 3):
            errors.append(f"block '{marker}' shows times of {'one run' if not median else median.group(1) + ' runs'}"
                          ", not the median of >= 3 with the spread and machine: add --repeat 5 to its "
                          f"{TABLE} line and run `make docs`")
    return errors


def check_images_shown(docs):
    """Rule 8: every figure in docs/img is shown by some doc (README.md, docs/*.md)."""
    shown = set()
    for doc in docs:
        for target in IMAGE.findall(FENCE.sub("", open(doc).read())):
            shown.add(os.path.normpath(os.path.join(os.path.dirname(doc), target)))
    return [f"docs/img/{os.path.basename(p)} is shown by no doc: show it where it is discussed or stop drawing it"
            for p in sorted(glob.glob("docs/img/*.png")) if os.path.normpath(p) not in shown]


def lesson_of(doc):
    m = re.search(r"lesson-(\d+)(?:-[a-z]+)?\.md$", doc)
    return int(m.group(1)) if m else None


def check_size(doc, text):
    """Rule 10."""
    n = len(text.encode())
    return [] if n <= MAX_BYTES else [f"{n:,} bytes, over the {MAX_BYTES:,} a lesson doc may have: move measurements "
                                      f"to docs/lesson-{lesson_of(doc)}-performance.md, derivations to the appendix"]


def seed_files():
    """{lesson: seed file} from ../shared/seeds/README.md's table, or None where it is not here."""
    readme = os.path.join(SEEDS, "README.md")
    if not os.path.exists(readme):
        return None
    return {int(m.group(2)): m.group(1) for m in
            re.finditer(r"^\| *(\d{3}_[0-9a-f]+\.txt) *\| *(\d+) *\|", open(readme).read(), re.M)}


def check_seed(doc, text):
    """Rule 11."""
    named = SEED_NAME.findall(text)
    if not named:
        return ["names no seed file: add `../shared/seeds/NNN_<hash>.txt` (its thread) to the opening lines"]
    seeds = seed_files()
    want = seeds.get(lesson_of(doc)) if seeds else None
    if want and want not in named:
        return [f"names {named[0]}, but {SEEDS}/README.md maps lesson {lesson_of(doc)} to {want}"]
    return []


def cuda_order(lesson):
    """lessons/lessonN.c's .cuda_order = {a, b, ...}: the versions `cuda` tries, fastest first."""
    path = f"lessons/lesson{lesson}.c"
    m = re.search(r"\.cuda_order *= *\{([\d, ]+)\}", open(path).read()) if os.path.exists(path) else None
    return [int(x) for x in m.group(1).split(",") if x.strip()] if m else None


ALIAS_SAYS = [  # a sentence naming the version `cuda` runs (group 1) or the order it tries (group "order")
    re.compile(r"`cuda` +(?:runs|tries|is|=|means|names|picks|chooses|selects) +`?(?:cuda-)?v(\d+)`?(?! +(?:and|or|to|before|after|where|when|if|unless|once)\b)"
               r"(?:(?= +first)|(?! *[,;:]? *`?v\d))"),
    re.compile(r"`?cuda-v(\d+)`? *\(`cuda`\)"),
    re.compile(r"`cuda` *\(`?cuda-v(\d+)`?\)"),
    re.compile(r"`cuda` tries(?:,? fastest first:?)? +(?P<order>`?v\d+`?(?:[ ,]+(?:then +)?`?v\d+`?)+)"),
]


def check_alias(doc, text):
    """Rule 12: what the prose says `cuda` runs against .cuda_order."""
    order = cuda_order(lesson_of(doc))
    if not order:
        return []
    errors = []
    prose = FENCE.sub("", GENERATED.sub("", text)).replace("\n", " ")
    for pattern in ALIAS_SAYS:
        for m in pattern.finditer(prose):
            if "order" in pattern.groupindex and m.group("order"):
                said = [int(v) for v in re.findall(r"v(\d+)", m.group("order"))]
                if said != order[:len(said)]:
                    errors.append(f"says `cuda` tries {' '.join('v%d' % v for v in said)}; .cuda_order in "
                                  f"lessons/lesson{lesson_of(doc)}.c (--help) tries {' '.join('v%d' % v for v in order)}: "
                                  f"...{m.group(0)}...")
            elif int(m.group(1)) != order[0]:
                errors.append(f"says `cuda` is cuda-v{m.group(1)}; --help (.cuda_order in lessons/lesson"
                              f"{lesson_of(doc)}.c) runs cuda-v{order[0]} first: ...{m.group(0)}...")
    return errors


FRESH = ("python3 docs/tools/versions_table.py ", "python3 docs/tools/cuda_order.py ",
         "python3 docs/tools/sweep_growth.py ")


def check_fresh(doc, text):
    """Rule 13: the blocks of FRESH's tools against what they print now (skipped where build/ has no lessons)."""
    import subprocess
    rows, errors = table_commands(), []
    for marker, body in GENERATED.findall(text):
        cmd = rows.get((os.path.normpath(doc), marker))
        if not cmd or not cmd.startswith(FRESH) or not glob.glob("build/lesson[0-9]*"):
            continue
        run = subprocess.run(shlex.split(cmd), stdout=subprocess.PIPE, text=True)
        pasted = re.search(r"```\n\$ [^\n]*\n(.*?)\n```", body, re.S)
        if run.returncode != 0 or not pasted or pasted.group(1) != run.stdout.rstrip("\n"):
            errors.append(f"block '{marker}' is not what `{cmd}` prints today: run docs/tools/paste_output.py "
                          f"--table docs/generated.txt --only {doc}:{marker}")
    return errors


MODEL_CV = "docs/results/emu/model_cv.csv"
MODEL_WORD_MAX = 1.3
MODEL_SAYS_MET = re.compile(r"\bmet by the model\b|\bby the model\b[^.]{0,80}?\b(?:is|are)\s+met\b|"
                            r"\bwithin\b[^.]{0,40}?\bby the model\b|\bon the model's word\b", re.I)


def model_cv_error(lesson):
    """The median of max(p/m, m/p) over the lesson's held-out forum and medium rows of MODEL_CV; None if none."""
    import csv
    if not os.path.exists(MODEL_CV):
        return None
    with open(MODEL_CV) as f:
        f_ = [max(p / m, m / p) for r in csv.DictReader(f)
              if r["held_out"] == "1" and r["lesson"] == str(lesson) and r["size"] != "small"
              for p, m in [(float(r["predicted_ms"]), float(r["measured_ms"]))] if p > 0 and m > 0]
    f_.sort()
    n = len(f_)
    return None if not n else (f_[n // 2] if n % 2 else (f_[n // 2 - 1] + f_[n // 2]) / 2)


def check_model_word(doc, text):
    """Rule 14: a target met on the model's word only where the lesson's cross-validated error is within 1.3x."""
    prose = FENCE.sub("", GENERATED.sub("", text)).replace("\n", " ")
    claims = [m.group(0) for m in MODEL_SAYS_MET.finditer(prose)]
    if not claims:
        return []
    err = model_cv_error(lesson_of(doc))
    if err is not None and err <= MODEL_WORD_MAX:
        return []
    said = "no held-out rows" if err is None else f"median x{err:.2f}"
    return [f"claims a target met on the model's word, but lesson {lesson_of(doc)}'s cross-validated error "
            f"({MODEL_CV}: {said}) is not within {MODEL_WORD_MAX}x: ...{c}..." for c in claims]


RAN_RANGE = [re.compile(r"\b(?:cuda-)?v(\d+) to (?:cuda-)?v(\d+),? (?P<how>are measured|were measured|measured|ran"
                        r"|have run)\b"),
             re.compile(r"\b(?P<how>ran|measured) (?:cuda-)?v(\d+) to (?:cuda-)?v(\d+)\b")]


def check_ran(doc, text):
    """Rule 15: a range of versions said to be measured, or to have run, against docs/results/."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import versions_table
    lesson = lesson_of(doc)
    size = versions_table.FORUM.get(lesson)
    if size is None or not os.path.isdir(versions_table.RESULTS):
        return []
    timed = {v for m in versions_table.measured(lesson, size).values() for v in m}
    ran = timed | {v for m in versions_table.timeouts(lesson, size).values() for v in m}
    prose, errors = FENCE.sub("", GENERATED.sub("", text)).replace("\n", " "), []
    for pattern in RAN_RANGE:
        for m in pattern.finditer(prose):
            lo, hi = (int(g) for g in m.groups() if g and g.isdigit())
            have = timed if m.group("how").endswith("measured") else ran
            missing = [v for v in range(lo, hi + 1) if v not in have]
            if missing:
                errors.append(f"says v{lo} to v{hi} {m.group('how')}, but docs/results/ has no "
                              f"{'time' if have is timed else 'run'} at the {size} size for "
                              f"{' '.join('v%d' % v for v in missing)}: ...{m.group(0)}...")
    return errors


def check_lesson_rules(doc, text):
    """Rules 10-12, 14 and 15, for the lessons not in NOT_YET."""
    if lesson_of(doc) in NOT_YET:
        return []
    errors = check_alias(doc, text) + check_fresh(doc, text) + check_model_word(doc, text) + check_ran(doc, text)
    if LESSON_DOC.search(doc):
        errors += check_size(doc, text) + check_seed(doc, text)
    return errors


def check(doc, text):
    if APPENDIX.search(doc):
        return check_pasted(doc, text, True) + check_figures(text) + check_linked(doc) + check_links(doc, text) + \
            check_times(text) + check_lesson_rules(doc, text)
    return check_shape(text) + check_walk(doc, text) + check_pasted(doc, text, False) + check_figures(text) + \
        check_links(doc, text) + check_times(text) + check_lesson_rules(doc, text)


def main():
    docs = sys.argv[1:] or sorted(glob.glob("docs/lesson-*.md"))
    failed = 0
    for doc in docs:
        text = open(doc).read()
        errors = check(doc, text)
        print(f"{'FAIL' if errors else 'ok  '} {doc}")
        for e in errors:
            print("     " + e)
        failed += bool(errors)
    others = [] if sys.argv[1:] else ["README.md", "docs/README.md", "docs/sweeps.md", "docs/runtime.md"]
    for doc in others:
        text = open(doc).read()
        errors = check_links(doc, text) + check_times(text)
        print(f"{'FAIL' if errors else 'ok  '} {doc} (links, times)")
        for e in errors:
            print("     " + e)
        failed += bool(errors)
    checks = len(docs) + len(others)
    if not sys.argv[1:]:
        errors = check_images_shown(["README.md"] + sorted(glob.glob("docs/*.md")))
        print(f"{'FAIL' if errors else 'ok  '} docs/img (every figure shown by a doc)")
        for e in errors:
            print("     " + e)
        failed += bool(errors)
        checks += 1
    print(f"{checks - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
