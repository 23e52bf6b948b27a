/* test_peak_alloc.c - the preloaded peak counter (plots/torch_peak/peak_alloc.c) on known sequences: it is linked
 * into this binary, so this binary's posix_memalign / aligned_alloc / free are the counted ones, exactly as in a
 * Python process that preloads it. Built without sanitizers: ASan would interpose the same functions. */
#define _GNU_SOURCE
#include <check.h>

#include "check_main.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

void peak_alloc_begin(void);
int peak_alloc_only_from(const char *library);
void peak_alloc_reset_peak(void);
void peak_alloc_end(void);
size_t peak_alloc_live(void);
size_t peak_alloc_peak(void);
size_t peak_alloc_count(void);

static void *aligned64(size_t bytes)
{
    void *p = NULL;
    ck_assert_int_eq(posix_memalign(&p, 64, bytes), 0);
    ck_assert_uint_eq((uintptr_t)p % 64, 0);
    return p;
}

START_TEST(counts_live_and_peak_of_a_known_sequence)
{
    peak_alloc_begin();
    void *a = aligned64(1000);
    void *b = aligned_alloc(64, 640);
    ck_assert_uint_eq(peak_alloc_live(), 1640);
    free(a);
    void *c = aligned64(300);
    ck_assert_uint_eq(peak_alloc_live(), 940);
    ck_assert_uint_eq(peak_alloc_peak(), 1640);
    ck_assert_uint_eq(peak_alloc_count(), 2);
    void *m = malloc(5000); /* plain malloc is not a tensor: never counted */
    free(m);
    ck_assert_uint_eq(peak_alloc_live(), 940);
    free(b);
    free(c);
    ck_assert_uint_eq(peak_alloc_live(), 0);
    ck_assert_uint_eq(peak_alloc_peak(), 1640);
    void *d = aligned64(200);
    peak_alloc_reset_peak(); /* the next peak starts from the 200 live bytes */
    ck_assert_uint_eq(peak_alloc_peak(), 200);
    void *e = aligned64(50);
    free(e);
    free(d);
    ck_assert_uint_eq(peak_alloc_peak(), 250);
    peak_alloc_end();
}
END_TEST

START_TEST(only_blocks_made_while_on_are_counted)
{
    void *before = aligned64(4096); /* made before begin: its free must not lower live */
    peak_alloc_begin();
    void *during = aligned64(100);
    free(before);
    ck_assert_uint_eq(peak_alloc_live(), 100);
    peak_alloc_end();
    void *after = aligned64(7777); /* made after end: not counted */
    ck_assert_uint_eq(peak_alloc_live(), 100);
    free(during); /* counted block freed after end: live still drops */
    ck_assert_uint_eq(peak_alloc_live(), 0);
    free(after);
    ck_assert_uint_eq(peak_alloc_peak(), 100);
    peak_alloc_begin(); /* begin forgets everything */
    ck_assert_uint_eq(peak_alloc_peak(), 0);
    peak_alloc_end();
}
END_TEST

/* More blocks than the first table holds (65,536 slots, half full at most): the rebuild must keep every size. */
START_TEST(survives_table_growth_and_tombstones)
{
    enum { N = 100000 };
    static void *p[N];
    peak_alloc_begin();
    size_t total = 0;
    for (int i = 0; i < N; i++) {
        p[i] = aligned64(64 + (size_t)(i % 7) * 64);
        total += 64 + (size_t)(i % 7) * 64;
    }
    ck_assert_uint_eq(peak_alloc_live(), total);
    ck_assert_uint_eq(peak_alloc_count(), N);
    for (int round = 0; round < 3; round++) /* free and reallocate the odd half: tombstones pile up */
        for (int i = 1; i < N; i += 2) {
            free(p[i]);
            p[i] = aligned64(64 + (size_t)(i % 7) * 64);
        }
    ck_assert_uint_eq(peak_alloc_live(), total);
    for (int i = N - 1; i >= 0; i--)
        free(p[i]);
    ck_assert_uint_eq(peak_alloc_live(), 0);
    ck_assert_uint_eq(peak_alloc_peak(), total); /* each odd block is freed before its twin is made */
    peak_alloc_end();
}
END_TEST

/* Only callers in the named library's code count: this executable's calls are not in libc's code, so with
 * libc named nothing counts; an unknown library leaves the filter off (and says so), NULL turns it off. */
START_TEST(only_from_filters_by_caller)
{
    ck_assert_int_eq(peak_alloc_only_from("libc.so"), 1);
    peak_alloc_begin();
    free(aligned64(1000));
    ck_assert_uint_eq(peak_alloc_peak(), 0);
    ck_assert_int_eq(peak_alloc_only_from("no-such-library.so"), 0);
    free(aligned64(1000));
    ck_assert_uint_eq(peak_alloc_peak(), 1000);
    ck_assert_int_eq(peak_alloc_only_from(NULL), 0);
    peak_alloc_end();
}
END_TEST

enum { THREADS = 4, PER_THREAD = 20000 };

static void *churn(void *arg)
{
    size_t bytes = 128 * (size_t)(uintptr_t)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        void *q = aligned64(bytes);
        free(q);
    }
    return NULL;
}

/* Threads allocating and freeing at once: no block lost, no count torn. Each thread holds one block at a time,
 * so the peak is at most the sum of the four sizes. */
START_TEST(thread_safe)
{
    pthread_t t[THREADS];
    peak_alloc_begin();
    for (uintptr_t k = 0; k < THREADS; k++)
        ck_assert_int_eq(pthread_create(&t[k], NULL, churn, (void *)(k + 1)), 0);
    for (int k = 0; k < THREADS; k++)
        pthread_join(t[k], NULL);
    ck_assert_uint_eq(peak_alloc_live(), 0);
    ck_assert_uint_eq(peak_alloc_count(), 0);
    ck_assert_uint_le(peak_alloc_peak(), 128 * (1 + 2 + 3 + 4));
    ck_assert_uint_ge(peak_alloc_peak(), 128 * 4);
    peak_alloc_end();
}
END_TEST

static Suite *peak_alloc_suite(void)
{
    Suite *s = suite_create("peak_alloc");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60); /* 0.7 s of CPU; a shared, loaded machine can stretch that past Check's 4 s */
    tcase_add_test(tc, counts_live_and_peak_of_a_known_sequence);
    tcase_add_test(tc, only_blocks_made_while_on_are_counted);
    tcase_add_test(tc, survives_table_growth_and_tombstones);
    tcase_add_test(tc, only_from_filters_by_caller);
    tcase_add_test(tc, thread_safe);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return check_main(peak_alloc_suite()); }
