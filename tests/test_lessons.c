/* test_lessons.c - every lesson's definition, table-driven: what every lesson must do, tested once.
 *
 * For each lesson of the Makefile's list (a lesson joins by its LESSON line) and each of its host
 * implementations, at the lesson's tiny and small presets:
 *   formula     the memory formula equals the tracker: peak, live after forward, allocations (when predicted)
 *   validated   max_rel_err against the float64 reference is within the lesson's stated tolerance
 *   leaks       after the run and the frees, the tracker's live bytes are back where they started
 *   determinism the same seed gives bitwise identical outputs and gradients in two runs (memcmp on purpose:
 *               the CPU code has no data-dependent threading, so any difference is a bug, not rounding)
 * and for each lesson binary, run as a user would at its tiny size: exit 0, no leak report, --csv writes the
 * exact header and one row per implementation that ran, --dump writes every tensor of the definition with its
 * shape and dtype, and the first 25 lines answer the forum (its figure, the reason, the fix, one line for the
 * CUDA versions skipped, the load warning). The generic command-line rejections (unknown flag, bad dims, repeated options, ...) are
 * tested once, on lesson 1, since every lesson parses with the same code. A toy lesson with a deliberately
 * wrong implementation proves that validation prints FAIL and exits non-zero. The bench's flags (--repeat,
 * --times, --predict) are checked on every lesson: predicted rows carry exactly the bytes a run measures.
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "track.h"
#include "lesson.h"
#include "check_main.h"
#include "cli_harness.h"

/* Every lesson of the Makefile's LESSON lines, from the list it generates (lesson_list.h: X(1) X(2) ...). */
#define X(n) extern const lesson lesson##n##_def;
#include "lesson_list.h"
#undef X
#define X(n) &lesson##n##_def,
static const lesson *const lessons[] = {
#include "lesson_list.h"
};
#undef X
static const int nlessons = (int)(sizeof lessons / sizeof lessons[0]);

#ifndef LESSON_BIN_DIR
#define LESSON_BIN_DIR "build"
#endif

static const lesson_size *preset(const lesson *L, const char *name)
{
    for (int s = 0; s < lesson_nsizes(L); s++)
        if (strcmp(L->sizes[s].name, name) == 0) return &L->sizes[s];
    ck_abort_msg("%s has no size %s", L->program, name);
    return NULL;
}

static void default_opts(const lesson *L, long long *opts)
{
    for (int k = 0; k < lesson_nopts(L); k++) opts[k] = L->opts[k].def;
}

/* Runs every host implementation of L at size; calls check(L, prob, res, ref) on each. */
typedef void (*result_check)(const lesson *L, const void *prob, const lesson_result *res, double *const *ref);

static void for_each_host_impl(const lesson *L, const char *size, result_check check)
{
    lesson_problem prob;
    long long opts[LESSON_MAX_OPTS];
    default_opts(L, opts);
    const char *bad = L->make_problem(preset(L, size)->dims, opts, &prob);
    ck_assert_msg(bad == NULL, "%s %s: %s", L->program, size, bad);
    void *t[LESSON_MAX_TENSORS];
    double *ref[LESSON_MAX_TENSORS];
    lesson_make_inputs(L, &prob, 4242, t);
    ck_assert_ptr_null(lesson_make_reference(L, &prob, t, ref));
    for (int i = 0; i < lesson_nimpls(L); i++) {
        if (L->impls[i].device) continue;
        size_t live0 = track_counters(MEM_HOST).live_bytes;
        lesson_result res;
        lesson_run_impl(L, &prob, i, t, &res);
        check(L, &prob, &res, ref);
        lesson_result_free(L, &res);
        ck_assert_msg(track_counters(MEM_HOST).live_bytes == live0, "%s %s at %s leaked %zu bytes", L->program,
                      L->impls[i].name, size, track_counters(MEM_HOST).live_bytes - live0);
    }
    lesson_free_ref(L, ref);
    lesson_free_slots(L, t);
}

static void check_formula(const lesson *L, const void *prob, const lesson_result *res, double *const *ref)
{
    (void)prob, (void)ref;
    const impl_row *r = &res->row;
    ck_assert_msg(r->peak_bytes == r->predicted_peak, "%s %s peak: formula %zu, tracker %zu", L->program, r->impl,
                  r->predicted_peak, r->peak_bytes);
    ck_assert_msg(r->forward_live_bytes == r->predicted_forward_live, "%s %s live after forward: formula %zu, "
                  "tracker %zu", L->program, r->impl, r->predicted_forward_live, r->forward_live_bytes);
    if (r->predicted_allocs)
        ck_assert_msg(r->allocs == r->predicted_allocs, "%s %s allocations: formula %zu, tracker %zu", L->program,
                      r->impl, r->predicted_allocs, r->allocs);
}

static void check_validated(const lesson *L, const void *prob, const lesson_result *res, double *const *ref)
{
    double e = lesson_max_rel_err(L, prob, res, ref);
    ck_assert_msg(e <= res->tolerance, "%s %s: max rel err %.3e vs float64 exceeds %.1e", L->program, res->row.impl,
                  e, res->tolerance);
}

/* Each test below is a loop test over the lessons (_i: the lesson's index), so every lesson reports on its own
 * and one failing lesson does not hide the rest. Check reports at the end; each loop test first says what it
 * runs (about 50 in all, over a minute), so the suite is never silent for long. */
#define PROGRESS() printf("test_lessons: %.*s %s\n", (int)strlen(__func__) - 3, __func__, lessons[_i]->program) /* name_fn */
START_TEST(formula_equals_tracker)
{
    PROGRESS();
    for_each_host_impl(lessons[_i], "tiny", check_formula);
    for_each_host_impl(lessons[_i], "small", check_formula);
}
END_TEST

START_TEST(every_impl_validates_against_float64)
{
    PROGRESS();
    for_each_host_impl(lessons[_i], "tiny", check_validated);
    for_each_host_impl(lessons[_i], "small", check_validated);
}
END_TEST

/* Two runs of one implementation on the same inputs: bitwise equal results. */
static void check_deterministic(const lesson *L, const char *size)
{
    lesson_problem prob;
    long long opts[LESSON_MAX_OPTS];
    default_opts(L, opts);
    ck_assert_ptr_null(L->make_problem(preset(L, size)->dims, opts, &prob));
    void *t[LESSON_MAX_TENSORS];
    lesson_make_inputs(L, &prob, 77, t);
    for (int i = 0; i < lesson_nimpls(L); i++) {
        if (L->impls[i].device) continue;
        lesson_result a, b;
        lesson_run_impl(L, &prob, i, t, &a);
        lesson_run_impl(L, &prob, i, t, &b);
        for (int k = 0; k < lesson_ntensors(L); k++)
            if (a.result[k])
                ck_assert_msg(memcmp(a.result[k], b.result[k], lesson_tensor_bytes(L, k, &prob)) == 0,
                              "%s %s: %s differs between two runs", L->program, L->impls[i].name, L->tensors[k].name);
        lesson_result_free(L, &a);
        lesson_result_free(L, &b);
    }
    lesson_free_slots(L, t);
}

START_TEST(same_seed_same_bits)
{
    PROGRESS();
    check_deterministic(lessons[_i], "small");
}
END_TEST

/* --- the binaries, as a user runs them ------------------------------------------------------------------ */

static void binary_of(const lesson *L, char *buf, size_t len) { snprintf(buf, len, "./%s/%s", LESSON_BIN_DIR, L->program); }
#define LESSON1_BIN "./" LESSON_BIN_DIR "/lesson1"

static int host_impl_list(const lesson *L, char *buf, size_t len)
{
    int n = 0;
    buf[0] = '\0';
    for (int i = 0; i < lesson_nimpls(L); i++) {
        if (L->impls[i].device) continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", n ? "," : "", L->impls[i].name);
        n++;
    }
    return n;
}

START_TEST(tiny_run_exits_zero_without_leaks)
{
    PROGRESS();
    static char out[1 << 17];
    const lesson *L = lessons[_i];
    char bin[64], impls[128], args[256];
    binary_of(L, bin, sizeof bin);
    host_impl_list(L, impls, sizeof impls);
    snprintf(args, sizeof args, "--size tiny --impl %s", impls);
    int rc = run_lesson(bin, args, out, sizeof out);
    ck_assert_output(rc == 0, out, "%s %s exited %d", bin, args, rc);
    ck_assert_output(!strstr(out, "leak:") && !strstr(out, "FAILED") && !strstr(out, "MISMATCH"), out, "%s: a leak, a FAILED or a MISMATCH", bin);
    ck_assert_output(strstr(out, "equal") != NULL, out, "%s printed no formula check", bin);
    /* the first screen: the title, both peaks (the table), the saving and the verdict within 25 lines */
    int line = 0, table = 0, ratio = 0, verdict = 0;
    for (const char *c = out; *c && line < 25; c = strchr(c, '\n') ? strchr(c, '\n') + 1 : c + strlen(c), line++) {
        if (line == 0) ck_assert_output(strncmp(c, L->title, strlen(L->title)) == 0, out, "%s: the title is not first", bin);
        table |= strncmp(c, "impl ", 5) == 0;
        ratio |= strncmp(c, "  ", 2) == 0 && strstr(c, " / ") && strstr(c, ": peak ") && strstr(c, "x,");
        verdict |= strncmp(c, "PASS: ", 6) == 0;
    }
    ck_assert_output(table && verdict && (ratio || host_impl_list(L, impls, sizeof impls) < 2), out,
                     "%s: the first 25 lines lack the table (%d), the saving ratio (%d) or the PASS verdict (%d)", bin,
                     table, ratio, verdict);
}
END_TEST

/* The first screen answers the forum (docs: issue 51): within the first 25 lines of a run of every
 * implementation, the forum's (or the seed's) figure, the reason, the saving, the CUDA versions a machine without
 * a device skips in one line, and, on a machine loaded past twice its cores, the warning that times are
 * unreliable. */
START_TEST(first_screen_answers)
{
    PROGRESS();
    static char out[1 << 17];
    const lesson *L = lessons[_i];
    char bin[64];
    binary_of(L, bin, sizeof bin);
    double load = 0.0;
    FILE *la = fopen("/proc/loadavg", "r");
    int got = la && fscanf(la, "%lf", &load) == 1;
    if (la) fclose(la);
    int loaded = got && load > 2.0 * (double)sysconf(_SC_NPROCESSORS_ONLN);
    int rc = run_lesson(bin, "--size tiny", out, sizeof out);
    ck_assert_output(rc == 0, out, "%s --size tiny exited %d", bin, rc);
    int line = 0, forum = 0, why = 0, fix = 0, skips = 0, warned = 0;
    for (const char *c = out; *c && line < 25; c = strchr(c, '\n') ? strchr(c, '\n') + 1 : c + strlen(c), line++) {
        const char *end = strchr(c, '\n');
        size_t n = end ? (size_t)(end - c) : strlen(c);
        char one[1024];
        snprintf(one, sizeof one, "%.*s", (int)(n < sizeof one ? n : sizeof one - 1), c);
        forum |= strncmp(one, "the forum: ", 11) == 0 || strncmp(one, "the seed: ", 10) == 0;
        why |= strncmp(one, "why: ", 5) == 0;
        fix |= strncmp(one, "the fix: ", 9) == 0;
        skips += strstr(one, " skipped: no CUDA device") != NULL;
        warned |= strncmp(one, "warning: load average ", 22) == 0;
    }
    /* the toy lesson (tests/toy_lesson.c, make test-toy-lesson) answers no forum: it defines no answer */
    ck_assert_output((forum && why && fix) || (!L->answer && L->number > 5), out, "%s: the first 25 lines lack the forum's figure (%d), the reason (%d) or the fix (%d)",
                     bin, forum, why, fix);
    ck_assert_output(skips <= 1, out, "%s: %d table lines for CUDA versions skipped without a device (one says it)", bin, skips);
    ck_assert_output(warned || !loaded, out, "%s: load average %.2f over twice the cores, and no warning", bin, load);
}
END_TEST

START_TEST(csv_has_one_row_per_impl)
{
    PROGRESS();
    const lesson *L = lessons[_i];
    char bin[64], impls[128], args[256], prefix[LESSON_MAX_IMPLS][64];
    const char *prefixes[LESSON_MAX_IMPLS];
    binary_of(L, bin, sizeof bin);
    int n = host_impl_list(L, impls, sizeof impls), k = 0;
    for (int i = 0; i < lesson_nimpls(L); i++) {
        if (L->impls[i].device) continue;
        snprintf(prefix[k], sizeof prefix[k], "%d,%s,tiny,\"", L->number, L->impls[i].name);
        prefixes[k] = prefix[k];
        k++;
    }
    snprintf(args, sizeof args, "--size tiny --impl %s", impls);
    assert_csv_rows(bin, args, prefixes, n, ",cpu");
}
END_TEST

static const char *npy_descr(dtype t)
{
    switch (t) {
    case DT_F32: case DT_BF16: return "'<f4'"; /* bf16 is dumped widened to float32 */
    case DT_F64: return "'<f8'";
    case DT_I32: return "'<i8'"; /* int32 is dumped widened to int64 (PyTorch's index type) */
    case DT_I64: return "'<i8'";
    }
    return "?";
}

/* Every tensor of the definition, as input.<name> or <impl>.<name>, with its shape and dtype. */
static void check_dump(const lesson *L)
{
    lesson_problem prob;
    long long opts[LESSON_MAX_OPTS];
    default_opts(L, opts);
    ck_assert_ptr_null(L->make_problem(preset(L, "tiny")->dims, opts, &prob));
    char bin[64], impls[128], args[256];
    binary_of(L, bin, sizeof bin);
    host_impl_list(L, impls, sizeof impls);
    snprintf(args, sizeof args, "--size tiny --impl %s", impls);
    static char names[64][64], shapes[64][64];
    const char *pn[64], *ps[64], *pd[64];
    int n = 0;
    for (int i = 0; i < lesson_ntensors(L); i++) {
        size_t s[LESSON_MAX_RANK];
        char shape[64];
        int rank = L->tensors[i].scalar ? 0 : L->tensors[i].shape(&prob, s), used = snprintf(shape, sizeof shape, "(");
        for (int d = 0; d < rank; d++)
            used += snprintf(shape + used, sizeof shape - (size_t)used, "%zu%s", s[d],
                             rank == 1 ? "," : d + 1 < rank ? ", " : "");
        snprintf(shape + used, sizeof shape - (size_t)used, ")");
        int input = L->tensors[i].role == LT_INPUT || L->tensors[i].role == LT_UPSTREAM;
        for (int m = 0; m < (input ? 1 : lesson_nimpls(L)) && n < 64; m++) {
            if (!input && L->impls[m].device) continue;
            snprintf(names[n], 64, "%s.%s", input ? "input" : L->impls[m].name, L->tensors[i].name);
            snprintf(shapes[n], 64, "%s", shape);
            pn[n] = names[n], ps[n] = shapes[n], pd[n] = npy_descr(L->tensors[i].type);
            n++;
        }
    }
    assert_dump_files(bin, args, pn, ps, pd, n);
}

START_TEST(dump_writes_every_tensor)
{
    PROGRESS();
    check_dump(lessons[_i]);
}
END_TEST

/* The shared command line, once (every lesson parses with lessons/runner/cli.c and its own definition). */
START_TEST(cli_rejects_bad_input)
{
    static const bad_input_case cases[] = {
        {"--bogus", "unknown option '--bogus'"},
        {"--size huge", "unknown size 'huge'"},
        {"--dims B=0", "must be an integer from 1 to 2147483647"},
        {"--dims B=-3", "must be an integer from 1 to 2147483647"},
        {"--dims B=99999999999", "must be an integer from 1 to 2147483647"},
        {"--dims Q=3", "unknown dimension 'Q'"},
        {"--dims B=3,B=4", "B is given twice"},
        {"--dims B", "is not NAME=VALUE"},
        {"--impl gpu", "unknown implementation 'gpu'"},
        {"--impl cpu,cpu", "'cpu' is listed twice"},
        {"--seed -1", "--seed '-1' must be an integer from 0 to 18446744073709551615"},
        {"--seed 12345678901234567890123", "must be an integer from 0 to 18446744073709551615"},
        {"--dims B=3,", "--dims 'B=3,' has an empty pair"},
        {"--dims B=3,,G=2", "--dims 'B=3,,G=2' has an empty pair"},
        {"--mem-limit 12X", "is not a positive size"},
        {"--time-limit 0", "must be a whole number of seconds"},
        {"--csv", "option --csv needs a value"},
        {"stray", "unexpected argument 'stray'"},
        {"--dims B=2147483647,G=2147483647,K=2147483647,N=2147483647", "overflows"},
        {"--dims B=100000,G=100,K=100,N=100 --impl cpu --mem-limit 1M", "over --mem-limit"},
        {"--size tiny --csv README.md", "is not a lesson CSV"},
        {"--size tiny --csv /nonexistent-dir/x.csv", "cannot open --csv /nonexistent-dir/x.csv"},
        {"--size tiny --dump README.md", "lesson1: --dump README.md is not a writable directory"},
        {"--size tiny --s tiny", "option '--s' is ambiguous"},
        {"--size tiny -- stray", "unexpected argument 'stray'"},
        {"-x", "unknown option '-x'"},
        {"--size tiny --timeline /nonexistent-dir/t.csv", "cannot write --timeline"},
        {"--repeat 0", "--repeat '0' must be an integer from 1 to 100"},
        {"--repeat 101", "must be an integer from 1 to 100"},
        {"--predict=1", "option --predict takes no value"},
        {"--size tiny --predict --repeat 3", "--predict runs nothing"},
        {"--size tiny --times README.md", "--times README.md has content that is not a lesson CSV"},
        {"--threads 0", "--threads '0' must be an integer from 1 to 1024"},
    };
    assert_rejects(LESSON1_BIN, cases, sizeof cases / sizeof cases[0]);
}
END_TEST

/* The CPU GEMM header (lessons/host/gemm_cpu.h): three runs print the same provider line, which names the
 * thread count --threads asked for and says idle workers sleep (the program re-executed itself with
 * OMP_WAIT_POLICY=PASSIVE and OPENBLAS_THREAD_TIMEOUT=4 before the libraries loaded); on 2 threads they then use
 * under 2 CPU ms of the rates line's 10 ms pause (spinning, 3-8 ms were measured on a 2-core EPYC). */
START_TEST(gemm_header_repeats_and_workers_sleep)
{
    static char out[1 << 17];
    char first[1024] = "";
    for (int run = 0; run < 3; run++) {
        int rc = run_lesson(LESSON1_BIN, "--size tiny --impl cpu --threads 2", out, sizeof out);
        ck_assert_output(rc == 0, out, "lesson1 --threads 2 exited %d", rc);
        const char *line = strstr(out, "\nCPU GEMMs: ");
        ck_assert_output(line != NULL, out, "no CPU GEMMs line");
        char now[1024];
        snprintf(now, sizeof now, "%.*s", (int)strcspn(line + 1, "\n"), line + 1);
        ck_assert_output(strstr(now, "2 threads (--threads 2); workers sleep between calls") != NULL, out,
                         "the line does not say '2 threads (--threads 2); workers sleep between calls'");
        ck_assert_output(strstr(now, "by rule") != NULL, out, "the line does not say 'by rule'");
        if (run == 0) snprintf(first, sizeof first, "%s", now);
        ck_assert_output(strcmp(first, now) == 0, out, "run %d's provider line differs from the first's", run);
        const char *idle = strstr(out, "idle workers used ");
        double ms = 99.0;
        ck_assert_output(idle && sscanf(idle, "idle workers used %lf CPU ms", &ms) == 1, out, "no idle workers figure");
        ck_assert_output(ms < 2.0, out, "idle workers used %.1f CPU ms of a 10 ms pause: they spin", ms);
    }
}
END_TEST

/* GNU conventions (getopt_long): --version, -h, "--", the last of a repeated option wins. */
START_TEST(cli_as_gnu_users_expect)
{
    static char out[1 << 16];
    ck_assert_int_eq(run_lesson(LESSON1_BIN, "--version", out, sizeof out), 0);
    ck_assert_output(strncmp(out, "lesson1 (gpu-memory-lessons) ", 29) == 0 && strstr(out, "built from "), out,
                     "--version: no 'lesson1 (gpu-memory-lessons) VERSION' and 'built from'");
    ck_assert_int_eq(run_lesson(LESSON1_BIN, "-h", out, sizeof out), 0);
    ck_assert_output(strstr(out, "-h, --help") && strstr(out, "--version") && strstr(out, "3 out of memory") &&
                     strstr(out, "4 nothing ran"), out, "--help does not list -h, --version and exit codes 3 and 4");
    int rc = run_lesson(LESSON1_BIN, "--size small --impl naive --size tiny --impl cpu --", out, sizeof out);
    ck_assert_output(rc == 0 && strstr(out, "size tiny: B=3,") && strstr(out, "\ncpu ") && !strstr(out, "\nnaive "),
                     out, "rc %d: the last --size and --impl did not win, or -- was refused", rc);
    rc = run_lesson(LESSON1_BIN, "--size tiny --dims B=5 --dims=G=3 --impl cpu", out, sizeof out);
    ck_assert_output(rc == 0 && strstr(out, "size custom: B=3,G=3,"), out, "rc %d: the last --dims did not win", rc);
}
END_TEST

/* Every file a run writes fails the run when it cannot be written to the end (a full disk: /dev/full). */
START_TEST(outputs_that_cannot_be_written_fail)
{
    static char out[1 << 16];
    static const char *const flags[] = {"--timeline /dev/full", "--snapshot /dev/full", "> /dev/full"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "--size tiny --impl cpu %s", flags[i]);
        int rc = run_lesson(LESSON1_BIN, args, out, sizeof out);
        ck_assert_output(rc == 5, out, "'%s' exited %d, expected 5 (an output could not be written)", args, rc);
    }
}
END_TEST

START_TEST(help_exits_zero_for_every_lesson)
{
    PROGRESS();
    static char out[1 << 15];
    char bin[64];
    binary_of(lessons[_i], bin, sizeof bin);
    ck_assert_int_eq(run_lesson(bin, "--help", out, sizeof out), 0);
    ck_assert_output(strstr(out, "--size") && strstr(out, lessons[_i]->impls[0].name), out, "%s --help lacks --size or %s", bin, lessons[_i]->impls[0].name);
}
END_TEST

/* A run where only CUDA versions were asked for, on a machine without a device: the reason said once where
 * stdout and stderr are one stream (the table's row; review 35), and a named option printed by its name
 * (lesson 3's header: "--precision bf16", not the value's index). */
START_TEST(device_skip_said_once_and_options_by_name)
{
    static char out[1 << 16];
    int rc = run_lesson("./" LESSON_BIN_DIR "/lesson3", "--size tiny --impl cuda-v1", out, sizeof out);
    ck_assert_output(strstr(out, "  --precision bf16 ") && !strstr(out, "--precision 0"), out,
                     "the header does not name --precision's value");
    if (!strstr(out, "skipped: no CUDA device")) return; /* a GPU: it ran */
    int n = 0;
    for (const char *c = out; (c = strstr(c, "no CUDA device")) != NULL; c++) n++;
    ck_assert_output(rc == 4 && n == 1, out, "rc %d, \"no CUDA device\" said %d times (once is enough)", rc, n);
}
END_TEST

START_TEST(mem_limit_skips_with_prediction_and_nothing_ran_exits_four)
{
    static char out[1 << 16];
    int rc = run_lesson(LESSON1_BIN, "--size small --impl naive,cpu --mem-limit 20M", out, sizeof out);
    ck_assert_output(rc == 0 && strstr(out, "naive    skipped: predicted peak 138,543,104 bytes"), out, "rc %d: no naive skip line", rc);
    rc = run_lesson(LESSON1_BIN, "--size small --impl naive --mem-limit 20M", out, sizeof out);
    ck_assert_output(rc == 4 && strstr(out, "no implementation ran") && strstr(out, "NOTHING RAN"), out,
                     "rc %d: no 'no implementation ran' with exit status 4", rc);
}
END_TEST

/* The bench's flags, on every lesson: --repeat N times N runs (one --times row each, run 1..N) and keeps the
 * CSV's one row per implementation; --predict runs nothing and writes rows whose bytes equal what the tracker
 * measured at the same size (the formulas are exact), with device "predicted" and the times empty. */
static int csv_field(const char *line, int k, char *out, size_t len) /* k-th field; the quoted dims is one */
{
    int f = 0, quoted = 0;
    size_t o = 0;
    for (const char *c = line; *c && *c != '\n'; c++) {
        if (*c == '"') quoted = !quoted;
        else if (*c == ',' && !quoted) f++;
        else if (f == k && o + 1 < len) out[o++] = *c;
    }
    out[o] = '\0';
    return f >= k ? 0 : -1;
}

static void check_repeat_and_predict(const lesson *L)
{
    static char out[1 << 16];
    char bin[64], impls[128], args[512], csv[] = "/tmp/lesson_bench_XXXXXX", times[] = "/tmp/lesson_times_XXXXXX";
    binary_of(L, bin, sizeof bin);
    int n = host_impl_list(L, impls, sizeof impls);
    close(mkstemp(csv));
    close(mkstemp(times));
    snprintf(args, sizeof args, "--size tiny --impl %s --repeat 3 --times %s --csv %s", impls, times, csv);
    ck_assert_output(run_lesson(bin, args, out, sizeof out) == 0, out, "%s %s failed", bin, args);
    ck_assert_output(strstr(out, "the median of 3 runs after one warm-up run"), out, "no 'median of 3 runs' line");
    snprintf(args, sizeof args, "--size tiny --impl %s --predict --csv %s", impls, csv);
    ck_assert_output(run_lesson(bin, args, out, sizeof out) == 0, out, "%s %s failed", bin, args);
    FILE *f = fopen(csv, "r");
    char line[1024], measured[LESSON_MAX_IMPLS][2][32], field[64];
    int rows = 0;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f)); /* header */
    while (fgets(line, sizeof line, f)) {
        int k = rows % n;
        ck_assert_int_eq(csv_field(line, 10, field, sizeof field), 0);
        if (rows < n) { /* measured: keep peak and live */
            ck_assert_str_ne(field, "predicted");
            csv_field(line, 4, measured[k][0], 32);
            csv_field(line, 5, measured[k][1], 32);
        } else {
            ck_assert_msg(strcmp(field, "predicted") == 0, "%s", line);
            csv_field(line, 4, field, sizeof field);
            ck_assert_msg(strcmp(field, measured[k][0]) == 0, "predicted peak %s, measured %s", field, measured[k][0]);
            csv_field(line, 5, field, sizeof field);
            ck_assert_str_eq(field, measured[k][1]);
            csv_field(line, 7, field, sizeof field);
            ck_assert_msg(field[0] == '\0', "a predicted row has a time: %s", line);
        }
        rows++;
    }
    fclose(f);
    ck_assert_int_eq(rows, 2 * n);
    f = fopen(times, "r");
    rows = 0;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "lesson,impl,size,dims,run,forward_ms,backward_ms,device\n");
    while (fgets(line, sizeof line, f)) {
        csv_field(line, 4, field, sizeof field);
        ck_assert_int_eq(atoi(field), rows % 3 + 1);
        rows++;
    }
    fclose(f);
    ck_assert_int_eq(rows, 3 * n);
    unlink(csv);
    unlink(times);
}

START_TEST(repeat_times_and_predict)
{
    PROGRESS();
    check_repeat_and_predict(lessons[_i]);
}
END_TEST

/* The version scheme, on every lesson: host rows first, then cuda-v1, cuda-v2, ... (the reading order, numbered
 * from 1 without a gap), and "cuda" the alias whose order (cuda_order) lists every version once, which --help prints
 * as "cuda = cuda-vN, an alias: of the versions fastest first (vN ...)". */
START_TEST(cuda_versions_in_reading_order_with_an_alias)
{
    PROGRESS();
    static char out[1 << 15];
    {
        const lesson *L = lessons[_i];
        int next = 1, seen_device = 0;
        for (int i = 0; i < lesson_nimpls(L); i++) {
            const lesson_impl *im = &L->impls[i];
            char name[32];
            ck_assert_msg(im->device || !seen_device, "%s: host row %s after a CUDA version", L->program, im->name);
            if (!im->device) continue;
            seen_device = 1;
            snprintf(name, sizeof name, "cuda-v%d", next++);
            ck_assert_msg(im->version == next - 1 && strcmp(im->name, name) == 0, "%s: row %d is %s (version %d), "
                          "expected %s", L->program, i, im->name, im->version, name);
        }
        int alias = lesson_find_impl(L, LESSON_CUDA_ALIAS);
        if (!seen_device) {
            ck_assert_int_eq(alias, -1);
            return;
        }
        ck_assert_msg(alias >= 0 && L->impls[alias].version == L->cuda_order[0], "%s: cuda names no version (%d)",
                      L->program, L->cuda_order[0]);
        char bin[64], line[160];
        int n = 0, len = 0;
        len += snprintf(line, sizeof line, "cuda     = %s, an alias: of the versions fastest first (", L->impls[alias].name);
        for (; n < LESSON_MAX_IMPLS && L->cuda_order[n]; n++) {
            int v = L->cuda_order[n], row = lesson_cuda_version_impl(L, v);
            ck_assert_msg(row >= 0, "%s: cuda_order names v%d, which the lesson has not", L->program, v);
            for (int m = 0; m < n; m++) ck_assert_msg(L->cuda_order[m] != v, "%s: v%d twice in cuda_order", L->program, v);
            len += snprintf(line + len, sizeof line - len, "%sv%d", n ? " " : "", v);
        }
        ck_assert_msg(n == next - 1, "%s: cuda_order lists %d of its %d versions", L->program, n, next - 1);
        snprintf(line + len, sizeof line - len, ")");
        binary_of(L, bin, sizeof bin);
        ck_assert_int_eq(run_lesson(bin, "--help", out, sizeof out), 0);
        ck_assert_output(strstr(out, line), out, "%s --help does not say %s", bin, line);
    }
}
END_TEST

/* --- a toy lesson whose second implementation is wrong: validation must catch it ------------------------- */
enum { TX, TDOUT, TOUT, TDX };
static int toy_shape(const void *p, size_t *s) { s[0] = *(const size_t *)p; return 1; }
static const char *toy_problem(const long long *dims, const long long *opts, void *p)
{
    (void)opts;
    *(size_t *)p = (size_t)dims[0];
    return NULL;
}
static void toy_fill(const void *p, uint64_t seed, void *const *t)
{
    for (size_t i = 0; i < *(const size_t *)p; i++) {
        ((float *)t[TX])[i] = 1.0f + (float)((seed + i) % 7);
        ((float *)t[TDOUT])[i] = 0.5f + (float)i;
    }
}
static void toy_ref(const void *p, void *const *t, double *const *ref)
{
    for (size_t i = 0; i < *(const size_t *)p; i++) {
        ref[TOUT][i] = 2.0 * ((float *)t[TX])[i];
        ref[TDX][i] = 2.0 * ((float *)t[TDOUT])[i];
    }
}
static mem_formula toy_memory(const void *p)
{
    size_t b = 4 * *(const size_t *)p;
    mem_formula m = {4 * b, 2 * b, 4};
    return m;
}
static void toy_scale(lesson_run *r, int out, int in, float k)
{
    size_t n = *(const size_t *)r->prob;
    float *y = host_alloc_array(n, DT_F32, out == TOUT ? "toy out" : "toy dx");
    for (size_t i = 0; i < n; i++) y[i] = k * ((float *)r->t[in])[i];
    r->t[out] = y;
}
static void right_fwd(lesson_run *r) { toy_scale(r, TOUT, TX, 2.0f); }
static void right_bwd(lesson_run *r) { toy_scale(r, TDX, TDOUT, 2.0f); }
static void wrong_bwd(lesson_run *r) { toy_scale(r, TDX, TDOUT, 2.01f); } /* 0.5% off: must FAIL */

static const lesson toy_def = {
    .number = 0, .program = "toy", .title = "toy: y = 2x", .summary = "validation test",
    .dim_names = {"n"}, .sizes = {{.name = "tiny", .dims = {5}}}, .default_size = "tiny",
    .make_problem = toy_problem,
    .tensors = {[TX] = {.name = "x", .role = LT_INPUT, .type = DT_F32, .label = "toy x", .shape = toy_shape},
                [TDOUT] = {.name = "dout", .role = LT_UPSTREAM, .type = DT_F32, .label = "toy dout", .shape = toy_shape},
                [TOUT] = {.name = "out", .role = LT_OUTPUT, .type = DT_F32, .shape = toy_shape},
                [TDX] = {.name = "dx", .role = LT_GRAD, .type = DT_F32, .shape = toy_shape, .grad_of = TX}},
    .fill = toy_fill, .reference = toy_ref, .tolerance = 1e-6, .tolerance_why = "exact products",
    .impls = {{.name = "right", .about = "2x", .memory = toy_memory, .forward = right_fwd, .backward = right_bwd},
              {.name = "wrong", .about = "2x, backward 2.01x", .memory = toy_memory, .forward = right_fwd,
               .backward = wrong_bwd}},
};

/* lesson_main(argv) with stdout and stderr captured into out; returns its status. */
static int toy_main_of(const lesson *L, char **argv, int argc, char *out, size_t len)
{
    char path[] = "/tmp/lesson_toy_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    dup2(fd, 1);
    dup2(fd, 2);
    int rc = lesson_main(L, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    ssize_t n = pread(fd, out, len - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return rc;
}

static int toy_main(char **argv, int argc, char *out, size_t len)
{
    return toy_main_of(&toy_def, argv, argc, out, len);
}

START_TEST(validation_failure_exits_nonzero)
{
    static char out[1 << 15];
    char *right[] = {"toy", "--impl", "right", NULL}, *both[] = {"toy", NULL};
    ck_assert_int_eq(toy_main(right, 3, out, sizeof out), 0);
    ck_assert_output(!strstr(out, "FAILED") && !strstr(out, " FAIL  "), out, "a FAIL in the output");
    ck_assert_int_eq(toy_main(both, 1, out, sizeof out), 1);
    /* the wrong row says FAIL, no ratio is printed against it, and the exit status says why */
    ck_assert_output(strstr(out, "5.00e-03 FAIL") && strstr(out, "FAILED validation") && !strstr(out, "right / wrong"),
                     out, "the wrong row was not reported as FAIL without a ratio");
}
END_TEST

/* An implementation held to a tolerance of its own (lesson_impl.tolerance, as lesson 5's naive is): the verdict and
 * the tolerance line print each one's, not the lesson's for all. */
START_TEST(each_impl_printed_with_its_own_tolerance)
{
    static char out[1 << 15];
    lesson own = toy_def;
    own.impls[1].tolerance = 1e-2; /* wrong's error, 5.0e-03, is within it and over the lesson's 1e-6 */
    char *argv[] = {"toy", NULL};
    ck_assert_int_eq(toy_main_of(&own, argv, 1, out, sizeof out), 0);
    ck_assert_output(strstr(out, "PASS: right within 1.0e-06, wrong within 1.0e-02 of the float64 reference") &&
                     strstr(out, "FAIL above 1.0e-06, wrong's own 1.0e-02 ("), out,
                     "the verdict or the tolerance line does not give wrong its own tolerance");
}
END_TEST

static Suite *lessons_suite(void)
{
    Suite *s = suite_create("lessons");
    TCase *def = tcase_create("definitions");
    tcase_add_loop_test(def, formula_equals_tracker, 0, nlessons);
    tcase_add_loop_test(def, every_impl_validates_against_float64, 0, nlessons);
    tcase_add_loop_test(def, same_seed_same_bits, 0, nlessons);
    tcase_add_test(def, validation_failure_exits_nonzero);
    tcase_add_test(def, each_impl_printed_with_its_own_tolerance);
    tcase_set_timeout(def, 300);
    suite_add_tcase(s, def);
    TCase *cli = tcase_create("binaries");
    tcase_add_loop_test(cli, tiny_run_exits_zero_without_leaks, 0, nlessons);
    tcase_add_loop_test(cli, first_screen_answers, 0, nlessons);
    tcase_add_loop_test(cli, csv_has_one_row_per_impl, 0, nlessons);
    tcase_add_loop_test(cli, dump_writes_every_tensor, 0, nlessons);
    tcase_add_test(cli, cli_rejects_bad_input);
    tcase_add_test(cli, cli_as_gnu_users_expect);
    tcase_add_test(cli, gemm_header_repeats_and_workers_sleep);
    tcase_add_test(cli, outputs_that_cannot_be_written_fail);
    tcase_add_loop_test(cli, help_exits_zero_for_every_lesson, 0, nlessons);
    tcase_add_loop_test(cli, cuda_versions_in_reading_order_with_an_alias, 0, nlessons);
    tcase_add_test(cli, mem_limit_skips_with_prediction_and_nothing_ran_exits_four);
    tcase_add_test(cli, device_skip_said_once_and_options_by_name);
    tcase_add_loop_test(cli, repeat_times_and_predict, 0, nlessons);
    tcase_set_timeout(cli, 300);
    suite_add_tcase(s, cli);
    return s;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* the progress lines reach a CI log (a pipe) as they are printed */
    printf("test_lessons: %d lesson definition(s) linked:", nlessons);
    for (int l = 0; l < nlessons; l++) printf(" %s", lessons[l]->program);
    printf("\n");
    return check_main(lessons_suite());
}
