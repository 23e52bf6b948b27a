/* report.h - what a lesson prints: the side-by-side table, predicted vs measured memory, and the CSV.
 *
 * CSV columns (exactly; plot scripts and other tools read them):
 *   lesson,impl,size,dims,peak_bytes,forward_live_bytes,allocs,forward_ms,backward_ms,max_rel_err,device,
 *   gemm_share   (one line in the file)
 * One row per implementation that ran (skipped ones are only in the table), plus, when a run only predicted
 * (--predict), one row per implementation with the formula's peak, live and allocation count, device
 * "predicted" and forward_ms, backward_ms and max_rel_err empty. dims is quoted because it holds
 * commas ("B=8192,G=8,K=64,N=64"). max_rel_err is always against the lesson's float64 reference: the largest
 * max|x - ref| / max|ref| over every output and gradient; empty when the reference could not run. gemm_share
 * (appended last, so readers of the older columns keep working) is the implementation's multiply-adds (its
 * work function) per second of forward + backward over this machine's measured GEMM rate (gemm_cpu.h), 4
 * significant digits: 1 means the whole run went at GEMM speed. Empty for device implementations, predicted
 * rows and implementations without a work function.
 */
#ifndef LESSONS_REPORT_H
#define LESSONS_REPORT_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    const char *impl;
    int ran;                    /* 0: skipped, see note */
    char note[200];             /* why it was skipped */
    size_t predicted_peak, predicted_forward_live;
    size_t predicted_allocs;    /* 0: the formula does not predict the count */
    size_t peak_bytes;          /* measured: highest live bytes during forward + backward, inputs included */
    /* measured: live right after forward, inputs included, dout not yet allocated */
    size_t forward_live_bytes;
    size_t allocs;              /* tracked allocations during the run */
    double forward_ms, backward_ms;
    double max_rel_err;         /* vs the float64 reference; NAN when it did not run */
    /* multiply-adds / (forward + backward time) / the measured GEMM rate; NAN: none */
    double gemm_share;
    int failed;                 /* ran, but max_rel_err exceeds the lesson's tolerance: FAIL in the table */
    int emulated;               /* a CUDA implementation run by the CPU emulation: its times mean nothing */
    int predicted;              /* not run (--predict): the CSV row carries the formula, device "predicted" */
    char device[64];            /* "cpu" or the GPU's name */
    /* device runs: kernel launches + cuBLAS calls + graph launches of the timed pass, counted by the host
     * code (cuda_launch_count), not by a profiler; 0 for host runs */
    unsigned long long launches;
    /* CUDA Graph versions: capture + instantiate milliseconds of the warm-up run (once per shape, left out of
     * every pass's time), then the timed run's graph replays and captures (a capture there: its buffers
     * moved) */
    double graph_setup_ms;
    unsigned long long graph_replays, graph_captures;
} impl_row;

/* "1,107,427,328" */
void format_bytes_exact(size_t bytes, char *buf, size_t len);
/* "1.03 GiB" */
void format_bytes_human(size_t bytes, char *buf, size_t len);
/* "42.0 s", "55 min", "2.4 hours", "3.1 days": a duration in the unit a reader expects. */
void format_duration(double seconds, char *buf, size_t len);

void report_table(FILE *f, const impl_row *rows, int n);
/* One line, when a device implementation ran: its launches per pass (kernels + cuBLAS calls + graph
 * launches). */
void report_launches(FILE *f, const impl_row *rows, int n);
/* One line per CUDA Graph version that ran: capture + instantiate time, what its timed pass replayed, and
 * what the graph saves per pass against the version it captures (cuda-v(N-1)), when that one ran too. */
void report_graphs(FILE *f, const impl_row *rows, int n);
/* Prints "predicted vs measured" per implementation; returns the number of mismatches (f NULL: only
 * counts). */
int report_predictions(FILE *f, const impl_row *rows, int n);
/* Checks --csv and --dump before anything runs, so a bad path fails in a second, not after the lesson: the
 * CSV's directory must be writable and the CSV, if it already has content, start with exactly the header
 * above (a lesson never appends to some other file); the CSV is not created here. The dump directory is
 * created (output_make_dir: removed again if the run writes nothing into it) and must be writable. Prints one
 * message prefixed with program and returns -1 on failure. Either path may be NULL. */
int report_prepare_outputs(const char *program, const char *csv_path, const char *dump_dir);
/* Appends rows to f, the CSV so far (lessons/runner/output_file.h's temporary), the header first if f is
 * empty. The caller's output_close checks that they were written. */
void report_csv(FILE *f, int lesson, const char *size, const char *dims, const impl_row *rows, int n);

/* --times: every timed run of a --repeat, one row each, so a plot can show the spread around the median:
 *   lesson,impl,size,dims,run,forward_ms,backward_ms,device
 * report_prepare_times checks the file like --csv (appendable; if not empty, this header first). */
int report_prepare_times(const char *program, const char *path);
void report_times_csv(FILE *f, int lesson, const char *size, const char *dims, const impl_row *row,
                      const double *forward_ms, const double *backward_ms, int runs);

#endif
