#!/bin/sh
# model_counts.sh - what the time model counts for each kernel of a lesson's run on an H100 (EMU_MODEL_DEBUG=2):
# per warp of each grid, its instructions by pipe (from nvcc's SASS fitted to what the emulator saw), one warp's
# issue path in cycles, its shared-memory and L1 wavefronts; then each bound of the launch in microseconds. A dry
# run of the model's kind (EMU_DRY=3), fragments in the GPU's register layout (EMU_WMMA_PAIRS=1 EMU_WMMA_PTX=1), as
# make predict.
# Needs `make sass-kernels GPU=H100` and `make EMU=1 EMU_COUNT=1 build/emu-count/lessonN` (make docs runs both).
#   usage: model_counts.sh LESSON ARGS...     e.g. model_counts.sh 3 --size forum --dims J=128 --impl cuda-v8
set -u
l=$1
shift
EMU_PREDICT=H100 EMU_WMMA_PAIRS=1 EMU_WMMA_PTX=1 EMU_DRY=3 EMU_MODEL_DEBUG=2 EMU_SASS=build/sass/kernels_sm_90.sass \
  build/emu-count/lesson"$l" "$@" 2>&1 | grep -E '^model: ([A-Za-z_0-9]+ [0-9]+ blocks|  bounds)'
