# predict_reduce.sh - sourced by predict_lessons.sh and predict_extrapolation.sh: a prediction from runs at
# reduced sizes (tests/cuda_emu/README.md "Sizes too long to run"). Needs bin, gpu, sass, timeout_s, rec (a
# scratch directory) set by the caller, record_out optionally (a file: the extrapolated counts written there as a
# record, predict_extrapolate --record-out); its own variables are cmb, nxt, name, vals, v, o, d, c, f, args, keep,
# want, n.

# the reduced dimensions of (lesson, size, version): DIM=LOW:HIGH[,DIM=LOW:HIGH], whole tiles of the version (J:
# 64 for v2, v3 and v4, 128 for v5, 256 for v6; V: 128, 256 for lesson 5's v4; H: 64 for v3, 256 for v4), so its
# counts are affine between the two values and beyond
# (tests/cuda_emu/predict_extrapolation.sh checks each against a direct run: make predict-check)
reduce_of() {
  case "$1:$2:$3" in
    3:medium:cuda-v1|3:forum:cuda-v1) echo "J=4:8,N=4:8" ;; # one thread per (i, m) loops J x N x K
    3:forum:cuda-v2) echo "J=64:128,N=64:128" ;;            # FP32 tiles: N too, or a run takes 8 minutes
    3:forum:cuda-v4) echo "J=64:128" ;;                  # whole j tiles of a[i]'s 64 resident rows
    3:forum:cuda-v5) echo "J=128:256" ;;                 # whole j tiles of a[i]'s 128 resident rows
    3:forum:cuda-v6) echo "J=256:512" ;;                 # whole j tiles of a[i]'s 256 resident rows
    3:forum:*) echo "J=64:128" ;;
    5:medium:cuda-v1|5:forum:cuda-v1) ;;                    # cuBLAS and row kernels: runs in seconds
    5:medium:cuda-v2|5:forum:cuda-v2) echo "V=128:256" ;;     # dx's shared memory holds a row of H: H stays
    5:medium:cuda-v4|5:medium:cuda-v5) echo "V=512:1024" ;; # v4's (and v5's) H tiles are 256 wide: medium's H = 256 is one
    5:forum:cuda-v4|5:forum:cuda-v5) echo "V=512:1024,H=256:512" ;;
    5:medium:*|5:forum:*) echo "V=512:1024,H=128:256" ;;
  esac
}

# every combination of a spec's values as --dims arguments: "J=1:2,N=1:2" -> "J=1,N=1 J=2,N=1 J=1,N=2 J=2,N=2"
combos() {
  cmb=""
  for d in $(echo "$1" | tr , ' '); do
    name=${d%%=*} vals=${d#*=} nxt=""
    for v in ${vals%%:*} ${vals#*:}; do
      if [ -z "$cmb" ]; then nxt="$nxt $name=$v"; else for o in $cmb; do nxt="$nxt $o,$name=$v"; done; fi
    done
    cmb=$nxt
  done
  echo "$cmb"
}

# extrapolate LESSON SIZE VERSION SPEC FULL [DIMS]: the reduced runs of SPEC at --size SIZE (--dims DIMS added to
# each), each count extrapolated to FULL (DIM=VALUE,...); the EMU_PREDICT line on stdout. Exit 1 if the runs are
# not extrapolable (different launch sequences: the size may run directly), 2 if a reduced run fails or passes
# timeout_s (a direct run would take longer still), with the run and its exit status on stdout.
extrapolate() {
  args="" keep=""
  for d in $(echo "${6:-}" | tr , ' '); do # DIMS less the reduced ones
    echo ",$4" | grep -q ",${d%%=*}=" || keep="$keep${keep:+,}$d"
  done
  for c in $(combos "$4"); do
    f="$rec/$(echo "$1-$3-$c" | tr ,= _-)"
    EMU_PREDICT="$gpu" EMU_DRY=3 EMU_SASS=$sass EMU_MODEL_RECORD=$f timeout "$timeout_s" "$bin/lesson$1" --size "$2" \
      --dims "${keep:+$keep,}$c" --impl "$3" > /dev/null 2>&1 ||
      { echo "reduced run --dims ${keep:+$keep,}$c: exit $? (124: over timeout_s=$timeout_s)"; return 2; }
    args="$args $c:$f"
  done
  # shellcheck disable=SC2086
  "$bin/predict_extrapolate" --impl "$3" --at "$5" ${record_out:+--record-out "$record_out"} $args
}

# the value of each of SPEC's dimensions in a preset's dims: "J=64:128" "I=300,J=2000,..." -> "J=2000"
full_of() {
  want=""
  for d in $(echo "$1" | tr , ' '); do
    n=${d%%=*}
    want="$want${want:+,}$n=$(echo "$2" | tr , '\n' | sed -n "s/^$n=//p")"
  done
  echo "$want"
}
