#include "impl_gate.h"

#include <stdint.h>
#include <stdio.h>
#ifdef HAVE_CUDA
#include "../../kernels/runtime/cuda_track.h"
#endif

impl_gate_verdict impl_gate(impl_row *row, int needs_cuda, size_t predicted_peak, size_t mem_limit)
{
    if (needs_cuda) {
#ifdef HAVE_CUDA
        const char *why = "no CUDA device";
        if (cuda_device_count(&why) == 0) {
            snprintf(row->note, sizeof row->note, "no CUDA device (%s)", why);
            return GATE_NO_DEVICE;
        }
#else
        snprintf(row->note, sizeof row->note, "this build has no CUDA (nvcc not found, or CUDA=0)");
        return GATE_NO_DEVICE;
#endif
    }
    if (predicted_peak > mem_limit) {
        char p[32], ph[16], lim[32];
        format_bytes_exact(predicted_peak, p, sizeof p);
        format_bytes_human(predicted_peak, ph, sizeof ph);
        format_bytes_exact(mem_limit, lim, sizeof lim);
        if (predicted_peak == SIZE_MAX)
            snprintf(row->note, sizeof row->note, "predicted peak overflows 64 bits, over --mem-limit %s",
                     lim);
        else
            snprintf(row->note, sizeof row->note, "predicted peak %s bytes (%s) exceeds --mem-limit %s", p,
                     ph, lim);
        return GATE_OVER_MEM_LIMIT;
    }
    return GATE_RUN;
}
