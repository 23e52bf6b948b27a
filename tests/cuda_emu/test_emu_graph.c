/* test_emu_graph.c - TEST-ONLY: the emulator's stream capture (emu_graph.cc): a capture runs nothing, its
 * launch runs everything with the usual checks, and what a GPU refuses during a global-mode capture is refused. */
#include <driver_types.h>

#include "planted.h"
#include "test_emu.h"

#define N_GRAPH 300 /* two blocks, the second partial */

static float before[N_GRAPH];

START_TEST(capture_records_launch_replays)
{
    fill();
    for (int i = 0; i < N_GRAPH; i++) before[i] = -1.0f;
    ck_assert_int_eq(planted_graph(0, in, out, N_GRAPH, before), cudaSuccess);
    for (int i = 0; i < N_GRAPH; i++) {
        ck_assert_msg(before[i] == 0.0f, "element %d was written during capture: %g", i, (double)before[i]);
        ck_assert_msg(out[i] == 2.0f * in[i], "element %d after the graph launch: %g, want %g", i, (double)out[i],
                      2.0 * in[i]);
    }
}
END_TEST

START_TEST(malloc_during_capture_invalidates_it)
{
    fill();
    ck_assert_int_eq(planted_graph(1, in, out, N_GRAPH, before), cudaErrorStreamCaptureInvalidated);
    assert_message("cudaMalloc during stream capture");
}
END_TEST

START_TEST(replay_checks_each_launch)
{
    fill();
    ck_assert_int_eq(planted_graph(2, in, out, N_GRAPH, before), cudaErrorIllegalAddress);
    assert_message("graph_add_one");
    assert_message("past its end");
}
END_TEST

START_TEST(cublas_without_workspace_invalidates_capture)
{
    fill();
    ck_assert_int_eq(planted_graph(3, in, out, N_GRAPH, before), cudaErrorStreamCaptureInvalidated);
    assert_message("without cublasSetWorkspace");
}
END_TEST

START_TEST(cublas_call_captured_and_replayed)
{
    fill();
    ck_assert_int_eq(planted_graph(5, in, out, N_GRAPH, before), cudaSuccess);
    ck_assert_msg(before[0] == 0.0f, "the GEMM ran during capture: %g", (double)before[0]);
    ck_assert_msg(out[0] == in[0] * in[0], "out[0] after the graph launch: %g, want %g", (double)out[0],
                  (double)(in[0] * in[0]));
    ck_assert_msg(out[1] == 2.0f * in[1], "the scale kernel before the GEMM did not run: %g", (double)out[1]);
}
END_TEST

START_TEST(legacy_stream_cannot_be_captured)
{
    fill();
    ck_assert_int_eq(planted_graph(4, in, out, N_GRAPH, before), cudaErrorStreamCaptureUnsupported);
    assert_message("legacy default stream");
}
END_TEST

Suite *emu_graph_suite(void)
{
    Suite *s = suite_create("cuda-emu-graph");
    TCase *t = tcase_create("stream-capture");
    tcase_add_test(t, capture_records_launch_replays);
    tcase_add_test(t, malloc_during_capture_invalidates_it);
#ifdef __SANITIZE_ADDRESS__
    /* under ASan the allocation has no red zone: ASan itself reports the kernel's line and ends the (forked) test
     * with test_emu.c's exit code 23 */
    tcase_add_exit_test(t, replay_checks_each_launch, 23);
#else
    tcase_add_test(t, replay_checks_each_launch);
#endif
    tcase_add_test(t, cublas_without_workspace_invalidates_capture);
    tcase_add_test(t, cublas_call_captured_and_replayed);
    tcase_add_test(t, legacy_stream_cannot_be_captured);
    suite_add_tcase(s, t);
    return s;
}
