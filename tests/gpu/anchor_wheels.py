"""The anchors' wheels for the GPU machine, which has no package registry (make gpu-bundle packs them):

    python3 tests/gpu/anchor_wheels.py DIR       downloads plots/anchors.txt's pinned wheels into DIR (pip download
                                                 --no-deps) and checks each one's declared needs against the GPU
                                                 image's python, torch and triton (the file's `image` line)

Prints one line a wheel; exits 1 when a download fails or a need is not met (a wheel that would not import there).
A need on a package the image line does not name is printed and counted too: --no-deps installs none.
"""
import glob
import os
import re
import subprocess
import sys
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def version(text):
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def satisfied(have, spec):
    """spec: '>=2.1.2', '==3.6.0', '<4', ... (comma-separated), or '' (any version)"""
    for part in filter(None, (p.strip() for p in spec.split(","))):
        op, want = re.match(r"(>=|<=|==|!=|>|<|~=)\s*(.+)", part).groups()
        h, w = version(have), version(want)
        ok = {">=": h >= w, "<=": h <= w, "==": h[:len(w)] == w, "!=": h[:len(w)] != w, ">": h > w, "<": h < w,
              "~=": h >= w and h[:len(w) - 1] == w[:len(w) - 1]}[op]
        if not ok:
            return False
    return True


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    pins, image = [], {}
    for line in open(os.path.join(ROOT, "plots", "anchors.txt")):
        line = line.split("#")[0].strip()
        if line.startswith("image "):
            image = dict(kv.split("==") for kv in line.split()[1:])
        elif line:
            pins.append(line.split()[0])
    bad = 0
    for pin in pins:
        name = pin.split("==")[0]
        wheel = glob.glob(os.path.join(out, name.replace("-", "_") + "-" + pin.split("==")[1] + "-*.whl"))
        if not wheel:
            r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                                "-d", out, pin], capture_output=True, text=True)
            wheel = glob.glob(os.path.join(out, name.replace("-", "_") + "-" + pin.split("==")[1] + "-*.whl"))
            if r.returncode or not wheel:
                print(f"anchor_wheels: {pin}: download failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
                bad += 1
                continue
        meta = zipfile.ZipFile(wheel[0]).read(next(n for n in zipfile.ZipFile(wheel[0]).namelist()
                                                   if n.endswith(".dist-info/METADATA"))).decode()
        needs = []
        py = re.search(r"^Requires-Python: *(.+)$", meta, re.M)
        if py:
            needs.append(("python", py.group(1).strip()))
        for req in re.findall(r"^Requires-Dist: *(.+)$", meta, re.M):
            spec, _, marker = req.partition(";")
            if "extra" in marker or ("platform_system" in marker and "Linux" not in marker and "!=" not in marker):
                continue  # an optional extra, or another platform's need
            m = re.match(r"([A-Za-z0-9_.\-]+)\s*\(?([^)]*)\)?", spec.strip())
            needs.append((m.group(1).lower(), m.group(2).strip()))
        unmet = [f"{n}{s} (image: {image[n]})" if n in image else f"{n}{s} (not in the image)"
                 for n, s in needs if n not in image or not satisfied(image[n], s)]
        met = ", ".join(f"{n}{s or ' (any)'}" for n, s in needs)
        print(f"anchor_wheels: {os.path.basename(wheel[0])}: needs {met}: "
              + (f"NOT MET: {'; '.join(unmet)}" if unmet else "met by the image"))
        bad += bool(unmet)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
