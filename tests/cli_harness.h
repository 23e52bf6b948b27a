/* cli_harness.h - what every lesson's command-line tests share: run the lesson binary and capture its output,
 * and the checks of the contract every lesson follows (bad input exits 2 with a message; --csv writes the exact
 * header and one row per implementation; --dump writes .npy files with the right shapes). Assertions are Check's,
 * so these run inside a test case. */
#ifndef TESTS_CLI_HARNESS_H
#define TESTS_CLI_HARNESS_H

#include <stddef.h>
#include <stdio.h>

/* Runs "<binary> <args>" with stderr joined to stdout; returns the exit status (-1 if it did not exit). */
int run_lesson(const char *binary, const char *args, char *out, size_t len);

typedef struct {
    const char *args;   /* command-line arguments */
    const char *expect; /* text the message must contain */
} bad_input_case;

/* Check's messages are short (a long one is replaced by "Message string too long"), so a failing check on a
 * program's output prints the output to stderr and keeps the message to one line. */
#define ck_assert_output(cond, out, ...)                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "---- the program's output ----\n%s\n---- end ----\n", (out));     \
            ck_abort_msg(__VA_ARGS__);                                                          \
        }                                                                                       \
    } while (0)

/* Every case exits with status 2 and prints its expected text. */
void assert_rejects(const char *binary, const bad_input_case *cases, size_t n);

/* Runs "<binary> <args> --csv FILE" twice into a fresh file; asserts the exact header once, then rows that start
 * with row_prefix[0], row_prefix[1], ... (nrows per run), each containing row_contains and ending in a positive
 * gemm_share (host implementations: each has a work function). */
void assert_csv_rows(const char *binary, const char *args, const char *const *row_prefix, int nrows,
                     const char *row_contains);

/* Runs "<binary> <args> --dump DIR/sub" (a directory it must create) and asserts DIR/sub/<name>.npy exists for
 * each name, has the NumPy descr descrs[i] ("'<f4'") and the shape text shapes[i] ("(3, 8)"), and that
 * DIR/sub/meta.json records the lesson, version, git describe, dims, seed and implementations. Removes them. */
void assert_dump_files(const char *binary, const char *args, const char *const *names, const char *const *shapes,
                       const char *const *descrs, int n);

#endif
