/* time_spread.c - the machine, the median and the fastest/slowest run of each timed implementation. */
#include "time_spread.h"

#include <string.h>
#include <unistd.h>

const char *machine_name(void)
{
    static char name[160];
    if (name[0]) return name;
    char model[120] = "an unnamed CPU", line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon) continue;
        colon += 1 + (colon[1] == ' ');
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(model, sizeof model, "%s", colon);
        break;
    }
    if (f) fclose(f);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(name, sizeof name, "%s, %ld core%s", model, cores, cores == 1 ? "" : "s");
    return name;
}

static void min_max(const double *v, int n, double *lo, double *hi)
{
    *lo = *hi = v[0];
    for (int i = 1; i < n; i++) {
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi) *hi = v[i];
    }
}

void report_time_spread(FILE *f, const impl_row *rows, int n, const double (*fwd_ms)[CLI_MAX_REPEAT],
                        const double (*bwd_ms)[CLI_MAX_REPEAT], int repeat)
{
    int timed = 0;
    for (int k = 0; k < n; k++) timed += rows[k].ran && !rows[k].emulated;
    if (!timed) return;
    if (repeat < 2) {
        fprintf(f, "\ntimes on %s: one run each (--repeat N: the median of N runs and their spread)\n",
                machine_name());
        return;
    }
    fprintf(f, "\ntimes on %s: the median of %d runs [fastest-slowest], ms\n", machine_name(), repeat);
    for (int k = 0; k < n; k++) {
        if (!rows[k].ran || rows[k].emulated) continue;
        double flo, fhi, blo, bhi;
        min_max(fwd_ms[k], repeat, &flo, &fhi);
        min_max(bwd_ms[k], repeat, &blo, &bhi);
        fprintf(f, "  %-8s forward %.2f [%.2f-%.2f]  backward %.2f [%.2f-%.2f]%s%s\n", rows[k].impl,
                rows[k].forward_ms, flo, fhi, rows[k].backward_ms, blo, bhi,
                strcmp(rows[k].device, "cpu") ? "  on " : "",
                strcmp(rows[k].device, "cpu") ? rows[k].device : "");
    }
}
