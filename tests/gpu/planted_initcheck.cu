/* planted_initcheck.cu - a kernel that reads device memory nothing wrote: what an initcheck must report. The GPU
 * report (tests/gpu/gpu_report.sh) runs it under compute-sanitizer --tool initcheck with TRACK_POISON=0 and
 * expects a report; the rehearsal runs the emulator build, whose own initcheck fails the launch. With the poison
 * fill on, compute-sanitizer takes dev_alloc's cudaMemset for a write and sees nothing: the run proves the
 * switch is what makes initcheck see. Without an initcheck the program runs and exits 0. */
#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/cuda_track.h"
#include "../../kernels/runtime/launch.h"
#include "track.h"

#include <stdio.h>

#define PLANTED_N 256
#define PLANTED_BLOCK 128

__global__ void accumulate_unwritten(const float *in, float *acc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] += in[i]; /* PLANTED: nothing wrote acc before this read */
}

int main(void)
{
    const char *why = NULL;
    if (cuda_device_count(&why) == 0) {
        fprintf(stderr, "planted_initcheck: no CUDA device (%s)\n", why);
        return 2;
    }
    float host[PLANTED_N];
    for (int i = 0; i < PLANTED_N; i++) host[i] = (float)i;
    float *in = (float *)dev_alloc_array(PLANTED_N, DT_F32, "planted: in (n)");      /* (n) */
    float *acc = (float *)dev_alloc_array(PLANTED_N, DT_F32, "planted: acc (n), never written"); /* (n) */
    dev_upload(in, host, sizeof host);
    LAUNCH(accumulate_unwritten, (PLANTED_N + PLANTED_BLOCK - 1) / PLANTED_BLOCK, PLANTED_BLOCK, 0)(in, acc,
                                                                                                  PLANTED_N);
    CUDA_CHECK_LAST();
    dev_download(host, acc, sizeof host);
    dev_free(in);
    dev_free(acc);
    printf("planted_initcheck: the kernel ran; only an initcheck can tell that it read memory nothing wrote\n");
    return 0;
}
