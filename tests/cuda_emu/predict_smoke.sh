#!/bin/sh
# predict_smoke.sh BIN - the lessons' time-model hook (lesson_model.c) in an emulation build: EMU_PREDICT=H100
# adds each CUDA version's predicted line under the table and leaves the run's verdict alone; an unknown GPU
# stops the program with one message and exit 2 before it runs anything.
bin=$1 status=0
out=$(EMU_PREDICT=H100 "$bin/lesson1" --size tiny --impl cpu,cuda-v1 2>&1) ||
  { echo "predict_smoke: EMU_PREDICT=H100 lesson1 exited $?"; status=1; }
echo "$out" | grep -q '^Time model on H100: a MODEL' || { echo "predict_smoke: no model heading"; status=1; }
echo "$out" | grep -Eq '^  cuda-v1 +predicted +[0-9.]+ ms' || { echo "predict_smoke: no cuda-v1 line"; status=1; }
echo "$out" | grep -Eq '^  cpu +predicted' && { echo "predict_smoke: a CPU row was predicted"; status=1; }
bad=$(EMU_PREDICT=NoSuchGPU "$bin/lesson1" --size tiny --impl cuda-v1 2>&1)
rc=$?
[ $rc -eq 2 ] || { echo "predict_smoke: EMU_PREDICT=NoSuchGPU exited $rc, not 2"; status=1; }
echo "$bad" | grep -q '^EMU_PREDICT=NoSuchGPU: unknown GPU (the model knows .*H100' ||
  { echo "predict_smoke: unknown GPU message: $bad"; status=1; }
[ $status -eq 0 ] && echo "predict_smoke: the model's hook predicts device rows only; an unknown GPU exits 2"
exit $status
