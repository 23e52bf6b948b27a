#include "report.h"

#define _DEFAULT_SOURCE /* access() */
#include "output_file.h"

#include <errno.h>
#include <unistd.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

void format_bytes_exact(size_t bytes, char *buf, size_t len)
{
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%zu", bytes);
    size_t o = 0;
    for (int i = 0; i < nd && o + 2 < len; i++) {
        if (i && (nd - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

void format_bytes_human(size_t bytes, char *buf, size_t len)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) snprintf(buf, len, "%zu B", bytes);
    else snprintf(buf, len, "%.2f %s", v, units[u]);
}

void report_table(FILE *f, const impl_row *rows, int n)
{
    fprintf(f, "%-8s %28s %28s %7s %11s %11s %13s %6s  %s\n", "impl", "peak bytes", "live after forward",
            "allocs", "forward ms", "backward ms", "max rel err", "GEMM", "device");
    fprintf(f, "%-8s %28s %28s %7s %11s %11s %13s %6s\n", "", "", "", "", "", "", "(vs float64)", "share");
    for (int i = 0; i < n; i++) {
        const impl_row *r = &rows[i];
        if (!r->ran) {
            int last = i; /* rows skipped for one reason (a CPU-only build's CUDA versions): one line */
            while (last + 1 < n && !rows[last + 1].ran && strcmp(rows[last + 1].note, r->note) == 0) last++;
            if (last - i >= 2) fprintf(f, "%s ... %s (%d versions) skipped: %s\n", r->impl, rows[last].impl,
                                       last - i + 1, r->note);
            else for (int k = i; k <= last; k++) fprintf(f, "%-8s skipped: %s\n", rows[k].impl, rows[k].note);
            i = last;
            continue;
        }
        char peak[32], live[32], hp[16], hl[16], pk[64], lv[64], rel[24], share[16] = "-";
        format_bytes_exact(r->peak_bytes, peak, sizeof peak);
        format_bytes_exact(r->forward_live_bytes, live, sizeof live);
        format_bytes_human(r->peak_bytes, hp, sizeof hp);
        format_bytes_human(r->forward_live_bytes, hl, sizeof hl);
        snprintf(pk, sizeof pk, "%s (%s)", peak, hp);
        snprintf(lv, sizeof lv, "%s (%s)", live, hl);
        if (isnan(r->max_rel_err)) snprintf(rel, sizeof rel, r->failed ? "NaN FAIL" : "n/a");
        else snprintf(rel, sizeof rel, "%.2e%s", r->max_rel_err, r->failed ? " FAIL" : "");
        if (!isnan(r->gemm_share))
            snprintf(share, sizeof share, r->gemm_share < 0.005 ? "<1%%" : "%.0f%%", 100.0 * r->gemm_share);
        fprintf(f, "%-8s %28s %28s %7zu %11.2f %11.2f %13s %6s  %s%s\n", r->impl, pk, lv, r->allocs,
                r->forward_ms, r->backward_ms, rel, share, r->device,
                r->emulated ? " (emulated: times mean nothing)" : "");
    }
    /* The share is a replay's time over the run's: the replay can take longer than the run did. */
    for (int i = 0; i < n; i++)
        if (rows[i].ran && rows[i].gemm_share > 1.0) {
            fprintf(f, "GEMM share over 100%%: each GEMM shape's fastest call, replayed alone on fresh "
                       "operands, times its calls, took longer than the whole run (the run's calls found "
                       "their operands in cache): the run is all GEMM\n");
            break;
        }
}

static int report_one(FILE *f, const char *impl, const char *what, size_t pred, size_t meas, int ran)
{
    if (!f) return ran && pred != meas; /* counting only */
    char p[32], m[32];
    format_bytes_exact(pred, p, sizeof p);
    if (!ran) {
        fprintf(f, "%-8s %-20s %18s %18s  %s\n", impl, what, pred == SIZE_MAX ? "overflow" : p, "-",
                "(not run)");
        return 0;
    }
    format_bytes_exact(meas, m, sizeof m);
    int ok = pred == meas;
    fprintf(f, "%-8s %-20s %18s %18s  %s\n", impl, what, p, m, ok ? "equal" : "MISMATCH");
    return !ok;
}

int report_predictions(FILE *f, const impl_row *rows, int n)
{
    int mismatches = 0;
    if (f) fprintf(f, "%-8s %-20s %18s %18s  %s\n", "impl", "quantity", "formula", "tracker", "");
    for (int i = 0; i < n; i++) {
        const impl_row *r = &rows[i];
        mismatches += report_one(f, r->impl, "peak bytes", r->predicted_peak, r->peak_bytes, r->ran);
        mismatches += report_one(f, r->impl, "live after forward", r->predicted_forward_live,
                                 r->forward_live_bytes, r->ran);
        if (r->predicted_allocs)
            mismatches += report_one(f, r->impl, "allocations", r->predicted_allocs, r->allocs, r->ran);
    }
    return mismatches;
}

static const char CSV_HEADER[] =
    "lesson,impl,size,dims,peak_bytes,forward_live_bytes,allocs,forward_ms,backward_ms,max_rel_err,device,"
    "gemm_share\n";

/* path must be appendable: its directory writable and, if it is a file with content, its first line exactly
 * header. Nothing is created here (output_file.h makes the temporary at the end of the run). A device or FIFO
 * (/dev/null, /dev/full) is written in place and has no header to read. -1 and one message otherwise. */
static int check_appendable(const char *program, const char *flag, const char *path, const char *header)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "%s: %s %s is a directory\n", program, flag, path);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) return 0;
        FILE *f = fopen(path, "r");
        if (!f) {
            fprintf(stderr, "%s: cannot open %s %s for appending: %s\n", program, flag, path,
                    strerror(errno));
            return -1;
        }
        char first[160] = "";
        int empty = fgets(first, sizeof first, f) == NULL;
        fclose(f);
        if (!empty && strcmp(first, header) != 0) {
            fprintf(stderr,
                    "%s: %s %s has content that is not a lesson CSV (its first line is not the header "
                    "lesson,impl,...); refusing to append\n",
                    program, flag, path);
            return -1;
        }
    }
    const char *slash = strrchr(path, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "%s: cannot open %s %s for appending: %s\n", program, flag, path, strerror(errno));
        return -1;
    }
    return 0;
}

int report_prepare_outputs(const char *program, const char *csv_path, const char *dump_dir)
{
    if (csv_path && check_appendable(program, "--csv", csv_path, CSV_HEADER) != 0) return -1;
    if (dump_dir) {
        if (output_make_dir(dump_dir) != 0 || access(dump_dir, W_OK) != 0) {
            fprintf(stderr, "%s: --dump %s is not a writable directory (%s)\n", program, dump_dir,
                    strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* The header where the stream is still empty: a new file, an empty one, or a device. */
static void header_if_new(FILE *f, const char *header)
{
    if (ftell(f) <= 0) fputs(header, f);
}

void report_csv(FILE *f, int lesson, const char *size, const char *dims, const impl_row *rows, int n)
{
    header_if_new(f, CSV_HEADER);
    for (int i = 0; i < n; i++) {
        const impl_row *r = &rows[i];
        if (r->predicted && !r->ran) {
            /* overflow */
            if (r->predicted_peak == SIZE_MAX || r->predicted_forward_live == SIZE_MAX) continue;
            fprintf(f, "%d,%s,%s,\"%s\",%zu,%zu,", lesson, r->impl, size, dims, r->predicted_peak,
                    r->predicted_forward_live);
            if (r->predicted_allocs) fprintf(f, "%zu", r->predicted_allocs);
            fprintf(f, ",,,,predicted,\n");
            continue;
        }
        if (!r->ran) continue;
        fprintf(f, "%d,%s,%s,\"%s\",%zu,%zu,%zu,%.4f,%.4f,", lesson, r->impl, size, dims, r->peak_bytes,
                r->forward_live_bytes, r->allocs, r->forward_ms, r->backward_ms);
        if (!isnan(r->max_rel_err)) fprintf(f, "%.6e", r->max_rel_err);
        fprintf(f, ",%s,", r->device);
        if (!isnan(r->gemm_share)) fprintf(f, "%.4g", r->gemm_share);
        fputc('\n', f);
    }
}

static const char TIMES_HEADER[] = "lesson,impl,size,dims,run,forward_ms,backward_ms,device\n";

int report_prepare_times(const char *program, const char *path)
{
    return path ? check_appendable(program, "--times", path, TIMES_HEADER) : 0;
}

void report_times_csv(FILE *f, int lesson, const char *size, const char *dims, const impl_row *row,
                      const double *forward_ms, const double *backward_ms, int runs)
{
    header_if_new(f, TIMES_HEADER);
    for (int k = 0; k < runs; k++)
        fprintf(f, "%d,%s,%s,\"%s\",%d,%.4f,%.4f,%s\n", lesson, row->impl, size, dims, k + 1, forward_ms[k],
                backward_ms[k], row->device);
}

void report_launches(FILE *f, const impl_row *rows, int n)
{
    int any = 0;
    for (int k = 0; k < n; k++) {
        if (!rows[k].ran || !rows[k].launches) continue;
        fprintf(f, "%s %s %llu",
                any ? ","
                    : "launches per pass (kernel launches + cuBLAS calls + graph launches, "
                      "counted on the host):",
                rows[k].impl, rows[k].launches);
        any = 1;
    }
    if (any) fprintf(f, "\n");
}

void report_graphs(FILE *f, const impl_row *rows, int n)
{
    for (int k = 0; k < n; k++) {
        const impl_row *g = &rows[k];
        int v = 0;
        if (!g->ran || !(g->graph_setup_ms > 0 || g->graph_replays || g->graph_captures)) continue;
        fprintf(f,
                "CUDA graphs, %s: capture + instantiate %.3f ms once per shape (warm-up run, in no pass's "
                "time); the "
                "timed pass %s",
                g->impl, g->graph_setup_ms,
                g->graph_captures ? "captured again (its buffers moved), set-up left out of its time"
                                  : "replayed them");
        const impl_row *plain = NULL;
        if (sscanf(g->impl, "cuda-v%d", &v) == 1)
            for (int j = 0; j < n; j++) {
                int w = 0;
                if (rows[j].ran && sscanf(rows[j].impl, "cuda-v%d", &w) == 1 && w == v - 1) plain = &rows[j];
            }
        if (plain) {
            double saved = plain->forward_ms + plain->backward_ms - g->forward_ms - g->backward_ms;
            fprintf(f,
                    "; per pass %.3f ms against %s's %.3f ms, %llu launches against %llu: the graph saves "
                    "%.3f ms%s",
                    g->forward_ms + g->backward_ms, plain->impl, plain->forward_ms + plain->backward_ms,
                    g->launches, plain->launches, saved,
                    g->emulated ? " (emulated: the times mean nothing)" : "");
        } else if (v > 1) {
            fprintf(f, "; run it beside cuda-v%d (--impl cuda-v%d,%s) to see what the graph saves per pass",
                    v - 1, v - 1, g->impl);
        }
        fprintf(f, "\n");
    }
}

void format_duration(double seconds, char *buf, size_t len)
{
    if (seconds < 60.0) snprintf(buf, len, "%.1f s", seconds);
    else if (seconds < 3600.0) snprintf(buf, len, "%.0f min", seconds / 60.0);
    else if (seconds < 86400.0) snprintf(buf, len, "%.1f hours", seconds / 3600.0);
    else snprintf(buf, len, "%.1f days", seconds / 86400.0);
}
