#!/usr/bin/env python3
"""The cost of the static proof and translation validation, before and
after a change, in one sitting.

`--emit=mlir` (frontend, passes, proofs) of every stdlib file at 8 ranks
and of allreduce_2pa_hb at 64 and 256 ranks, each run --reps times by each
compiler in turn (A B A B ...); prints a Markdown table of the median wall
time and the median peak memory of each. Run it on an idle machine.

    bench/proof_cost.py BEFORE_MSCCLC AFTER_MSCCLC [--reps 5]

Targets (docs/verification.md, "Cost"): 8 ranks under 15 ms for every
stdlib file, 64 ranks under 0.5 s, 256 ranks at most 5 s and 1 GB.
"""
import argparse
import glob
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(binary, args):
    """Wall seconds and peak resident MiB of one run (os.wait4 gives the
    child's own rusage; the wall time includes starting it, about 1 ms)."""
    start = time.perf_counter()
    proc = subprocess.Popen([binary, *args, "--emit=mlir", "-o", os.devnull],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{binary} {' '.join(args)}: exit {proc.returncode}")
    return wall, usage.ru_maxrss / 1024


def measure(binaries, args, reps):
    runs = {b: [] for b in binaries}
    for _ in range(reps):
        for b in binaries:
            runs[b].append(run_once(b, args))
    return [(statistics.median(w for w, _ in runs[b]),
             statistics.median(m for _, m in runs[b])) for b in binaries]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    binaries = [args.before, args.after]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    print(f"--emit=mlir, median of {args.reps} runs each, in turn; "
          f"{os.cpu_count()} cores, {cpu}\n")
    print("| program | ranks | before ms | before MiB | after ms | after MiB |")
    print("|---|---|---|---|---|---|")
    cases = [(f, 8) for f in sorted(glob.glob(f"{ROOT}/stdlib/*.mscl"))
             if not f.endswith("/common.mscl")]
    cases += [(f"{ROOT}/stdlib/allreduce_2pa_hb.mscl", r) for r in (64, 256)]
    for path, ranks in cases:
        (wa, ma), (wb, mb) = measure(binaries, [path, "--ranks", str(ranks)],
                                     args.reps)
        name = os.path.basename(path)[:-len(".mscl")]
        print(f"| {name} | {ranks} | {wa * 1000:.1f} | {ma:.0f} | "
              f"{wb * 1000:.1f} | {mb:.0f} |", flush=True)


if __name__ == "__main__":
    main()
