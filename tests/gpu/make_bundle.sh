#!/usr/bin/env bash
# tests/gpu/make_bundle.sh BIN_DIR BUNDLE_DIR BINARY... - `make gpu-bundle`: what a GPU machine that can build
# nothing needs, in one folder of at most 40 MiB:
#
#   BUNDLE_DIR/gpu-report.sh     the report (tests/gpu/gpu_report.sh); unpacks the payload beside itself
#   BUNDLE_DIR/payload.tar.xz    bin/     the binaries, built with Check static and RPATH $ORIGIN/../lib
#                                lib/     every shared library their ldd resolves, under its soname, except the
#                                         ones the machine brings (SYSTEM below: glibc's, libstdc++/libgcc_s, and
#                                         CUDA's driver, runtime and cuBLAS, which must match the machine's driver)
#                                inputs/  docs/results/emu/*_profile.csv (the emulated profiles, for profile.csv)
#                                         and predicted_h*.csv (the model's times: the forum step's size choice)
#                                profile_rows.py, MANIFEST (commit, mode, binaries, libraries, CUDA runtime)
#                                wheels/  the anchors' wheels (plots/anchors.txt, fetched and checked against the GPU
#                                         image's torch and triton by tests/gpu/anchor_wheels.py), which the report
#                                         installs there into a scratch target
#                                plots/   plots/pytorch_baseline.py, anchors.py and torch_peak/ (the anchors' rows),
#                                         build/libpeak_alloc.so (the CPU peak counter: the rehearsal's runs)
# ANCHOR_WHEELS=0 packs no wheels (a machine without PyPI): the report then says the anchors were not carried.
#
# The library list is read from the binaries' ldd, not typed: a CPU GEMM library a helper links in joins by
# itself. Checked before the bundle is written: the ldd closure (every library of every binary resolves inside
# lib/ or is one of SYSTEM) and the size.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 BIN_DIR BUNDLE_DIR BINARY..." >&2; exit 2; }
src=$1 out=$2
shift 2
cd "$(dirname "$0")/../.."
MAX_BYTES=$((40 * 1024 * 1024))
SYSTEM='^(linux-vdso\.so|ld-linux[-a-z0-9_]*\.so|libc\.so|libm\.so|libmvec\.so|libpthread\.so|libdl\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libcudart\.so|libcublas\.so|libcublasLt\.so|libnvidia-)'

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/inputs/docs/results/emu"
for b; do
    [ -x "$src/$b" ] || { echo "make_bundle: $src/$b is missing (make BUNDLE=1 gpu-bundle-bins)" >&2; exit 1; }
    # host debug info out (the device code keeps -lineinfo for compute-sanitizer and ncu)
    objcopy --strip-debug "$src/$b" "$stage/bin/$b"
    ldd "$src/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r so path; do
        echo "$so" | grep -Eq "$SYSTEM" && continue
        [ -f "$stage/lib/$so" ] || cp -L "$path" "$stage/lib/$so"
    done
done
strip --strip-unneeded "$stage"/lib/*.so* 2>/dev/null || true

# The closure: with lib/ beside bin/, every library resolves inside the bundle or is the machine's own
bad=0
for b; do
    while read -r so arrow path _; do
        [ "$arrow" = "=>" ] || continue
        if echo "$so" | grep -Eq "$SYSTEM"; then continue; fi
        case $(readlink -f "$path") in "$(readlink -f "$stage/lib")/"*) ;; *) echo "make_bundle: $b: $so resolves to $path, outside the bundle" >&2; bad=1 ;; esac
    done < <(ldd "$stage/bin/$b")
    if ldd "$stage/bin/$b" | grep 'not found' >/dev/null; then
        echo "make_bundle: $b: $(ldd "$stage/bin/$b" | grep 'not found' | tr -s ' \t' ' ')" >&2; bad=1
    fi
done
[ $bad = 0 ] || exit 1

cp docs/results/emu/*_profile.csv docs/results/emu/predicted_h*.csv "$stage/inputs/docs/results/emu/"
cp tests/gpu/profile_rows.py "$stage/"
mkdir -p "$stage/plots/torch_peak" "$stage/build"
cp plots/pytorch_baseline.py plots/anchors.py plots/anchors.txt "$stage/plots/"
cp plots/torch_peak/__init__.py "$stage/plots/torch_peak/"
make -s build/libpeak_alloc.so && cp build/libpeak_alloc.so "$stage/build/"
anchors="not packed (ANCHOR_WHEELS=0)"
if [ "${ANCHOR_WHEELS:-1}" != 0 ]; then
    mkdir -p build/anchor-wheels "$stage/wheels"
    python3 tests/gpu/anchor_wheels.py build/anchor-wheels ||
        { echo "make_bundle: the anchors' wheels (plots/anchors.txt) could not be fetched or do not fit the GPU image; ANCHOR_WHEELS=0 packs none" >&2; exit 1; }
    for pin in $(sed 's/#.*//' plots/anchors.txt | awk '$1 ~ /==/ && $1 !~ /^image/ {print $1}'); do
        n=${pin%%==*} v=${pin#*==}
        cp build/anchor-wheels/"${n//-/_}-$v"-*.whl "$stage/wheels/"
    done
    anchors=$(ls "$stage/wheels" | tr '\n' ' ')
fi
mode=native
nm "$src/$1" 2>/dev/null | grep emu_mark_uninit >/dev/null && mode=emu # not grep -q: nm killed by SIGPIPE would fail the pipe (pipefail)
{
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "built: $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n)"
    echo "mode: $mode"
    echo "cuda runtime: $( (nvcc --version 2>/dev/null || /usr/local/cuda/bin/nvcc --version) | sed -n 's/.*release \([0-9.]*\),.*/\1/p')"
    echo "binaries: $*"
    echo "anchors: $anchors"
    echo "libraries: $(ls "$stage/lib" | tr '\n' ' ')"
    echo "machine libraries (not carried): $(for b; do ldd "$stage/bin/$b"; done | awk '{print $1}' | grep -E "$SYSTEM" | sort -u | tr '\n' ' ')"
} >"$stage/MANIFEST"

rm -rf "$out"
mkdir -p "$out"
tar -cJf "$out/payload.tar.xz" -C "$stage" .
cp tests/gpu/gpu_report.sh "$out/gpu-report.sh"
size=$(du -cb "$out"/* | tail -1 | cut -f1)
unpacked=$(du -sb "$stage" | cut -f1)
if [ "$size" -gt $MAX_BYTES ]; then
    echo "make_bundle: $out is $size bytes, over the 40 MiB a GPU visit carries" >&2
    exit 1
fi
echo "make_bundle: $out: $size bytes ($((size / 1048576)) MiB; $((unpacked / 1048576)) MiB unpacked), $mode binaries: $*"
echo "make_bundle: libraries carried: $(ls "$stage/lib" | tr '\n' ' ')"
echo "make_bundle: the ldd closure holds: every other library is the machine's ($(sed -n 's/^machine libraries (not carried): //p' "$stage/MANIFEST"))"
