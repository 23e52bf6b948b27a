/* cli.h - the command line every lesson shares.
 *
 *   build/lessonN [--size NAME] [--dims A=..,B=..] [--impl a,b,c] [--seed S] [--csv FILE] [--dump DIR]
 *                 [--mem-limit BYTES] [--help]
 *
 * A lesson describes itself in a cli_spec (its dimension names, size presets and implementations); cli_parse
 * fills a cli_options or prints one clear message. Both "--flag value" and "--flag=value" are accepted.
 * --dims overrides dimensions of the chosen preset (the default preset if --size is absent); the size is then
 * reported as "custom". Every dimension must be an integer in [1, 2^31 - 1] (cuBLAS takes int); a lesson
 * checks products of dimensions itself (size_mul in lesson_util.h).
 */
#ifndef LESSONS_CLI_H
#define LESSONS_CLI_H

#include <stddef.h>
#include <stdint.h>

#define CLI_MAX_DIMS 8
#define CLI_MAX_IMPLS 8
#define CLI_MAX_SIZES 8

typedef struct {
    const char *name;
    long long dims[CLI_MAX_DIMS]; /* in the order of cli_spec.dim_names */
} cli_size;

typedef struct {
    const char *program;     /* "lesson1" */
    const char *summary;     /* one line printed by --help */
    int ndims;
    const char *dim_names[CLI_MAX_DIMS];
    int nsizes;
    cli_size sizes[CLI_MAX_SIZES];
    const char *default_size;
    int nimpls;
    const char *impl_names[CLI_MAX_IMPLS];
} cli_spec;

typedef struct {
    char size_name[32];           /* preset name, or "custom" when --dims changed it */
    long long dims[CLI_MAX_DIMS];
    int nimpl;                    /* implementations to run, in the order given */
    int impl[CLI_MAX_IMPLS];      /* indices into cli_spec.impl_names */
    uint64_t seed;
    const char *csv_path;         /* NULL: no CSV */
    const char *dump_dir;         /* NULL: no dumps */
    size_t mem_limit;             /* bytes; default half of physical RAM */
} cli_options;

enum { CLI_OK = 0, CLI_HELP = 1, CLI_ERROR = 2 };

/* CLI_OK: run. CLI_HELP: usage was printed, exit 0. CLI_ERROR: one message was printed to stderr, exit 2. */
int cli_parse(const cli_spec *spec, int argc, char **argv, cli_options *out);

/* "4G", "512M", "64K", "1000" (bytes), optional "B"/"iB" suffix, powers of 1024. Returns 0 on success. */
int cli_parse_bytes(const char *s, size_t *out);

/* "B=8192,G=8,K=64,N=64" for tables and the CSV's dims column. */
void cli_format_dims(const cli_spec *spec, const long long *dims, char *buf, size_t len);

size_t cli_default_mem_limit(void); /* half of physical RAM */

#endif
