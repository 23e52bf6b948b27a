/* cli.c - parsing and validation of the shared lesson command line. */
#define _DEFAULT_SOURCE
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEED_DEFAULT 1234u

static int fail(const cli_spec *spec, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "%s: ", spec->program);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, " (try --help)\n");
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

static void usage(const cli_spec *spec)
{
    printf("%s - %s\n\nusage: build/%s [options]\n\n", spec->program, spec->summary, spec->program);
    printf("  --size NAME        size preset (default %s):\n", spec->default_size);
    for (int s = 0; s < spec->nsizes; s++) {
        char dims[256];
        cli_format_dims(spec, spec->sizes[s].dims, dims, sizeof dims);
        printf("                       %-8s %s\n", spec->sizes[s].name, dims);
    }
    printf("  --dims K=V,...     override dimensions of the preset (names:");
    for (int d = 0; d < spec->ndims; d++) printf(" %s", spec->dim_names[d]);
    printf(")\n  --impl a,b,...     implementations to run, in order (default: all):");
    for (int i = 0; i < spec->nimpls; i++) printf(" %s", spec->impl_names[i]);
    printf("\n  --seed S           random seed for the inputs (default %u)\n", SEED_DEFAULT);
    printf("  --csv FILE         append one row per implementation to FILE (header written if new)\n");
    printf("  --dump DIR         write inputs and every output and gradient as NumPy .npy files\n");
    printf("  --mem-limit BYTES  skip an implementation whose predicted peak exceeds this (4G, 512M, ...;\n");
    printf("                     default: half of this machine's RAM)\n");
    printf("  --help             this text\n");
}

static int find_size(const cli_spec *spec, const char *name)
{
    for (int s = 0; s < spec->nsizes; s++)
        if (strcmp(spec->sizes[s].name, name) == 0) return s;
    return -1;
}

static int parse_dims(const cli_spec *spec, const char *arg, long long *dims)
{
    char buf[512];
    if (strlen(arg) >= sizeof buf) return fail(spec, "--dims '%s%s' is too long", "", "");
    strcpy(buf, arg);
    if (!buf[0]) return fail(spec, "--dims needs NAME=VALUE pairs%s%s", "", "");
    unsigned given = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return fail(spec, "--dims entry '%s' is not NAME=VALUE%s", tok, "");
        *eq = '\0';
        int d = -1;
        for (int i = 0; i < spec->ndims; i++)
            if (strcmp(spec->dim_names[i], tok) == 0) d = i;
        if (d < 0) return fail(spec, "--dims: unknown dimension '%s'%s", tok, "");
        if (given & (1u << d)) return fail(spec, "--dims: %s is given twice%s", tok, "");
        given |= 1u << d;
        const char *val = eq + 1;
        errno = 0;
        char *end;
        long long v = strtoll(val, &end, 10);
        if (end == val || *end || errno == ERANGE || v < 1 || v > INT_MAX)
            return fail(spec, "--dims: %s='%s' must be an integer from 1 to 2147483647", tok, val);
        dims[d] = v;
    }
    return CLI_OK;
}

static int parse_impls(const cli_spec *spec, const char *arg, cli_options *o)
{
    char buf[256];
    if (strlen(arg) >= sizeof buf) return fail(spec, "--impl '%s%s' is too long", "", "");
    strcpy(buf, arg);
    o->nimpl = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < spec->nimpls; i++)
            if (strcmp(spec->impl_names[i], tok) == 0) found = i;
        if (found < 0) {
            char names[128] = "";
            for (int i = 0; i < spec->nimpls; i++) {
                strcat(names, i ? "," : "");
                strcat(names, spec->impl_names[i]);
            }
            return fail(spec, "--impl: unknown implementation '%s' (choose from %s)", tok, names);
        }
        for (int i = 0; i < o->nimpl; i++)
            if (o->impl[i] == found) return fail(spec, "--impl: '%s' is listed twice%s", tok, "");
        o->impl[o->nimpl++] = found;
    }
    if (o->nimpl == 0) return fail(spec, "--impl needs at least one name%s%s", "", "");
    return CLI_OK;
}

int cli_parse(const cli_spec *spec, int argc, char **argv, cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = SEED_DEFAULT;
    o->mem_limit = cli_default_mem_limit();
    o->nimpl = spec->nimpls;
    for (int i = 0; i < spec->nimpls; i++) o->impl[i] = i;
    const char *size = spec->default_size, *dims_arg = NULL;
    unsigned seen = 0; /* options given so far: each may appear once */

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        char flag[32];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(spec);
            return CLI_HELP;
        }
        if (strncmp(arg, "--", 2) != 0) return fail(spec, "unexpected argument '%s'%s", arg, "");
        const char *eq = strchr(arg, '=');
        size_t flen = eq ? (size_t)(eq - arg) : strlen(arg);
        if (flen >= sizeof flag) return fail(spec, "unknown option '%s'%s", arg, "");
        memcpy(flag, arg, flen);
        flag[flen] = '\0';
        static const char *known[] = {"--size", "--dims", "--impl", "--seed", "--csv", "--dump", "--mem-limit"};
        int k = -1;
        for (int j = 0; j < 7; j++)
            if (strcmp(flag, known[j]) == 0) k = j;
        if (k < 0) return fail(spec, "unknown option '%s'%s", flag, "");
        if (seen & (1u << k)) return fail(spec, "option %s is given twice%s", flag, "");
        seen |= 1u << k;
        if (eq) val = eq + 1;
        else if (i + 1 < argc) val = argv[++i];
        else return fail(spec, "option %s needs a value%s", flag, "");

        switch (k) {
        case 0:
            if (find_size(spec, val) < 0) return fail(spec, "--size: unknown size '%s'%s", val, "");
            size = val;
            break;
        case 1: dims_arg = val; break;
        case 2:
            if (parse_impls(spec, val, o) != CLI_OK) return CLI_ERROR;
            break;
        case 3: {
            errno = 0;
            char *end;
            if (*val == '-' || !*val) return fail(spec, "--seed '%s' must be a non-negative integer%s", val, "");
            o->seed = strtoull(val, &end, 10);
            if (*end || errno == ERANGE) return fail(spec, "--seed '%s' must be a non-negative integer%s", val, "");
            break;
        }
        case 4:
            if (!*val) return fail(spec, "--csv needs a file name%s%s", "", "");
            o->csv_path = val;
            break;
        case 5:
            if (!*val) return fail(spec, "--dump needs a directory%s%s", "", "");
            o->dump_dir = val;
            break;
        case 6:
            if (cli_parse_bytes(val, &o->mem_limit) != 0)
                return fail(spec, "--mem-limit '%s' is not a positive size like 4G, 512M or 1000000%s", val, "");
            break;
        }
    }

    const cli_size *preset = &spec->sizes[find_size(spec, size)];
    snprintf(o->size_name, sizeof o->size_name, "%s", preset->name);
    memcpy(o->dims, preset->dims, sizeof o->dims);
    if (dims_arg) {
        if (parse_dims(spec, dims_arg, o->dims) != CLI_OK) return CLI_ERROR;
        if (memcmp(o->dims, preset->dims, sizeof o->dims) != 0) snprintf(o->size_name, sizeof o->size_name, "custom");
    }
    return CLI_OK;
}

void cli_format_dims(const cli_spec *spec, const long long *dims, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 0; d < spec->ndims && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%lld", d ? "," : "", spec->dim_names[d], dims[d]);
}
