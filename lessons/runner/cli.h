/* cli.h - the command line every lesson shares, read from the lesson's definition (lesson.h).
 *
 *   build/lessonN [--size NAME] [--dims A=..,B=..] [--impl a,b,c] [--seed S] [--csv FILE] [--dump DIR]
 *                 [--mem-limit BYTES] [--time-limit SECONDS] [--timeline FILE] [--repeat N] [--times FILE]
 *                 [--predict] [--threads N] [lesson options] [-h|--help] [--version] [--]
 *
 * --repeat, --times and --predict are for the bench (plots/bench.sh): N timed runs after a warm-up with the
 * median reported, every run's times to a CSV, and rows for what is only predicted.
 * cli_parse (getopt_long) fills a cli_options or prints one clear message. Both "--flag value" and
 * "--flag=value" are accepted, a unique prefix names a flag, a repeated option's last value wins, "--" ends
 * the options, -h is --help; --version prints lessons/runner/version.h. --dims overrides dimensions of the
 * chosen preset (the default preset if --size is absent); the size is then reported as "custom". Every
 * dimension must be an integer in [1, 2^31 - 1] (cuBLAS takes int); the lesson's make_problem checks the rest
 * (products, lesson rules).
 */
#ifndef LESSONS_CLI_H
#define LESSONS_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "lesson.h"

typedef struct {
    char size_name[32];                /* preset name, or "custom" when --dims changed it */
    long long dims[LESSON_MAX_DIMS];
    long long opts[LESSON_MAX_OPTS];   /* the lesson's own options, in the order of lesson.opts */
    int nimpl;                         /* implementations to run, in the order given */
    int impl[LESSON_MAX_IMPLS];        /* indices into lesson.impls */
    const char *impl_name[LESSON_MAX_IMPLS]; /* each as asked: "cuda" stays "cuda" (the CSV's impl column) */
    uint64_t seed;
    const char *csv_path;              /* NULL: no CSV */
    const char *dump_dir;              /* NULL: no dumps */
    const char *timeline_path;         /* NULL: no allocation timeline */
    /* NULL: no PyTorch memory snapshot (--snapshot, lessons/runner/snapshot.h) */
    const char *snapshot_path;
    size_t mem_limit;                  /* bytes; default half of physical RAM */
    /* seconds a host implementation may be estimated to take; default 120 */
    double time_limit;
    int repeat;                        /* timed runs per implementation (median reported); 1: no warm-up */
    const char *times_path;            /* NULL: no per-run times CSV */
    int predict;                       /* run nothing; print (and --csv) the memory formulas */
    int threads;                       /* --threads: the CPU GEMMs' threads; 0: the GEMM layer's default */
} cli_options;

#define CLI_MAX_REPEAT 100
#define CLI_MAX_THREADS 1024

enum { CLI_OK = 0, CLI_HELP = 1, CLI_ERROR = 2 };

/* The exit status of build/lessonN (printed by --help, README's "What a lesson prints"). */
enum {
    /* every implementation that ran is validated and every formula equals the tracker */
    EXIT_PASS = 0,
    /* a FAIL against float64, a formula MISMATCH, or --repeat runs whose memory differed */
    EXIT_FAILED = 1,
    /* the command line, the dimensions, an output path that cannot be written or is taken */
    EXIT_BAD_INPUT = 2,
    EXIT_NO_MEMORY = 3, /* an allocation failed (lessons/host/track.c exits with it) */
    /* every implementation was skipped (no device, --mem-limit, --time-limit, unfit) */
    EXIT_NOTHING_RAN = 4,
    EXIT_WRITE_FAILED =
        5 /* --csv, --times, --timeline, --snapshot, --dump or stdout not written to the end */
};

/* CLI_OK: run. CLI_HELP: usage (or --version) was printed, exit 0. CLI_ERROR: one message was printed to
 * stderr, exit 2. */
int cli_parse(const lesson *L, int argc, char **argv, cli_options *out);

/* "4G", "512M", "64K", "1000" (bytes), optional "B"/"iB" suffix, powers of 1024. Returns 0 on success. */
int cli_parse_bytes(const char *s, size_t *out);

/* "B=8192,G=8,K=64,N=64" for tables and the CSV's dims column. */
void cli_format_dims(const lesson *L, const long long *dims, char *buf, size_t len);

size_t cli_default_mem_limit(void); /* half of physical RAM */

/* Prints "<program>: <message> (try --help)" to stderr and returns CLI_ERROR. */
int cli_fail(const lesson *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
