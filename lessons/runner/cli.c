/* cli.c - parsing and validation of the shared lesson command line. */
#define _DEFAULT_SOURCE
#include "cli.h"
#include "version.h"
#include "gemm_cpu.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEED_DEFAULT 1234u

typedef enum {
    OPT_SIZE, OPT_DIMS, OPT_IMPL, OPT_SEED, OPT_CSV, OPT_DUMP, OPT_MEM_LIMIT, OPT_TIME_LIMIT, OPT_TIMELINE,
    OPT_REPEAT, OPT_TIMES, OPT_PREDICT, /* measurement: the bench's options (cli.h) */
    OPT_SNAPSHOT, OPT_THREADS,
    OPT_COMMON
} common_option;
static const char *const common_flags[OPT_COMMON] = {
    "--size",  "--dims",      "--impl",       "--seed",      "--csv",
    "--dump",  "--mem-limit", "--time-limit", "--timeline",  "--repeat",
    "--times", "--predict",   "--snapshot",   "--threads"};
#define TIME_LIMIT_DEFAULT 120

int cli_fail(const lesson *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", L->program);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (try --help)\n");
    va_end(ap);
    return CLI_ERROR;
}

size_t cli_default_mem_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return (size_t)4 << 30; /* unknown: a conservative 4 GiB */
    return (size_t)pages * (size_t)page / 2;
}

int cli_parse_bytes(const char *s, size_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno == ERANGE) return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    case 'T': case 't': shift = 40; end++; break;
    default: break;
    }
    if (shift && (end[0] == 'i' && end[1] == 'B')) end += 2;
    else if (*end == 'B') end++;
    if (*end) return -1;
    if (v == 0 || v > (SIZE_MAX >> shift)) return -1;
    *out = (size_t)v << shift;
    return 0;
}

static void usage(const lesson *L)
{
    printf("%s - %s\n\nusage: build/%s [options]\n\n", L->program, L->summary, L->program);
    printf("  --size NAME        size preset (default %s):\n", L->default_size);
    for (int s = 0; s < lesson_nsizes(L); s++) {
        char dims[256];
        cli_format_dims(L, L->sizes[s].dims, dims, sizeof dims);
        printf("                       %-8s %s\n", L->sizes[s].name, dims);
    }
    printf("  --dims K=V,...     override dimensions of the preset (names:");
    for (int d = 0; d < lesson_ndims(L); d++) printf(" %s", L->dim_names[d]);
    printf(")\n  --impl a,b,...     implementations to run, in order (default: all):\n");
    for (int i = 0; i < lesson_nimpls(L); i++)
        printf("                       %-8s %s\n", L->impls[i].name, L->impls[i].about);
    int alias = lesson_cuda_alias_impl(L);
    if (alias >= 0) {
        printf("                       %-8s = %s, an alias: of the versions fastest first (",
               LESSON_CUDA_ALIAS, L->impls[alias].name);
        for (int k = 0; k < LESSON_MAX_IMPLS && L->cuda_order[k]; k++)
            printf("%sv%d", k ? " " : "", L->cuda_order[k]);
        printf("),\n                                  the first that fits the problem and the device\n");
    }
    printf("  --seed S           random seed for the inputs (default %u)\n", SEED_DEFAULT);
    printf("  --csv FILE         append one row per implementation to FILE (header written if new)\n");
    printf("  --dump DIR         write inputs and every output and gradient as NumPy .npy files\n");
    printf("  --mem-limit BYTES  skip an implementation whose predicted peak exceeds this (4G, 512M, ...;\n");
    printf("                     default: half of this machine's RAM)\n");
    printf(
        "  --time-limit S     skip a CPU implementation estimated to take longer than S seconds (from its\n");
    printf("                     multiply-adds and this machine's measured GEMM rate; default %d)\n",
           TIME_LIMIT_DEFAULT);
    printf("  --timeline FILE    write every tracked allocation and free of each run as CSV\n");
    printf(
        "  --snapshot FILE    the same as a PyTorch memory snapshot (pickle) for pytorch.org/memory_viz\n");
    printf("  --repeat N         one warm-up run, then N timed runs of each implementation; the table and "
           "CSV\n");
    printf("                     report the median times (default 1: one run, no warm-up)\n");
    printf("  --times FILE       append every timed run's forward and backward ms as CSV (the spread)\n");
    printf(
        "  --predict          run nothing: print each implementation's memory formula; with --csv append\n");
    printf("                     one row per implementation with device 'predicted' and no times\n");
    printf("  --threads N        the CPU GEMM libraries' threads (default: the cores available, %d here;\n"
           "                     OPENBLAS_NUM_THREADS or OMP_NUM_THREADS when set)\n",
           gemm_cpu_cores_available());
    for (int k = 0; k < lesson_nopts(L); k++) {
        const lesson_option *op = &L->opts[k];
        char head[40];
        snprintf(head, sizeof head, "%s%s", op->flag, op->names ? " NAME" : op->takes_value ? " K" : "");
        printf("  %-18s %s", head, op->help);
        if (op->names) printf(" (default %s)", op->names[op->def]);
        else if (op->takes_value) printf(" (default %lld)", op->def);
        printf("\n");
    }
    printf("  -h, --help         this text\n");
    printf("  --version          the program's version and the commit it was built from\n");
    printf(
        "\nOptions may be abbreviated to a unique prefix; a repeated option: the last one wins; \"--\" ends "
        "the\n"
        "options. Exit status: 0 every implementation that ran is validated (PASS); 1 one FAILED validation\n"
        "against float64, or a memory formula disagreed with the tracker; 2 bad input (a flag, dimensions, "
        "an\n"
        "output path, two outputs on one file); 3 out of memory; 4 nothing ran (every implementation was\n"
        "skipped: no device, over --mem-limit or --time-limit); 5 an output (--csv, --times, --timeline,\n"
        "--snapshot, --dump, stdout) could not be written; every output file is then left as it was.\n");
}

static int find_size(const lesson *L, const char *name)
{
    for (int s = 0; s < lesson_nsizes(L); s++)
        if (strcmp(L->sizes[s].name, name) == 0) return s;
    return -1;
}

/* A decimal integer in [lo, hi], the whole string. */
static int parse_ll(const char *s, long long lo, long long hi, long long *out)
{
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int parse_dims(const lesson *L, const char *arg, long long *dims)
{
    char buf[512];
    if (strlen(arg) >= sizeof buf) return cli_fail(L, "--dims '%s' is too long", arg);
    strcpy(buf, arg);
    if (!buf[0]) return cli_fail(L, "--dims needs NAME=VALUE pairs");
    size_t len =
        strlen(buf); /* strtok_r below would skip an empty pair: "B=3," and "B=3,,G=2" are refused here */
    if (buf[0] == ',' || buf[len - 1] == ',' || strstr(buf, ",,"))
        return cli_fail(L, "--dims '%s' has an empty pair (NAME=VALUE pairs, separated by single commas)",
                        arg);
    unsigned given = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return cli_fail(L, "--dims entry '%s' is not NAME=VALUE", tok);
        *eq = '\0';
        int d = -1;
        for (int i = 0; i < lesson_ndims(L); i++)
            if (strcmp(L->dim_names[i], tok) == 0) d = i;
        if (d < 0) return cli_fail(L, "--dims: unknown dimension '%s'", tok);
        if (given & (1u << d)) return cli_fail(L, "--dims: %s is given twice", tok);
        given |= 1u << d;
        if (parse_ll(eq + 1, 1, INT_MAX, &dims[d]) != 0)
            return cli_fail(L, "--dims: %s='%s' must be an integer from 1 to 2147483647", tok, eq + 1);
    }
    return CLI_OK;
}

static int parse_impls(const lesson *L, const char *arg, cli_options *o)
{
    char buf[256];
    if (strlen(arg) >= sizeof buf) return cli_fail(L, "--impl '%s' is too long", arg);
    strcpy(buf, arg);
    o->nimpl = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = lesson_find_impl(L, tok);
        if (found < 0) {
            char names[256] = "";
            for (int i = 0; i < lesson_nimpls(L); i++) {
                strcat(names, i ? "," : "");
                strcat(names, L->impls[i].name);
            }
            if (lesson_cuda_alias_impl(L) >= 0) strcat(names, "," LESSON_CUDA_ALIAS);
            return cli_fail(L, "--impl: unknown implementation '%s' (choose from %s)", tok, names);
        }
        for (int i = 0; i < o->nimpl; i++)
            if (o->impl[i] == found) return cli_fail(L, "--impl: '%s' is listed twice", tok);
        if (o->nimpl == LESSON_MAX_IMPLS) return cli_fail(L, "--impl: too many names");
        o->impl_name[o->nimpl] =
            strcmp(tok, LESSON_CUDA_ALIAS) == 0 ? LESSON_CUDA_ALIAS : L->impls[found].name;
        o->impl[o->nimpl++] = found;
    }
    if (o->nimpl == 0) return cli_fail(L, "--impl needs at least one name");
    return CLI_OK;
}

static int set_common(const lesson *L, common_option k, const char *val, cli_options *o, const char **size,
                      const char **dims_arg)
{
    switch (k) {
    case OPT_SIZE:
        if (find_size(L, val) < 0) return cli_fail(L, "--size: unknown size '%s'", val);
        *size = val;
        return CLI_OK;
    case OPT_DIMS: *dims_arg = val; return CLI_OK;
    case OPT_IMPL: return parse_impls(L, val, o);
    case OPT_SEED: {
        errno = 0;
        char *end;
        if (*val == '-' || !*val)
            return cli_fail(L, "--seed '%s' must be an integer from 0 to %llu", val,
                            (unsigned long long)UINT64_MAX);
        o->seed = strtoull(val, &end, 10);
        if (*end || errno == ERANGE)
            return cli_fail(L, "--seed '%s' must be an integer from 0 to %llu", val,
                            (unsigned long long)UINT64_MAX);
        return CLI_OK;
    }
    case OPT_CSV:
    case OPT_DUMP:
    case OPT_TIMELINE:
    case OPT_TIMES:
    case OPT_SNAPSHOT:
        if (!*val)
            return cli_fail(L, "%s needs a %s", common_flags[k], k == OPT_DUMP ? "directory" : "file name");
        *(k == OPT_CSV ? &o->csv_path : k == OPT_DUMP ? &o->dump_dir : k == OPT_TIMES ? &o->times_path
          : k == OPT_SNAPSHOT ? &o->snapshot_path : &o->timeline_path) = val;
        return CLI_OK;
    case OPT_REPEAT: {
        long long n;
        if (parse_ll(val, 1, CLI_MAX_REPEAT, &n) != 0)
            return cli_fail(L, "--repeat '%s' must be an integer from 1 to %d", val, CLI_MAX_REPEAT);
        o->repeat = (int)n;
        return CLI_OK;
    }
    case OPT_PREDICT: break; /* a flag: set in cli_parse */
    case OPT_THREADS: {
        long long n;
        if (parse_ll(val, 1, CLI_MAX_THREADS, &n) != 0)
            return cli_fail(L, "--threads '%s' must be an integer from 1 to %d", val, CLI_MAX_THREADS);
        o->threads = (int)n;
        return CLI_OK;
    }
    case OPT_MEM_LIMIT:
        if (cli_parse_bytes(val, &o->mem_limit) != 0)
            return cli_fail(L, "--mem-limit '%s' is not a positive size like 4G, 512M or 1000000", val);
        return CLI_OK;
    case OPT_TIME_LIMIT: {
        long long v;
        if (parse_ll(val, 1, 1000000000, &v) != 0)
            return cli_fail(L, "--time-limit '%s' must be a whole number of seconds from 1", val);
        o->time_limit = (double)v;
        return CLI_OK;
    }
    case OPT_COMMON: break;
    }
    return CLI_ERROR;
}

static void set_defaults(const lesson *L, cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = SEED_DEFAULT;
    o->mem_limit = cli_default_mem_limit();
    o->repeat = 1;
    o->time_limit = TIME_LIMIT_DEFAULT;
    o->nimpl = lesson_nimpls(L);
    for (int i = 0; i < lesson_nimpls(L); i++) o->impl[i] = i, o->impl_name[i] = L->impls[i].name;
    for (int k = 0; k < lesson_nopts(L); k++) o->opts[k] = L->opts[k].def;
}

static int apply_size(const lesson *L, const char *size, const char *dims_arg, cli_options *o)
{
    const lesson_size *preset = &L->sizes[find_size(L, size)];
    snprintf(o->size_name, sizeof o->size_name, "%s", preset->name);
    memcpy(o->dims, preset->dims, sizeof o->dims);
    if (dims_arg) {
        if (parse_dims(L, dims_arg, o->dims) != CLI_OK) return CLI_ERROR;
        if (memcmp(o->dims, preset->dims, sizeof o->dims) != 0)
            snprintf(o->size_name, sizeof o->size_name, "custom");
    }
    return CLI_OK;
}

/* getopt_long's table: the common options (val = their index), the lesson's own (val = OPT_COMMON + k),
 * --help and --version. Long names without their leading "--". */
enum { OPT_HELP = 'h', OPT_VERSION = 256 + OPT_COMMON + LESSON_MAX_OPTS };
static void long_options(const lesson *L, struct option *lo)
{
    int n = 0;
    for (int j = 0; j < OPT_COMMON; j++)
        lo[n++] = (struct option){common_flags[j] + 2, j == OPT_PREDICT ? no_argument : required_argument,
                                  NULL, 256 + j};
    for (int k = 0; k < lesson_nopts(L); k++)
        lo[n++] =
            (struct option){L->opts[k].flag + 2, L->opts[k].takes_value ? required_argument : no_argument,
                            NULL, 256 + OPT_COMMON + k};
    lo[n++] = (struct option){"help", no_argument, NULL, OPT_HELP};
    lo[n++] = (struct option){"version", no_argument, NULL, OPT_VERSION};
    lo[n] = (struct option){NULL, 0, NULL, 0};
}

/* getopt_long reports a bad option as '?' (or ':' for a missing value) without saying which: name the
 * argument. A long option may be abbreviated to any unique prefix (GNU's rule), so the name is matched the
 * same way. */
static int bad_option(const lesson *L, const struct option *lo, const char *arg, int missing)
{
    if (strncmp(arg, "--", 2) != 0) return cli_fail(L, "unknown option '%s'", arg);
    size_t len = strcspn(arg + 2, "=");
    const struct option *hit = NULL;
    int hits = 0;
    for (const struct option *o = lo; o->name; o++) {
        if (strncmp(o->name, arg + 2, len) != 0) continue;
        if (strlen(o->name) == len) {
            hit = o, hits = 1;
            break;
        }
        hit = o, hits++;
    }
    if (hits > 1)
        return cli_fail(L, "option '%.*s' is ambiguous (an abbreviation of more than one)", (int)len + 2,
                        arg);
    if (!hit) return cli_fail(L, "unknown option '%.*s'", (int)len + 2, arg);
    if (missing || hit->has_arg == required_argument)
        return cli_fail(L, "option --%s needs a value", hit->name);
    return cli_fail(L, "option --%s takes no value", hit->name);
}

static void version(const lesson *L)
{
    printf("%s (gpu-memory-lessons) %s\n", L->program, LESSON_VERSION);
    printf("built from %s; lesson %d: %s\n", LESSON_GIT_DESCRIBE, L->number, L->summary);
}

int cli_parse(const lesson *L, int argc, char **argv, cli_options *o)
{
    set_defaults(L, o);
    const char *size = L->default_size, *dims_arg = NULL;
    struct option lo[OPT_COMMON + LESSON_MAX_OPTS + 3];
    long_options(L, lo);
    optind = 0; /* GNU: a full re-initialisation, so lesson_main may parse more than once in one process */
    opterr = 0; /* the messages below name the program and the option */
    for (;;) {
        int c = getopt_long(argc, argv, ":h", lo, NULL);
        if (c == -1) break;
        if (c == OPT_HELP) {
            usage(L);
            return CLI_HELP;
        }
        if (c == OPT_VERSION) {
            version(L);
            return CLI_HELP;
        }
        if (c == '?' || c == ':') {
            const char *arg = argv[optind - 1];
            if (optopt && optopt != OPT_HELP && optopt < 256)
                return cli_fail(L, "unknown option '-%c'", optopt);
            return bad_option(L, lo, arg, c == ':');
        }
        int k = c - 256;
        if (k == OPT_PREDICT) {
            o->predict = 1;
            continue;
        }
        if (k >= OPT_COMMON) {
            const lesson_option *op = &L->opts[k - OPT_COMMON];
            if (!op->takes_value) o->opts[k - OPT_COMMON] = 1;
            else if (op->names) {
                int v = 0;
                while (op->names[v] && strcmp(op->names[v], optarg) != 0) v++;
                if (!op->names[v])
                    return cli_fail(L, "%s '%s' is not one of its names (--help)", op->flag, optarg);
                o->opts[k - OPT_COMMON] = v;
            } else if (parse_ll(optarg, op->min, op->max, &o->opts[k - OPT_COMMON]) != 0)
                return cli_fail(L, "%s '%s' must be an integer from %lld to %lld", op->flag, optarg, op->min,
                                op->max);
            continue;
        }
        if (set_common(L, (common_option)k, optarg, o, &size, &dims_arg) != CLI_OK) return CLI_ERROR;
    }
    if (optind < argc) return cli_fail(L, "unexpected argument '%s'", argv[optind]);
    return apply_size(L, size, dims_arg, o);
}

void cli_format_dims(const lesson *L, const long long *dims, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 0; d < lesson_ndims(L) && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%lld", d ? "," : "", L->dim_names[d], dims[d]);
}
