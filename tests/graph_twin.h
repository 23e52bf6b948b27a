/* graph_twin.h - a CUDA Graph version against its eager twin (lessons 2 and 4), through the generic session.
 *
 * The graph version captures the same kernels and cuBLAS calls, with the same workspace and in the same order,
 * and replays them: its outputs and gradients must equal the eager version's bit for bit (nothing is reordered,
 * so no rounding differs), its memory must equal its formula (the graph allocates nothing), and it must launch
 * exactly 2 times per pass (one graph per forward and per backward) where the eager one launches `eager`. */
#ifndef TESTS_GRAPH_TWIN_H
#define TESTS_GRAPH_TWIN_H

#include <check.h>
#include <string.h>

#include "lesson.h"

static inline void run_graph_twin(const lesson *L, const void *prob, uint64_t seed, const char *eager_name,
                                  const char *graph_name, unsigned long long eager_launches)
{
    void *t[LESSON_MAX_TENSORS] = {0};
    lesson_make_inputs(L, prob, seed, t);
    lesson_result eager, graph;
    lesson_run_impl(L, prob, lesson_find_impl(L, eager_name), t, &eager);
    lesson_run_impl(L, prob, lesson_find_impl(L, graph_name), t, &graph);
    ck_assert_uint_eq(eager.row.launches, eager_launches);
    ck_assert_uint_eq(graph.row.launches, 2);
    ck_assert_uint_eq(graph.row.peak_bytes, graph.row.predicted_peak);
    ck_assert_uint_eq(graph.row.forward_live_bytes, graph.row.predicted_forward_live);
    ck_assert_uint_eq(graph.row.allocs, eager.row.allocs);
    for (int i = 0; i < lesson_ntensors(L); i++) {
        if (!eager.result[i]) continue;
        size_t bytes = lesson_tensor_bytes(L, i, prob);
        ck_assert_msg(memcmp(eager.result[i], graph.result[i], bytes) == 0, "%s's %s differs from %s's",
                      graph_name, L->tensors[i].name, eager_name);
    }
    lesson_result_free(L, &eager);
    lesson_result_free(L, &graph);
    lesson_free_slots(L, t);
}

#endif
