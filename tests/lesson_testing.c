#include "lesson_testing.h"

#include <check.h>
#include <string.h>

#include "track.h"

impl_row lesson_test_run(const lesson *L, const void *prob, const char *impl, void *const *t, void *const *out)
{
    int i = lesson_find_impl(L, impl);
    ck_assert_msg(i >= 0, "%s has no implementation %s", L->program, impl);
    mem_domain dom = L->impls[i].device ? MEM_DEVICE : MEM_HOST;
    size_t live0 = track_counters(dom).live_bytes;
    lesson_result res;
    lesson_run_impl(L, prob, i, t, &res);
    for (int k = 0; k < lesson_ntensors(L); k++)
        if (out[k] && res.result[k]) memcpy(out[k], res.result[k], lesson_tensor_bytes(L, k, prob));
    impl_row row = res.row;
    lesson_result_free(L, &res);
    ck_assert_msg(track_counters(dom).live_bytes == live0, "%s %s left %zu bytes live", L->program, impl,
                  track_counters(dom).live_bytes - live0);
    return row;
}
