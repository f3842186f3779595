"""Simulates every .mscl algorithm in the given directories at every rank
count and node shape it supports; prints one line per run and fails if any
supported configuration fails. A `require` that rejects a configuration
means "not supported", not a failure. With --inplace, each algorithm that is
not in place also runs as its in-place variant (`inplace` added to the
header), which must pass as well."""
import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SHAPES = [(2, None), (3, None), (4, None), (8, None), (16, None), (8, 4), (16, 4)]

parser = argparse.ArgumentParser()
parser.add_argument("--tool", required=True)
parser.add_argument("--schedules", type=int, default=50)
parser.add_argument("--bytes", default="")
parser.add_argument("--jobs", type=int, default=2)
parser.add_argument("--inplace", action="store_true")
parser.add_argument("--single-launch", action="store_true",
                    help="simulate one launch only, not back-to-back ones")
parser.add_argument("dirs", nargs="+")
args = parser.parse_args()

HEADER = re.compile(r"^(\s*algorithm\s+\w+\s*:\s*(\w+))\s*(\(([^)]*)\))?", re.M)


def inplace_variant(text):
    """The text with `inplace` added to its header, or None when it is
    already in place or a custom collective."""
    m = HEADER.search(text)
    if m.group(2) == "custom" or (m.group(4) and "inplace" in m.group(4)):
        return None
    options = (m.group(4) + ", inplace") if m.group(4) else "inplace"
    return text[:m.start()] + f"{m.group(1)}({options})" + text[m.end():]


files = []
scratch = tempfile.mkdtemp(prefix="mscclc-inplace-")
for d in args.dirs:
    # Variants live in a copy of their directory: imports are relative.
    copy = os.path.join(scratch, str(len(files)))
    if args.inplace:
        shutil.copytree(d, copy)
    for path in sorted(glob.glob(os.path.join(d, "*.mscl"))):
        with open(path) as f:
            text = f.read()
        if not HEADER.search(text):
            continue
        files.append(path)
        variant = inplace_variant(text) if args.inplace else None
        if variant:
            name = os.path.basename(path)[:-5] + "__inplace.mscl"
            with open(os.path.join(copy, name), "w") as f:
                f.write(variant)
            files.append(os.path.join(copy, name))


def run(job):
    path, ranks, gpn = job
    shape = f"{ranks} ranks" + (f" ({ranks // gpn}x{gpn})" if gpn else "")
    name = os.path.basename(path)
    frontend = ["--ranks", str(ranks)] + (["--gpus-per-node", str(gpn)] if gpn else [])
    sim = ["--simulate", "--schedules", str(args.schedules)]
    if args.single_launch:
        sim.append("--single-launch")
    if args.bytes:
        sim += ["--bytes", args.bytes]
    proc = subprocess.run([args.tool, path] + frontend + sim,
                          capture_output=True, text=True)
    if proc.returncode == 0:
        return True, f"PASS {name} {shape}"
    errors = [l for l in proc.stderr.splitlines() if ": error: " in l]
    if errors and all("requirement failed" in l for l in errors):
        return True, f"UNSUPPORTED {name} {shape}: {errors[0].split('error: ')[1]}"
    return False, f"FAIL {name} {shape}\n{proc.stdout}{proc.stderr}"


jobs = [(f, r, g) for f in files for r, g in SHAPES]
ok = True
passed = 0
with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
    for good, line in pool.map(run, jobs):
        print(line)
        ok &= good
        passed += line.startswith("PASS")
print(f"{len(files)} algorithms, {len(jobs)} configurations, {passed} passed")
shutil.rmtree(scratch)
sys.exit(0 if ok else 1)
