/* cuda_pipeline_primitives.h - TEST-ONLY shim: NVIDIA's header of the same name declares the pipeline primitives,
 * which the emulator's cuda_pipeline.h defines. */
#include "cuda_pipeline.h"
