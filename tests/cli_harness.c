#define _POSIX_C_SOURCE 200809L
#include "cli_harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int run_lesson(const char *binary, const char *args, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", binary, args);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, len - 1, f);
    out[n] = '\0';
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void assert_rejects(const char *binary, const bad_input_case *cases, size_t n)
{
    static char out[16384];
    for (size_t i = 0; i < n; i++) {
        int rc = run_lesson(binary, cases[i].args, out, sizeof out);
        ck_assert_msg(rc == 2, "'%s' exited %d, expected 2; output:\n%s", cases[i].args, rc, out);
        ck_assert_msg(strstr(out, cases[i].expect) != NULL, "'%s' printed:\n%s\nexpected to contain: %s",
                      cases[i].args, out, cases[i].expect);
    }
}

/* The last field of a CSV row (gemm_share: every host implementation that ran has a work function); -1 when it is
 * empty or not a number. */
static double gemm_share_of(const char *line)
{
    const char *last = strrchr(line, ',');
    char *end;
    double v = strtod(last + 1, &end);
    return end > last + 1 && *end == '\n' ? v : -1.0;
}

void assert_csv_rows(const char *binary, const char *args, const char *const *row_prefix, int nrows,
                     const char *row_contains)
{
    static char out[65536];
    char path[] = "/tmp/lesson_csv_XXXXXX", full[512];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    snprintf(full, sizeof full, "%s --csv %s", args, path);
    ck_assert_int_eq(run_lesson(binary, full, out, sizeof out), 0);
    ck_assert_int_eq(run_lesson(binary, full, out, sizeof out), 0);
    FILE *f = fopen(path, "r");
    char line[512];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "lesson,impl,size,dims,peak_bytes,forward_live_bytes,allocs,forward_ms,backward_ms,"
                           "max_rel_err,device,gemm_share\n");
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        const char *expect = row_prefix[rows % nrows];
        rows++;
        ck_assert_msg(strncmp(line, expect, strlen(expect)) == 0, "row %d: %s\nexpected to start: %s", rows, line,
                      expect);
        ck_assert_msg(strstr(line, row_contains) != NULL, "row %d: %s\nexpected to contain: %s", rows, line,
                      row_contains);
        ck_assert_msg(gemm_share_of(line) > 0.0, "row %d: %s\nexpected a positive gemm_share last", rows, line);
    }
    fclose(f);
    ck_assert_int_eq(rows, 2 * nrows); /* two runs appended under one header */
    unlink(path);
}

void assert_dump_files(const char *binary, const char *args, const char *const *names, const char *const *shapes,
                       const char *const *descrs, int n)
{
    static char out[65536];
    char dir[] = "/tmp/lesson_dump_XXXXXX", full[512], path[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(full, sizeof full, "%s --dump %s/sub", args, dir);
    ck_assert_int_eq(run_lesson(binary, full, out, sizeof out), 0);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/sub/%s.npy", dir, names[i]);
        FILE *f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "missing %s", path);
        char head[128] = {0};
        ck_assert_uint_ge(fread(head, 1, 127, f), 64); /* a scalar's file is its 64-byte header and 4 bytes */
        fclose(f);
        ck_assert_msg(memcmp(head, "\x93NUMPY\x01\x00", 8) == 0, "%s: bad magic", path);
        ck_assert_msg(strstr(head + 10, descrs[i]) && strstr(head + 10, shapes[i]), "%s header: %s (expected %s %s)",
                      path, head + 10, descrs[i], shapes[i]);
        unlink(path);
    }
    /* meta.json: the dims, seed and versions beside the arrays */
    snprintf(path, sizeof path, "%s/sub/meta.json", dir);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "missing %s", path);
    char meta[4096] = {0};
    ck_assert_uint_gt(fread(meta, 1, sizeof meta - 1, f), 0);
    fclose(f);
    static const char *const keys[] = {"\"lesson\": ", "\"version\": \"", "\"git_describe\": \"", "\"dims\": {\"",
                                       "\"seed\": ", "\"impls\": [\""};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        ck_assert_msg(strstr(meta, keys[k]) != NULL, "%s lacks %s:\n%s", path, keys[k], meta);
    unlink(path);
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
}
